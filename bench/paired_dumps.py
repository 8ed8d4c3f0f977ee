"""Two bundles' per-line dumps of one bench, paired per line and per group.

Usage::

    python bench/paired_dumps.py A.jsonl B.jsonl

Each file holds one JSON object per line with ``key`` (the same line in both files), ``group``
and ``ok`` (``bench/custom_intents.py --dump`` writes them). Prints, per group and over all lines:
how many each bundle gets right, how many only a, how many only b, and the exact two-sided McNemar
p (``bench/_cli.paired_line``). Keys present in one file only are an error.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._cli import paired_line


def read(path: Path) -> dict[str, tuple[str, bool]]:
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    return {r["key"]: (str(r["group"]), bool(r["ok"])) for r in rows}


def paired(a: dict[str, tuple[str, bool]], b: dict[str, tuple[str, bool]]) -> list[str]:
    """One printed line per group (in first-seen order), then one over every line."""
    if a.keys() != b.keys():
        missing = sorted(a.keys() ^ b.keys())[:5]
        raise SystemExit(f"the dumps hold different lines, e.g. {missing}")
    groups: dict[str, list[str]] = defaultdict(list)
    for key, (group, _) in a.items():
        groups[group].append(key)
    groups["all lines"] = list(a)
    return [
        paired_line(group, [a[k][1] for k in keys], [b[k][1] for k in keys]) for group, keys in groups.items()
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    args = ap.parse_args(argv)
    for line in paired(read(args.a), read(args.b)):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
