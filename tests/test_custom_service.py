"""Custom intents end to end: the recognizer, ``edge-agent intents --custom-sentences`` and the
service (real mosquitto, real interpreter) publishing them on the intent topic, Hermes and
Wyoming, reloading on the control command ``reload`` and on SIGHUP.

The bundles are built here (tests/test_install.py): a random model whose intent graph also writes
a sentence embedding, and one without it. A random model's embedding means nothing, so its
manifest matches a custom intent only on the user's own sentence, word for word (threshold
0.999): what is tested is the plumbing, never the quality (bench/custom_intents.py measures that).
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import paho.mqtt.client as paho
import pytest
import yaml
from broker import AgentProcess, Collector, TestBroker, eventually, publish_wait, unique
from conftest import agent_config
from test_install import build_tiny_bundle
from wyoming.asr import Transcript
from wyoming.client import AsyncTcpClient
from wyoming.event import Event
from wyoming.info import Describe, Info
from wyoming.intent import Intent

from edge_agent.errors import EdgeAgentError
from edge_agent.messages import load_schema
from edge_agent.nlu.custom import NO_EMBEDDING, CustomSentencesError, load_custom_sentences
from edge_agent.nlu.recognizer import IntentRecognizer
from edge_agent.runtime.bundle import load_bundle
from edge_agent.runtime.model import Model

ROOT = Path(__file__).resolve().parent.parent
GARAGE = "open the garage door"
SCENE = "set the thermostat on"  # an expansion of "set the {scene} on"
SENTENCES: dict[str, Any] = {
    "language": "en",
    "intents": {
        "OpenGarage": {"data": [{"sentences": ["open the garage door"], "slots": {"door": "main"}}]},
        "SetScene": {"data": [{"sentences": ["set the {scene} on"]}]},
    },
    "lists": {"scene": {"values": [{"in": "kitchen light", "out": "cooking"}, "thermostat"]}},
}


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("custom-bundles")
    return {
        "embedding": build_tiny_bundle(root / "embedding", embedding=12),
        "plain": build_tiny_bundle(root / "plain"),
    }


def _sentences(directory: Path, doc: dict[str, Any] | None = None) -> Path:
    path = directory / "custom.yaml"
    path.write_text(yaml.safe_dump(doc or SENTENCES), encoding="utf-8")
    return path


def test_the_recognizer_gives_custom_intents_from_the_same_model_run(
    bundles: dict[str, Path], tmp_path: Path
) -> None:
    model = Model(load_bundle(bundles["embedding"]), tasks=("intents",))
    recognizer = IntentRecognizer(model)
    before = recognizer.recognize(["turn on the kitchen light"])[0]
    index = recognizer.load_custom(load_custom_sentences([_sentences(tmp_path)]))
    assert index is not None and index.summary()["examples"] == 3
    garage, scene, other = recognizer.recognize([GARAGE, SCENE, "turn on the kitchen light"])
    assert (garage.intent, garage.slots["door"].value) == ("OpenGarage", "main")
    assert (scene.intent, scene.slots["scene"].value, scene.slots["scene"].raw) == (
        "SetScene",
        "thermostat",
        "thermostat",
    )
    assert other == before  # not one of their sentences: the built-in result, unchanged
    assert 0.0 <= garage.confidence <= 1.0
    recognizer.load_custom(None)
    assert recognizer.recognize([GARAGE])[0].intent != "OpenGarage"


def test_a_bundle_without_a_sentence_embedding_refuses_custom_intents_and_keeps_working(
    bundles: dict[str, Path], tmp_path: Path
) -> None:
    recognizer = IntentRecognizer(Model(load_bundle(bundles["plain"]), tasks=("intents",)))
    with pytest.raises(CustomSentencesError, match="no sentence embedding"):
        recognizer.load_custom(load_custom_sentences([_sentences(tmp_path)]))
    assert recognizer.custom is None
    assert recognizer.recognize([GARAGE])[0].text == GARAGE


def _cli(*args: str, stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "edge_agent", "intents", *args],
        input=stdin, capture_output=True, cwd=ROOT, timeout=120, check=False,
    )  # fmt: skip


def test_the_intents_command_loads_custom_sentences(bundles: dict[str, Path], tmp_path: Path) -> None:
    path = _sentences(tmp_path)
    proc = _cli(
        "--bundle",
        str(bundles["embedding"]),
        "--custom-sentences",
        str(path),
        stdin=f"{GARAGE}\n{SCENE}\n".encode(),
    )
    assert proc.returncode == 0, proc.stderr.decode()
    garage, scene = (json.loads(line) for line in proc.stdout.splitlines())
    assert garage["intent"] == "OpenGarage" and scene["slots"]["scene"]["value"] == "thermostat"
    assert f"custom sentences: 2 intents, 3 examples from {path}" in proc.stderr.decode()
    plain = _cli("--bundle", str(bundles["plain"]), "--custom-sentences", str(path), stdin=b"x\n")
    assert plain.returncode == 2 and NO_EMBEDDING in plain.stderr.decode() and plain.stdout == b""
    broken = tmp_path / "broken.yaml"
    broken.write_text("language: en\nintents:\n  Feed:\n    data:\n      - sentences: ['feed (the cat']\n")
    bad = _cli("--bundle", str(bundles["embedding"]), "--custom-sentences", str(broken), stdin=b"x\n")
    assert bad.returncode == 2
    assert f"{broken}: intent Feed: sentence 'feed (the cat': not a valid template" in bad.stderr.decode()


# -- the service ------------------------------------------------------------------------------------
def _start(broker: TestBroker, site: str, tmp_path: Path, bundle: Path, sentences: Path) -> AgentProcess:
    config = agent_config(
        broker, site,
        model={"bundle": str(bundle)},
        intents={"custom_sentences": [str(sentences)]},
        hermes={"enabled": True},
        control={"enabled": True, "state_dir": str(tmp_path / "state")},
        wyoming={"enabled": True, "port": 0, "ha_version": "2025.4"},
        homeassistant={"enabled": True, "status_topic": f"homeassistant/status/{site}",
                       "announce_jitter_s": 0.0},
        sla={"enabled": False},
    )  # fmt: skip
    return AgentProcess(config, tmp_path).start()


def _events(agent: AgentProcess, name: str) -> list[dict[str, Any]]:
    return [e for e in agent.events() if e.get("event") == name]


def _intent(client: paho.Client, collect: Collector, site: str, text: str) -> dict[str, Any]:
    topic = f"edge/{site}/intent"
    before = len(collect.on(topic))
    tid = unique("t")
    publish_wait(client, f"edge/{site}/transcript", orjson.dumps({"id": tid, "text": text}))
    collect.wait_for(
        lambda _m: any(orjson.loads(p)["id"] == tid for p in collect.on(topic)[before:]), timeout=60
    )
    found: dict[str, Any] = next(m for m in map(orjson.loads, collect.on(topic)[before:]) if m["id"] == tid)
    jsonschema.validate(found, load_schema("intent"))
    return found


def _control(client: paho.Client, collect: Collector, site: str, cmd: str, **args: Any) -> dict[str, Any]:
    reply_topic = f"edge/{site}/control/reply"
    before = len(collect.on(reply_topic))
    publish_wait(client, f"edge/{site}/control", orjson.dumps({"id": unique("c"), "cmd": cmd, **args}))
    reply: dict[str, Any] = orjson.loads(collect.wait_count(reply_topic, before + 1, timeout=60)[before])
    return reply


async def _wyoming(port: int, *events: Event) -> list[Event]:
    out = []
    async with AsyncTcpClient("127.0.0.1", port, connect_timeout=10, read_timeout=30) as client:
        for event in events:
            await client.write_event(event)
            reply = await client.read_event()
            assert reply is not None
            out.append(reply)
    return out


def test_the_service_publishes_custom_intents_everywhere_and_reloads_them(
    broker: TestBroker, site: str, client: paho.Client, collect: Collector, bundles: dict[str, Path],
    tmp_path: Path, agents: list[AgentProcess],
) -> None:  # fmt: skip
    sentences = _sentences(tmp_path)
    discovery = Collector(client, f"homeassistant/device/edge_agent_{site}/config")
    agent = _start(broker, site, tmp_path, bundles["embedding"], sentences)
    agents.append(agent)
    collect.wait_for(lambda _m: b"online" in collect.on(f"edge/{site}/status"), timeout=120)
    assert eventually(lambda: bool(_events(agent, "wyoming.listening")), timeout=30), agent.log()[-3000:]
    [loaded] = _events(agent, "custom_intents.loaded")
    assert (loaded["intents"], loaded["examples"], loaded["files"]) == (2, 3, [str(sentences)])

    # the intent topic, with the slots of the template
    garage = _intent(client, collect, site, GARAGE)
    assert (garage["intent"], garage["slots"]["door"]["value"]) == ("OpenGarage", "main")
    assert _intent(client, collect, site, "set the kitchen light on")["slots"]["scene"]["value"] == "cooking"

    # Hermes: hermes/intent/<Name>
    hermes = Collector(client, "hermes/intent/#")
    query = {"input": SCENE, "siteId": site, "id": unique("q"), "sessionId": "s1"}
    publish_wait(client, "hermes/nlu/query", orjson.dumps(query))
    [payload] = hermes.wait_count("hermes/intent/SetScene", 1, timeout=60)
    body = orjson.loads(payload)
    assert body["intent"]["intentName"] == "SetScene" and body["slots"][0]["value"]["value"] == "thermostat"

    # Wyoming: describe lists them; a transcript of one goes to HA as it is (its intent_script runs it)
    port = _events(agent, "wyoming.listening")[-1]["port"]
    info, said = asyncio.run(_wyoming(port, Describe().event(), Transcript(text=GARAGE).event()))
    description = Info.from_event(info).intent[0].models[0].description or ""
    assert "OpenGarage" in description and "SetScene" in description and "HassTurnOn" in description
    sent = Intent.from_event(said)
    assert sent.name == "OpenGarage" and {e.name: e.value for e in sent.entities} == {"door": "main"}

    # Home Assistant's event entity announces them; runtime control disables one by name
    def event_types(payload: bytes) -> list[str]:
        return list(orjson.loads(payload)["components"]["intent"]["event_types"])

    config_topic = f"homeassistant/device/edge_agent_{site}/config"
    first = discovery.wait_count(config_topic, 1, timeout=30)[-1]
    assert {"OpenGarage", "SetScene", "HassTurnOn"} <= set(event_types(first))
    assert _control(client, collect, site, "disable_intents", intents=["OpenGarage"])["ok"]
    assert _intent(client, collect, site, GARAGE)["intent"] is None
    assert _control(client, collect, site, "enable_intents", intents=["OpenGarage"])["ok"]

    # the control command reload: a new intent, counted in the reply, recognized from then on
    grown = json.loads(json.dumps(SENTENCES))
    grown["intents"]["CheckTime"] = {"data": [{"sentences": ["what time is it"]}]}
    _sentences(tmp_path, grown)
    reply = _control(client, collect, site, "reload")
    assert reply["ok"], reply
    assert (reply["state"]["custom_intents"]["intents"], reply["state"]["custom_intents"]["examples"]) == (
        3,
        4,
    )
    assert _intent(client, collect, site, "what time is it")["intent"] == "CheckTime"
    assert len(_events(agent, "custom_intents.loaded")) == 2
    discovery.wait_for(lambda _m: "CheckTime" in event_types(discovery.on(config_topic)[-1]), timeout=30)

    # a broken file: the reload fails with the reason, the intents in service stay
    sentences.write_text("language: en\nintents: {Bad: {data: [{sentences: ['(unclosed']}]}}\n")
    failed = _control(client, collect, site, "reload")
    assert not failed["ok"] and str(sentences) in failed["error"] and "intent Bad" in failed["error"]
    assert _intent(client, collect, site, "what time is it")["intent"] == "CheckTime"

    # SIGHUP reloads too (systemctl reload)
    _sentences(tmp_path)
    assert agent.proc is not None
    agent.proc.send_signal(signal.SIGHUP)
    assert eventually(lambda: len(_events(agent, "custom_intents.loaded")) == 3, timeout=60), agent.log()[
        -3000:
    ]
    assert _events(agent, "custom_intents.loaded")[-1]["intents"] == 2
    assert _intent(client, collect, site, "what time is it")["intent"] != "CheckTime"
    assert _intent(client, collect, site, GARAGE)["intent"] == "OpenGarage"
    assert agent.terminate() == 0


def test_a_broken_file_at_start_leaves_the_agent_serving(
    broker: TestBroker, site: str, client: paho.Client, collect: Collector, bundles: dict[str, Path],
    tmp_path: Path, agents: list[AgentProcess],
) -> None:  # fmt: skip
    sentences = tmp_path / "custom.yaml"
    sentences.write_text("intents: [not, a, mapping]\n")
    agent = _start(broker, site, tmp_path, bundles["plain"], sentences)
    agents.append(agent)
    collect.wait_for(lambda _m: b"online" in collect.on(f"edge/{site}/status"), timeout=120)
    [failed] = _events(agent, "custom_intents.load_failed")
    assert str(sentences) in failed["error"]
    assert _intent(client, collect, site, GARAGE)["text"] == GARAGE  # built-in intents still answer
    _sentences(tmp_path)  # a good file, but this bundle has no sentence embedding
    reply = _control(client, collect, site, "reload")
    assert not reply["ok"] and "no sentence embedding" in reply["error"]
    status = _control(client, collect, site, "status")
    assert status["state"]["custom_intents"]["intents"] == 0
    assert "no sentence embedding" in status["state"]["custom_intents"]["error"]


def test_reload_without_custom_intents_configured_says_so() -> None:
    from edge_agent.custom_intents import CustomIntents

    assert CustomIntents([], None).reload() == {"paths": [], "intents": 0, "examples": 0, "error": None}
    with pytest.raises(EdgeAgentError, match="custom intents need the bundle's own recognizer"):
        CustomIntents([ROOT / "bench" / "data" / "custom_clinc.yaml"], None).reload()


def test_a_follower_gets_every_set_on_its_own_model(bundles: dict[str, Path], tmp_path: Path) -> None:
    """The SLA ladder's small variant follows the reloads; one without an embedding goes without."""
    from edge_agent.custom_intents import CustomIntents

    def recognizer(kind: str) -> IntentRecognizer:
        return IntentRecognizer(Model(load_bundle(bundles[kind]), tasks=("intents",)))

    main, small, plain = recognizer("embedding"), recognizer("embedding"), recognizer("plain")
    custom = CustomIntents([_sentences(tmp_path)], main)
    custom.reload()
    custom.follow(small)
    custom.follow(plain)
    assert small.custom is not None and small.custom.summary()["examples"] == 3
    assert small.recognize([GARAGE])[0].intent == "OpenGarage"
    assert plain.custom is None and plain.recognize([GARAGE])[0].text == GARAGE
    grown = json.loads(json.dumps(SENTENCES))
    grown["intents"]["CheckTime"] = {"data": [{"sentences": ["what time is it"]}]}
    _sentences(tmp_path, grown)
    custom.reload()
    assert small.custom is not None and small.custom.summary()["intents"] == 3
    assert sorted(custom.names) == ["CheckTime", "OpenGarage", "SetScene"]
