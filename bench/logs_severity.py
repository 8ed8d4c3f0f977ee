"""Severity read from words: loghub lines with their level cut out, and this machine's routine logs.

Usage::

    .venv/bin/python bench/logs_severity.py [--data ../shared/eval/logs] [--bundle DIR] [--no-model]
        [--show N] [--systems A,B] [--local-only | --loghub-only] [--files F1,F2] [--dump F]

1. **Level-stripped loghub lines.** Each system that states a level on every line is read with
   its stated level (the ``Level`` column of loghub's structured file), the level token is cut out
   of each line (``firmware_tools.data.loghub.strip_level``), and the lines are fed, in order, as
   one source of a fresh ``LogService`` (the shipped bundle unless ``--no-model``), as
   ``edge-agent logs classify`` does. Printed per system: the confusion of stated (rows) against
   predicted (columns) severity, the share of routine lines (stated ``notice`` or below) predicted
   ``error`` or ``critical``, and the share of lines stated ``error`` or above predicted
   ``warning`` or above. By default the systems are ``SEVERITY_BENCH_SYSTEMS`` (Apache, Hadoop,
   Zookeeper), which the model never trained on: only they count for the targets.
   ``--systems`` scores others (the training systems give an in-sample guard, not a target).
2. **This machine's routine logs** (``/var/log/**/*.log``, ``dmesg`` when readable, or
   ``--files``): per file and overall, the share of lines labelled ``error`` or ``critical`` and
   the share flagged ``anomaly``.

``--dump F`` writes one JSON line per level-stripped loghub line (``system``, loghub's ``event``
id, ``stated`` and ``predicted`` severity); ``bench/ship_check.py`` pairs two bundles' dumps per
error template (``error_templates``).

Targets (issue 29): stripped lines of systems not trained on, routine lines predicted error or
critical <= 2 %, lines stated error or above predicted warning or above >= 70 %; this machine's
logs, error/critical <= 1 % overall and <= 3 % per file, flagged <= 1 % overall and <= 3 % per file.
Routine here includes ``notice`` (Apache's routine level), which is stricter than "info or below".
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from logs_flags import DEFAULT_DATA, load_model, local_inputs

from edge_agent.logs.labels import SEVERITIES
from firmware_tools.data.loghub import SEVERITY_BENCH_SYSTEMS, read_system_events, strip_level

_RANK = {s: i for i, s in enumerate(SEVERITIES)}
_ROUTINE = frozenset({"debug", "info", "notice"})
_SEVERE = frozenset({"error", "critical"})
_CHUNK = 256


def _labels(name: str, lines: list[str], model: object | None) -> list[tuple[str, bool, str]]:
    """(severity, anomaly, line) of each line, fed in order as one source of a fresh service."""
    from edge_agent.logs.service import LogService

    service = LogService(model=model)  # type: ignore[arg-type]
    out = []
    for start in range(0, len(lines), _CHUNK):
        for res in service.process(lines[start : start + _CHUNK], source=name):
            out.append((res.label.severity, res.label.anomaly, res.parsed.text))
    return out


def stripped(data: Path, system: str) -> tuple[list[str], list[str], list[str]]:
    """(lines without their level token, stated severities, loghub EventIds) of one system; lines
    whose level is unknown or not found in the header are left out."""
    lines, stated, events = [], [], []
    for line, written, severity, event in read_system_events(data, system):
        cut = strip_level(line, written) if severity is not None and written else None
        if cut and severity is not None:
            lines.append(cut)
            stated.append(severity)
            events.append(event)
    return lines, stated, events


def error_templates(rows: list[dict[str, str]]) -> dict[str, bool]:
    """Per error template (``system/event`` of the lines stated ``error`` or above, each template
    once): whether most of its lines were predicted ``warning`` or above."""
    seen: dict[str, list[int]] = {}
    for row in rows:
        if row["stated"] in _SEVERE:
            counts = seen.setdefault(f"{row['system']}/{row['event']}", [0, 0])
            counts[0] += _RANK[row["predicted"]] >= _RANK["warning"]
            counts[1] += 1
    return {key: 2 * warned >= total for key, (warned, total) in sorted(seen.items())}


def score_system(
    data: Path, system: str, model: object | None, show: int, dump: list[dict[str, str]] | None = None
) -> Counter[tuple[str, str]]:
    """The (stated, predicted) confusion of one system, printed; each line's row added to ``dump``."""
    lines, stated, events = stripped(data, system)
    labels = _labels(system, lines, model)
    if dump is not None:
        for s, e, (p, _, _) in zip(stated, events, labels, strict=True):
            dump.append({"system": system, "event": e, "stated": s, "predicted": p})
    confusion: Counter[tuple[str, str]] = Counter((s, p) for s, (p, _, _) in zip(stated, labels, strict=True))
    print(f"\n{system}: {len(lines)} lines, level cut out (rows stated, columns predicted)")
    print("  " + f"{'':<9}" + "".join(f"{p:>9}" for p in SEVERITIES))
    for s in SEVERITIES:
        if any(confusion[(s, p)] for p in SEVERITIES):
            print("  " + f"{s:<9}" + "".join(f"{confusion[(s, p)]:>9}" for p in SEVERITIES))
    _print_shares(system, confusion)
    wrong = [ln for s, (p, _, ln) in zip(stated, labels, strict=True) if s in _ROUTINE and p in _SEVERE]
    for line in wrong[:show]:
        print(f"    routine as error: {line[:150]}")
    return confusion


def _shares(confusion: Counter[tuple[str, str]]) -> tuple[int, int, int, int]:
    """(routine lines, of them predicted error/critical, severe lines, of them predicted >= warning)."""
    routine = sum(n for (s, _), n in confusion.items() if s in _ROUTINE)
    routine_high = sum(n for (s, p), n in confusion.items() if s in _ROUTINE and p in _SEVERE)
    severe = sum(n for (s, _), n in confusion.items() if s in _SEVERE)
    severe_seen = sum(n for (s, p), n in confusion.items() if s in _SEVERE and _RANK[p] >= _RANK["warning"])
    return routine, routine_high, severe, severe_seen


def _print_shares(name: str, confusion: Counter[tuple[str, str]]) -> None:
    routine, routine_high, severe, severe_seen = _shares(confusion)
    r = f"{100 * routine_high / routine:5.2f} % ({routine_high}/{routine})" if routine else "n/a"
    s = f"{100 * severe_seen / severe:5.1f} % ({severe_seen}/{severe})" if severe else "n/a"
    print(f"  {name}: routine predicted error/critical {r}; error+ predicted warning+ {s}")


def score_local(files: list[str], model: object | None, show: int) -> None:
    """Error/critical, warning and flagged shares of this machine's routine logs, per file and
    overall (warnings cost a reader's attention too, though no target counts them)."""
    print(f"\n{'local input':<44} {'lines':>6} {'err/crit':>9} {'warning':>8} {'flagged':>8}")
    total = high_total = flagged_total = warn_total = 0
    worst_high = worst_flag = 0.0
    for name, lines in local_inputs(files):
        labels = _labels(Path(name).name, lines, model)
        high = [ln for sev, _, ln in labels if sev in _SEVERE]
        flagged = sum(anomaly for _, anomaly, _ in labels)
        warned = sum(sev == "warning" for sev, _, _ in labels)
        n = len(lines)
        shares = f"{100 * len(high) / n:8.2f}% {100 * warned / n:7.2f}% {100 * flagged / n:7.2f}%"
        print(f"{name:<44} {n:>6} {shares}")
        for line in high[:show]:
            print(f"    {line[:150]}")
        total, high_total, flagged_total = total + n, high_total + len(high), flagged_total + flagged
        warn_total += warned
        worst_high, worst_flag = max(worst_high, len(high) / n), max(worst_flag, flagged / n)
    if total:
        high_share, flag_share = 100 * high_total / total, 100 * flagged_total / total
        warn_share = 100 * warn_total / total
        print(f"{'local overall':<44} {total:>6} {high_share:8.2f}% {warn_share:7.2f}% {flag_share:7.2f}%")
        print(f"{'local worst file':<44} {'':>6} {100 * worst_high:8.2f}% {'':>8} {100 * worst_flag:7.2f}%")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--no-model", action="store_true")
    ap.add_argument("--bundle", type=Path, help="bundle directory (default: the shipped one)")
    ap.add_argument("--show", type=int, default=0, help="mislabelled lines printed per input")
    ap.add_argument("--systems", default=",".join(SEVERITY_BENCH_SYSTEMS), help="comma-separated")
    ap.add_argument("--loghub-only", action="store_true")
    ap.add_argument("--local-only", action="store_true")
    ap.add_argument("--files", default="", help="comma-separated local files instead of /var/log")
    ap.add_argument("--dump", type=Path, help="write each level-stripped line's labels here (JSON lines)")
    args = ap.parse_args()
    model = load_model(args.no_model, args.bundle)
    if not args.local_only:
        systems = [s for s in args.systems.split(",") if s]
        overall: Counter[tuple[str, str]] = Counter()
        rows: list[dict[str, str]] = []
        for system in systems:
            overall += score_system(args.data, system, model, args.show, rows)
        scored = [s for s in systems if s in SEVERITY_BENCH_SYSTEMS]
        if scored != systems:
            print("\n(systems the model trained on are in-sample: not a target figure)")
        print()
        _print_shares("all systems above", overall)
        templates = error_templates(rows)
        read = sum(templates.values())
        print(f"  error templates read warning+ (most of their lines): {read} of {len(templates)}")
        if args.dump is not None:
            args.dump.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    if not args.loghub_only:
        score_local([f for f in args.files.split(",") if f], model, args.show)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
