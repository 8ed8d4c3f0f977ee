"""The bounded priority queue, stats helpers and message payloads (golden, schema-checked)."""

from __future__ import annotations

import base64
import dataclasses
import json
import threading
import time
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import pytest

from edge_agent.config import PipelineConfig
from edge_agent.errors import PayloadError
from edge_agent.messages import load_schema
from edge_agent.messages import logs as logs_msg
from edge_agent.messages.base import SourceMessage
from edge_agent.messages.dlq import DeadLetter
from edge_agent.messages.intent import IntentMessage
from edge_agent.messages.stats import StatsMessage
from edge_agent.messages.topics import SiteTopics
from edge_agent.messages.transcript import Transcript
from edge_agent.pipeline.core import Envelope, HandlerBase, Outcome, Output, Registry, Route
from edge_agent.pipeline.handlers import IntentHandler, LogHandler
from edge_agent.pipeline.queue import LaneQueue, QueueClosed
from edge_agent.pipeline.service import Pipeline
from edge_agent.pipeline.stats import LatencyWindow, ProcessGauges, percentiles
from edge_agent.records.logs import RawLine
from edge_agent.transport.base import PublishOutcome


def lanes(capacity: int = 10) -> LaneQueue[str]:
    q: LaneQueue[str] = LaneQueue(capacity)
    q.add_lane("transcript", 0)
    q.add_lane("logs", 10)
    return q


def test_transcripts_are_served_before_logs_fifo_within_a_lane() -> None:
    q = lanes()
    for item in ("l1", "l2"):
        q.put("logs", item)
    for item in ("t1", "t2"):
        q.put("transcript", item)
    got = [q.get(0.1) for _ in range(4)]
    assert got == [("transcript", "t1"), ("transcript", "t2"), ("logs", "l1"), ("logs", "l2")]
    assert q.get(0.01) is None


def test_full_queue_blocks_the_producer_and_counts_backpressure() -> None:
    q = lanes(capacity=2)
    q.put("logs", "a")
    q.put("logs", "b")
    done = threading.Event()

    def producer() -> None:
        q.put("logs", "c")
        done.set()

    threading.Thread(target=producer, daemon=True).start()
    assert not done.wait(0.3)  # blocked: nothing was dropped, nothing was added
    assert len(q) == 2
    assert q.get(0.1) == ("logs", "a")
    assert done.wait(2)
    assert q.backpressure_waits == 1
    assert [q.get(0.1), q.get(0.1)] == [("logs", "b"), ("logs", "c")]
    assert q.high_water == 2


def test_take_more_batches_one_lane_and_stops_for_urgent_work() -> None:
    q = lanes(capacity=100)
    for i in range(5):
        q.put("logs", f"l{i}")
    assert q.take_more("logs", 3, 0.0) == ["l0", "l1", "l2"]

    def urgent() -> None:
        time.sleep(0.1)
        q.put("transcript", "t")

    threading.Thread(target=urgent, daemon=True).start()
    started = time.monotonic()
    batch = q.take_more("logs", 50, 5.0)  # would wait 5 s for more logs, but a transcript arrives
    assert batch == ["l3", "l4"]
    assert time.monotonic() - started < 4.0
    assert q.get(0.1) == ("transcript", "t")


def test_closed_queue_refuses_waiting_producers() -> None:
    q = lanes(capacity=1)
    q.put("logs", "a")
    errors: list[BaseException] = []

    def producer() -> None:
        try:
            q.put("logs", "b")
        except QueueClosed as exc:
            errors.append(exc)

    thread = threading.Thread(target=producer)
    thread.start()
    time.sleep(0.1)
    q.close()
    thread.join(2)
    assert len(errors) == 1


def test_percentiles_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentiles(values) == {"p50": 50.0, "p95": 95.0, "p99": 99.0}
    assert percentiles([]) == {"p50": 0.0, "p95": 0.0, "p99": 0.0}
    window = LatencyWindow(size=3)
    for v in (100.0, 1.0, 2.0, 3.0):
        window.add(v)
    assert window.summary()["p99"] == 3.0  # the oldest value fell out of the window
    assert window.total == 4


def _vm_rss_mb() -> float:
    """The kernel's own RSS figure (``VmRSS`` in /proc/self/status), to check the gauge against."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS in /proc/self/status")


def test_process_gauges_track_memory_and_cpu() -> None:
    """RSS follows 64 MiB being touched and agrees with the kernel; CPU percent tells an idle
    interval from a busy one and counts the CPU time the busy one took."""
    gauges = ProcessGauges()
    before = gauges.rss_mb()
    block = bytearray(64 << 20)
    for i in range(0, len(block), 4096):  # touch every page so it is resident
        block[i] = 1
    grown = gauges.rss_mb() - before
    assert 56 < grown < 80, grown
    assert abs(gauges.rss_mb() - _vm_rss_mb()) < 4
    del block
    gauges.cpu_percent()  # a fresh interval starts here
    time.sleep(0.3)
    idle = gauges.cpu_percent()
    cpu0, wall0 = time.process_time(), time.monotonic()
    while time.process_time() - cpu0 < 0.3:
        pass
    wall = time.monotonic() - wall0
    busy = gauges.cpu_percent()
    assert idle < 25, idle
    assert busy >= 0.8 * 100 * 0.3 / wall, (busy, wall)


# -- topics ---------------------------------------------------------------------------------
def test_site_topics() -> None:
    topics = SiteTopics("home/edge", "kitchen")
    assert topics.topic("intent") == "home/edge/kitchen/intent"
    assert topics.suffix("summary/kernel") == "home/edge/kitchen/summary/kernel"
    assert topics.relative("home/edge/kitchen/logs/zigbee") == ["logs", "zigbee"]
    assert topics.relative("home/edge/hall/logs/zigbee") is None
    for bad in ("a+b", "a#", "", "x/y"):
        with pytest.raises(ValueError):
            SiteTopics("edge", bad)
    with pytest.raises(ValueError):
        topics.suffix("summary/+")


# -- inputs ---------------------------------------------------------------------------------
def test_transcript_json_and_plain_text() -> None:
    t = Transcript.parse(b'{"text": " turn on the fan ", "id": 7, "lang": "en", "confidence": 0.8, "x": 1}')
    assert t == Transcript(text="turn on the fan", id="7", lang="en", confidence=0.8)
    assert Transcript.parse(b"stop the vacuum\n") == Transcript(text="stop the vacuum")
    assert Transcript.parse(t.payload()) == t  # the JSON form round-trips
    jsonschema.validate(t.to_dict(), load_schema("transcript"))
    assert Transcript.topic(SiteTopics("edge", "s1")) == "edge/s1/transcript"
    jsonschema.validate({"text": "hi", "id": 7}, load_schema("transcript"))


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"\xff\xfeabc", "not UTF-8"),
        (b"   ", "empty"),
        (b'{"text": 5}', "'text' must be a string"),
        (b'{"text": "x", "confidence": 2}', "within [0, 1]"),
        (b'{"text": "x", "confidence": true}', "must be a number"),
        (b'{"text": "x"', "invalid JSON"),
        (b'{"text": "x", "a": ' + b"[" * 40 + b"]" * 40 + b"}", "nested deeper"),
        ("x" * 5000, "longer than"),
    ],
)
def test_bad_transcripts_name_the_problem(raw: bytes | str, reason: str) -> None:
    data = raw.encode() if isinstance(raw, str) else raw
    with pytest.raises(PayloadError, match=reason.replace("[", r"\[").replace("]", r"\]")):
        Transcript.parse(data)


def test_log_payload_shapes() -> None:
    lines = logs_msg.parse_lines(b"kernel: eth0 down\n\nkernel: eth0 up\n")
    assert [ln.text for ln in lines] == ["kernel: eth0 down", "kernel: eth0 up"]
    one = logs_msg.parse_lines(b'{"msg": "disk full", "ts": 1700000000.5, "level": "error"}')
    assert (one[0].text, one[0].ts, one[0].level) == ("disk full", 1700000000.5, "error")
    many = logs_msg.parse_lines(b'[{"line": "a"}, "b", {"msg": "c", "level": "info"}]')
    assert [ln.text for ln in many] == ["a", "b", "c"]
    schema = load_schema("logs")
    jsonschema.validate([{"line": "a"}, "b"], schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"ts": 1}, schema)


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"\n\n", "no lines"),
        (b"\xc3\x28", "not UTF-8"),
    ],
)
def test_bad_log_payloads_name_the_problem(raw: bytes, reason: str) -> None:
    with pytest.raises(PayloadError, match=reason):
        logs_msg.parse_lines(raw)


@pytest.mark.parametrize(
    "raw",
    [
        b'{"ts": 1}',  # an object without a message
        b'[{"msg": "a", "ts": "noon"}]',  # a field of the wrong type
        b"[1]",
        b"[    1.234567] Rude variant of Tasks RCU enabled.",  # dmesg
        b'{"a": 1} trailing',
    ],
)
def test_json_outside_the_documented_shapes_is_a_text_line(raw: bytes) -> None:
    assert [ln.text for ln in logs_msg.parse_lines(raw)] == [raw.decode()]


def test_journald_export_entries() -> None:
    entry = (
        b'{"MESSAGE": "Started Daily apt upgrade.", "PRIORITY": "6", "SYSLOG_IDENTIFIER": "systemd",'
        b' "__REALTIME_TIMESTAMP": "1701424800250000"}'
    )
    (one,) = logs_msg.parse_lines(entry)
    assert (one.text, one.ts, one.level) == ("systemd: Started Daily apt upgrade.", 1701424800.25, "6")
    two = logs_msg.parse_lines(entry + b"\n" + entry)  # journalctl -o json: one object a line
    assert [ln.text for ln in two] == [entry.decode()] * 2
    # str.isdigit() is true for a superscript two, int() is not: no level and no time, no error
    odd_entry = entry.replace(b'"6"', b'"\\u00b2"').replace(b'"1701424800250000"', b'"\\u00b2"')
    (odd,) = logs_msg.parse_lines(odd_entry)
    assert (odd.text, odd.ts, odd.level) == ("systemd: Started Daily apt upgrade.", None, None)


def test_log_source_from_topic_levels() -> None:
    assert logs_msg.source_of(["logs", "zigbee2mqtt"]) == "zigbee2mqtt"
    assert logs_msg.source_of(["logs"]) is None
    assert logs_msg.source_of(["logs", "a", "b"]) is None
    assert logs_msg.filter_topic(SiteTopics("edge", "s1")) == "edge/s1/logs/+"


# -- outputs (golden payloads, checked against the packaged schemas) --------------------------
def test_intent_payload_golden() -> None:
    slots = {"area": {"value": "Kitchen", "raw": "kitchen", "start": 12, "end": 19, "confidence": 0.99}}
    msg = IntentMessage(
        id="abc", site="s1", text="turn on the kitchen light", intent="HassTurnOn", confidence=0.97123,
        slots=slots, latency_ms=1.23456, model="edge-intents@1.0.0",
    )
    payload = orjson.loads(msg.payload())
    assert payload == {
        "schema": "edge-agent/intent/1", "id": "abc", "site": "s1", "text": "turn on the kitchen light",
        "intent": "HassTurnOn", "confidence": 0.9712, "slots": slots, "latency_ms": 1.235,
        "model": "edge-intents@1.0.0", "mode": "normal", "step": "normal",
    }
    jsonschema.validate(payload, load_schema("intent"))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**payload, "confidence": 3}, load_schema("intent"))
    degraded = orjson.loads(dataclasses.replace(msg, mode="degraded", step="small_model").payload())
    jsonschema.validate(degraded, load_schema("intent"))
    for wrong in ({"mode": "slow"}, {"step": "rules_only"}):  # rules_only is a logs-only step
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({**degraded, **wrong}, load_schema("intent"))
    without = {k: v for k, v in payload.items() if k != "mode"}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(without, load_schema("intent"))


def test_dead_letter_caps_and_round_trips_the_payload() -> None:
    raw = bytes(range(256)) * 40
    record = json.loads(DeadLetter("bad", "edge/s/transcript", raw, 1700000000.0, cap=100).payload())
    assert base64.b64decode(record["payload_b64"]) == raw[:100]
    assert record["payload_size"] == len(raw)
    assert record["truncated"] is True
    jsonschema.validate(record, load_schema("dlq"))


def test_stats_payload_matches_schema() -> None:
    msg = StatsMessage(
        site="s", ts=1.0, uptime_s=2.0, counters={"received": 3}, queue={"depth": 0, "capacity": 8,
        "backpressure_waits": 0}, latency_ms={"count": 1.0, "p50": 1.0, "p95": 1.0, "p99": 1.0},
        rss_mb=40.0, cpu_percent=1.5,
    )
    payload = orjson.loads(msg.payload())
    assert payload["mode"] == "normal"
    jsonschema.validate(payload, load_schema("stats"))
    sla = {
        "enabled": True, "temperature_c": 82.5, "thermal_limit_c": 80.0, "switches": 1,
        "tasks": {"intents": {"step": "short_input", "steps": ["normal", "short_input"], "p95_ms": None,
                              "budget_ms": 250.0, "samples": 0}},
        "recent": [{"task": "intents", "from": "normal", "to": "short_input",
                    "reason": "temperature 82.5 C >= limit 80 C", "at": 1.0}],
    }
    degraded = orjson.loads(dataclasses.replace(msg, mode="degraded", extra={"sla": sla}).payload())
    jsonschema.validate(degraded, load_schema("stats"))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**degraded, "mode": "hot"}, load_schema("stats"))
    jsonschema.validate("online", load_schema("status"))


def test_log_batch_kind_owns_its_topic() -> None:
    topics = SiteTopics("edge", "s1")
    batch = logs_msg.LogBatch.parse("kernel", b"a\nb")
    assert (batch.source, [ln.text for ln in batch.lines]) == ("kernel", ["a", "b"])
    assert logs_msg.LogBatch.topic(topics, "kernel") == "edge/s1/logs/kernel"
    assert batch.topic(topics) == "edge/s1/logs/kernel"  # the base's topic, with its source
    assert logs_msg.source_of(topics.relative(logs_msg.LogBatch.topic(topics, "kernel")) or []) == "kernel"


def test_log_batch_is_a_message_whose_payload_round_trips() -> None:
    lines = (RawLine("eth0: link up", ts=1700000000.5, level="info"), RawLine("plain line"))
    batch = logs_msg.LogBatch("kernel", lines)
    assert isinstance(batch, SourceMessage)
    assert orjson.loads(batch.payload()) == [
        {"msg": "eth0: link up", "ts": 1700000000.5, "level": "info"},
        {"msg": "plain line"},
    ]
    jsonschema.validate(batch.to_json(), load_schema("logs"))
    assert logs_msg.LogBatch.parse("kernel", batch.payload()) == batch
    assert batch.to_dict() == {"schema": "edge-agent/logs/1", "source": "kernel", "lines": batch.to_json()}
    with pytest.raises(ValueError):
        logs_msg.LogBatch("a/b", lines)  # the source is one topic level


def test_docs_carry_every_payload_schema_verbatim() -> None:
    docs = (Path(__file__).resolve().parent.parent / "docs" / "topics.md").read_text(encoding="utf-8")
    for name in ("transcript", "logs", "intent", "summary", "alert", "dlq", "status", "stats"):
        block = f"### `{name}.schema.json`\n\n```json\n{json.dumps(load_schema(name), indent=2)}\n```"
        assert block in docs, name


# -- handler hooks ------------------------------------------------------------------------------
class _Recorder:
    """A publisher that keeps what it is given and acknowledges it at once."""

    def __init__(self) -> None:
        self.topics: list[str] = []

    def publish(self, topic: str, payload: bytes, *, qos: int = 1, retain: bool = False,
                on_done: Any = None) -> None:
        self.topics.append(topic)
        if on_done is not None:
            on_done(PublishOutcome(ok=True, reason_code=0, reason="Success"))


class _Windows(HandlerBase):
    """A handler with state over time: one output per tick, one more at flush."""

    kind = "logs"
    priority = 10
    batch_max = 1
    batch_wait_s = 0.0
    ticks = True

    def handle(self, batch: list[Envelope]) -> list[Outcome]:
        return [Outcome(inputs=batch)]

    def tick(self, now: float) -> list[Output]:
        return [Output("edge/s1/summary/tick", b"{}", "summary")]

    def flush(self, now: float) -> list[Output]:
        return [Output("edge/s1/summary/flush", b"{}", "summary")]


class _Plain(HandlerBase):
    kind = "transcript"
    priority = 0
    batch_max = 1
    batch_wait_s = 0.0

    def handle(self, batch: list[Envelope]) -> list[Outcome]:
        return [Outcome(inputs=batch)]


def _pipeline(*handlers: HandlerBase) -> tuple[Pipeline, _Recorder]:
    topics = SiteTopics("edge", "s1")
    registry = Registry()
    for handler in handlers:
        registry.add(Route(handler.kind, f"edge/s1/{handler.kind}", lambda _t: None), handler)
    recorder = _Recorder()
    settings = PipelineConfig.model_validate({"stats_interval_s": 0, "tick_interval_s": 0.05})
    return Pipeline(registry, recorder, recorder, topics, settings), recorder  # type: ignore[arg-type]


def test_handler_hooks_are_declared_no_ops_and_run_only_where_overridden() -> None:
    plain = _Plain()
    assert (plain.ticks, plain.tick(0.0), plain.flush(0.0)) == (False, [], [])
    assert LogHandler.ticks and not IntentHandler.ticks
    quiet, _ = _pipeline(_Plain())
    quiet.start()
    try:  # nothing ticks: no ticker thread
        assert "pipeline-ticker" not in [t.name for t in threading.enumerate()]
    finally:
        quiet.stop()
    pipeline, recorder = _pipeline(_Plain(), _Windows())
    pipeline.start()
    try:
        deadline = time.monotonic() + 10
        while "edge/s1/summary/tick" not in recorder.topics and time.monotonic() < deadline:
            time.sleep(0.02)
        pipeline.flush()
    finally:
        pipeline.stop()
    assert "edge/s1/summary/tick" in recorder.topics
    assert recorder.topics.count("edge/s1/summary/flush") == 1
