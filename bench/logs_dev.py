"""False alerts and missed anomalies on hand-written gateway log lines, through `edge-agent logs classify`.

Usage::

    python bench/logs_dev.py                          # the shipped bundle
    python bench/logs_dev.py --bundle DIR             # another bundle
    python bench/logs_dev.py --bundle A --against B   # ... and A against B, per line

Input: ``tests/data/gateway_lines_dev.jsonl``, lines a gateway logs every day (DHCP leases, links,
Wi-Fi, time sync, systemd, cron, MQTT, Zigbee, Docker) and lines a technician should see, each
with ``anomaly`` true or false. It was written for this project in the session of build 5, after
that build's DHCP-renewal miss, so it is a development set: docs/model.md says what steered which
build. Printed: how many routine lines the model flags (false alerts) and how many anomalous lines
it lets through (misses), with the lines.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._cli import run_lines  # noqa: E402

LINES = ROOT / "tests" / "data" / "gateway_lines_dev.jsonl"


def classify(lines: Sequence[str], bundle: str | None) -> list[dict[str, Any]]:
    """One `edge-agent logs classify` run over ``lines``; one JSON result per line."""
    return run_lines(["logs", "classify", "-"], lines, bundle)


def report(name: str, records: list[dict[str, Any]], out: list[dict[str, Any]]) -> list[bool]:
    """Print false alerts and misses; returns right or wrong per line."""
    right = [bool(res["anomaly"]) == bool(rec["anomaly"]) for rec, res in zip(records, out, strict=True)]
    routine = sum(1 for rec in records if not rec["anomaly"])
    wrong = [rec for rec, ok in zip(records, right, strict=True) if not ok]
    false_alerts = [rec["line"] for rec in wrong if not rec["anomaly"]]
    misses = [rec["line"] for rec in wrong if rec["anomaly"]]
    print(
        f"== {name}: false alerts {len(false_alerts)} of {routine} routine lines, "
        f"missed {len(misses)} of {len(records) - routine} anomalous lines"
    )
    for line in false_alerts:
        print(f"  flagged: {line}")
    for line in misses:
        print(f"  missed:  {line}")
    return right


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundle", help="bundle directory (default: the shipped one)")
    ap.add_argument("--against", metavar="DIR", help="also run bundle DIR and compare per line (paired)")
    args = ap.parse_args(argv)
    records = [json.loads(line) for line in LINES.read_text(encoding="utf-8").splitlines() if line.strip()]
    lines = [rec["line"] for rec in records]
    a = report(args.bundle or "the shipped bundle", records, classify(lines, args.bundle))
    if args.against:
        import numpy as np

        from firmware_tools.model.metrics import paired_test

        b = report(args.against, records, classify(lines, args.against))
        t = paired_test(np.array(a, dtype=bool), np.array(b, dtype=bool))
        print(f"== paired: only a right {t['a_only']}, only b right {t['b_only']}, p = {t['p']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
