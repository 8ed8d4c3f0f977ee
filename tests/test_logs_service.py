"""LogService behaviour: windows by lines and time, new and surging templates, immediate alerts,
payloads valid against the packaged schemas, state kept across restarts."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from edge_agent.logs.config import LogsConfig
from edge_agent.logs.service import LogService
from edge_agent.records.logs import RawLine
from edge_agent.store import FileStore, MemoryStore


def _schema(name: str) -> dict[str, Any]:
    text = resources.files("edge_agent").joinpath("schemas", name).read_text(encoding="utf-8")
    return dict(json.loads(text))


SUMMARY = _schema("summary.schema.json")
ALERT = _schema("alert.schema.json")


def _lines(template: str, n: int, start: int = 0) -> list[RawLine]:
    return [RawLine(template.format(i=i)) for i in range(start, start + n)]


def _summaries(out: list[Any]) -> list[dict[str, Any]]:
    return [o.payload for o in out if o.topic_suffix.startswith("summary/")]


def _alerts(out: list[Any]) -> list[dict[str, Any]]:
    return [o.payload for o in out if o.topic_suffix.startswith("alert/")]


HEARTBEAT = "Jan  5 10:00:{i:02d} gw telemetry[3]: published {i} samples to broker"
PAIRING = "Jan  5 10:00:{i:02d} gw zigbee2mqtt[5]: interview of device 0x00124b00{i:04d} started"
PANIC = "Kernel panic - not syncing: Fatal exception in interrupt"


def test_window_by_line_count_closes_in_the_same_call() -> None:
    svc = LogService(config=LogsConfig(window_lines=10, window_s=3600))
    out = svc.ingest("gw", _lines(HEARTBEAT, 25), now=100.0)
    sums = _summaries(out)
    assert [s["window"]["lines"] for s in sums] == [10, 10]
    assert all(s["window"]["reason"] == "lines" for s in sums)
    for s in sums:
        jsonschema.validate(s, SUMMARY)


def test_window_by_time_closes_on_tick() -> None:
    svc = LogService(config=LogsConfig(window_s=60, window_lines=10_000))
    assert _summaries(svc.ingest("gw", _lines(HEARTBEAT, 5), now=0.0)) == []
    assert svc.tick(30.0) == []
    sums = _summaries(svc.tick(61.0))
    assert len(sums) == 1 and sums[0]["window"]["reason"] == "time" and sums[0]["window"]["lines"] == 5
    assert svc.tick(200.0) == []  # an empty window sends nothing


def test_sources_have_their_own_windows() -> None:
    svc = LogService(config=LogsConfig(window_s=60))
    svc.ingest("a", _lines(HEARTBEAT, 3), now=0.0)
    svc.ingest("b", _lines(HEARTBEAT, 7), now=10.0)
    sums = {s["source"]: s for s in _summaries(svc.tick(65.0))}
    assert set(sums) == {"a"} and sums["a"]["window"]["lines"] == 3
    sums = {s["source"]: s for s in _summaries(svc.tick(75.0))}
    assert set(sums) == {"b"} and sums["b"]["window"]["lines"] == 7


def test_new_template_and_surge_are_reported() -> None:
    cfg = LogsConfig(window_s=60, window_lines=100_000, surge_factor=3.0, surge_min_count=10)
    svc = LogService(config=cfg)
    t = 0.0
    first = None
    for w in range(4):  # steady: 20 heartbeats and 2 pairings per window
        svc.ingest("gw", _lines(HEARTBEAT, 20) + _lines(PAIRING, 2, start=w * 10), now=t)
        (summary,) = _summaries(svc.tick(t + 60))
        first = first or summary
        t += 60
    assert {n["template"] for n in first["new_templates"]} >= {
        "published <*> samples to broker",
        "interview of device <*> started",
    }
    assert summary["new_templates"] == [] and summary["surging"] == []

    # burst of pairings (x20) and a line never seen before
    svc.ingest("gw", _lines(HEARTBEAT, 20) + _lines(PAIRING, 40, start=100), now=t)
    svc.ingest(
        "gw",
        [RawLine("Jan  5 10:05:00 gw zigbee2mqtt[5]: coordinator firmware mismatch detected")],
        now=t + 2,
    )
    (summary,) = _summaries(svc.tick(t + 60))
    jsonschema.validate(summary, SUMMARY)
    surging = {s["template"]: s for s in summary["surging"]}
    assert list(surging) == ["interview of device <*> started"]
    assert surging["interview of device <*> started"]["factor"] >= 3.0
    assert [n["template"] for n in summary["new_templates"]] == ["coordinator firmware mismatch detected"]
    assert "surge" in summary["headline"] and "new" in summary["headline"]
    assert len(summary["headline"]) <= 160


def test_critical_anomaly_alerts_from_the_same_ingest_call() -> None:
    svc = LogService(config=LogsConfig(window_s=3600, alert_cooldown_s=60))
    out = svc.ingest("gw", [*_lines(HEARTBEAT, 5), RawLine(PANIC), *_lines(HEARTBEAT, 5)], now=10.0)
    alerts = _alerts(out)
    assert len(alerts) == 1 and out[0].topic_suffix == "alert/gw"
    jsonschema.validate(alerts[0], ALERT)
    assert alerts[0]["line"] == PANIC and alerts[0]["severity"] == "critical" and alerts[0]["at"] == 10.0
    assert alerts[0]["joined"] == 0
    assert _summaries(out) == []  # the window is still open: the alert did not wait for it

    # cooldown: the next incident of the template is held back, its lines counted in the next alert
    assert _alerts(svc.ingest("gw", [RawLine(PANIC)] * 3, now=20.0)) == []
    later = _alerts(svc.ingest("gw", [RawLine(PANIC)], now=100.0))
    assert len(later) == 1 and later[0]["suppressed"] == 3


def test_parameter_over_threshold_alerts_although_template_is_benign() -> None:
    svc = LogService(config=LogsConfig(window_s=3600))
    reading = "Jan  5 10:00:00 gw thermald[8]: cpu temperature {t} C"
    assert _alerts(svc.ingest("gw", [RawLine(reading.format(t=t)) for t in (51, 54, 58)], now=1.0)) == []
    alerts = _alerts(svc.ingest("gw", [RawLine(reading.format(t=97))], now=2.0))
    assert len(alerts) == 1 and alerts[0]["category"] == "thermal"
    s = _summaries(svc.flush(3.0))[0]
    assert s["anomaly_count"] == 1 and s["anomalies"][0]["line"].endswith("97 C")


def test_source_level_is_kept() -> None:
    svc = LogService(config=LogsConfig(window_lines=3))
    out = svc.ingest(
        "dev",
        [
            RawLine("valve moved", level="warning"),
            RawLine('{"msg": "valve moved", "level": "debug"}'),
            RawLine("<11>1 2026-01-01T00:00:00Z h app - - - valve moved"),
        ],
        now=1.0,
    )
    counts = _summaries(out)[0]["severity_counts"]
    assert (counts["warning"], counts["debug"], counts["error"]) == (1, 1, 1)


def test_garbage_lines_are_counted_not_fatal() -> None:
    svc = LogService(config=LogsConfig(window_lines=4, max_line_chars=4096))
    junk = [
        RawLine(bytes(range(256)).decode("latin-1")),
        RawLine("x" * 1_000_000),
        RawLine(b"\xff\xfe\xfd".decode("utf-8", "replace")),
        RawLine(""),
    ]
    (summary,) = _summaries(svc.ingest("junk", junk, now=1.0))
    jsonschema.validate(summary, SUMMARY)
    assert summary["window"]["lines"] == 4 and summary["truncated_lines"] == 1


def test_restart_keeps_template_ids(tmp_path: Path) -> None:
    cfg = LogsConfig(window_lines=5, state_dir=str(tmp_path))
    svc = LogService(config=cfg)
    first = _summaries(svc.ingest("gw", _lines(HEARTBEAT, 5), now=1.0))[0]
    svc.save()
    again = LogService(config=cfg)
    second = _summaries(again.ingest("gw", _lines(HEARTBEAT, 5, start=5), now=2.0))[0]
    assert second["top_templates"][0]["template_id"] == first["top_templates"][0]["template_id"]
    assert second["new_templates"] == []
    assert FileStore(tmp_path).load(cfg.state_key) is not None


def test_unknown_config_keys_refused() -> None:
    with pytest.raises(ValueError):
        LogsConfig.model_validate({"window_s": 10, "windows": 3})


def test_explicit_store_is_used() -> None:
    store = MemoryStore()
    svc = LogService(store=store)
    svc.ingest("gw", _lines(HEARTBEAT, 2), now=1.0)
    svc.flush(2.0)
    assert store.load("logs-templates") is not None


def test_source_limit_summarizes_the_dropped_source() -> None:
    svc = LogService(config=LogsConfig(max_sources=2, window_s=3600))
    svc.ingest("a", _lines(HEARTBEAT, 3), now=1.0)
    svc.ingest("b", _lines(HEARTBEAT, 4), now=2.0)
    out = svc.ingest("c", _lines(HEARTBEAT, 1), now=3.0)
    (dropped,) = _summaries(out)
    assert dropped["source"] == "a" and dropped["window"]["lines"] == 3
    assert dropped["window"]["reason"] == "flush"
    assert {s["source"]: s["window"]["lines"] for s in _summaries(svc.flush(4.0))} == {"b": 4, "c": 1}
