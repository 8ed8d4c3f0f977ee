"""The recognizer on crowd-written commands: CLINC150 test + Snips validate, mapped to our intents.

Usage::

    python bench/intents_real_dev.py                          # the shipped bundle, ../shared/data
    python bench/intents_real_dev.py --bundle DIR --data-dir D
    python bench/intents_real_dev.py --split val              # CLINC val (calibration data)

Runs ``edge-agent intents`` as a user gets it, in the example home (tests/data/home_example.yaml),
on ``firmware_tools.data.real.load_real(D, split)`` (docs/intents.md says how the labels map and
which lines are dropped). Prints:

- in-scope accuracy: the predicted intent equals the mapped one (issue 16 target >= 90%);
- out-of-scope rejected: the share of out-of-scope lines answered with ``null`` (target >= 97%);
- slot accuracy over the expected slots of lines whose spans are known: the prediction has the
  slot with an equal value (numbers numerically, text case- and punctuation-insensitively); extra
  predicted slots are not counted;
- expected calibration error of the confidence: the output (an intent or ``null``) carries a
  confidence; ECE = sum over 15 equal-width confidence bins of (bin share) x |accuracy - mean
  confidence| over every line, in-scope or not.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._cli import print_paired, run_lines  # noqa: E402
from firmware_tools.data.intents import IntentExample  # noqa: E402
from firmware_tools.data.real import SPLITS, Mapped, mapped  # noqa: E402

HOME = ROOT / "tests" / "data" / "home_example.yaml"
DATA_CANDIDATES = (ROOT.parent / "shared" / "data", ROOT.parents[1] / "shared" / "data")
TARGET_IN_SCOPE, TARGET_OOS = 90.0, 97.0
BINS = 15


def ece(confidences: Sequence[float], correct: Sequence[bool], bins: int = BINS) -> float:
    """Expected calibration error with equal-width bins over [0, 1]."""
    totals = [[0, 0.0, 0] for _ in range(bins)]  # count, sum of confidence, right answers
    for conf, ok in zip(confidences, correct, strict=True):
        b = totals[min(bins - 1, max(0, int(conf * bins)))]
        b[0] += 1
        b[1] += conf
        b[2] += int(ok)
    n = max(1, len(confidences))
    return sum(
        abs(right / count - conf_sum / count) * count / n for count, conf_sum, right in totals if count
    )


def _norm(value: Any) -> str:
    return re.sub(r"[^a-z0-9]+", " ", str(value).lower()).strip()


def slot_equal(expected: Any, got: Any) -> bool:
    if isinstance(expected, (int, float)) and not isinstance(expected, bool):
        try:
            return abs(float(got) - float(expected)) < 1e-6
        except (TypeError, ValueError):
            return False
    return _norm(expected) == _norm(got)


def _family(source: str, ex: IntentExample) -> str:
    corpus = source.split(":", 1)[0]
    return f"{corpus} {'in scope' if ex.intent else 'out of scope'}"


def report(rows: Sequence[Mapped], results: Sequence[dict[str, Any]], top: int) -> dict[str, float]:
    """Print the figures; return the headline ones."""
    by_family: dict[str, list[bool]] = collections.defaultdict(list)
    per_intent: dict[str, list[bool]] = collections.defaultdict(list)
    confusion: collections.Counter[tuple[str, str]] = collections.Counter()
    example: dict[tuple[str, str], str] = {}
    slots_total = slots_ok = 0
    slots_right_intent = [0, 0]  # expected slots, right ones, on lines whose intent was right
    slot_errors: collections.Counter[str] = collections.Counter()
    slot_example: dict[str, str] = {}
    confs: list[float] = []
    rights: list[bool] = []
    for m, res in zip(rows, results, strict=True):
        ex, got = m.example, res.get("intent")
        ok = got == ex.intent
        by_family[_family(m.source, ex)].append(ok)
        confs.append(float(res.get("confidence", 0.0)))
        rights.append(ok)
        if ex.intent:
            per_intent[ex.intent].append(ok)
        if not ok:
            key = (f"{ex.intent}" if ex.intent else f"null ({m.source})", str(got))
            confusion[key] += 1
            example.setdefault(key, ex.text)
        if ex.intent and ex.spans_known:
            predicted = res.get("slots") or {}
            for name, value in ex.slots.items():
                slots_total += 1
                hit = name in predicted and slot_equal(value, predicted[name]["value"])
                slots_ok += int(hit)
                if ok:
                    slots_right_intent[0] += 1
                    slots_right_intent[1] += int(hit)
                if hit:
                    continue
                key2 = f"{ex.intent}.{name}"
                slot_errors[key2] += 1
                gotv = predicted[name]["value"] if name in predicted else None
                slot_example.setdefault(key2, f"{ex.text!r}: expected {value!r}, got {gotv!r}")
    ins = [ok for (m, ok) in zip(rows, rights, strict=True) if m.example.intent]
    oos = [ok for (m, ok) in zip(rows, rights, strict=True) if not m.example.intent]
    figures = {
        "in_scope": 100.0 * sum(ins) / max(1, len(ins)),
        "oos_rejected": 100.0 * sum(oos) / max(1, len(oos)),
        "slots": 100.0 * slots_ok / max(1, slots_total),
        "ece": ece(confs, rights),
    }
    share = 100.0 * sum(rights) / max(1, len(rights))
    n_ins, n_oos = f"({sum(ins)}/{len(ins)})", f"({sum(oos)}/{len(oos)})"
    print(f"in-scope accuracy     {figures['in_scope']:6.2f}%  {n_ins}   target >= {TARGET_IN_SCOPE}%")
    print(f"out-of-scope rejected {figures['oos_rejected']:6.2f}%  {n_oos}   target >= {TARGET_OOS}%")
    n_slots = f"({slots_ok}/{slots_total} expected slots, known spans)"
    print(f"slot accuracy         {figures['slots']:6.2f}%  {n_slots}")
    total, right = slots_right_intent
    print(f"  ... on lines whose intent is right: {100.0 * right / max(1, total):6.2f}%  ({right}/{total})")
    print(f"confidence ECE        {figures['ece']:.4f}  ({BINS} bins, {len(rows)} lines, {share:.2f}% right)")
    for family, oks in sorted(by_family.items()):
        print(f"  {family:22s} {100.0 * sum(oks) / max(1, len(oks)):6.2f}%  ({sum(oks)}/{len(oks)})")
    print("per intent (in scope):")
    for intent, oks in sorted(per_intent.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print(f"  {intent:30s} {100.0 * sum(oks) / len(oks):6.2f}%  ({sum(oks)}/{len(oks)})")
    print("most frequent errors (expected -> got):")
    for (exp, got), count in confusion.most_common(top):
        print(f"  {exp} -> {got}: {count}   e.g. {example[(exp, got)]!r}")
    for slot_key, count in slot_errors.most_common(top):
        print(f"  slot {slot_key}: {count}   e.g. {slot_example[slot_key]}")
    return figures


def _data_dir(arg: Path | None) -> Path:
    if arg is not None:
        return arg
    for path in DATA_CANDIDATES:
        if path.is_dir():
            return path
    raise SystemExit(
        "no data directory: pass --data-dir (it holds clinc150/ and snips2017/, docs/intents.md)"
    )


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundle", help="bundle directory for edge-agent intents (default: the shipped one)")
    ap.add_argument("--data-dir", type=Path, help="directory holding clinc150/ and snips2017/")
    ap.add_argument(
        "--split", choices=SPLITS, default="dev", help="which mapped split to score (default dev)"
    )
    ap.add_argument("--home", type=Path, default=HOME, help="home YAML for edge-agent intents")
    ap.add_argument("--top", type=int, default=15, help="how many top errors to list")
    ap.add_argument("--dump", type=Path, help="write every line with its prediction (JSON lines) here")
    ap.add_argument("--against", help="a second bundle: the same lines through it, paired per request")
    args = ap.parse_args(argv)

    rows, drops = mapped(_data_dir(args.data_dir), args.split)
    texts = [m.example.text.replace("\n", " ") for m in rows]
    results = run_lines(["intents", "--home", str(args.home)], texts, args.bundle)
    print(
        f"== {args.split}: {len(rows)} mapped lines ({len(drops)} dropped), bundle {args.bundle or 'shipped'}"
    )
    report(rows, results, args.top)
    if args.against:
        other = run_lines(["intents", "--home", str(args.home)], texts, args.against)
        print(f"== paired, per request: a = {args.bundle or 'shipped'}, b = {args.against}")
        print_paired(args.split, [m.example.intent for m in rows], results, other)
    if args.dump:
        with args.dump.open("w", encoding="utf-8") as fh:
            for m, res in zip(rows, results, strict=True):
                ex = m.example
                rec = {"source": m.source, "text": ex.text, "intent": ex.intent, "slots": ex.slots}
                fh.write(json.dumps({"expected": rec, "spans_known": ex.spans_known, "got": res}) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
