"""Two bundles' per-line dumps of one bench, paired per line and per group.

Usage::

    python bench/paired_dumps.py A.jsonl B.jsonl

Each file holds one JSON object per line with ``key`` (the same line in both files), ``group``
and ``ok`` (``bench/custom_intents.py --dump`` writes them). Prints, per group and over all lines:
how many each bundle gets right, how many only a, how many only b, and the exact two-sided McNemar
p (``firmware_tools.model.metrics.paired_test``). Keys present in one file only are an error.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from firmware_tools.model.metrics import paired_test


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
    out = []
    for group, keys in groups.items():
        ra = np.array([a[k][1] for k in keys], dtype=bool)
        rb = np.array([b[k][1] for k in keys], dtype=bool)
        t = paired_test(ra, rb)
        out.append(
            f"{group}: a {int(ra.sum())}/{len(keys)}, b {int(rb.sum())}/{len(keys)}; "
            f"only a right {t['a_only']}, only b right {t['b_only']}, p = {t['p']}"
        )
    return out


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
