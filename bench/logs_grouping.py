"""Grouping accuracy (loghub metric) of edge-agent's template miner on raw loghub 2k lines.

A line counts as right when the set of lines sharing its predicted template equals the set
sharing its true EventId. Raw lines of ``<S>_2k.log`` are fed as devices send them, and the id
scored is the one published when the line arrived (``TemplateMatch.template_id``, what a summary,
an alert or ``logs classify`` says), not the id the template is known by after the whole file was
read; ``--remapped`` scores the latter (templates merged later count as one).

    .venv/bin/python bench/logs_grouping.py [--data ../shared/eval/logs] [--systems A,B]
        [--remapped | --baseline]
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "eval" / "logs"


def grouping_accuracy(pred: list[object], truth: list[str]) -> float:
    """The loghub metric over parallel lists of predicted and true group keys."""
    by_pred: dict[object, list[int]] = defaultdict(list)
    for i, p in enumerate(pred):
        by_pred[p].append(i)
    truth_sizes = Counter(truth)
    correct = 0
    for members in by_pred.values():
        kinds = {truth[i] for i in members}
        if len(kinds) == 1 and truth_sizes[truth[members[0]]] == len(members):
            correct += len(members)
    return correct / len(truth) if truth else 0.0


def load_system(data: Path, name: str) -> tuple[list[str], list[str]]:
    raw = (data / name / f"{name}_2k.log").read_bytes().decode("utf-8", "replace").splitlines()
    with (data / name / f"{name}_2k.log_structured.csv").open(newline="", encoding="utf-8") as fh:
        truth = [row["EventId"] for row in csv.DictReader(fh)]
    raw = raw[: len(truth)]
    return raw, truth


def predict_edge(lines: list[str], remapped: bool = False) -> list[object]:
    from edge_agent.logs.templates import TemplateMiner

    miner = TemplateMiner()
    ids = [miner.add(line).template_id for line in lines]
    return [miner.canonical(i) for i in ids] if remapped else list(ids)


def predict_drain3(lines: list[str]) -> list[object]:
    from drain3.drain import Drain

    from edge_agent.logs.masking import mask

    drain = Drain(depth=4, sim_th=0.4, max_children=100)
    return [drain.add_log_message(" ".join(mask(line)))[0].cluster_id for line in lines]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--systems", default="")
    ap.add_argument("--baseline", action="store_true", help="plain drain3 with the same masking")
    ap.add_argument("--remapped", action="store_true", help="score ids as known after the whole file")
    args = ap.parse_args()
    systems = [s for s in args.systems.split(",") if s] or sorted(
        p.name for p in args.data.iterdir() if (p / f"{p.name}_2k.log").exists()
    )
    def predict(lines: list[str]) -> list[object]:
        return predict_drain3(lines) if args.baseline else predict_edge(lines, args.remapped)

    scores = []
    t0 = time.perf_counter()
    for name in systems:
        raw, truth = load_system(args.data, name)
        acc = grouping_accuracy(predict(raw), truth)
        scores.append(acc)
        print(f"{name:<12} {acc:.3f}")
    took = time.perf_counter() - t0
    what = "online ids"
    if args.baseline or args.remapped:
        what = "drain3 baseline" if args.baseline else "ids remapped at the end"
    mean = sum(scores) / len(scores)
    print(f"{'mean':<12} {mean:.3f}  (min {min(scores):.3f}; {len(systems)} systems, {what}, {took:.1f}s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
