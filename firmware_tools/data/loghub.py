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
- category: one per event template, labelled by hand from the definitions in docs/logs.md and
  read from ``loghub_categories.tsv`` next to this module (System, EventId, category; no loghub
  text): a line gets the category of its structured row's ``EventId``, i.e. of what the line is
  about (a Spark task is application, its block store storage, its acls auth; an Android wake lock
  is power, its Wi-Fi radio wireless), not of the system that wrote it. A line whose EventId has no
  row there is refused (``ValueError``) rather than given a default. The file keys on the EventId
  alone: it was labelled from the 2k samples' own template files, and a loghub release that
  numbered its templates otherwise would be mislabelled;
- anomaly: unknown. These samples are mostly routine, but nothing marks the failures among
  them, so the teacher is not trained on their anomaly, and the student takes the teacher's.
"""

from __future__ import annotations

import csv
import random
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from edge_agent.logs.labels import CATEGORIES

__all__ = [
    "CATEGORY_FILE",
    "SEVERITY_BENCH_SYSTEMS",
    "STRIP_SHARE",
    "TRAIN_SYSTEMS",
    "LoghubLine",
    "load_loghub",
    "read_system",
    "stated_levels",
    "strip_level",
    "template_categories",
]

# the systems whose lines are trained on; their lines' categories: CATEGORY_FILE
TRAIN_SYSTEMS: tuple[str, ...] = (
    "HDFS",
    "Spark",
    "OpenStack",
    "Android",
    "HealthApp",
    "Windows",
    "Proxifier",
)
# (system, EventId) -> category, one row per event template of the training systems, by hand
CATEGORY_FILE = Path(__file__).with_name("loghub_categories.tsv")
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


def template_categories(path: Path = CATEGORY_FILE) -> dict[tuple[str, str], str]:
    """(system, EventId) -> category of each row of ``path`` (``#`` lines are comments). A row
    that is not three fields, names a category the model does not have or repeats a key is
    refused."""
    out: dict[tuple[str, str], str] = {}
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not text.strip() or text.startswith("#"):
            continue
        fields = text.split("\t")
        if len(fields) != 3 or fields[2] not in CATEGORIES:
            raise ValueError(f"{path.name}:{number}: not System<TAB>EventId<TAB>category: {text!r}")
        system, event, category = fields
        if (system, event) in out:
            raise ValueError(f"{path.name}:{number}: {system} {event} is labelled twice")
        out[system, event] = category
    return out


def _structured_rows(csv_path: Path) -> list[dict[str, str]]:
    with csv_path.open(encoding="utf-8", errors="replace", newline="") as fh:
        return list(csv.DictReader(fh))


def stated_levels(csv_path: Path) -> list[tuple[str, str | None]]:
    """Per structured row: (the level as the line writes it, our severity or None)."""
    return [_level(row) for row in _structured_rows(csv_path)]


def _level(row: dict[str, str]) -> tuple[str, str | None]:
    raw = (row.get("Level") or "").strip()
    return raw, _LEVELS.get(raw.lower())


def _read_events(log_dir: Path, system: str) -> list[tuple[str, str, str | None, str]]:
    """(line, level as written, our severity, EventId or "") of each line of ``system``."""
    raw = log_dir / system / f"{system}_2k.log"
    structured = log_dir / system / f"{system}_2k.log_structured.csv"
    if not raw.is_file() or not structured.is_file():
        raise FileNotFoundError(f"{log_dir}: missing {raw.name} or {structured.name} of {system}")
    lines = [ln for ln in raw.read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()]
    rows = _structured_rows(structured)
    if len(rows) != len(lines):
        raise ValueError(f"{system}: {len(lines)} lines but {len(rows)} structured rows")
    return [
        (line, *_level(row), (row.get("EventId") or "").strip())
        for line, row in zip(lines, rows, strict=True)
    ]


def read_system_events(log_dir: Path, system: str) -> list[tuple[str, str, str | None, str]]:
    """(line, level as written, our severity, loghub EventId or "") of each line of ``system``."""
    return _read_events(log_dir, system)


def read_system(log_dir: Path, system: str) -> list[tuple[str, str, str | None]]:
    """(line, level as written, our severity) of each line of ``system`` (also the benches')."""
    return [(line, written, sev) for line, written, sev, _ in _read_events(log_dir, system)]


def load_loghub(
    log_dir: Path, systems: Iterable[str] | None = None, strip_share: float = STRIP_SHARE
) -> list[LoghubLine]:
    """The raw lines of each training system (or of ``systems``: names, or a dict keyed by them),
    labelled as the module docstring says. Which lines lose their level token is drawn from a
    generator seeded by the system's name: the same files always give the same lines."""
    labels = template_categories()
    out: list[LoghubLine] = []
    for system in TRAIN_SYSTEMS if systems is None else systems:
        events = _read_events(log_dir, system)
        unlabelled = sorted({event or "(none)" for *_, event in events if (system, event) not in labels})
        if unlabelled:
            raise ValueError(
                f"{system}: no category in {CATEGORY_FILE.name} for EventId {', '.join(unlabelled)}"
            )
        draw = random.Random(f"strip-level:{system}")
        for line, written, severity, event in events:
            category = labels[system, event]
            stripped = None
            if severity is not None and written and draw.random() < strip_share:
                stripped = strip_level(line, written)
            if stripped:
                out.append(LoghubLine(stripped, severity, category, level_shown=False))
            else:
                out.append(LoghubLine(line, severity, category))
    return out
