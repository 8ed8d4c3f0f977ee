"""The recognizer on home commands written blind: neither Home Assistant's test sentences nor our generator.

Usage::

    python bench/intents_blind_dev.py                        # the shipped bundle
    python bench/intents_blind_dev.py --bundle DIR [--against DIR2] [--show N]

``bench/data/intents_blind_dev.tsv`` (``style<TAB>intent<TAB>text``; ``none`` is out of scope):
commands and out-of-scope requests written on 8 December 2026 by six helper sessions, each playing
one kind of speaker (terse, indirect, speech-recognizer transcripts, learners of English, polite
or casual, mostly out of scope). Each saw only a description of the example home
(tests/data/home_example.yaml) and of the intents (docs/intents.md's table, in words); none read
the generator, the repository, Home Assistant's sentences or any corpus. So the set is a
development figure that no build has trained on and that no one who wrote the training data
wrote, for choosing between builds and starts (issue 31). Its limits: the writers are the same
kind of language model as the sessions that wrote the generator, and its labels are theirs.

Runs ``edge-agent intents --home tests/data/home_example.yaml`` as a user gets it and prints, over
all lines and per style: in-scope accuracy (the intent given is the label), in-scope lines
rejected (answered ``null``), out-of-scope lines rejected, and the expected calibration error of
the confidence (``bench/intents_real_dev.py``'s, every line); then the labels most often missed.
``--against`` pairs a second bundle per line (``bench/_cli.print_paired``).
"""

from __future__ import annotations

import argparse
import collections
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._cli import print_paired, run_lines  # noqa: E402
from bench.intents_real_dev import HOME, ece  # noqa: E402

DATA = ROOT / "bench" / "data" / "intents_blind_dev.tsv"


def read_rows(path: Path = DATA) -> list[tuple[str, str | None, str]]:
    """(style, intent or None for out of scope, text) per line; ``#`` lines are comments."""
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 3 or not parts[2].strip():
            raise SystemExit(f"{path}:{number}: expected style<TAB>intent<TAB>text")
        style, intent, text = parts
        rows.append((style, None if intent == "none" else intent, text.strip()))
    return rows


def figures(
    rows: Sequence[tuple[str, str | None, str]], results: Sequence[dict[str, Any]]
) -> dict[str, float]:
    """In-scope accuracy, in-scope rejected, out-of-scope rejected (percent) and ECE."""
    inside = [(r, res) for r, res in zip(rows, results, strict=True) if r[1] is not None]
    outside = [res for r, res in zip(rows, results, strict=True) if r[1] is None]
    right = [res.get("intent") == r[1] for r, res in zip(rows, results, strict=True)]
    return {
        "lines": float(len(rows)),
        "in_scope": 100.0 * sum(res.get("intent") == r[1] for r, res in inside) / max(1, len(inside)),
        "rejected_in_scope": 100.0
        * sum(res.get("intent") is None for _, res in inside)
        / max(1, len(inside)),
        "oos_rejected": 100.0 * sum(res.get("intent") is None for res in outside) / max(1, len(outside)),
        "ece": ece([float(res.get("confidence", 0.0)) for res in results], right),
        "n_in": float(len(inside)),
        "n_out": float(len(outside)),
    }


def _line(name: str, f: dict[str, float]) -> str:
    return (
        f"  {name:<14} {int(f['n_in']):>4} in  {f['in_scope']:6.2f}% right"
        f"  {f['rejected_in_scope']:6.2f}% rejected   {int(f['n_out']):>4} out"
        f"  {f['oos_rejected']:6.2f}% rejected   ECE {f['ece']:.3f}"
    )


def report(rows: Sequence[tuple[str, str | None, str]], results: Sequence[dict[str, Any]], show: int) -> None:
    print(_line("all", figures(rows, results)))
    for style in sorted({r[0] for r in rows}):
        keep = [i for i, r in enumerate(rows) if r[0] == style]
        print(_line(style, figures([rows[i] for i in keep], [results[i] for i in keep])))
    missed: collections.Counter[tuple[str, str]] = collections.Counter()
    for (_, intent, _), res in zip(rows, results, strict=True):
        got = res.get("intent") or "none"
        if got != (intent or "none"):
            missed[(intent or "none", got)] += 1
    print(
        "  most frequent errors (label -> answer): "
        + ", ".join(f"{a} -> {b} {n}" for (a, b), n in missed.most_common(8))
    )
    shown = 0
    for (style, intent, text), res in zip(rows, results, strict=True):
        if shown < show and res.get("intent") != intent:
            got = res.get("intent") or "none"
            print(f"    [{style}] {intent or 'none'} -> {got} ({res.get('confidence')}): {text}")
            shown += 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundle", default=None, help="bundle directory (default: the shipped one)")
    ap.add_argument("--against", default=None, help="a second bundle, paired per line")
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--show", type=int, default=0, help="print this many wrong lines")
    args = ap.parse_args(argv)
    rows = read_rows(args.data)
    texts = [t for _, _, t in rows]
    results = run_lines(["intents", "--home", str(HOME)], texts, args.bundle)
    print(f"== {args.data.name}: {len(rows)} lines, bundle {args.bundle or 'shipped'}")
    report(rows, results, args.show)
    if args.against:
        other = run_lines(["intents", "--home", str(HOME)], texts, args.against)
        print(f"== paired, per line: a = {args.bundle or 'shipped'}, b = {args.against}")
        print_paired("blind dev", [r[1] for r in rows], results, other)
    return 0


if __name__ == "__main__":
    sys.exit(main())
