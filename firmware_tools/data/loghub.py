"""Real log lines for training the log heads: LogPAI loghub 2k samples of some systems.

The build reads them from a directory given on the command line (``--log-dir``, one folder per
system holding ``<System>_2k.log`` and ``<System>_2k.log_structured.csv``); they are never part
of the project. Only the systems in ``TRAIN_SYSTEMS`` are read (HDFS, Spark, OpenStack, Android,
HealthApp, Windows, Proxifier). The others of the 13 stay out as a development set for the log
benches: Apache, Hadoop and Zookeeper, the kept-out systems that state a level on every line, are
the ones ``bench/logs_severity.py`` scores (``SEVERITY_BENCH_SYSTEMS``); Linux, Mac and OpenSSH
state none. BGL, HPC and Thunderbird are never read.

Labels, and which are known:

- severity: the level the line states (``Level`` column), mapped onto ours; unknown where the
  system states none (HealthApp, Proxifier). Severity must also be read from the words: from a
  share (``STRIP_SHARE``) of the lines of each system that states levels, the level token is cut
  out of the line and the stated level stays the label, so the model learns what routine and
  failing lines of real systems say without being told (``strip_level``);
- category: one per system (what the system is: HDFS is storage, Proxifier network...), unknown
  for Android, whose lines are about too many parts of a device for one;
- anomaly: unknown. These samples are mostly routine, but nothing marks the failures among
  them, so the teacher is not trained on their anomaly, and the student takes the teacher's.
"""

from __future__ import annotations

import csv
import random
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "SEVERITY_BENCH_SYSTEMS",
    "STRIP_SHARE",
    "TRAIN_SYSTEMS",
    "LoghubLine",
    "load_loghub",
    "read_system",
    "stated_levels",
    "strip_level",
]

# system -> our category (edge_agent/logs/labels.py); None: unknown. An Android system log is
# about radios, power, displays and apps alike, so one category for all of it taught the category
# head that any line it could not place is "application"; its lines train severity only
TRAIN_SYSTEMS: dict[str, str | None] = {
    "HDFS": "storage",
    "Spark": "application",
    "OpenStack": "service",
    "Android": None,
    "HealthApp": "application",
    "Windows": "service",
    "Proxifier": "network",
}
# kept-out systems whose lines state a level: what the severity bench scores, never trained on
SEVERITY_BENCH_SYSTEMS: tuple[str, ...] = ("Apache", "Hadoop", "Zookeeper")
# share of a level-stating training system's lines whose level token is cut out
STRIP_SHARE = 0.5
# the level token is looked for in the header, i.e. this far into the line
_HEADER_CHARS = 160

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
    category: str | None
    anomaly: bool = False  # placeholder; ``anomaly_known`` is False
    anomaly_known: bool = False
    level_shown: bool = True  # False: the stated level token was cut out of ``line``


def strip_level(line: str, level: str) -> str | None:
    """``line`` without its stated level token (``INFO``, ``[notice]``, ``W``, ``Info,``): the
    first whitespace-separated token in the header that is the level, bare, bracketed or with a
    colon. None when the line does not show it."""
    pattern = re.compile(rf"(?<!\S)\[?{re.escape(level)}\]?[:,]?(?!\S)")
    m = pattern.search(line, 0, min(len(line), _HEADER_CHARS))
    if m is None:
        return None
    before, after = line[: m.start()].rstrip(), line[m.end() :].lstrip()
    return f"{before} {after}" if before else after


def stated_levels(csv_path: Path) -> list[tuple[str, str | None]]:
    """Per structured row: (the level as the line writes it, our severity or None)."""
    with csv_path.open(encoding="utf-8", errors="replace", newline="") as fh:
        rows = list(csv.DictReader(fh))
    out = []
    for row in rows:
        raw = (row.get("Level") or "").strip()
        out.append((raw, _LEVELS.get(raw.lower())))
    return out


def read_system(log_dir: Path, system: str) -> list[tuple[str, str, str | None]]:
    """(line, level as written, our severity) of each line of ``system`` (also the benches')."""
    raw = log_dir / system / f"{system}_2k.log"
    structured = log_dir / system / f"{system}_2k.log_structured.csv"
    if not raw.is_file() or not structured.is_file():
        raise FileNotFoundError(f"{log_dir}: missing {raw.name} or {structured.name} of {system}")
    lines = [ln for ln in raw.read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()]
    levels = stated_levels(structured)
    if len(levels) != len(lines):
        raise ValueError(f"{system}: {len(lines)} lines but {len(levels)} structured rows")
    return [(line, written, sev) for line, (written, sev) in zip(lines, levels, strict=True)]


def load_loghub(
    log_dir: Path, systems: dict[str, str | None] | None = None, strip_share: float = STRIP_SHARE
) -> list[LoghubLine]:
    """The raw lines of each training system, labelled as the module docstring says. Which lines
    lose their level token is drawn from a generator seeded by the system's name: the same
    files always give the same lines."""
    out: list[LoghubLine] = []
    for system, category in (systems or TRAIN_SYSTEMS).items():
        draw = random.Random(f"strip-level:{system}")
        for line, written, severity in read_system(log_dir, system):
            stripped = None
            if severity is not None and written and draw.random() < strip_share:
                stripped = strip_level(line, written)
            if stripped:
                out.append(LoghubLine(stripped, severity, category, level_shown=False))
            else:
                out.append(LoghubLine(line, severity, category))
    return out
