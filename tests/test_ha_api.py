"""The agent reads Home Assistant's REST API (version, states, areas) with a token.

HA itself cannot run in the default test run (tests/test_ha_wyoming_e2e.py runs a real HA core);
here a small HTTP server answers the three requests with HA's JSON shapes and checks the token,
and the real agent (shipped model, real mosquitto) answers Wyoming transcripts with what it read."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from broker import AgentProcess, TestBroker, eventually, unique
from conftest import agent_config
from wyoming.asr import Transcript
from wyoming.client import AsyncTcpClient
from wyoming.event import Event
from wyoming.handle import NotHandled
from wyoming.intent import Intent

from edge_agent.bridges.ha_api import AREAS_TEMPLATE, HaApi, HaApiError, HaCache

TOKEN = "test-token-8f2c"
STATES = [
    {"entity_id": "light.kitchen_light", "state": "on",
     "attributes": {"friendly_name": "Kitchen Light", "brightness": 128}},
    {"entity_id": "light.bedroom_lamp", "state": "off", "attributes": {"friendly_name": "Bedroom Lamp"}},
    {"entity_id": "media_player.tv", "state": "playing",
     "attributes": {"friendly_name": "TV", "volume_level": 0.5}},
]
AREAS = {"light.kitchen_light": "Kitchen", "light.bedroom_lamp": "Bedroom", "media_player.tv": None}
HOME = {
    "areas": ["Kitchen", "Bedroom"],
    "entities": [
        {"name": "Kitchen Light", "domain": "light", "area": "Kitchen"},
        {"name": "Bedroom Lamp", "domain": "light", "area": "Bedroom"},
        {"name": "TV", "domain": "media_player"},
    ],
}


class FakeHomeAssistant(ThreadingHTTPServer):
    """Answers GET /api/config, GET /api/states and POST /api/template (the area map) as HA does."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.version = "2025.4.4"
        self.requests: list[str] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: FakeHomeAssistant

    def log_message(self, *args: Any) -> None:
        pass

    def _answer(self, status: int, body: Any) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _authorized(self) -> bool:
        self.server.requests.append(f"{self.command} {self.path}")
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            self._answer(401, {"message": "Unauthorized"})
            return False
        return True

    def do_GET(self) -> None:  # http.server's naming
        if not self._authorized():
            return
        if self.path == "/api/config":
            self._answer(200, {"version": self.server.version, "location_name": "Home"})
        elif self.path == "/api/states":
            self._answer(200, STATES)
        else:
            self._answer(404, {"message": "not found"})

    def do_POST(self) -> None:
        if not self._authorized():
            return
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path != "/api/template" or body.get("template") != AREAS_TEMPLATE:
            self._answer(400, {"message": "unexpected template"})
            return
        ids = [s["entity_id"] for s in STATES]
        self._answer(200, json.dumps({"ids": ids, "areas": [AREAS[i] for i in ids]}).encode())


@pytest.fixture
def fake_ha() -> Iterator[FakeHomeAssistant]:
    server = FakeHomeAssistant()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_the_client_reads_version_states_and_areas(fake_ha: FakeHomeAssistant) -> None:
    api = HaApi(fake_ha.url, TOKEN, 3.0)
    assert api.config()["version"] == "2025.4.4"
    assert [s["entity_id"] for s in api.states()] == [s["entity_id"] for s in STATES]
    assert api.areas() == {"light.kitchen_light": "Kitchen", "light.bedroom_lamp": "Bedroom"}
    assert TOKEN not in repr(api)


def test_a_wrong_token_or_no_home_assistant_is_a_clear_error(fake_ha: FakeHomeAssistant) -> None:
    with pytest.raises(HaApiError, match=r"GET /api/config: HTTP 401 \(check the token") as caught:
        HaApi(fake_ha.url, "wrong", 3.0).config()
    assert "wrong" not in str(caught.value)
    with pytest.raises(HaApiError, match="GET /api/states"):
        HaApi("http://127.0.0.1:9", TOKEN, 1.0).states()


def test_the_cache_asks_for_the_version_once_and_reports_failures_once(fake_ha: FakeHomeAssistant) -> None:
    errors: list[tuple[str, str]] = []
    now = [0.0]
    cache = HaCache(HaApi(fake_ha.url, TOKEN, 3.0), lambda what, err: errors.append((what, err)),
                    clock=lambda: now[0])
    assert cache.version() == "2025.4.4" and cache.version() == "2025.4.4"
    assert fake_ha.requests.count("GET /api/config") == 1
    states = cache.states()
    assert states is not None and {s.entity_id: s.area for s in states}["light.kitchen_light"] == "Kitchen"
    fake_ha.version = "2025.11.0"
    now[0] += 301  # past the cache
    assert cache.version() == "2025.11.0"
    broken = HaCache(HaApi(fake_ha.url, "wrong", 3.0), lambda what, err: errors.append((what, err)))
    assert broken.version() is None and broken.states() is None
    assert [what for what, _ in errors] == ["version", "states"]
    assert all(TOKEN not in err and "wrong" not in err for _, err in errors)


# -- the agent ----------------------------------------------------------------------------------
def _port(agent: AgentProcess) -> int | None:
    found = [e["port"] for e in agent.events() if e.get("event") == "wyoming.listening"]
    return found[-1] if found else None


async def _say(port: int, *texts: str) -> list[Event]:
    out: list[Event] = []
    for text in texts:  # one connection per request, as HA does
        async with AsyncTcpClient("127.0.0.1", port, connect_timeout=10, read_timeout=30) as client:
            await client.write_event(Transcript(text=text, context={"conversation_id": "c"}).event())
            reply = await client.read_event()
            assert reply is not None
            out.append(reply)
    return out


def test_the_agent_answers_from_home_assistants_states(
    fake_ha: FakeHomeAssistant, broker: TestBroker, tmp_path: Path, agents: list[AgentProcess]
) -> None:
    token = tmp_path / "ha_token"
    token.write_text(TOKEN + "\n", encoding="utf-8")
    token.chmod(0o600)
    config = agent_config(broker, unique("haapi"), home=HOME, wyoming={
        "enabled": True, "port": 0, "ha_url": fake_ha.url, "ha_token_file": str(token)})
    agent = AgentProcess(config, tmp_path).start()
    agents.append(agent)
    assert eventually(lambda: _port(agent) is not None, timeout=120), agent.log()[-3000:]
    port = _port(agent)
    assert port is not None
    question, brighter, mute = asyncio.run(_say(
        port, "is the kitchen light on", "make the kitchen light brighter", "mute the tv"))
    asked = Intent.from_event(question)
    assert (asked.name, asked.text) == ("HassGetState", "Yes, the Kitchen Light is on.")
    light = Intent.from_event(brighter)
    assert light.name == "HassLightSet" and {e.name: e.value for e in light.entities}["brightness"] == 75
    assert NotHandled.is_type(mute.type)
    assert NotHandled.from_event(mute).text == "Muting needs Home Assistant 2025.11 or newer."
    versions = [e for e in agent.events() if e.get("event") == "wyoming.ha_version"]
    assert versions and versions[-1]["version"] == "2025.4" and versions[-1]["source"] == "home-assistant"
    assert TOKEN not in agent.log()
