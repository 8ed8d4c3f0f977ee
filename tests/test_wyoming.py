"""The Wyoming intent and handle service inside the real agent (shipped model, real mosquitto),
spoken to with the wyoming library's own client: every event type, malformed and oversized
events, idle and busy clients, 50 clients at once, stats; the agent keeps serving MQTT."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import paho.mqtt.client as paho
import pytest
from broker import AgentProcess, Collector, TestBroker, eventually, publish_wait, unique
from conftest import agent_config
from wyoming.asr import Transcript
from wyoming.client import AsyncTcpClient
from wyoming.error import Error
from wyoming.event import Event
from wyoming.handle import Handled, NotHandled
from wyoming.info import Describe, Info, SelectProgram
from wyoming.intent import Intent, NotRecognized, Recognize
from wyoming.ping import Ping, Pong

from edge_agent.bridges.ha_plan import NO_STATES_TEXT, TIMERS_TEXT
from edge_agent.bridges.wyoming import HANDLE_PROGRAM, INTENT_PROGRAM, spoken_confirmation
from edge_agent.config import parse
from edge_agent.errors import ConfigError

HOME = {
    "areas": ["Kitchen", "Bedroom"],
    "entities": [
        {"name": "Kitchen Light", "domain": "light", "area": "Kitchen"},
        {"name": "Bedroom Lamp", "domain": "light", "area": "Bedroom"},
    ],
}
MAX_EVENT = 4096
MAX_CLIENTS = 60
IDLE_S = 3.0
TURN_ON = "turn on the kitchen light"
NONSENSE = "who wrote hamlet"  # out of scope (the test is about the reply, not the model)


class Agent:
    def __init__(self, proc: AgentProcess, site: str, port: int) -> None:
        self.proc, self.site, self.port = proc, site, port

    def client(self, read_timeout: float = 30.0) -> AsyncTcpClient:
        return AsyncTcpClient("127.0.0.1", self.port, connect_timeout=10, read_timeout=read_timeout)


@pytest.fixture(scope="module")
def agent(broker: TestBroker, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Agent]:
    site = unique("wy")
    tmp = tmp_path_factory.mktemp("wyoming")
    config = agent_config(
        broker, site, home=HOME, pipeline={"stats_interval_s": 0.5},
        wyoming={"enabled": True, "port": 0, "max_clients": MAX_CLIENTS, "idle_timeout_s": IDLE_S,
                 "max_event_bytes": MAX_EVENT, "zeroconf": True, "ha_version": "2025.4"},
    )
    proc = AgentProcess(config, tmp).start()
    try:
        assert eventually(lambda: _listening(proc) is not None, timeout=120), proc.log()[-3000:]
        port = _listening(proc)
        assert port is not None
        yield Agent(proc, site, port)
    finally:
        proc.kill()


def _listening(proc: AgentProcess) -> int | None:
    ports = [e["port"] for e in proc.events() if e.get("event") == "wyoming.listening"]
    return ports[-1] if ports else None


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


async def _ask(agent: Agent, *events: Event) -> list[Event]:
    """Send the events on one connection; one reply event per request (not for select-program)."""
    out: list[Event] = []
    async with agent.client() as client:
        for event in events:
            await client.write_event(event)
            if SelectProgram.is_type(event.type):
                continue
            reply = await client.read_event()
            assert reply is not None, f"connection closed after {event.type}"
            out.append(reply)
    return out


def _entities(event: Event) -> dict[str, Any]:
    return {e.name: e.value for e in Intent.from_event(event).entities}


# -- describe, ping, unknown events --------------------------------------------------------------
def test_describe_gives_an_intent_and_a_handle_program_in_english(agent: Agent) -> None:
    [reply] = _run(_ask(agent, Describe().event()))
    info = Info.from_event(reply)
    [intent], [handle] = info.intent, info.handle
    assert (intent.name, handle.name) == (INTENT_PROGRAM, HANDLE_PROGRAM)
    for program in (intent, handle):
        [model] = program.models
        assert program.installed and model.installed and model.languages == ["en"]
        assert model.description is not None
        assert "HassTurnOn" in model.description and "HassStartTimer" in model.description
        assert "__none__" not in model.description
    assert not info.asr and not info.tts and not info.wake


def test_ping_and_unknown_events_keep_the_connection(agent: Agent) -> None:
    async def go() -> list[Event]:
        async with agent.client() as client:
            await client.write_event(Event(type="audio-start", data={"rate": 16000}))  # dropped
            await client.write_event(Ping(text="hello").event())
            pong = await client.read_event()
            await client.write_event(Describe().event())
            info = await client.read_event()
            assert pong is not None and info is not None
            return [pong, info]

    pong, info = _run(go())
    assert Pong.is_type(pong.type) and pong.data["text"] == "hello"
    assert Info.is_type(info.type)


def test_zeroconf_is_optional_and_its_outcome_is_logged(agent: Agent) -> None:
    """Without the 'zeroconf' package (not a dependency) the service runs unannounced, saying why."""
    events = {e["event"]: e for e in agent.proc.events()}
    try:
        import zeroconf  # noqa: F401
    except ImportError:
        assert events["wyoming.zeroconf_unavailable"]["reason"] == "the 'zeroconf' package is not installed"
    else:
        assert "wyoming.zeroconf_announced" in events or "wyoming.zeroconf_failed" in events
    [reply] = _run(_ask(agent, Ping().event()))
    assert Pong.is_type(reply.type)


# -- recognize -----------------------------------------------------------------------------------
def test_recognize_gives_the_intent_with_normalized_entities_and_echoes_context(agent: Agent) -> None:
    context = {"conversation_id": "c-1"}
    [reply] = _run(_ask(agent, Recognize(text=TURN_ON, context=context).event()))
    assert Intent.is_type(reply.type), reply
    intent = Intent.from_event(reply)
    assert intent.name == "HassTurnOn"
    entities = _entities(reply)
    assert entities == {"name": "Kitchen Light", "domain": "light"}
    assert intent.text == "Turned on the Kitchen Light."
    assert intent.context == context


def test_recognize_normalizes_values(agent: Agent) -> None:
    [reply] = _run(_ask(agent, Recognize(text="set the bedroom lamp to fifty percent").event()))
    assert Intent.from_event(reply).name == "HassLightSet"
    entities = _entities(reply)
    assert entities["brightness"] == 50 and entities["name"] == "Bedroom Lamp"


def test_the_satellites_area_from_the_context_fills_the_area(agent: Agent) -> None:
    without, with_area = _run(_ask(
        agent,
        Recognize(text="turn off the lights").event(),
        Recognize(text="turn off the lights", context={"area": "Bedroom"}).event(),
    ))
    assert Intent.from_event(with_area).name == "HassTurnOff"
    assert _entities(with_area).get("area") == "Bedroom"
    assert "area" not in _entities(without)


def test_recognize_out_of_scope_is_not_recognized(agent: Agent) -> None:
    [reply] = _run(_ask(agent, Recognize(text=NONSENSE, context={"conversation_id": "c-2"}).event()))
    assert NotRecognized.is_type(reply.type), reply
    assert NotRecognized.from_event(reply).context == {"conversation_id": "c-2"}


# -- transcript: the intent program by default, the handle program when selected -----------------
def test_transcript_goes_to_the_intent_program_by_default(agent: Agent) -> None:
    context = {"conversation_id": "c-3", "device_id": "sat-1"}
    [reply] = _run(_ask(agent, Transcript(text=TURN_ON, context=context, language="en").event()))
    assert Intent.from_event(reply).name == "HassTurnOn"
    assert Intent.from_event(reply).context == context


def test_transcript_on_the_handle_program_is_handled_with_a_spoken_confirmation(agent: Agent) -> None:
    done, question, nonsense = _run(_ask(
        agent,
        SelectProgram(name=HANDLE_PROGRAM).event(),
        Transcript(text=TURN_ON, context={"conversation_id": "c-4"}).event(),
        Transcript(text="is the bedroom lamp on").event(),
        Transcript(text=NONSENSE).event(),
    ))
    assert Handled.is_type(done.type), done
    handled = Handled.from_event(done)
    assert handled.text == "Turned on the Kitchen Light."
    assert handled.context == {"conversation_id": "c-4"}
    assert NotHandled.is_type(question.type), question  # a state question cannot be answered here
    assert NotHandled.is_type(nonsense.type), nonsense


def test_transcripts_get_what_the_listening_home_assistant_can_run(agent: Agent) -> None:
    """The agent was told HA 2025.4 and cannot read states: 'brighter' (our extension) and a plain
    timer are explained in words, a question is sent with an honest sentence; a plain recognize
    still gives the model's own intent."""
    brighter, question, timer, raw = _run(_ask(
        agent,
        Transcript(text="make the kitchen light brighter").event(),
        Transcript(text="is the bedroom lamp on").event(),
        Transcript(text="set a timer for 5 minutes").event(),
        Recognize(text="make the kitchen light brighter").event(),
    ))
    assert NotHandled.is_type(brighter.type), brighter
    assert NotHandled.from_event(brighter).text == (
        "I can't see how bright the Kitchen Light is now, so say a level, like 50 percent.")
    assert Intent.from_event(question).name == "HassGetState"
    assert Intent.from_event(question).text == NO_STATES_TEXT
    assert NotHandled.from_event(timer).text == TIMERS_TEXT
    assert Intent.from_event(raw).name == "EdgeLightSetRelative"
    versions = [e for e in agent.proc.events() if e.get("event") == "wyoming.ha_version"]
    assert versions and versions[-1]["source"] == "config" and versions[-1]["version"] == "2025.4"
    explained = [e for e in agent.proc.events() if e.get("event") == "wyoming.explained"]
    assert {e["intent"] for e in explained} >= {"EdgeLightSetRelative", "HassStartTimer"}


def test_select_program_back_and_forth_and_unknown_program(agent: Agent) -> None:
    unknown, to_intent = _run(_select_unknown_then_intent(agent))
    assert Error.is_type(unknown.type) and Error.from_event(unknown).code == "malformed-event"
    assert Intent.is_type(to_intent.type)


async def _select_unknown_then_intent(agent: Agent) -> list[Event]:
    async with agent.client() as client:
        await client.write_event(SelectProgram(name=HANDLE_PROGRAM).event())
        await client.write_event(SelectProgram(name="nope").event())
        unknown = await client.read_event()
        await client.write_event(SelectProgram(name=INTENT_PROGRAM).event())
        await client.write_event(Transcript(text=TURN_ON).event())
        to_intent = await client.read_event()
        assert unknown is not None and to_intent is not None
        return [unknown, to_intent]


# -- malformed, oversized, idle, busy --------------------------------------------------------------
async def _raw(agent: Agent, data: bytes, replies: int = 1, then: Event | None = None) -> list[Event | None]:
    """Write raw bytes, read ``replies`` events (None: closed), then optionally one request more."""
    async with agent.client(read_timeout=15) as client:
        assert client._writer is not None
        client._writer.write(data)
        await client._writer.drain()
        out: list[Event | None] = [await client.read_event() for _ in range(replies)]
        if then is not None:
            await client.write_event(then)
            out.append(await client.read_event())
        return out


def _code(event: Event | None) -> str | None:
    assert event is not None and Error.is_type(event.type), event
    return Error.from_event(event).code


def test_malformed_events_get_an_error_and_the_connection_goes_on(agent: Agent) -> None:
    for bad in (b"{not json\n", b"[1, 2]\n", b'{"data": {}}\n', b'{"type": "recognize"}\n',
                b'{"type": "recognize", "data": {"text": ""}}\n',
                b'{"type": "transcript", "data": {"text": "hi", "context": 7}}\n',
                b'{"type": "recognize", "data_length": 5}\n[1,2]'):
        error, info = _run(_raw(agent, bad, then=Describe().event()))
        assert _code(error) == "malformed-event", bad
        assert info is not None and Info.is_type(info.type), bad


def test_a_length_that_cannot_be_trusted_ends_the_connection(agent: Agent) -> None:
    error, closed = _run(_raw(agent, b'{"type": "recognize", "data_length": -4}\n', replies=2))
    assert _code(error) == "malformed-event" and closed is None


def test_oversized_events_are_refused_with_an_error(agent: Agent) -> None:
    big_data = json.dumps({"type": "recognize", "data_length": MAX_EVENT * 4}).encode() + b"\n"
    error, closed = _run(_raw(agent, big_data, replies=2))
    assert _code(error) == "event-too-large" and closed is None
    big_payload = json.dumps({"type": "audio-chunk", "payload_length": 10**9}).encode() + b"\n"
    error, closed = _run(_raw(agent, big_payload, replies=2))
    assert _code(error) == "event-too-large" and closed is None
    long_line = b'{"type": "recognize", "data": {"text": "' + b"a" * (MAX_EVENT * 2) + b'"}}\n'
    error, closed = _run(_raw(agent, long_line, replies=2))
    assert _code(error) == "event-too-large" and closed is None
    [reply] = _run(_ask(agent, Recognize(text=TURN_ON).event()))  # and the next client is served
    assert Intent.is_type(reply.type)


def test_an_idle_client_is_timed_out(agent: Agent) -> None:
    async def go() -> tuple[Event | None, Event | None, float]:
        loop = asyncio.get_running_loop()
        async with agent.client(read_timeout=IDLE_S * 5) as client:
            start = loop.time()
            error = await client.read_event()
            waited = loop.time() - start
            return error, await client.read_event(), waited

    error, closed, waited = _run(go())
    assert _code(error) == "idle-timeout" and closed is None
    assert waited >= IDLE_S * 0.9


def test_clients_beyond_max_clients_are_refused_and_served_again_later(agent: Agent) -> None:
    async def go() -> tuple[list[Event | None], Event | None, Event | None]:
        clients = [agent.client() for _ in range(MAX_CLIENTS)]
        for c in clients:
            await c.connect()
        for c in clients:  # each holds a slot once it has been answered
            await c.write_event(Ping().event())
        answers = [await c.read_event() for c in clients]
        async with agent.client() as extra:
            refused = await extra.read_event()
        for c in clients:
            await c.disconnect()
        await asyncio.sleep(0.5)
        async with agent.client() as later:
            await later.write_event(Ping().event())
            served = await later.read_event()
        return answers, refused, served

    answers, refused, served = _run(go())
    assert all(a is not None and Pong.is_type(a.type) for a in answers)
    assert _code(refused) == "busy"
    assert served is not None and Pong.is_type(served.type)


# -- many clients, stats, the MQTT path beside it -------------------------------------------------
def test_fifty_concurrent_clients_are_all_answered(agent: Agent) -> None:
    texts = [TURN_ON, "turn off the bedroom lamp", NONSENSE, "set a timer for 5 minutes",
             "turn off the lights"]

    async def one(i: int) -> tuple[int, Event]:
        text = texts[i % len(texts)]
        [reply] = await _ask(agent, Recognize(text=text, context={"conversation_id": f"n{i}"}).event())
        return i, reply

    async def go() -> list[tuple[int, Event]]:
        return await asyncio.gather(*(one(i) for i in range(50)))

    replies = _run(go())
    assert len(replies) == 50
    expected = {0: "HassTurnOn", 1: "HassTurnOff", 2: None, 3: "HassStartTimer", 4: "HassTurnOff"}
    for i, reply in replies:
        want = expected[i % len(texts)]
        if want is None:
            assert NotRecognized.is_type(reply.type), (i, reply)
        else:
            assert Intent.from_event(reply).name == want, (i, reply)
        assert reply.data["context"] == {"conversation_id": f"n{i}"}


def test_stats_count_wyoming_requests_and_mqtt_still_works_with_one_model(
    agent: Agent, broker: TestBroker, client: paho.Client
) -> None:
    collect = Collector(client, f"edge/{agent.site}/#")
    _run(_ask(agent, Recognize(text=TURN_ON).event()))

    def counted(_m: object) -> bool:
        stats = [orjson.loads(p) for p in collect.on(f"edge/{agent.site}/stats")]
        return any(s["counters"].get("wyoming_recognize", 0) >= 50 for s in stats)

    collect.wait_for(counted, timeout=30)
    counters = orjson.loads(collect.on(f"edge/{agent.site}/stats")[-1])["counters"]
    for key in ("wyoming_describe", "wyoming_transcript", "wyoming_intent", "wyoming_not_recognized",
                "wyoming_handled", "wyoming_not_handled", "wyoming_explained", "wyoming_malformed",
                "wyoming_too_large",
                "wyoming_idle_timeouts", "wyoming_refused_busy", "wyoming_connections"):
        assert counters.get(key, 0) >= 1, (key, counters)
    # the MQTT path answers with the same model; the model was opened once
    publish_wait(client, f"edge/{agent.site}/transcript", orjson.dumps({"text": TURN_ON, "id": "m1"}))
    [intent] = collect.wait_count(f"edge/{agent.site}/intent", 1, timeout=30)
    assert orjson.loads(intent)["intent"] == "HassTurnOn"
    assert [e["event"] for e in agent.proc.events()].count("app.runtime_open") == 1
    assert agent.proc.proc is not None and agent.proc.proc.poll() is None


# -- config and the pure confirmation -----------------------------------------------------------
def test_config_is_off_by_default_and_errors_name_the_field() -> None:
    config = parse({})
    assert config.wyoming.enabled is False and config.wyoming.zeroconf is False
    with pytest.raises(ConfigError, match=r"wyoming\.port"):
        parse({"wyoming": {"port": 70000}})
    with pytest.raises(ConfigError, match=r"wyoming\.transcript_program"):
        parse({"wyoming": {"transcript_program": "llm"}})
    with pytest.raises(ConfigError, match=r"wyoming\.listen: unknown key"):
        parse({"wyoming": {"listen": "x"}})


def test_a_port_in_use_leaves_the_agent_serving_mqtt(
    broker: TestBroker, client: paho.Client, tmp_path: Path, agents: list[AgentProcess]
) -> None:
    site = unique("wy")
    collect = Collector(client, f"edge/{site}/#")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        config = agent_config(broker, site, wyoming={"enabled": True, "port": port, "zeroconf": True})
        proc = AgentProcess(config, tmp_path).start()
        agents.append(proc)
        collect.wait_for(lambda _m: b"online" in collect.on(f"edge/{site}/status"), timeout=120)
        publish_wait(client, f"edge/{site}/transcript", orjson.dumps({"text": TURN_ON, "id": "p1"}))
        [intent] = collect.wait_count(f"edge/{site}/intent", 1, timeout=60)
    assert orjson.loads(intent)["intent"] == "HassTurnOn"
    events = [e["event"] for e in proc.events()]
    assert "wyoming.listen_failed" in events and "wyoming.listening" not in events


def test_spoken_confirmations() -> None:
    assert spoken_confirmation("HassTurnOn", {"name": "Kitchen Light", "area": "Kitchen"}) == (
        "Turned on the Kitchen Light.")
    assert spoken_confirmation("HassTurnOff", {"area": "Bedroom", "domain": "light"}) == (
        "Turned off the Bedroom lights.")
    assert spoken_confirmation("HassLightSet", {"name": "Lamp", "brightness": 40}) == (
        "Set the Lamp to 40 percent.")
    assert spoken_confirmation("HassStartTimer", {"minutes": 5}) == "Timer started for 5 minutes."
    assert spoken_confirmation("HassStartTimer", {"hours": 1, "minutes": 30}) == (
        "Timer started for 1 hour and 30 minutes.")
    noon = dt.datetime(2026, 3, 2, 12, 5)
    assert spoken_confirmation("HassGetCurrentTime", {}, now=noon) == "It is 12:05 PM."
    assert spoken_confirmation("HassGetCurrentDate", {}, now=noon) == "Today is Monday, March 2."
    assert spoken_confirmation("HassGetState", {"name": "Lamp"}) is None
    assert spoken_confirmation("HassGetWeather", {}) is None
    assert spoken_confirmation("HassTurnOff", {"area": "Bedroom", "domain": "fan", "name": "all"}) == (
        "Turned off the Bedroom fans.")
    assert spoken_confirmation("HassTurnOn", {"name": "Garage Door", "domain": "cover"}) == (
        "Opened the Garage Door.")


def test_sigterm_with_clients_connected_stops_the_agent_cleanly(agent: Agent) -> None:
    """Last in this module: it stops the module's agent."""

    async def go() -> int:
        async with agent.client(read_timeout=60) as held:
            await held.write_event(Ping().event())
            assert await held.read_event() is not None
            loop = asyncio.get_running_loop()
            code = await loop.run_in_executor(None, agent.proc.terminate)
            return int(code)

    assert _run(go()) == 0
    assert "app.stopped" in [e["event"] for e in agent.proc.events()]
