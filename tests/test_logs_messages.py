"""Golden payloads of the two log outputs, checked against the packaged JSON schemas."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import jsonschema
import pytest

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
        "schema": "edge-agent/log-summary/1",
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
    )
    assert msg.to_dict() == {
        "schema": "edge-agent/log-alert/1",
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
        "headline": "boiler CRITICAL thermal: flame failure lockout",
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
