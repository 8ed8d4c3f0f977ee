"""Real log lines for training the log heads: LogPAI loghub 2k samples of some systems.

The build reads them from a directory given on the command line (``--log-dir``, one folder per
system holding ``<System>_2k.log`` and ``<System>_2k.log_structured.csv``); they are never part
of the project. Only the systems in ``TRAIN_SYSTEMS`` are read; the others of the 13 (Apache,
Linux, Mac, OpenSSH, Zookeeper) stay out as a development set for the log benches, and BGL, HPC
and Thunderbird are never read.

Labels, and which are known:

- severity: the level the line states (``Level`` column), mapped onto ours; unknown where the
  system states none (HealthApp, Proxifier);
- category: one per system (what the system is: HDFS is storage, Proxifier network...);
- anomaly: unknown. These samples are mostly routine, but nothing marks the failures among
  them, so the teacher is not trained on their anomaly, and the student takes the teacher's.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

__all__ = ["TRAIN_SYSTEMS", "LoghubLine", "load_loghub"]

# system -> our category (edge_agent/logs/labels.py)
TRAIN_SYSTEMS: dict[str, str] = {
    "HDFS": "storage",
    "Hadoop": "application",
    "Spark": "application",
    "OpenStack": "service",
    "Android": "application",
    "HealthApp": "application",
    "Windows": "service",
    "Proxifier": "network",
}

_LEVELS = {
    "v": "debug",
    "d": "debug",
    "debug": "debug",
    "i": "info",
    "info": "info",
    "notice": "notice",
    "w": "warning",
    "warn": "warning",
    "warning": "warning",
    "e": "error",
    "error": "error",
    "f": "critical",
    "fatal": "critical",
    "critical": "critical",
}


@dataclass(frozen=True)
class LoghubLine:
    """A raw line with the labels that are known for it (None: unknown)."""

    line: str
    severity: str | None
    category: str
    anomaly: bool = False  # placeholder; ``anomaly_known`` is False
    anomaly_known: bool = False


def _levels(csv_path: Path) -> list[str | None]:
    with csv_path.open(encoding="utf-8", errors="replace", newline="") as fh:
        rows = list(csv.DictReader(fh))
    return [_LEVELS.get((r.get("Level") or "").strip().lower()) for r in rows]


def load_loghub(log_dir: Path, systems: dict[str, str] | None = None) -> list[LoghubLine]:
    """The raw lines of each training system, labelled as the module docstring says."""
    out: list[LoghubLine] = []
    for system, category in (systems or TRAIN_SYSTEMS).items():
        raw = log_dir / system / f"{system}_2k.log"
        structured = log_dir / system / f"{system}_2k.log_structured.csv"
        if not raw.is_file() or not structured.is_file():
            raise FileNotFoundError(f"{log_dir}: missing {raw.name} or {structured.name} of {system}")
        lines = [ln for ln in raw.read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()]
        levels = _levels(structured)
        if len(levels) != len(lines):
            raise ValueError(f"{system}: {len(lines)} lines but {len(levels)} structured rows")
        out.extend(LoghubLine(line, level, category) for line, level in zip(lines, levels, strict=True))
    return out
