"""Runtime control: commands, replies, persistence (real files), HA learning."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from edge_agent.bridges.control import ControlConfig, Controller
from edge_agent.bridges.control_state import ControlState
from edge_agent.errors import PayloadError
from edge_agent.messages.discovery import learned_entities
from edge_agent.nlu.home import Home
from edge_agent.nlu.schema import INTENTS
from edge_agent.records.intent import IntentResult, SlotValue
from edge_agent.store import FileStore

HOME = Home.from_dict(
    {"areas": ["Kitchen"], "entities": [{"name": "Lamp", "domain": "light", "area": "Kitchen"}]}
)


def _controller(tmp_path: Path, **cfg: Any) -> Controller:
    config = ControlConfig.model_validate({"enabled": True, **cfg})
    return Controller(config, intents=INTENTS, store=FileStore(tmp_path), base_home=HOME,
                      status_extra=lambda: {"model": "m-1"})


def _cmd(ctrl: Controller, **body: Any) -> dict[str, Any]:
    outcome = ctrl.handle(orjson.dumps(body))
    reply: dict[str, Any] = orjson.loads(outcome.reply)
    assert reply["ok"] == outcome.ok
    return reply


def _result(intent: str | None, confidence: float) -> IntentResult:
    slots = {"name": SlotValue("Lamp", "lamp", 12, 16, 0.9)} if intent else {}
    return IntentResult(text="turn on the lamp", intent=intent, confidence=confidence, slots=slots)


def test_disable_enable_is_acknowledged_applied_and_persisted(tmp_path: Path) -> None:
    ctrl = _controller(tmp_path)
    reply = _cmd(ctrl, id="c1", cmd="disable_intents", intents=["HassTurnOn", "HassBroadcast"])
    assert reply["id"] == "c1" and reply["cmd"] == "disable_intents" and reply["ok"] is True
    assert reply["state"]["intents"]["disabled"] == ["HassBroadcast", "HassTurnOn"]
    assert ctrl.apply(_result("HassTurnOn", 0.99)).intent is None
    assert ctrl.apply(_result("HassTurnOn", 0.99)).slots == {}
    assert ctrl.apply(_result("HassTurnOff", 0.99)).intent == "HassTurnOff"
    # a new controller on the same directory (a restart) has the same state
    again = _controller(tmp_path)
    assert again.state.disabled == frozenset({"HassTurnOn", "HassBroadcast"})
    _cmd(again, id=2, cmd="enable_intents", intents=["HassTurnOn"])
    assert _controller(tmp_path).state.disabled == frozenset({"HassBroadcast"})
    assert "HassTurnOn" in again.enabled and "HassBroadcast" not in again.enabled


def test_thresholds_set_and_reset(tmp_path: Path) -> None:
    ctrl = _controller(tmp_path)
    reply = _cmd(ctrl, id="t", cmd="set_thresholds", thresholds={"HassTurnOn": 0.8, "HassToggle": 0.5})
    assert reply["state"]["thresholds"] == {"HassToggle": 0.5, "HassTurnOn": 0.8}
    assert ctrl.apply(_result("HassTurnOn", 0.79)).intent is None
    assert ctrl.apply(_result("HassTurnOn", 0.81)).intent == "HassTurnOn"
    assert ctrl.effective_thresholds({"HassTurnOn": 0.4, "HassGetState": 0.3}) == {
        "HassTurnOn": 0.8, "HassGetState": 0.3, "HassToggle": 0.5}
    _cmd(ctrl, cmd="set_thresholds", thresholds={"HassTurnOn": None})
    assert _controller(tmp_path).state.thresholds == {"HassToggle": 0.5}


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({"cmd": "disable_intents", "intents": ["Nope"]}, "unknown intents"),
        ({"cmd": "disable_intents", "intents": []}, "non-empty list"),
        ({"cmd": "set_thresholds", "thresholds": {"HassTurnOn": 1.5}}, r"\[0, 1\]"),
        ({"cmd": "set_thresholds", "thresholds": {"HassTurnOn": True}}, "number"),
        ({"cmd": "set_thresholds", "thresholds": {"Nope": 0.5}}, "unknown intent"),
        ({"cmd": "set_home", "home": {"areas": "Kitchen"}}, "areas"),
        ({"cmd": "set_home", "home": {"rooms": []}}, "unknown keys"),
        ({"cmd": "reboot"}, "unknown cmd"),
        ({"cmd": "retire_source"}, "'source'"),
    ],
)
def test_bad_commands_get_an_error_reply_and_change_nothing(tmp_path: Path, body: dict[str, Any],
                                                            error: str) -> None:
    ctrl = _controller(tmp_path)
    before = ctrl.state
    reply = _cmd(ctrl, id="bad", **body)
    assert reply["ok"] is False and reply["id"] == "bad"
    assert re.search(error, reply["error"]), reply["error"]
    assert ctrl.state == before
    assert not (tmp_path / "control").exists()


@pytest.mark.parametrize("raw", [b"not json", b"[]", b'{"id": [1], "cmd": "status"}'])
def test_unparseable_commands_are_answered(tmp_path: Path, raw: bytes) -> None:
    outcome = _controller(tmp_path).handle(raw)
    assert not outcome.ok and orjson.loads(outcome.reply)["error"]


def test_oversized_command_is_refused(tmp_path: Path) -> None:
    ctrl = _controller(tmp_path, max_payload_bytes=256)
    outcome = ctrl.handle(orjson.dumps({"cmd": "status", "pad": "x" * 300}))
    assert not outcome.ok and "larger than 256" in orjson.loads(outcome.reply)["error"]


def test_set_home_replaces_home_and_status_reports_it(tmp_path: Path) -> None:
    ctrl = _controller(tmp_path)
    home = {"areas": ["Garage", "Attic"], "entities": [{"name": "Door", "domain": "cover", "area": "Garage"}]}
    outcome = ctrl.handle(orjson.dumps({"cmd": "set_home", "home": home}))
    assert outcome.ok and outcome.home_changed
    assert ctrl.home().areas == ["Garage", "Attic"] and ctrl.home().resolve_name("the door") == "Door"
    status = _cmd(_controller(tmp_path), cmd="status")["state"]
    assert status["home"] == {"source": "control", "areas": 2, "entities": 1, "learned_entities": 0}
    assert status["agent"] == {"model": "m-1"}
    _cmd(ctrl, cmd="set_home", home=None)  # back to the configured home
    assert ctrl.home().areas == ["Kitchen"]


def test_retire_source_is_passed_to_the_caller(tmp_path: Path) -> None:
    outcome = _controller(tmp_path).handle(b'{"cmd": "retire_source", "source": "zigbee"}')
    assert outcome.ok and outcome.retire_source == "zigbee" and not outcome.changed


class _FailingStore(FileStore):
    def save(self, key: str, data: bytes) -> None:
        raise OSError(28, "No space left on device")


def test_failed_persistence_rolls_back_and_says_why(tmp_path: Path) -> None:
    ctrl = Controller(ControlConfig(enabled=True), intents=INTENTS, store=_FailingStore(tmp_path))
    reply = _cmd(ctrl, id="p", cmd="disable_intents", intents=["HassTurnOn"])
    assert reply["ok"] is False and "No space left" in reply["error"]
    assert ctrl.state.disabled == frozenset()


def test_state_file_is_versioned_json_and_bad_files_are_refused(tmp_path: Path) -> None:
    ctrl = _controller(tmp_path)
    _cmd(ctrl, cmd="disable_intents", intents=["HassToggle"])
    data = orjson.loads((tmp_path / "control").read_bytes())
    assert data["schema"] == 1 and data["disabled"] == ["HassToggle"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp files left
    (tmp_path / "control").write_bytes(b'{"schema": 7}')
    with pytest.raises(PayloadError, match="schema"):
        _controller(tmp_path)
    with pytest.raises(PayloadError):
        ControlState.from_json(b'{"schema": 1, "learned": {"t": {"entities": [{"x": 1}], "areas": []}}}')


def test_intents_missing_from_the_bundle_are_dropped_on_load(tmp_path: Path) -> None:
    FileStore(tmp_path).save("control", ControlState(disabled=frozenset({"HassTurnOn", "OldIntent"}),
                                                         thresholds={"OldIntent": 0.3}).to_json())
    ctrl = _controller(tmp_path)
    assert ctrl.state.disabled == frozenset({"HassTurnOn"}) and ctrl.state.thresholds == {}


DEVICE_CONFIG = orjson.dumps({
    "dev": {"ids": ["zb-1"], "name": "Hallway Plug", "sa": "Hallway"},
    "o": {"name": "zigbee2mqtt"},
    "cmps": {"sw": {"p": "switch", "name": None, "uniq_id": "s1", "cmd_t": "z/set"},
             "pw": {"p": "sensor", "name": "Power", "uniq_id": "s2", "stat_t": "z/pw"},
             "up": {"p": "update", "name": "Firmware", "uniq_id": "s3"}},
})


def test_learning_from_ha_discovery(tmp_path: Path) -> None:
    assert learned_entities("device", DEVICE_CONFIG) == {
        "entities": [{"name": "Hallway Plug", "domain": "switch", "area": "Hallway"},
                     {"name": "Hallway Plug Power", "domain": "sensor", "area": "Hallway"}],
        "areas": ["Hallway"],
    }
    single = orjson.dumps({"name": "Porch Light", "unique_id": "p1", "command_topic": "x"})
    assert learned_entities("light", single) == {
        "entities": [{"name": "Porch Light", "domain": "light", "area": None}], "areas": []}
    assert learned_entities("light", b"{bad") is None

    ctrl = _controller(tmp_path, learn_from_homeassistant=True)
    assert ctrl.learn("homeassistant/device/zb-1/config", DEVICE_CONFIG)
    assert not ctrl.learn("homeassistant/device/zb-1/config", DEVICE_CONFIG)  # unchanged
    assert not ctrl.learn("homeassistant/device/edge_agent_x/config", DEVICE_CONFIG, own_node="edge_agent_x")
    home = _controller(tmp_path, learn_from_homeassistant=True).home()  # persisted
    assert home.resolve_name("hallway plug") == "Hallway Plug" and home.resolve_area("hallway") == "Hallway"
    assert home.resolve_name("lamp") == "Lamp"  # the configured home is kept
    assert ctrl.learn("homeassistant/device/zb-1/config", b"")  # HA removal forgets it
    assert ctrl.home().resolve_name("hallway plug") is None
    off = _controller(tmp_path)
    assert not off.learn("homeassistant/device/zb-1/config", DEVICE_CONFIG)  # learning disabled


class _Holder:
    """A recognizer's home, as ``IntentRecognizer`` keeps it."""

    def __init__(self) -> None:
        self.home: Home | None = None


def test_home_binding_follows_the_served_recognizer() -> None:
    from edge_agent.bridges.common import HomeBinding

    first, second = _Holder(), _Holder()
    binding = HomeBinding(HOME, first)
    changed = Home.from_dict({"areas": ["Hall"], "entities": []})
    binding.set_home(changed)
    assert first.home is changed
    binding.bind(second)  # a bundle swap: the new recognizer gets the current home, not the config's
    assert second.home is changed
    binding.set_home(HOME)
    assert second.home is HOME and first.home is changed
    HomeBinding(HOME, None).set_home(changed)  # a recognizer without a home: nothing to set


def test_the_agent_keeps_control_state_in_its_state_directory(broker: Any, site: str, tmp_path: Path) -> None:
    """Without ``control.state_dir`` the control state lives in the one state directory."""
    from broker import TinyRecognizer
    from conftest import agent_config

    from edge_agent.app import Agent
    from edge_agent.config import parse
    from edge_agent.engines import Engines

    state = tmp_path / "state"
    sections = {"reliability": {"state_dir": str(state)}, "control": {"enabled": True}}
    config = parse(agent_config(broker, site, **sections))
    agent = Agent(config, Engines(recognizer=TinyRecognizer(), model_id="tiny@test"))
    agent.start()
    try:
        assert agent.controller is not None
        done = agent.controller.handle(b'{"id": 1, "cmd": "disable_intents", "intents": ["HassTurnOn"]}')
        assert done.ok
        saved = ControlState.from_json((state / "control").read_bytes())
        assert saved.disabled == frozenset({"HassTurnOn"})
    finally:
        agent.shutdown()
