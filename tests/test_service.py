"""The agent as users run it: ``edge-agent run --config FILE`` with the shipped bundle, against a
real mosquitto. Covers every topic: transcript -> intent, logs -> summary and alert, DLQ, status,
stats."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import paho.mqtt.client as paho
import pytest
import yaml
from broker import AgentProcess, Collector, TestBroker, publish_wait
from conftest import agent_config

from edge_agent.messages import load_schema
from edge_agent.runtime.bundle import default_bundle_path, load_bundle

REPO = Path(__file__).resolve().parent.parent
HOME = {
    "areas": ["Kitchen", "Living Room", "Bedroom"],
    "entities": [
        {"name": "Ceiling Light", "domain": "light", "area": "Kitchen"},
        {"name": "TV", "domain": "media_player", "area": "Living Room"},
        {"name": "Blinds", "domain": "cover", "area": "Bedroom", "aliases": ["shades"]},
    ],
    "lists": ["Shopping List"],
}
TEXTS = [
    "turn on the kitchen ceiling light",
    "close the shades in the bedroom",
    "set a timer for ten minutes",
    "add eggs to my shopping list",
    "pause the tv",
    "who wrote the odyssey",
]


def cli_intents(texts: list[str], tmp_path: Path) -> list[dict[str, Any]]:
    """What ``edge-agent intents --home`` says for the same texts (the reference contract)."""
    home = tmp_path / "home.yaml"
    home.write_text(yaml.safe_dump(HOME), encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "edge_agent", "intents", "--home", str(home)],
        input="\n".join(texts) + "\n", capture_output=True, text=True, cwd=REPO, timeout=120, check=True,
    )
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


@pytest.fixture
def running(
    broker: TestBroker, client: paho.Client, site: str, tmp_path: Path, agents: list[AgentProcess]
) -> tuple[AgentProcess, Collector]:
    collect = Collector(client, f"edge/{site}/#")
    config = agent_config(
        broker, site, home=HOME,
        pipeline={"stats_interval_s": 0.5, "tick_interval_s": 0.2, "dlq_payload_max_bytes": 64},
        logs={"window_s": 1.0},
    )
    agent = AgentProcess(config, tmp_path, engine="real").start()
    agents.append(agent)
    collect.wait_for(lambda _m: collect.on(f"edge/{site}/status")[-1:] == [b"online"], timeout=60)
    return agent, collect


def test_transcripts_become_intents_identical_to_the_cli(
    running: tuple[AgentProcess, Collector], client: paho.Client, site: str, tmp_path: Path
) -> None:
    agent, collect = running
    for i, text in enumerate(TEXTS):
        body: bytes | str = json.dumps({"text": text, "id": f"t{i}", "lang": "en"}) if i % 2 == 0 else text
        publish_wait(client, f"edge/{site}/transcript", body)
    payloads = [json.loads(p) for p in collect.wait_count(f"edge/{site}/intent", len(TEXTS), timeout=60)]
    schema = load_schema("intent")
    for payload in payloads:
        jsonschema.validate(payload, schema)
    by_text = {p["text"]: p for p in payloads}
    assert sorted(by_text) == sorted(TEXTS)
    model_id = load_bundle(default_bundle_path()).model_id
    for i, (text, expected) in enumerate(zip(TEXTS, cli_intents(TEXTS, tmp_path), strict=True)):
        got = by_text[text]
        assert got["site"] == site
        assert got["model"] == model_id
        assert (got["intent"], got["slots"]) == (expected["intent"], expected["slots"])
        assert got["confidence"] == pytest.approx(expected["confidence"], abs=1e-3)
        if i % 2 == 0:
            assert got["id"] == f"t{i}"  # the caller's id is echoed
        else:
            assert len(got["id"]) >= 16  # plain text gets a generated id
    assert agent.terminate(30) == 0


def test_log_lines_in_every_shape_are_summarized(
    running: tuple[AgentProcess, Collector], client: paho.Client, site: str
) -> None:
    agent, collect = running
    topic = f"edge/{site}/logs/gateway"
    publish_wait(client, topic, "kernel: eth0: link up\nsystemd[1]: Started Daily apt upgrade.\n")
    publish_wait(client, topic, json.dumps({"msg": "zigbee: device 0x4f2a joined", "ts": 1764500000.0}))
    array = [{"line": "wpa_supplicant: CTRL-EVENT-CONNECTED"}, "dnsmasq: reply ok"]
    publish_wait(client, topic, json.dumps(array))
    journald = {"MESSAGE": "Started Session 4 of user pi.", "PRIORITY": "6", "SYSLOG_IDENTIFIER": "systemd",
                "__REALTIME_TIMESTAMP": "1764500000250000"}
    plain = [  # each published on its own, as a forwarder sends one line a message
        "[    1.204518] usb 1-1: new high-speed USB device number 2 using xhci_hcd",  # dmesg
        "<30>Dec  1 10:00:01 gw systemd[1]: Started Daily apt upgrade.",  # RFC 3164
        "<14>1 2025-12-01T10:00:02Z gw mosquitto 812 - - New client connected from 10.0.0.7",  # RFC 5424
        'ts=2025-12-01T10:00:03Z level=info msg="bridge connected" peer=10.0.0.9',  # logfmt
        json.dumps(journald),  # journald export, one entry
        json.dumps(journald) + "\n" + json.dumps({**journald, "MESSAGE": "Stopped Session 4."}),  # -o json
    ]
    for body in plain:
        publish_wait(client, topic, body)
    summary_topic = f"edge/{site}/summary/gateway"

    def lines_summarized(_m: object) -> int:
        return sum(json.loads(p)["window"]["lines"] for p in collect.on(summary_topic))

    collect.wait_for(lambda m: lines_summarized(m) >= 12, timeout=60)
    got = [json.loads(p) for p in collect.on(summary_topic)]
    for summary in got:
        jsonschema.validate(summary, load_schema("summary"))
    assert all(s["source"] == "gateway" for s in got)
    assert sum(s["window"]["lines"] for s in got) == 12
    assert collect.on(f"edge/{site}/dlq") == []
    assert agent.terminate(30) == 0


def test_a_critical_line_is_alerted_at_once(
    running: tuple[AgentProcess, Collector], client: paho.Client, site: str
) -> None:
    agent, collect = running
    line = "kernel: Kernel panic - not syncing: Fatal exception in interrupt"
    publish_wait(client, f"edge/{site}/logs/gw-kernel", line)
    [payload] = collect.wait_count(f"edge/{site}/alert/gw-kernel", 1, timeout=30)
    alert = json.loads(payload)
    jsonschema.validate(alert, load_schema("alert"))
    assert alert["source"] == "gw-kernel"
    assert alert["severity"] == "critical"
    assert "Kernel panic" in alert["line"]
    assert agent.terminate(30) == 0


def test_bad_inputs_go_to_the_dlq_and_the_agent_keeps_working(
    running: tuple[AgentProcess, Collector], client: paho.Client, site: str
) -> None:
    agent, collect = running
    bad = {
        f"edge/{site}/transcript": b"\xff\xfe not utf-8",
        f"edge/{site}/logs/sensor": b"\xc3\x28 not utf-8",
    }
    for topic, payload in bad.items():
        publish_wait(client, topic, payload)
    publish_wait(client, f"edge/{site}/transcript", b"x" * 70_000)  # over pipeline.max_payload_bytes
    records = [json.loads(p) for p in collect.wait_count(f"edge/{site}/dlq", 3, timeout=60)]
    schema = load_schema("dlq")
    for record in records:
        jsonschema.validate(record, schema)
    by_topic = {r["topic"]: r for r in records if r["payload_size"] < 70_000}
    bad_transcript = by_topic[f"edge/{site}/transcript"]
    assert "not UTF-8" in bad_transcript["reason"]
    assert base64.b64decode(bad_transcript["payload_b64"]) == bad[f"edge/{site}/transcript"]
    assert "not UTF-8" in by_topic[f"edge/{site}/logs/sensor"]["reason"]
    [big] = [r for r in records if r["payload_size"] == 70_000]
    assert "exceeds" in big["reason"]
    assert big["truncated"] is True and len(base64.b64decode(big["payload_b64"])) == 64
    publish_wait(client, f"edge/{site}/transcript", "turn on the kitchen ceiling light")
    collect.wait_count(f"edge/{site}/intent", 1, timeout=30)
    assert agent.terminate(30) == 0


def test_stats_and_availability(
    running: tuple[AgentProcess, Collector], client: paho.Client, site: str
) -> None:
    agent, collect = running
    for i in range(3):
        publish_wait(client, f"edge/{site}/transcript", f"pause the tv {i}")
    collect.wait_count(f"edge/{site}/intent", 3, timeout=30)

    def stats_after_work(_m: object) -> bool:
        stats = [json.loads(p) for p in collect.on(f"edge/{site}/stats")]
        return any(s["counters"].get("out_intent", 0) >= 3 for s in stats)

    collect.wait_for(stats_after_work, timeout=30)
    schema = load_schema("stats")
    latest = json.loads(collect.on(f"edge/{site}/stats")[-1])
    jsonschema.validate(latest, schema)
    assert latest["site"] == site
    assert latest["counters"]["received"] >= 3
    assert latest["latency_ms"]["count"] >= 3
    assert 0 < latest["latency_ms"]["p50"] <= latest["latency_ms"]["p99"]
    assert latest["rss_mb"] > 10
    assert latest["queue"]["capacity"] == 256
    assert agent.terminate(30) == 0
    # the broker hands the last status on after the process has gone: wait for it, not a race
    collect.wait_for(lambda _m: collect.on(f"edge/{site}/status")[-1:] == [b"offline"], timeout=10)
    status = collect.on(f"edge/{site}/status")
    assert status[0] == b"online" and status[-1] == b"offline"
    for payload in status:
        jsonschema.validate(payload.decode(), load_schema("status"))
