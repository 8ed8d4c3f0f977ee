"""End to end with a real Home Assistant core: its Wyoming integration, configured through its own
config flow against running agents (shipped model, real mosquitto), takes each agent as a
conversation agent, and ordinary sentences across lights, a cover, a thermostat, a media player,
a fan, a switch, the shopping list and questions are said to it.

Two agents: ``api`` has HA's URL and a long-lived token (it learns HA's version and reads states
to speak answers and compute "brighter"); ``config`` only has ``ha_version`` in its config.
Every sentence must end executed (HA's answer is a success and the home changed as asked) or
explained (HA speaks our words saying what is missing); never an intent HA cannot run, never
HA's own "Error handling intent". Questions are answered with the state in the words.

Needs HA core in a venv of its own: run scripts/ha_wyoming_e2e.sh, which installs it (once) and
then runs this test (``pytest -m ha_e2e``; the default run leaves it out). The script passes HA's
interpreter in $EDGE_AGENT_HA_PYTHON.
"""

from __future__ import annotations

import json
import os
import queue
import socket
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from broker import AgentProcess, TestBroker, eventually, unique
from conftest import agent_config

from edge_agent.bridges.ha_intents import SINCE, parse_version, runs
from edge_agent.bridges.ha_plan import NO_STATES_TEXT, TIMER_CONTROL_TEXT, TIMERS_TEXT

pytestmark = pytest.mark.ha_e2e

DRIVER = Path(__file__).parent / "ha_e2e" / "ha_driver.py"
# the agent's own home: HA's names (docs/home-assistant.md asks for them)
HOME = {
    "areas": ["Kitchen", "Living Room", "Bedroom"],
    "entities": [
        {"name": "Kitchen Light", "domain": "light", "area": "Kitchen"},
        {"name": "Living Room Lamp", "domain": "light", "area": "Living Room"},
        {"name": "Ceiling Light", "domain": "light", "area": "Living Room"},
        {"name": "Bedroom Light", "domain": "light", "area": "Bedroom"},
        {"name": "Living Room Blinds", "domain": "cover", "area": "Living Room"},
        {"name": "Thermostat", "domain": "climate", "area": "Living Room"},
        {"name": "TV", "domain": "media_player", "area": "Living Room"},
        {"name": "Ceiling Fan", "domain": "fan", "area": "Bedroom"},
        {"name": "Coffee Maker", "domain": "switch", "area": "Kitchen"},
    ],
    "lists": ["Shopping List"],
}


@dataclass(frozen=True)
class Step:
    """One sentence and what must follow. ``after``: entity -> attributes the home must show
    afterwards; ``says``: words the spoken answer must hold; ``explained``: HA must speak our words
    instead of running anything; ``model_note``: the model's recognition is known to be wrong here,
    so only the contract (executed or explained) is checked."""

    agent: str
    text: str
    after: dict[str, dict[str, Any]] = field(default_factory=dict)
    says: tuple[str, ...] = ()
    explained: bool = False
    added: str | None = None
    done: str | None = None
    model_note: str | None = None


STEPS: tuple[Step, ...] = (
    # lights (the lamp starts on at brightness 128 of 255 = 50 %, the ceiling light and bedroom light on)
    Step("api", "turn on the kitchen light", {"light.kitchen_light": {"state": "on"}}, ("Kitchen Light",)),
    Step("api", "switch off the living room lights",
         {"light.living_room_lamp": {"state": "off"}, "light.ceiling_light": {"state": "off"}}),
    Step("api", "turn on the living room lamp", {"light.living_room_lamp": {"state": "on"}}),
    Step("api", "brighten the living room lamp", {"light.living_room_lamp": {"brightness": 191}}, ("75",)),
    Step("api", "dim the living room lamp", {"light.living_room_lamp": {"brightness": 128}}, ("50",)),
    Step("api", "set the living room lamp to 40 percent", {"light.living_room_lamp": {"brightness": 102}}),
    Step("api", "turn off the bedroom light", {"light.bedroom_light": {"state": "off"}}),
    Step("api", "turn on the lights in the bedroom", {"light.bedroom_light": {"state": "on"}}),
    Step("api", "set the bedroom light to 20 percent", {"light.bedroom_light": {"state": "on"}}),
    Step("api", "toggle the kitchen light", {"light.kitchen_light": {"state": "off"}}),
    Step("api", "toggle the kitchen light", {"light.kitchen_light": {"state": "on"}}),
    # the cover
    Step("api", "open the living room blinds", {"cover.living_room_blinds": {"current_position": 100}}),
    Step("api", "set the living room blinds to 30 percent",
         {"cover.living_room_blinds": {"current_position": 30}}),
    Step("api", "close the living room blinds", {"cover.living_room_blinds": {"state": "closed"}}),
    Step("api", "stop the blinds", says=("Stopping a cover needs Home Assistant 2026.1",), explained=True),
    # the thermostat (target 20, the room 21.5)
    Step("api", "set the temperature to 22 degrees", {"climate.thermostat": {"temperature": 22}}),
    Step("api", "make it warmer", {"climate.thermostat": {"temperature": 23}}, ("23",)),
    Step("api", "turn the heat down by 2 degrees", {"climate.thermostat": {"temperature": 21}}, ("21",)),
    Step("api", "what is the temperature in the living room", says=("21.5",)),
    Step("api", "what is the temperature", says=("21.5",)),
    # the media player
    Step("api", "turn on the tv", {"media_player.tv": {"state": "playing"}}),
    Step("api", "is the tv on", says=("Yes", "TV", "on")),
    Step("api", "set the volume to 30 percent", {"media_player.tv": {"volume_level": 0.3}}),
    Step("api", "turn up the volume", {"media_player.tv": {"volume_level": 0.4}}, ("40",)),
    Step("api", "pause the tv", {"media_player.tv": {"state": "paused"}}),
    Step("api", "resume the tv", {"media_player.tv": {"state": "playing"}}),
    Step("api", "play the next song", {"input_boolean.tv_skipped": {"state": "on"}}),
    Step("api", "turn down the volume", {"media_player.tv": {"volume_level": 0.3}}, ("30",)),
    Step("api", "mute the tv", says=("Muting needs Home Assistant 2025.11",), explained=True),
    Step("api", "unmute the tv", says=("Unmuting needs Home Assistant 2025.11",), explained=True),
    Step("api", "turn off the tv", model_note="recognized as HassMediaPlayerMute (0.72): the model's "
         "error, reported to the intents issue; the user hears why muting is not done"),
    # the fan
    Step("api", "turn on the ceiling fan", {"fan.ceiling_fan": {"state": "on"}}),
    Step("api", "set the ceiling fan to 50 percent", says=("fan's speed needs Home Assistant 2025.9",),
         explained=True),
    Step("api", "turn off the fan in the bedroom", {"fan.ceiling_fan": {"state": "off"}}, ("Bedroom",)),
    # the switch (not exposed to Assist: HA's Wyoming path runs intents on it anyway)
    Step("api", "turn on the coffee maker", {"switch.coffee_maker": {"state": "on"}}),
    Step("api", "is the coffee maker on", says=("Yes", "on")),
    Step("api", "turn off the coffee maker", {"switch.coffee_maker": {"state": "off"}}),
    # the shopping list
    Step("api", "add milk to my shopping list", says=("milk",), added="milk"),
    Step("api", "add eggs to the shopping list", says=("eggs",), added="eggs"),
    Step("api", "check off milk from my shopping list", says=("milk",), done="milk"),
    # questions, time, timers
    Step("api", "is the kitchen light on", says=("Yes", "Kitchen Light", "on")),
    Step("api", "is the kitchen light off", says=("No", "on")),
    Step("api", "is the living room lamp on", says=("Yes", "Living Room Lamp")),
    Step("api", "are the lights on in the living room", says=("Yes", "Living Room Lamp")),
    Step("api", "is the ceiling light on", says=("No", "off")),
    Step("api", "are the living room blinds open", says=("No", "closed")),
    Step("api", "what's the weather like", says=("sunny", "18")),
    Step("api", "what time is it", says=("It is",)),
    Step("api", "set a timer for 5 minutes", says=(TIMERS_TEXT,), explained=True),
    Step("api", "in 5 minutes turn off the kitchen light", says=("in 5 minutes",)),
    Step("api", "cancel the timer", says=(TIMER_CONTROL_TEXT,), explained=True),
    Step("api", "how much time is left on the timer", says=(TIMER_CONTROL_TEXT,), explained=True),
    # no area and no device from HA: every light of the home
    Step("api", "turn off the lights", {f"light.{n}": {"state": "off"} for n in (
        "kitchen_light", "living_room_lamp", "ceiling_light", "bedroom_light")}),
    # an agent that was only told the version: no states to read
    Step("config", "turn on the bedroom light", {"light.bedroom_light": {"state": "on"}}),
    Step("config", "is the kitchen light on", says=(NO_STATES_TEXT,)),
    Step("config", "brighten the living room lamp", says=("can't see how bright",), explained=True),
    Step("config", "mute the tv", says=("Muting needs Home Assistant 2025.11",), explained=True),
)


def _ha_python() -> str:
    path = os.environ.get("EDGE_AGENT_HA_PYTHON", "")
    assert path and Path(path).is_file(), (
        "EDGE_AGENT_HA_PYTHON must name the python of a venv with homeassistant installed; "
        "run scripts/ha_wyoming_e2e.sh"
    )
    return path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _listening(agent: AgentProcess) -> int | None:
    found = [e["port"] for e in agent.events() if e.get("event") == "wyoming.listening"]
    return found[-1] if found else None


class Driver:
    """The HA driver process; its stdout is read line by line on a thread."""

    def __init__(self, ha_python: str, config_dir: Path, http_port: int, steps: Path) -> None:
        self.config_dir = config_dir
        self.proc = subprocess.Popen(
            [ha_python, str(DRIVER), "run", "--config-dir", str(config_dir), "--http-port", str(http_port),
             "--steps", str(steps)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def next_json(self, timeout: float) -> dict[str, Any]:
        while True:
            line = self.lines.get(timeout=timeout)
            assert line is not None, f"HA driver ended early:\n{self.detail()}"
            if line.startswith("{"):
                value: dict[str, Any] = json.loads(line)
                return value

    def send(self, value: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(value) + "\n")
        self.proc.stdin.flush()

    def detail(self) -> str:
        log = self.config_dir / "home-assistant.log"
        err = self.proc.stderr.read()[-3000:] if self.proc.stderr and self.proc.poll() is not None else ""
        return f"{err}\n{log.read_text()[-4000:] if log.exists() else ''}"

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)


def _run_home_assistant(
    broker: TestBroker, tmp_path: Path, agents: list[AgentProcess]
) -> tuple[dict[str, Any], dict[str, AgentProcess]]:
    steps_file = tmp_path / "steps.json"
    steps_file.write_text(json.dumps([{"agent": s.agent, "text": s.text} for s in STEPS]), encoding="utf-8")
    http_port = _free_port()
    driver = Driver(_ha_python(), tmp_path / "ha", http_port, steps_file)
    try:
        ready = driver.next_json(timeout=600)
        assert ready.get("ready"), ready
        ours: dict[str, AgentProcess] = {}
        for label, wyoming in {
            "api": {"ha_url": f"http://127.0.0.1:{http_port}", "ha_token_file": ready["token_file"]},
            "config": {"ha_version": str(parse_version(ready["ha_version"]))},
        }.items():
            config = agent_config(broker, unique(f"ha-{label}"), home=HOME,
                                  wyoming={"enabled": True, "port": 0, **wyoming})
            workdir = tmp_path / label
            workdir.mkdir()
            agent = AgentProcess(config, workdir).start()
            agents.append(agent)
            ours[label] = agent
        for agent in ours.values():
            assert eventually(lambda a=agent: _listening(a) is not None, timeout=180), agent.log()[-3000:]
        driver.send({"agents": {label: _listening(agent) for label, agent in ours.items()}})
        result = driver.next_json(timeout=600)
        assert "error" not in result, f"{result}\n{driver.detail()}"
        return result, ours
    finally:
        driver.kill()


def _speech(step: dict[str, Any]) -> str:
    speech: str = step["response"]["response"]["speech"]["plain"]["speech"]
    return speech


def _check(step: Step, seen: dict[str, Any]) -> list[str]:
    """What is wrong with one step's outcome (empty: executed or explained as it should be)."""
    answer = seen["response"]["response"]
    speech = _speech(seen)
    kind, code = answer["response_type"], answer.get("data", {}).get("code")
    problems: list[str] = []
    if kind == "error" and (code != "failed_to_handle" or speech.startswith("Error")):
        problems.append(f"HA could not run what it got: {code}: {speech!r}")
    if not speech.strip():
        problems.append("nothing spoken")
    if " the all " in f" {speech} " or "Unknown intent" in speech:
        problems.append(f"leaks a slot value or an intent HA lacks: {speech!r}")
    if step.explained and kind != "error":
        problems.append(f"should be explained, HA ran it: {kind}: {speech!r}")
    if not step.explained and step.model_note is None and kind == "error":
        problems.append(f"should be executed: {speech!r}")
    for words in step.says:
        if words not in speech:
            problems.append(f"the answer {speech!r} does not say {words!r}")
    for entity_id, wanted in step.after.items():
        got = seen["after"].get(entity_id, {})
        for key, value in wanted.items():
            if got.get(key) != value:
                problems.append(f"{entity_id}.{key} is {got.get(key)!r}, wanted {value!r}")
    if step.added is not None and step.added not in seen["shopping_after"]["open"]:
        problems.append(f"{step.added!r} is not on the shopping list: {seen['shopping_after']}")
    if step.done is not None and step.done not in seen["shopping_after"]["done"]:
        problems.append(f"{step.done!r} is not checked off the shopping list: {seen['shopping_after']}")
    return problems


def test_home_assistant_runs_or_explains_every_command(
    broker: TestBroker, tmp_path: Path, agents: list[AgentProcess]
) -> None:
    result, ours = _run_home_assistant(broker, tmp_path, agents)
    version = parse_version(result["ha_version"])
    assert all(f["type"] == "create_entry" for f in result["flows"].values()), result["flows"]
    assert all(result["agents"].values()), result["agents"]

    # the version table agrees with what this HA registered (for the integrations it loaded)
    registered = set(result["registered_intents"])
    loaded = set(result["components"])
    disagree = {
        name: (name in registered, runs(name, version))
        for name, since in SINCE.items()
        if since.integration in loaded and (name in registered) != runs(name, version)
    }
    assert not disagree, f"ha_intents.SINCE vs HA {result['ha_version']} (registered, table): {disagree}"

    # HA's Wyoming path does not enforce "exposed to Assist" (the coffee maker is not exposed)
    assert result["unexposed"] == {"switch.coffee_maker": False}

    table = []
    failures = []
    for step, seen in zip(STEPS, result["steps"], strict=True):
        problems = _check(step, seen)
        outcome = "explained" if seen["response"]["response"]["response_type"] == "error" else "executed"
        table.append(f"{step.agent:6} | {step.text:42} | {outcome:9} | {_speech(seen)}")
        if problems:
            failures.append(f"{step.text!r}: {'; '.join(problems)}")
    print("\n".join(table))  # shown with pytest -s: what HA did for each sentence
    assert not failures, "\n".join(failures)

    # the api agent learned HA's version from HA; the config agent used its config
    logged = {label: [e for e in agent.events() if e.get("event") == "wyoming.ha_version"]
              for label, agent in ours.items()}
    assert logged["api"] and logged["api"][-1]["source"] == "home-assistant", logged["api"]
    assert logged["config"] and logged["config"][-1]["source"] == "config", logged["config"]
    token = Path(tmp_path / "ha" / "ha_token").read_text().strip()
    assert all(token not in agent.log() for agent in ours.values()), "the token must never be logged"
