"""Category agreement with a hand-labelled sample (``bench/data/log_categories.tsv``).

Usage::

    .venv/bin/python bench/logs_categories.py [--labels bench/data/log_categories.tsv]
        [--data ../shared/eval/logs] [--bundle DIR] [--no-model] [--show N]

The sample: 252 lines, each labelled by hand with one of the categories of
``edge_agent/logs/labels.py`` (docs/logs.md says what each covers): 156 lines of the loghub 2k
systems the model never trained on (one line per event of a seeded sample of templates of Apache,
Hadoop, Linux, Mac, OpenSSH and Zookeeper), which the file names by line number (``@N``) and the
bench reads from the evaluation data (``--data``, default ``../shared/eval/logs``: evaluation data
is never kept in the repository), and 96 paraphrased lines of the kinds this machine's own logs
hold (apt, dpkg, databases, brokers, dmesg). The lines of each source are fed in order to
one source of a fresh ``LogService`` (the shipped bundle unless ``--no-model``), as ``edge-agent
logs classify`` does. Printed: per hand label, how many lines and the share the service gave the
same category (and where the others went); per source group; overall. Target (issue 29): >= 85 %.
``--show N`` prints up to N disagreements per hand label. ``--second FILE`` (e.g.
``bench/data/log_categories_b.tsv``, a blind second labelling of the same rows) also prints how
far the two labellings agree (overall, per source group, Cohen's kappa), the service's agreement
with the second, and its agreement on the lines where both labellings agree: the first figure is
about as far as a model can be asked to agree.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from logs_flags import DEFAULT_DATA, load_model

from edge_agent.logs.labels import CATEGORIES

DEFAULT_LABELS = Path(__file__).resolve().parent / "data" / "log_categories.tsv"
CUT = 220  # characters of a loghub line the labels were written for


def read_labels(path: Path, data: Path) -> list[tuple[str, str, str]]:
    """(source, category, line) rows; ``#`` lines are comments. A ``loghub/<System>`` row's
    line ``@N`` is line N of ``data/<System>/<System>_2k.log``, cut at ``CUT`` characters."""
    logs: dict[str, list[str]] = {}

    def loghub_line(source: str, ref: str, number: int) -> str:
        system = source.split("/", 1)[1]
        if system not in logs:
            file = data / system / f"{system}_2k.log"
            if not file.is_file():
                raise SystemExit(f"{path}:{number}: no {file}: pass --data (loghub 2k samples)")
            logs[system] = file.read_text(encoding="utf-8", errors="replace").splitlines()
        return logs[system][int(ref[1:]) - 1][:CUT]

    rows = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not raw.strip() or raw.startswith("#"):
            continue
        source, category, line = raw.split("\t", 2)
        if category not in CATEGORIES:
            raise ValueError(f"{path}:{number}: unknown category {category!r}")
        if source.startswith("loghub/") and line.startswith("@"):
            line = loghub_line(source, line, number)
        rows.append((source, category, line))
    return rows


def predict(rows: list[tuple[str, str, str]], model: object | None) -> list[str]:
    """The service's category of each row, each source fed in order to a fresh service."""
    from edge_agent.logs.service import LogService

    by_source: dict[str, list[int]] = defaultdict(list)
    for i, (source, _, _) in enumerate(rows):
        by_source[source].append(i)
    out = [""] * len(rows)
    for source, idx in by_source.items():
        service = LogService(model=model)  # type: ignore[arg-type]
        for i, res in zip(idx, service.process([rows[i][2] for i in idx], source), strict=True):
            out[i] = res.label.category
    return out


def agreement(a: list[str], b: list[str]) -> float:
    """Percent of positions where the two label lists agree."""
    return 100 * sum(x == y for x, y in zip(a, b, strict=True)) / len(a)


def kappa(a: list[str], b: list[str]) -> float:
    """Cohen's kappa of two labellings of the same lines."""
    n = len(a)
    ca, cb = Counter(a), Counter(b)
    expected = sum(ca[k] * cb[k] for k in ca) / (n * n)
    return (agreement(a, b) / 100 - expected) / (1 - expected)


def report_second(
    rows: list[tuple[str, str, str]], second: list[tuple[str, str, str]], predicted: list[str]
) -> None:
    """Inter-annotator agreement, and the service against the second labelling."""
    if [(s, line) for s, _, line in rows] != [(s, line) for s, _, line in second]:
        raise SystemExit("--second: its rows are not the first file's rows in the same order")
    first, other = [r[1] for r in rows], [r[1] for r in second]
    print(f"two labellings agree on {agreement(first, other):.1f}% (kappa {kappa(first, other):.3f})")
    for group in sorted({r[0].split("/")[0] for r in rows}):
        idx = [i for i, r in enumerate(rows) if r[0].split("/")[0] == group]
        share = agreement([first[i] for i in idx], [other[i] for i in idx])
        print(f"  {group + ' lines':<16} {len(idx):>5} {share:6.1f}%")
    print(f"service vs the second labelling: {agreement(predicted, other):.1f}%")
    both = [i for i in range(len(rows)) if first[i] == other[i]]
    hit = sum(predicted[i] == first[i] for i in both)
    print(f"service on the {len(both)} lines both labellings agree on: {100 * hit / len(both):.1f}%")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--labels", type=Path, default=DEFAULT_LABELS)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="loghub 2k samples (../shared/eval/logs)")
    ap.add_argument("--no-model", action="store_true")
    ap.add_argument("--bundle", type=Path, help="bundle directory (default: the shipped one)")
    ap.add_argument("--show", type=int, default=0, help="disagreements printed per hand label")
    ap.add_argument(
        "--second", type=Path, help="a second labelling of the same rows (inter-annotator agreement)"
    )
    args = ap.parse_args()
    rows = read_labels(args.labels, args.data)
    predicted = predict(rows, load_model(args.no_model, args.bundle))
    per_label: dict[str, Counter[str]] = defaultdict(Counter)
    per_group: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for (source, truth, _), guess in zip(rows, predicted, strict=True):
        per_label[truth][guess] += 1
        group = per_group[source.split("/")[0]]
        group[0] += guess == truth
        group[1] += 1
    print(f"{'hand label':<12} {'lines':>5} {'agree':>7}   predicted instead")
    for category in CATEGORIES:
        got = per_label.get(category)
        if not got:
            continue
        n = sum(got.values())
        others = ", ".join(f"{c} {k}" for c, k in got.most_common() if c != category)
        print(f"{category:<12} {n:>5} {100 * got[category] / n:6.1f}%   {others}")
        shown = 0
        for (_, truth, line), guess in zip(rows, predicted, strict=True):
            if truth == category and guess != truth and shown < args.show:
                print(f"      -> {guess:<11} {line[:130]}")
                shown += 1
    for group, (agree, n) in sorted(per_group.items()):
        print(f"{group + ' lines':<18} {n:>5} {100 * agree / n:6.1f}%")
    total = sum(a for a, _ in per_group.values())
    print(f"{'overall':<18} {len(rows):>5} {100 * total / len(rows):6.1f}%  (target >= 85 %)")
    if args.second is not None:
        report_second(rows, read_labels(args.second, args.data), predicted)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
