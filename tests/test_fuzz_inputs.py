"""Property-based fuzzing of every input topic of a running agent (real mosquitto, real model).

Each generated payload must end as exactly one DLQ record or a result: an intent for a transcript,
a reply for a bundle command, and for log lines a place in a summary (the lines of every summary of
a source add up to the lines accepted from it). The agent never crashes, no input hits an internal
error, and its RSS stays bounded. Inputs: random bytes, invalid UTF-8, payloads over the size
limit, deeply nested JSON, wrong types, control characters, plus plausible ones.

The expected outcome of a log payload never comes from the parser under test: for any payload, the
documented contract (docs/topics.md, edge_agent/messages/logs.py) says which are refused (over the
size limit, not UTF-8, nothing but white space) and that everything else is accepted as text or
JSON; the line counts that the summaries must add up to come from payloads built line by line, in
the documented text and JSON shapes, whose count is known by construction.
"""

from __future__ import annotations

import base64
import itertools
import json
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import paho.mqtt.client as paho
import pytest
from broker import AgentProcess, Collector, TestBroker, publish_wait, unique
from conftest import agent_config
from faultkit import rss_kb, wait_until
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

MAX_PAYLOAD = 4096  # the agent's pipeline.max_payload_bytes in this module
DLQ_CAP = 256
FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
_ids = itertools.count()

control = st.text(alphabet=st.characters(whitelist_categories=("Cc", "Cf", "Cs", "Zl", "Zp")), max_size=64)
junk_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def _nested(depth: int, wrap: str) -> bytes:
    inner = "[" * depth + "]" * depth
    return (wrap % inner).encode() if wrap else inner.encode()


payloads = st.one_of(
    st.binary(max_size=512),  # random bytes
    st.binary(min_size=1, max_size=64).map(lambda b: b"\xff" + b + b"\xc3"),  # invalid UTF-8
    st.integers(MAX_PAYLOAD + 1, MAX_PAYLOAD * 8).map(lambda n: b"x" * n),  # over the size limit
    st.integers(33, 3000).flatmap(  # deeper than the agent's 32 levels
        lambda d: st.sampled_from(["", '{"text": %s}', '{"msg": %s}', '[{"line": %s}]']).map(
            lambda w: _nested(d, w)
        )
    ),
    junk_json.map(lambda v: json.dumps(v).encode()),  # wrong shapes and types
    st.fixed_dictionaries({"text": junk_json}).map(lambda v: json.dumps(v).encode()),
    st.fixed_dictionaries({"msg": junk_json, "level": junk_json}).map(lambda v: json.dumps(v).encode()),
    control.map(lambda s: s.encode("utf-8", "surrogatepass")),  # control characters
    st.fixed_dictionaries({"text": control}).map(lambda v: json.dumps(v).encode()),
    st.text(max_size=200).map(str.encode),  # plausible text
    st.sampled_from([b"turn on the kitchen light", b'{"text": "pause the music"}', b"kernel: eth0 down"]),
)


# Log payloads built in the documented shapes, each with the number of lines it holds.
_line_text = st.text(  # one line: no control characters (line breaks among them), no surrogates
    alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), max_size=60
)
_tag = st.from_regex(r"[a-z][a-z0-9_.-]{0,11}", fullmatch=True)
_text_line = st.builds(lambda tag, body: f"{tag}: {body}", _tag, _line_text)  # starts with a letter
_blank = st.sampled_from(["", " ", "\t", "  \t "])


@st.composite
def _text_payload(draw: st.DrawFn) -> tuple[bytes, int]:
    """Lines joined by \n or \r\n, with blank lines around and between them (not counted)."""
    lines = draw(st.lists(_text_line, min_size=1, max_size=30))
    sep = draw(st.sampled_from(["\n", "\r\n"]))
    parts: list[str] = []
    for line in lines:
        parts += [*draw(st.lists(_blank, max_size=2)), line]
    parts += draw(st.lists(_blank, max_size=2))
    return sep.join(parts).encode(), len(lines)


_json_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)  # any, even ""
_ts = st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(2**53), 2**53)
_entry = st.one_of(
    _json_text,
    st.fixed_dictionaries({"msg": _json_text}),
    st.fixed_dictionaries({"line": _json_text}, optional={"ts": _ts, "level": st.text(max_size=10)}),
    st.fixed_dictionaries(
        {"MESSAGE": _json_text},
        optional={
            "PRIORITY": st.sampled_from("01234567"),
            "SYSLOG_IDENTIFIER": _tag,
            "__REALTIME_TIMESTAMP": st.integers(0, 2**52).map(str),
        },
    ),
)
_json_payload = st.one_of(
    st.lists(_entry, min_size=1, max_size=12).map(lambda es: (json.dumps(es).encode(), len(es))),
    _entry.filter(lambda e: isinstance(e, dict)).map(lambda e: (json.dumps(e).encode(), 1)),
)
# refused by construction: nothing but white space, not UTF-8, over the size limit
_refused = st.one_of(
    st.lists(st.sampled_from([" ", "\t", "\n", "\r\n"]), max_size=8).map(lambda ws: "".join(ws).encode()),
    st.binary(max_size=64).map(lambda b: b + b"\xc3"),  # a lead byte with nothing after it
    st.integers(MAX_PAYLOAD + 1, MAX_PAYLOAD * 4).map(lambda n: b"kernel: x\n" * (n // 10 + 1)),
).map(lambda p: (p, None))
counted_logs = st.one_of(_text_payload(), _json_payload, _refused).filter(
    lambda pair: pair[1] is None or len(pair[0]) <= MAX_PAYLOAD
)


class Fuzzed:
    """The running agent and what the tests sent it."""

    def __init__(self, agent: AgentProcess, collect: Collector, client: paho.Client, site: str) -> None:
        self.agent = agent
        self.collect = collect
        self.client = client
        self.site = site
        self.sent: Counter[str] = Counter()
        self.lines_by_source: Counter[str] = Counter()
        self.rss_start_kb = 0

    def topic(self, suffix: str) -> str:
        return f"edge/{self.site}/{suffix}"

    def outputs(self, suffix: str) -> list[bytes]:
        return self.collect.on(self.topic(suffix))

    def dlq_for(self, topic: str) -> list[dict[str, Any]]:
        return [r for r in (json.loads(p) for p in self.outputs("dlq")) if r["topic"] == topic]

    def stats(self) -> dict[str, Any]:
        found = self.outputs("stats")
        return json.loads(found[-1]) if found else {}

    def publish(self, suffix: str, payload: bytes) -> None:
        publish_wait(self.client, self.topic(suffix), payload)
        self.sent[suffix] += 1

    def alive(self) -> bool:
        return self.agent.proc is not None and self.agent.proc.poll() is None


@pytest.fixture(scope="module")
def fuzzed(broker: TestBroker, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fuzzed]:
    tmp = tmp_path_factory.mktemp("fuzz")
    site = unique("fz")
    incoming = tmp / "incoming"
    incoming.mkdir()
    config = agent_config(
        broker, site,
        pipeline={"stats_interval_s": 0.2, "tick_interval_s": 0.2, "max_payload_bytes": MAX_PAYLOAD,
                  "dlq_payload_max_bytes": DLQ_CAP},
        logs={"window_s": 1.0},
        reliability={"state_dir": str(tmp / "state"), "bundles": {"install_from": [str(incoming)]}},
    )  # fmt: skip
    agent = AgentProcess(config, tmp, engine="real").start()
    client = broker.client()
    collect = Collector(client, f"edge/{site}/#")
    try:
        collect.wait_for(lambda _m: collect.on(f"edge/{site}/status")[-1:] == [b"online"], timeout=90)
        state = Fuzzed(agent, collect, client, site)
        state.publish("transcript", b"turn on the kitchen light")  # warm: first inference allocates
        collect.wait_count(state.topic("intent"), 1, timeout=30)
        state.rss_start_kb = rss_kb(agent.proc.pid)  # type: ignore[union-attr]
        yield state
    finally:
        client.disconnect()
        client.loop_stop()
        agent.kill()


def _check_dlq_record(record: dict[str, Any], topic: str, payload: bytes) -> None:
    assert record["topic"] == topic
    assert record["reason"] and "internal error" not in record["reason"], record["reason"]
    kept = base64.b64decode(record["payload_b64"])
    assert kept == payload[: len(kept)] and len(kept) == min(len(payload), DLQ_CAP)


@FUZZ
@given(payload=payloads)
def test_transcript_topic(fuzzed: Fuzzed, payload: bytes) -> None:
    topic = fuzzed.topic("transcript")
    intents_before, dlq_before = len(fuzzed.outputs("intent")), len(fuzzed.dlq_for(topic))
    fuzzed.publish("transcript", payload)

    def outputs() -> int:
        return len(fuzzed.outputs("intent")) + len(fuzzed.dlq_for(topic)) - intents_before - dlq_before

    assert wait_until(lambda: outputs() > 0, 20), f"no intent and no DLQ record for {payload[:80]!r}"
    time.sleep(0.02)
    assert outputs() == 1, "more than one output for one input"
    dlq = fuzzed.dlq_for(topic)
    if len(dlq) > dlq_before:
        _check_dlq_record(dlq[-1], topic, payload)
    else:
        intent = json.loads(fuzzed.outputs("intent")[-1])
        assert intent["schema"] == "edge-agent/intent/1" and intent["text"]
    assert fuzzed.alive()


def _accepted(payload: bytes) -> bool:
    """Whether the documented contract accepts a log payload: within the size limit, UTF-8, and
    not only white space (anything else is text if it is not one of the JSON shapes)."""
    if len(payload) > MAX_PAYLOAD:
        return False
    try:
        return bool(payload.decode("utf-8").strip())
    except UnicodeDecodeError:
        return False


def _send_log(fuzzed: Fuzzed, source: str, payload: bytes, accepted: bool) -> None:
    """Publish one log payload; assert it settled as ``accepted`` says (a DLQ record or none)."""
    topic = fuzzed.topic(f"logs/{source}")
    dlq_before = len(fuzzed.dlq_for(topic))
    settled_before = fuzzed.stats().get("counters", {}).get("settled", 0)
    fuzzed.publish(f"logs/{source}", payload)
    settled = wait_until(lambda: fuzzed.stats().get("counters", {}).get("settled", 0) > settled_before, 20)
    assert settled, f"log input never settled: {payload[:80]!r}"
    if not accepted:
        # "settled" may count an earlier input first: wait for this input's own record
        wait_until(lambda: len(fuzzed.dlq_for(topic)) > dlq_before, 10)
    dlq = fuzzed.dlq_for(topic)
    if not accepted:
        assert len(dlq) == dlq_before + 1, f"invalid log payload without DLQ record: {payload[:80]!r}"
        _check_dlq_record(dlq[-1], topic, payload)
    else:
        assert len(dlq) == dlq_before, f"valid log payload went to the DLQ: {dlq[-1]['reason']}"
    assert fuzzed.alive()


@FUZZ
@given(source=st.sampled_from(["junk-a", "junk.b"]), payload=payloads)
def test_logs_topic(fuzzed: Fuzzed, source: str, payload: bytes) -> None:
    _send_log(fuzzed, source, payload, _accepted(payload))


@FUZZ
@given(source=st.sampled_from(["kernel", "zigbee", "wifi-1", "power.mgr"]), case=counted_logs)
def test_logs_topic_counted(fuzzed: Fuzzed, source: str, case: tuple[bytes, int | None]) -> None:
    payload, lines = case
    assert _accepted(payload) == (lines is not None)  # the two oracles agree on what is refused
    _send_log(fuzzed, source, payload, lines is not None)
    if lines is not None:
        fuzzed.lines_by_source[source] += lines


@FUZZ
@given(payload=payloads | st.sampled_from([b'{"path": "/etc"}', b'{"id": 1, "path": "../../x"}']))
def test_bundle_command_topic(fuzzed: Fuzzed, payload: bytes) -> None:
    before = len(fuzzed.outputs("bundle/reply")) + len(fuzzed.dlq_for(fuzzed.topic("bundle/install")))
    fuzzed.publish("bundle/install", payload)

    def answered() -> int:
        return len(fuzzed.outputs("bundle/reply")) + len(fuzzed.dlq_for(fuzzed.topic("bundle/install")))

    assert wait_until(lambda: answered() > before, 20), f"no reply for {payload[:80]!r}"
    replies = fuzzed.outputs("bundle/reply")
    if len(replies):
        assert json.loads(replies[-1])["ok"] is False  # nothing valid was ever offered
    assert fuzzed.alive()


def test_accepted_log_lines_all_reach_a_summary(fuzzed: Fuzzed) -> None:
    assert fuzzed.lines_by_source, "the fuzz run accepted no log lines at all"

    def summarized() -> Counter[str]:  # of the sources that got payloads of known line counts only
        total: Counter[str] = Counter()
        for topic, payload, _ in fuzzed.collect.messages:
            if topic.startswith(fuzzed.topic("summary/")):
                body = json.loads(payload)
                if body["source"] in fuzzed.lines_by_source:
                    total[body["source"]] += body["window"]["lines"]
        return total

    assert wait_until(lambda: summarized() == fuzzed.lines_by_source, 30), (
        summarized(), fuzzed.lines_by_source,
    )  # fmt: skip


def test_agent_survived_without_internal_errors_and_bounded_rss(fuzzed: Fuzzed) -> None:
    assert fuzzed.alive()
    counters = fuzzed.stats()["counters"]
    assert counters.get("handler_errors", 0) == 0
    reasons = [json.loads(p)["reason"] for p in fuzzed.outputs("dlq")]
    assert not [r for r in reasons if "internal error" in r]
    grown_mb = (rss_kb(fuzzed.agent.proc.pid) - fuzzed.rss_start_kb) / 1024  # type: ignore[union-attr]
    print(f"fuzz: sent {dict(fuzzed.sent)}, DLQ records {len(reasons)}, RSS growth {grown_mb:.1f} MB")
    assert grown_mb < 64, f"RSS grew by {grown_mb:.1f} MB"
