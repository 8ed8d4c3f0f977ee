"""Golden payloads of the two log outputs, checked against the packaged JSON schemas."""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any

import jsonschema
import pytest

from edge_agent.logs.config import LogsConfig
from edge_agent.messages.alert import AlertMessage
from edge_agent.messages.summary import SummaryMessage
from edge_agent.messages.topics import SiteTopics


def _schema(name: str) -> dict[str, Any]:
    return dict(
        json.loads(resources.files("edge_agent").joinpath("schemas", name).read_text(encoding="utf-8"))
    )


def test_summary_golden() -> None:
    msg = SummaryMessage(
        source="boiler",
        start=100.0,
        end=160.0,
        lines=3,
        reason="time",
        severity_counts={"debug": 0, "info": 2, "notice": 0, "warning": 0, "error": 1, "critical": 0},
        headline="boiler: 3 lines, 1 error",
        top_templates=[
            {
                "template_id": 1,
                "template": "burner on",
                "count": 2,
                "example": "burner on",
                "severity": "info",
                "category": "thermal",
            }
        ],
        anomaly_count=0,
        templates_known=2,
    )
    assert msg.to_dict() == {
        "schema": "edge-agent/log-summary/2",
        "source": "boiler",
        "window": {"start": 100.0, "end": 160.0, "lines": 3, "reason": "time"},
        "severity_counts": {"debug": 0, "info": 2, "notice": 0, "warning": 0, "error": 1, "critical": 0},
        "top_templates": [
            {
                "template_id": 1,
                "template": "burner on",
                "count": 2,
                "example": "burner on",
                "severity": "info",
                "category": "thermal",
            }
        ],
        "new_templates": [],
        "surging": [],
        "anomalies": [],
        "anomaly_count": 0,
        "truncated_lines": 0,
        "templates_known": 2,
        "story": None,
        "headline": "boiler: 3 lines, 1 error",
    }
    jsonschema.validate(msg.to_dict(), _schema("summary.schema.json"))
    assert msg.topic(SiteTopics("edge", "home")) == "edge/home/summary/boiler"
    assert SummaryMessage.topic_suffix("boiler") == "summary/boiler"
    assert json.loads(msg.payload()) == msg.to_dict()


def test_alert_golden() -> None:
    msg = AlertMessage(
        source="boiler",
        at=12.5,
        line="flame failure lockout",
        template_id=4,
        template="flame failure lockout",
        severity="critical",
        category="thermal",
        score=0.93,
        values={"device": {"distinct": 2, "top": [["burner1", 3], ["burner2", 1]]}},
    )
    assert msg.to_dict() == {
        "schema": "edge-agent/log-alert/3",
        "source": "boiler",
        "at": 12.5,
        "line_ts": None,
        "line": "flame failure lockout",
        "template_id": 4,
        "template": "flame failure lockout",
        "severity": "critical",
        "category": "thermal",
        "score": 0.93,
        "suppressed": 0,
        "values": {"device": {"distinct": 2, "top": [["burner1", 3], ["burner2", 1]]}},
        "joined": 0,
        "headline": "boiler CRITICAL thermal: flame failure lockout (2 devices, top burner1 (3))",
    }
    jsonschema.validate(msg.to_dict(), _schema("alert.schema.json"))
    assert AlertMessage.topic_suffix("boiler") == "alert/boiler"


@pytest.mark.parametrize("source", ["a/b", "+", "", "x#"])
def test_bad_source_refused(source: str) -> None:
    with pytest.raises(ValueError):
        AlertMessage(
            source=source,
            at=0.0,
            line="x",
            template_id=1,
            template="x",
            severity="critical",
            category="other",
            score=1.0,
        )


def test_summary_and_alert_say_who_and_where() -> None:
    from edge_agent.logs.config import LogsConfig
    from edge_agent.logs.service import LogService
    from edge_agent.records.logs import RawLine

    hosts = ["203.0.113.7"] * 6 + ["198.51.100.23"] * 3 + ["192.0.2.41"]
    lines = [
        RawLine(f"Jan  5 09:00:{i:02d} gw sshd[{i}]: Failed password for admin from {ip} port {4000 + i}")
        for i, ip in enumerate(hosts)
    ]
    svc = LogService(config=LogsConfig(window_s=3600, alert_threshold=0.5))
    out = svc.ingest("sshd", lines, now=10.0) + svc.flush(20.0)
    [summary] = [o.payload for o in out if o.topic_suffix == "summary/sshd"]
    jsonschema.validate(summary, _schema("summary.schema.json"))
    story = summary["story"]
    top = [["203.0.113.7", 6], ["198.51.100.23", 3], ["192.0.2.41", 1]]
    assert story["values"]["ip"] == {"distinct": 3, "top": top}
    assert story["values"]["user"]["top"] == [["admin", 10]]
    assert (
        "10× Failed password for admin from <*> port <*> from 3 IPs, top 203.0.113.7 (6)"
        in (summary["headline"])
    )
    alerts = [o.payload for o in out if o.topic_suffix == "alert/sshd"]
    assert alerts and alerts[0]["values"]["ip"]["top"][0] == ["203.0.113.7", 1]
    for alert in alerts:
        jsonschema.validate(alert, _schema("alert.schema.json"))


def _headline_counts(headline: str) -> dict[str, int]:
    counts = dict.fromkeys(("critical", "error", "warning"), 0)
    for n, word in re.findall(r"(\d+) (critical|errors?|warnings?)\b", headline.split(";")[0]):
        counts[word.rstrip("s")] = int(n)
    return counts


def test_headline_counts_are_the_summary_counts() -> None:
    from edge_agent.logs.service import LogService

    svc = LogService()
    lines = ["2026-01-05 09:00:01 0 [Note] Plugin 'FEEDBACK' is disabled."] * 3 + [
        "2026-01-05 09:00:02 0 [ERROR] Plugin 'unix_socket' init function returned error.",
        "Jan  5 09:00:03 gw kernel: usb 1-1: device descriptor read/64, failed",
        "Jan  5 09:00:04 gw kernel: Kernel panic - not syncing: Attempted to kill init!",
        "2026-01-05 09:00:05 0 [Warning] Aborted connection 7 to db",
    ]
    out = svc.ingest("db", lines, now=1.0) + svc.flush(2.0)
    [summary] = [o.payload for o in out if o.topic_suffix == "summary/db"]
    counts = summary["severity_counts"]
    assert _headline_counts(summary["headline"]) == {k: counts[k] for k in ("critical", "error", "warning")}
    assert summary["headline"].startswith("db: 7 lines, 1 critical, 2 errors, 1 warning; ")


def test_headline_shows_constant_values_and_cuts_only_between_words() -> None:
    from edge_agent.logs.service import LogService

    start = (
        "2026-01-05 09:00:{i:02d} 0 [ERROR] Starting MariaDB 10.11.6 source revision 3d8f2a1 as process {i}"
    )
    svc = LogService(config=LogsConfig(window_s=3600))
    out = svc.ingest("db", [start.format(i=i) for i in range(5)], now=1.0) + svc.flush(2.0)
    [summary] = [o.payload for o in out if o.topic_suffix == "summary/db"]
    assert (
        summary["top_templates"][0]["template"] == "Starting MariaDB <*> source revision <*> as process <*>"
    )
    story = "5× Starting MariaDB 10.11.6 source revision 3d8f2a1 as process <*>"
    assert summary["headline"].split("; ")[1] == story

    quoted = "'the server was upgraded without running the upgrade tool, run it now'"
    line = "2026-01-05 09:01:{i:02d} 0 [ERROR] Table mysql.plugin is missing; " + quoted + " says the log {i}"
    svc = LogService(config=LogsConfig(window_s=3600))
    out = svc.ingest("db", [line.format(i=i) for i in range(6)], now=1.0) + svc.flush(2.0)
    [summary] = [o.payload for o in out if o.topic_suffix == "summary/db"]
    headline = summary["headline"]
    assert len(headline) <= 160 and "6× Table mysql.plugin is missing" in headline
    assert quoted in headline or "'the" not in headline  # a quoted phrase whole, or not at all
    assert all(
        word in line or word in ("…", "<*>") for word in headline.split("6× ")[1].split("; ")[0].split()
    )


def test_text_is_shortened_between_words_and_outside_quotes() -> None:
    from edge_agent.messages.text import shorten

    assert shorten("short enough", 20) == "short enough"
    assert (
        shorten("debconf: falling back to frontend 'Read line' now", 40)
        == "debconf: falling back to frontend …"
    )
    assert shorten("a 'quoted phrase that is long' b", 20) == "a …"
    assert shorten("Supercalifragilistic", 10) == ""
    alert = AlertMessage(
        source="gw",
        at=1.0,
        line="mmc0: timeout waiting for hardware interrupt " + "while reading the card " * 8,
        template_id=1,
        template="x",
        severity="error",
        category="storage",
        score=0.9,
        joined=3,
    )
    head = alert.headline
    assert head.startswith("gw ERROR storage: mmc0: timeout waiting") and head.endswith(" … (+3 lines)")
    assert " car …" not in head and "(+3 lines)" in head


def test_alert_headline_shows_the_program_and_the_message_without_the_header() -> None:
    from edge_agent.logs.service import LogService

    line = "Mar  4 07:22:09 gw-porch kernel: [86973.660127] Out of memory: Killed process 1877 (python3)"
    out = LogService().ingest("gw", [line], now=1.0)
    [alert] = [o.payload for o in out if o.topic_suffix == "alert/gw"]
    assert alert["line"] == line  # the record keeps the whole line
    sev, cat = alert["severity"].upper(), alert["category"]
    app = "" if cat == "kernel" else "kernel: "
    assert alert["headline"] == f"gw {sev} {cat}: {app}Out of memory: Killed process 1877 (python3)"

    def head(app: str | None, category: str) -> str:
        msg = AlertMessage(
            source="gw", at=1.0, line="Mar  4 07:12:48 gw-porch kernel: mmc0: Timeout", template_id=1,
            template="x", severity="warning", category=category, score=0.9, message="mmc0: Timeout", app=app,
        )  # fmt: skip
        return msg.headline

    assert head("kernel", "kernel") == "gw WARNING kernel: mmc0: Timeout"  # not "kernel: kernel:"
    assert head("kernel", "storage") == "gw WARNING storage: kernel: mmc0: Timeout"
    assert head(None, "storage") == "gw WARNING storage: mmc0: Timeout"
    assert head("x" * 41, "storage") == "gw WARNING storage: mmc0: Timeout"  # too long to show


def test_story_names_its_one_value_once() -> None:
    from edge_agent.logs.service import LogService

    line = "Mar  4 07:07:0{i} gw sshd[2288]: Invalid user u{i} from 203.0.113.77 port 4011{i}"
    lines = [line.format(i=i) for i in range(3)]
    svc = LogService(config=LogsConfig(window_s=3600))
    out = svc.ingest("gw", lines, now=1.0) + svc.flush(2.0)
    [summary] = [o.payload for o in out if o.topic_suffix == "summary/gw"]
    story = summary["story"]
    if story is None or "ip" not in (story.get("values") or {}):
        pytest.fail(f"expected a story with IPs: {summary['headline']}")
    told = summary["headline"].split("; ")[1]  # the story's part
    assert told.startswith("3× ") and told.count("203.0.113.77") == 1, summary["headline"]
