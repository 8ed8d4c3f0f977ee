"""Sanity of the log-line generator: labels, determinism, variety of formats."""

from __future__ import annotations

import json
import random
import re
from collections import Counter

import pytest

from edge_agent.logs.labels import CATEGORIES, SEVERITIES
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
