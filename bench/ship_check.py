"""The ship rule of docs/model.md applied to a candidate bundle against the shipped one, in one run.

Usage::

    python bench/ship_check.py CANDIDATE SHIPPED --target "SGD in scope"
        [--data-dir ../shared/data] [--eval-dir ../shared/eval] [--alpha 0.10] [--keep DIR]

Runs, with the candidate as bundle a and the shipped one as bundle b (each script's output is
kept in ``--keep`` when given):

- ``intents_dev.py --bundle A --against B``: HA intent, HA slots per expected slot,
  ``oos_dev.txt``, the probes;
- ``intents_real_dev.py --against``: real phrasing in and out of scope;
- ``intents_sgd_kinds.py --against``: SGD test in and out of scope;
- ``custom_intents.py --parts ab --dump`` of each bundle: per benchmark, custom requests
  recognized and uncovered requests left alone (the headline groups of ``custom_intents.py``);
  a candidate without a sentence embedding has no custom intents: the sets are left out and the
  bars fail on it;
- ``logs_flags.py --loghub-only`` on the candidate, ``logs_severity.py --dump`` on both (the
  candidate's local logs, and the level-stripped loghub lines of both, paired per error
  template).

Then the rule: (1) the targeted set (``--target``, one of the set names printed) has more
requests only the candidate gets right than only the shipped one; (2) the bars hold: HA intent
>= 97%, real phrasing >= 90% in scope and >= 97% rejected, loghub flags <= 3% per system, this
machine's error/critical lines <= 1%, and the level-stripped error templates read as warning or
above (``log error templates``, each template once) are no fewer than the shipped bundle's (from
build 26 on); (3) no set is worse for the candidate with an exact paired
p < ``--alpha``. Prints every set with its counts and the verdict; exits 0 either way (the
verdict is a report, not a test).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from bench.logs_severity import error_templates  # noqa: E402
from bench.paired_dumps import read  # noqa: E402
from firmware_tools.model.metrics import paired_test  # noqa: E402

# the line ``bench/_cli.paired_line`` prints, with whatever a script puts before it
PAIRED = re.compile(
    r"^\s*(?:paired, )?(?P<label>.+?): a (?P<a>\d+)/(?P<n>\d+), b (?P<b>\d+)/(?P<nb>\d+); "
    r"only a right (?P<a_only>\d+), only b right (?P<b_only>\d+), p = (?P<p>\S+)\s*$"
)

# (script, label it prints) -> the set's name in the rule
SETS: dict[tuple[str, str], str] = {
    ("intents_dev", "dev, in scope"): "HA intent",
    ("intents_dev", "dev, slots per expected slot"): "HA slots",
    ("intents_dev", "oos, out of scope"): "oos_dev.txt",
    ("intents_real_dev", "dev in scope"): "real in scope",
    ("intents_real_dev", "dev out of scope"): "real out of scope",
    ("intents_sgd_kinds", "SGD test in scope"): "SGD in scope",
    ("intents_sgd_kinds", "SGD test out of scope"): "SGD out of scope",
}
PROBE = re.compile(r"^(?P<probe>probe\d*)_dev\.jsonl, (?P<scope>in scope|out of scope)$")
# set -> the smallest share (percent) of bundle a's rights it must keep (rule 2)
BARS = {"HA intent": 97.0, "real in scope": 90.0, "real out of scope": 97.0}
LOGHUB_FLAGS_MAX, LOCAL_SEVERE_MAX = 3.0, 1.0
# a set whose candidate rights must not be fewer than the shipped bundle's (rule 2)
NOT_FEWER = ("log error templates",)


@dataclass(frozen=True)
class Paired:
    """One set: bundle a's and bundle b's rights of ``n`` items, the discordant pairs, exact p."""

    name: str
    a: int
    b: int
    n: int
    a_only: int
    b_only: int
    p: float

    @property
    def a_share(self) -> float:
        return 100.0 * self.a / max(1, self.n)

    @property
    def b_share(self) -> float:
        return 100.0 * self.b / max(1, self.n)

    def worse(self, alpha: float) -> bool:
        """Bundle a (the candidate) is worse than b at the paired test's level ``alpha``."""
        return self.b_only > self.a_only and self.p < alpha


def parse_paired(script: str, text: str) -> list[Paired]:
    """The rule's sets among the paired lines that ``script`` printed (other lines are skipped)."""
    out = []
    for line in text.splitlines():
        m = PAIRED.match(line)
        if m is None:
            continue
        label = m["label"]
        name = SETS.get((script, label))
        probe = PROBE.match(label) if script == "intents_dev" else None
        if probe is not None:
            name = f"{probe['probe']} {probe['scope']}"
        if name is not None:
            out.append(_from_line(name, line))
    return out


def custom_sets(dump_a: Path, dump_b: Path) -> list[Paired]:
    """Per benchmark of two ``custom_intents.py --dump`` files: custom requests recognized and
    uncovered requests left alone, as its headline counts them (groups named ``other...`` are
    not counted), paired per line."""
    a, b = read(dump_a), read(dump_b)
    if a.keys() != b.keys():
        raise SystemExit(f"{dump_a} and {dump_b} hold different lines")
    cases: dict[tuple[str, str], list[str]] = {}
    for key, (group, _) in a.items():
        case = key.rsplit(":", 1)[0]
        kind = group[len(case) + 1 :] if group.startswith(case + " ") else group
        if kind.startswith("other"):
            continue
        what = "recognized" if kind == "custom" else "left alone"
        cases.setdefault((case, what), []).append(key)
    return [
        _paired(f"custom {case} {what}", [a[k][1] for k in keys], [b[k][1] for k in keys])
        for (case, what), keys in cases.items()
    ]


def template_set(dump_a: Path, dump_b: Path) -> Paired:
    """The level-stripped error templates of two ``logs_severity.py --dump`` files, paired: a
    template is right when most of its lines are predicted ``warning`` or above."""
    a, b = (error_templates([json.loads(ln) for ln in d.read_text().splitlines()]) for d in (dump_a, dump_b))
    if a.keys() != b.keys():
        raise SystemExit(f"{dump_a} and {dump_b} hold different templates")
    keys = sorted(a)
    return _paired(NOT_FEWER[0], [a[k] for k in keys], [b[k] for k in keys])


def _paired(name: str, a: Sequence[bool], b: Sequence[bool]) -> Paired:
    """One set from the per-item rights of bundle a and bundle b (the test ``paired_line`` prints)."""
    ra, rb = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    t = paired_test(ra, rb)
    return Paired(
        name, int(ra.sum()), int(rb.sum()), len(ra), int(t["a_only"]), int(t["b_only"]), float(t["p"])
    )


def _from_line(name: str, line: str) -> Paired:
    m = PAIRED.match(line)
    if m is None:
        raise ValueError(f"not a paired line: {line!r}")
    return Paired(
        name, int(m["a"]), int(m["b"]), int(m["n"]), int(m["a_only"]), int(m["b_only"]), float(m["p"])
    )


def last_share(text: str, label: str, column: int = -1) -> float | None:
    """The percent in ``column`` (of the ``%`` figures) of the last line starting with ``label``."""
    found = None
    for line in text.splitlines():
        if line.startswith(label):
            shares = re.findall(r"(\d+(?:\.\d+)?)\s?%", line)
            if shares:
                found = float(shares[column])
    return found


@dataclass(frozen=True)
class Verdict:
    target: Paired | None
    target_improves: bool
    bars_failed: list[str]
    worse: list[Paired]

    @property
    def ships(self) -> bool:
        return self.target_improves and not self.bars_failed and not self.worse


def judge(
    sets: Sequence[Paired], target: str, alpha: float, loghub_worst: float | None, local_severe: float | None
) -> Verdict:
    """The rule of docs/model.md over the paired sets and the candidate's log figures."""
    by_name = {s.name: s for s in sets}
    aim = by_name.get(target)
    failed = [
        f"{name} {by_name[name].a_share:.2f}% < {bar}%"
        for name, bar in BARS.items()
        if name in by_name and by_name[name].a_share < bar
    ]
    failed += [f"{name} not measured" for name in (*BARS, *NOT_FEWER) if name not in by_name]
    failed += [
        f"{name} {by_name[name].a} < {by_name[name].b} of the shipped bundle"
        for name in NOT_FEWER
        if name in by_name and by_name[name].a < by_name[name].b
    ]
    if loghub_worst is None or loghub_worst > LOGHUB_FLAGS_MAX:
        failed.append(f"loghub flags, worst system {loghub_worst}% (bar {LOGHUB_FLAGS_MAX}%)")
    if local_severe is None or local_severe > LOCAL_SEVERE_MAX:
        failed.append(f"this machine's error/critical lines {local_severe}% (bar {LOCAL_SEVERE_MAX}%)")
    return Verdict(
        aim, aim is not None and aim.a_only > aim.b_only, failed, [s for s in sets if s.worse(alpha)]
    )


def report(sets: Sequence[Paired], verdict: Verdict, alpha: float) -> list[str]:
    lines = [f"{'set':44s} {'candidate':>10s} {'shipped':>10s} {'only c':>7s} {'only s':>7s} {'p':>8s}"]
    for s in sets:
        mark = "  WORSE" if s.worse(alpha) else ""
        lines.append(
            f"{s.name:44s} {s.a_share:9.2f}% {s.b_share:9.2f}% {s.a_only:7d} {s.b_only:7d} {s.p:8.4g}{mark}"
        )
    aim = verdict.target
    lines.append(
        "(1) targeted set: "
        + (
            "not among the sets"
            if aim is None
            else f"{aim.name}, {aim.a_only} only candidate / {aim.b_only} only shipped"
        )
        + (" -> improves" if verdict.target_improves else " -> does not improve")
    )
    lines.append(
        "(2) bars: " + ("held" if not verdict.bars_failed else "FAILED: " + "; ".join(verdict.bars_failed))
    )
    lines.append(
        f"(3) sets worse at p < {alpha}: "
        + ("none" if not verdict.worse else ", ".join(s.name for s in verdict.worse))
    )
    lines.append("verdict: " + ("SHIPS" if verdict.ships else "does not ship"))
    return lines


def _run(script: str, args: Sequence[str], keep: Path) -> str:
    cmd = [sys.executable, str(ROOT / "bench" / f"{script}.py"), *args]
    print(f"--> {' '.join(cmd[1:])}", flush=True)
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False)
    with (keep / f"{script}.txt").open("a", encoding="utf-8") as fh:
        fh.write(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        raise SystemExit(f"{script} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return proc.stdout


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("candidate", type=Path)
    ap.add_argument("shipped", type=Path)
    ap.add_argument("--target", required=True, help='the set the change was made for, e.g. "SGD in scope"')
    ap.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--eval-dir", type=Path, default=ROOT.parent / "shared" / "eval")
    ap.add_argument("--alpha", type=float, default=0.10)
    ap.add_argument("--keep", type=Path, help="keep every script's output here")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp_name:
        keep = args.keep or Path(tmp_name)
        keep.mkdir(parents=True, exist_ok=True)
        c, s, data = str(args.candidate), str(args.shipped), str(args.data_dir)
        sets = parse_paired("intents_dev", _run("intents_dev", ["--bundle", c, "--against", s], keep))
        for script in ("intents_real_dev", "intents_sgd_kinds"):
            out = _run(script, ["--bundle", c, "--data-dir", data, "--against", s], keep)
            sets += parse_paired(script, out)
        dumps = []
        custom = _has_sentence_embedding(args.candidate)
        for name, bundle in (("candidate", c), ("shipped", s)) if custom else ():
            dump = keep / f"custom_{name}.jsonl"
            _run(
                "custom_intents",
                ["--bundle", bundle, "--data-dir", data, "--parts", "ab", "--dump", str(dump)],
                keep,
            )
            dumps.append(dump)
        if custom:
            sets += custom_sets(dumps[0], dumps[1])
        logs = str(args.eval_dir / "logs")
        flags = _run("logs_flags", ["--bundle", c, "--data", logs, "--loghub-only"], keep)
        severity = _run(
            "logs_severity",
            ["--bundle", c, "--data", logs, "--dump", str(keep / "sev_candidate.jsonl")],
            keep,
        )
        _run(
            "logs_severity",
            ["--bundle", s, "--data", logs, "--loghub-only", "--dump", str(keep / "sev_shipped.jsonl")],
            keep,
        )
        sets.append(template_set(keep / "sev_candidate.jsonl", keep / "sev_shipped.jsonl"))
        verdict = judge(
            sets,
            args.target,
            args.alpha,
            last_share(flags, "loghub worst"),
            last_share(severity, "local overall", 0),
        )
        if not custom:  # a bundle without custom intents cannot take the place of one with them
            verdict.bars_failed.append("custom intents (the candidate has no sentence embedding)")
        print("\n".join(report(sets, verdict, args.alpha)))
    return 0


def _has_sentence_embedding(bundle: Path) -> bool:
    """Whether the bundle's intent graph writes a sentence embedding (custom intents need one)."""
    from edge_agent.runtime.bundle import load_bundle
    from edge_agent.runtime.model import SENTENCE_OUTPUT

    b = load_bundle(bundle, verify_hashes=False)
    last = b.graph("intents")[-1]
    outputs = next((seg["outputs"] for seg in b.manifest["segments"] if seg["name"] == last), [])
    return any(port["name"] == SENTENCE_OUTPUT for port in outputs)


if __name__ == "__main__":
    raise SystemExit(main())
