"""Sanity of the log-line generator: labels, determinism, variety of formats."""

from __future__ import annotations

import json
import random
import re
from collections import Counter

import pytest

from edge_agent.logs.labels import CATEGORIES, SEVERITIES
from edge_agent.logs.parse import parse_line
from firmware_tools.data import log_chatter
from firmware_tools.data import logs as logs_module
from firmware_tools.data.logs import EVENTS, _procedural_category, generate


def test_deterministic_from_seed() -> None:
    assert generate(5, 200) == generate(5, 200)
    assert generate(5, 200) != generate(6, 200)


def test_labels_are_known_and_all_used() -> None:
    data = generate(1, 5000)
    assert {e.severity for e in data} <= set(SEVERITIES)
    assert {e.category for e in data} == set(CATEGORIES) - {
        c for c in CATEGORIES if not any(ev.category == c for ev in EVENTS)
    }
    assert {e.severity for e in data} == {ev.severity for ev in EVENTS}
    share = sum(e.anomaly for e in data) / len(data)
    assert 0.2 < share < 0.5


def test_no_unfilled_placeholders_and_no_newlines() -> None:
    for e in generate(2, 3000):
        assert not re.search(r"\{[a-zA-Z0-9_]+\}", e.line), e.line
        assert "\n" not in e.line and e.line.strip()


def test_varied_header_formats() -> None:
    lines = [e.line for e in generate(3, 3000)]
    kinds = Counter()
    for line in lines:
        if re.match(r"<\d+>1 \d{4}-", line):
            kinds["rfc5424"] += 1
        elif re.match(r"(<\d+>)?[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d ", line, re.I):
            kinds["rfc3164/journal"] += 1
        elif line.startswith("{"):
            json.loads(line)
            kinds["json"] += 1
        elif re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} ", line):
            kinds["java"] += 1
        elif re.match(r"\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} ", line):
            kinds["logcat"] += 1
        elif re.match(r"(<\d>)?\[\s*\d+\.\d+\]", line):
            kinds["dmesg"] += 1
        else:
            kinds["bare/other"] += 1
    assert len(kinds) == 7 and min(kinds.values()) > 50, kinds


def test_anomaly_is_not_just_the_level() -> None:
    data = generate(4, 5000)
    # some anomalies are logged below error, and some error-level-looking words are routine
    assert any(e.anomaly and e.severity in ("warning", "info", "notice") for e in data)
    assert any(not e.anomaly and re.search(r"error", e.line, re.I) for e in data)
    assert any(e.anomaly and not re.search(r"error|fail|err\b", e.line, re.I) for e in data)


def test_procedural_category_is_read_from_the_line() -> None:
    assert _procedural_category("Saved {obj} {id} ({n} bytes)", "volume") == "storage"
    assert _procedural_category("Sending {obj} {id} to {ip}:{port}", "packet") == "network"
    assert _procedural_category("Lost connection to {comp} at {ip}:{port}", None) == "network"
    assert _procedural_category("Committed {obj} {id}", "transaction") == "application"


def test_procedural_line_without_a_level_is_labelled_by_its_wording(monkeypatch: pytest.MonkeyPatch) -> None:
    hidden = [(fmt, weight, 0.0) for fmt, weight, _ in logs_module._FORMATS]
    monkeypatch.setattr(logs_module, "_FORMATS", tuple(hidden))
    r = random.Random(9)
    data = [logs_module._example(r, procedural_share=1.0) for _ in range(2000)]
    assert all(e.severity == ("error" if e.anomaly else "info") for e in data)
    assert {e.category for e in data} == {"storage", "network", "application"}


def test_routine_chatter_is_plentiful_routine_and_mostly_without_a_level(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    r = random.Random(11)
    picked = [logs_module._pick_event(r) for _ in range(5000)]
    quiet_routine = [e for e in picked if e.quiet and not e.anomaly]
    assert len(quiet_routine) > 0.25 * len(picked)  # of the written events; 55% of all lines
    chatter = tuple(e for e in EVENTS if e.quiet)
    assert len(chatter) == len(log_chatter.ROUTINE) + len(log_chatter.FAULTS)
    monkeypatch.setattr(logs_module, "EVENTS", chatter)
    data = [logs_module._example(r, procedural_share=0.0) for _ in range(3000)]
    routine = [e for e in data if not e.anomaly]
    assert len(routine) > 1900 and all(e.severity in ("info", "notice") for e in routine)
    assert all(e.severity in ("error", "critical") for e in data if e.anomaly)
    stated = [e for e in routine if parse_line(e.line).level is not None]
    assert len(stated) < 0.3 * len(routine)  # the model must read these as routine from their words


def test_boot_inventory_is_kernel_and_quiet_faults_are_severe_anomalies() -> None:
    for cat, sev, anomaly, _apps, templates in log_chatter.ROUTINE:
        assert not anomaly and sev in ("info", "notice")
        if any("BIOS" in t or "PCI" in t or "Power Button" in t for t in templates):
            assert cat == "kernel"
    wordless = 0
    for _cat, sev, anomaly, _apps, templates in log_chatter.FAULTS:
        assert anomaly and sev in ("error", "critical")
        wordless += sum(not re.search(r"error|fail", t, re.I) for t in templates)
    assert wordless >= 40  # faults in their own words, not only in "error"/"failed"
    r = random.Random(12)
    picked = [logs_module._pick_event(r) for _ in range(5000)]
    assert sum(e.quiet and e.anomaly for e in picked) > 0.06 * len(picked)


def test_lines_quoted_as_mislabelled_in_the_issue_stay_out_of_the_generator() -> None:
    """The bench measures generalization on these (issue 29), so they must not be training data."""
    written = " ".join(t for e in EVENTS for t in e.templates).lower()
    for phrase in (
        "selecting previously unselected package",
        "to provide",
        "falling back to frontend",
        "mhz processor",
        "execute disable",
        "paravirtualized kernel",
        "gb pages for direct mapping",
        "dmi not present",
        "nmi watchdog permanently disabled",
    ):
        assert phrase not in written, phrase
