"""The runtime inside the running agent: the delegate preference chain with fallback, its state in
``{prefix}/{site}/stats``, the CPU quota with transcripts kept interactive, and the residency
options of ``edge-agent logs classify``.

Agents are real ``edge-agent run`` subprocesses with the shipped bundle against the test
mosquitto; the failing accelerator is a gcc-compiled external delegate (tests/delegates)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import jsonschema
import paho.mqtt.client as paho
import pytest
from broker import AgentProcess, Collector, TestBroker, publish_wait
from conftest import agent_config
from delegates.fixtures import build_delegates

from edge_agent.logs.service import LogService
from edge_agent.messages import load_schema
from edge_agent.pipeline.pacing import CpuPacer
from edge_agent.pipeline.queue import LaneQueue
from edge_agent.runtime.bundle import default_bundle_path, load_bundle
from edge_agent.runtime.model import Model
from edge_agent.runtime.quota import CpuGovernor

REPO = Path(__file__).resolve().parent.parent
TEXTS = {
    "turn on the kitchen light": "HassTurnOn",
    "turn off the bedroom light": "HassTurnOff",
    "set a timer for ten minutes": "HassStartTimer",
}
LOG_LINES = [
    "kernel: eth0: link down",
    "sshd[812]: Failed password for root from 10.0.0.7 port 52113 ssh2",
    "thermal thermal_zone0: critical temperature reached (97 C), shutting down",
    "systemd[1]: Started Session 12 of user root.",
    "zigbee2mqtt: MQTT publish: topic 'zigbee2mqtt/sensor_3', payload '{\"temperature\":21.5}'",
    "",
    "dnsmasq-dhcp[402]: DHCPACK(br0) 192.168.1.23 aa:bb:cc:dd:ee:ff lamp",
]


@pytest.fixture(scope="module")
def libs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return build_delegates(tmp_path_factory.mktemp("delegates"))


def start_agent(
    broker: TestBroker, client: paho.Client, site: str, tmp_path: Path, agents: list[AgentProcess],
    runtime: dict[str, Any],
) -> tuple[AgentProcess, Collector]:
    collect = Collector(client, f"edge/{site}/#")
    config = agent_config(
        broker, site, runtime=runtime, pipeline={"stats_interval_s": 0.3, "tick_interval_s": 0.2},
        logs={"window_s": 1.0},
    )
    agent = AgentProcess(config, tmp_path, engine="real").start()
    agents.append(agent)
    collect.wait_for(lambda _m: collect.on(f"edge/{site}/status")[-1:] == [b"online"], timeout=90)
    return agent, collect


def send_transcripts(client: paho.Client, site: str, ids: list[str]) -> None:
    texts = list(TEXTS)
    for n, ident in enumerate(ids):
        body = json.dumps({"id": ident, "text": texts[n % len(texts)]})
        publish_wait(client, f"edge/{site}/transcript", body)


def intents_by_id(collect: Collector, site: str, count: int) -> dict[str, dict[str, Any]]:
    payloads = collect.wait_count(f"edge/{site}/intent", count, timeout=90)
    out: dict[str, dict[str, Any]] = {}
    for raw in payloads:
        body = json.loads(raw)
        assert body["id"] not in out, f"intent {body['id']} published twice"
        out[body["id"]] = body
    return out


def latest_stats(collect: Collector, site: str, check: Any, timeout: float = 30.0) -> dict[str, Any]:
    """The first stats message (waiting for new ones) for which ``check(stats)`` holds."""
    topic = f"edge/{site}/stats"

    def seen(_m: object) -> bool:
        return any(check(json.loads(p)) for p in collect.on(topic))

    collect.wait_for(seen, timeout=timeout)
    return next(s for s in map(json.loads, reversed(collect.on(topic))) if check(s))


def test_unavailable_accelerator_is_reported_and_cpu_serves(
    broker: TestBroker, client: paho.Client, site: str, tmp_path: Path, agents: list[AgentProcess]
) -> None:
    runtime = {"delegates": [{"kind": "edgetpu", "device": "usb"}, {"kind": "cpu"}]}
    agent, collect = start_agent(broker, client, site, tmp_path, agents, runtime)
    send_transcripts(client, site, ["a1"])
    got = intents_by_id(collect, site, 1)
    assert got["a1"]["intent"] == "HassTurnOn"
    stats = latest_stats(collect, site, lambda s: s["counters"].get("out_intent", 0) >= 1)
    jsonschema.validate(stats, load_schema("stats"))
    rt = stats["runtime"]
    assert rt["active"] == "cpu"
    edgetpu, cpu = rt["backends"]
    assert (edgetpu["name"], edgetpu["status"]) == ("edgetpu", "unavailable")
    assert edgetpu["reason"]  # e.g. "EdgeTPU runtime libedgetpu.so.1 is not installed ..."
    assert (cpu["name"], cpu["status"], cpu["reason"]) == ("cpu", "active", None)
    assert [(s["from"], s["to"]) for s in rt["switches"]] == [(None, "cpu")]
    assert rt["cpu"] is None  # no quota configured: no governor
    logged = [e for e in agent.events() if e.get("event") == "backend_unavailable"]
    assert logged and logged[0]["backend"] == "edgetpu" and logged[0]["reason"] == edgetpu["reason"]


def test_accelerator_failing_mid_run_loses_no_transcript(
    broker: TestBroker, client: paho.Client, site: str, tmp_path: Path, agents: list[AgentProcess],
    libs: dict[str, Path],
) -> None:
    unplugged = tmp_path / "unplugged"  # the test delegate fails every invoke while this exists
    npu = {"kind": "external", "name": "npu", "library": str(libs["flaky"]),
           "options": {"fail_flag": str(unplugged)}}  # fmt: skip
    runtime = {"delegates": [npu, {"kind": "cpu"}], "reprobe_interval_s": 3600}
    _agent, collect = start_agent(broker, client, site, tmp_path, agents, runtime)
    before = [f"b{i}" for i in range(4)]
    send_transcripts(client, site, before)
    intents_by_id(collect, site, len(before))
    first = latest_stats(collect, site, lambda s: s["counters"].get("out_intent", 0) >= len(before))
    assert first["runtime"]["active"] == "npu"

    unplugged.touch()  # the accelerator is gone while the agent runs
    after = [f"c{i}" for i in range(8)]
    send_transcripts(client, site, after)
    got = intents_by_id(collect, site, len(before) + len(after))
    assert sorted(got) == sorted(before + after)
    texts = list(TEXTS)
    for n, ident in enumerate(before):
        assert got[ident]["intent"] == TEXTS[texts[n % len(texts)]]
    for n, ident in enumerate(after):  # answered on the CPU, same answers as on the accelerator
        assert got[ident]["intent"] == TEXTS[texts[n % len(texts)]]
    assert collect.on(f"edge/{site}/dlq") == []

    stats = latest_stats(collect, site, lambda s: s["counters"].get("out_intent", 0) >= len(got))
    rt = stats["runtime"]
    assert rt["active"] == "cpu"
    assert rt["failovers"] == 1 and rt["retried_requests"] >= 1
    assert [(s["from"], s["to"]) for s in rt["switches"]] == [(None, "npu"), ("npu", "cpu")]
    assert "device gone" in rt["switches"][-1]["reason"]
    failed = rt["backends"][0]
    assert failed["name"] == "npu" and failed["status"] == "failed" and failed["failures"] == 1


def test_cpu_quota_is_applied_and_reported(
    broker: TestBroker, client: paho.Client, site: str, tmp_path: Path, agents: list[AgentProcess]
) -> None:
    runtime = {"threads": 4, "cpu": {"quota": 0.5, "burst_ms": 100}}
    _agent, collect = start_agent(broker, client, site, tmp_path, agents, runtime)
    for n in range(6):  # log batches (batch work) and transcripts (interactive) interleaved
        lines = "\n".join(f"{line} #{n}" if line else line for line in LOG_LINES)
        publish_wait(client, f"edge/{site}/logs/gateway", lines)
        send_transcripts(client, site, [f"q{n}"])
    got = intents_by_id(collect, site, 6)
    assert sorted(got) == [f"q{n}" for n in range(6)]
    collect.wait_for(lambda _m: bool(collect.on(f"edge/{site}/summary/gateway")), timeout=30)
    stats = latest_stats(
        collect, site,
        lambda s: s["counters"].get("out_intent", 0) >= 6 and s["runtime"]["cpu"]["log_paces"] >= 1,
    )
    rt = stats["runtime"]
    assert 0 < rt["cpu"]["quota_cores"] <= 0.5  # the cgroup's cpu.max may lower it, never raise it
    assert rt["threads"] == 1  # interpreter threads are capped at ceil(quota)
    assert rt["active"] == "cpu"


def test_log_batches_wait_while_a_transcript_is_in_flight() -> None:
    """What the agent's handlers do: transcripts run inside ``interactive()``, log batches call
    ``pace()`` first, with the real governor."""
    pacer = CpuPacer(CpuGovernor(8.0))
    order: list[str] = []
    inside, release = threading.Event(), threading.Event()

    def transcript() -> None:
        with pacer.interactive():
            inside.set()
            release.wait(10)
            order.append("transcript")

    def log_batch() -> None:
        pacer.pace()
        order.append("logs")

    t = threading.Thread(target=transcript)
    t.start()
    assert inside.wait(10)
    b = threading.Thread(target=log_batch)
    b.start()
    b.join(0.2)
    assert b.is_alive() and order == []  # held back while the transcript runs
    release.set()
    t.join(10)
    b.join(10)
    assert order == ["transcript", "logs"]
    stats = pacer.stats()
    assert stats is not None and stats["log_paces"] == 1 and stats["quota_cores"] == 8.0


def test_interactive_worker_takes_only_interactive_lanes_and_the_others_leave_them() -> None:
    """Under a quota the pipeline runs one worker for priority 0 (transcripts, Hermes) and lets
    the others take everything else: a paced log batch never holds the transcript lane."""
    q: LaneQueue[str] = LaneQueue(8)
    q.add_lane("transcript", 0)
    q.add_lane("control", 5)
    q.add_lane("logs", 10)
    q.put("logs", "l0")
    q.put("control", "c0")
    q.put("transcript", "t0")
    assert q.get(0.0, max_priority=0) == ("transcript", "t0")
    assert q.get(0.0, max_priority=0) is None  # logs and control are not its work
    q.put("transcript", "t1")
    assert q.get(0.0, min_priority=1) == ("control", "c0")  # the transcript is left to its worker
    assert q.get(0.0, min_priority=1) == ("logs", "l0")
    assert q.get(0.0, min_priority=1) is None
    assert q.get(0.0) == ("transcript", "t1")


def test_pace_waits_out_cpu_debt() -> None:
    cpu_s = [0.0]  # the process's CPU time as the governor sees it (the machine is shared)
    gov = CpuGovernor(0.5, burst_s=0.0, cpu_time=lambda: cpu_s[0])
    pacer = CpuPacer(gov)
    cpu_s[0] += 0.3  # a log batch spent 0.3 CPU-seconds: 0.6 s of wall time at 0.5 cores
    assert gov.wait_needed() > 0
    assert pacer.pace() > 0
    assert gov.wait_needed() == 0
    assert CpuPacer(None).pace() == 0.0 and CpuPacer(None).stats() is None


def test_log_service_swap_model_relabels_cached_templates() -> None:
    model = Model(load_bundle(default_bundle_path()))
    service = LogService(model=None)
    line = "thermal thermal_zone0: critical temperature reached (97 C), shutting down"
    ruled = service.process([line])[0]
    runs = service.classifier.model_runs
    service.swap_model(model)
    assert service.classifier.has_model
    labelled = service.process([line])[0]
    assert service.classifier.model_runs == runs + 1  # the cached rule label was not reused
    assert labelled.match.template_id == ruled.match.template_id  # templates survive the swap
    service.swap_model(None)
    assert not service.classifier.has_model
    again = service.process([line])[0].label
    assert (again.severity, again.category) == (ruled.label.severity, ruled.label.category)
    assert again.score < ruled.label.score  # the third sighting on this source: familiar now
    model.close()


def classify(tmp_path: Path, *args: str) -> list[dict[str, Any]]:
    src = tmp_path / "lines.log"
    src.write_text("\n".join(LOG_LINES) + "\n", encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "edge_agent", "logs", "classify", str(src), *args],
        capture_output=True, text=True, cwd=REPO, timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines()]


def test_logs_classify_streams_with_the_same_labels(tmp_path: Path) -> None:
    resident = classify(tmp_path, "--residency", "resident")
    assert len(resident) == len(LOG_LINES)
    assert classify(tmp_path, "--residency", "stream", "--threads", "2") == resident
    assert classify(tmp_path, "--residency", "auto", "--weight-budget-mb", "0.5") == resident


def test_logs_classify_refuses_auto_without_budget(tmp_path: Path) -> None:
    src = tmp_path / "x.log"
    src.write_text("kernel: eth0: link down\n", encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "edge_agent", "logs", "classify", str(src), "--residency", "auto"],
        capture_output=True, text=True, cwd=REPO, timeout=60,
    )
    assert out.returncode == 2 and "--weight-budget-mb" in out.stderr and out.stdout == ""


def test_agent_without_any_working_backend_stops_with_the_reasons(
    broker: TestBroker, site: str, tmp_path: Path, agents: list[AgentProcess]
) -> None:
    config = agent_config(broker, site, runtime={"delegates": [{"kind": "edgetpu", "device": "usb"}]})
    agent = AgentProcess(config, tmp_path, engine="real").start()
    agents.append(agent)
    assert agent.wait(timeout=90) == 4  # start-up failure, not a crash loop on a dead accelerator
    failed = [e for e in agent.events() if e.get("event") == "app.startup_failed"]
    assert failed and "no backend can run the model: edgetpu:" in failed[0]["error"]


def test_bundle_installed_over_mqtt_runs_on_a_new_chain_for_intents_and_logs(
    broker: TestBroker, client: paho.Client, site: str, tmp_path: Path, agents: list[AgentProcess]
) -> None:
    incoming = tmp_path / "incoming"
    v2 = incoming / "v2"
    shutil.copytree(default_bundle_path(), v2)
    manifest = json.loads((v2 / "manifest.json").read_text())
    manifest["model"]["version"] = "test-2"
    (v2 / "manifest.json").write_text(json.dumps(manifest, indent=1))
    collect = Collector(client, f"edge/{site}/#")
    config = agent_config(
        broker, site, runtime={"delegates": [{"kind": "edgetpu"}, {"kind": "cpu"}]},
        pipeline={"stats_interval_s": 0.3}, logs={"window_s": 0.5},
        reliability={"state_dir": str(tmp_path / "state"), "bundles": {"install_from": [str(incoming)]}},
    )
    agent = AgentProcess(config, tmp_path, engine="real").start()
    agents.append(agent)
    collect.wait_for(lambda _m: collect.on(f"edge/{site}/status")[-1:] == [b"online"], timeout=90)
    send_transcripts(client, site, ["v1"])
    assert not intents_by_id(collect, site, 1)["v1"]["model"].endswith("@test-2")
    installed_at = time.time()
    publish_wait(client, f"edge/{site}/bundle/install", json.dumps({"id": "i1", "path": str(v2)}))
    reply = json.loads(collect.wait_count(f"edge/{site}/bundle/reply", 1, timeout=120)[0])
    assert reply["ok"] is True, reply
    send_transcripts(client, site, ["v2"])
    after = intents_by_id(collect, site, 2)["v2"]
    assert after["model"].endswith("@test-2") and after["intent"] == "HassTurnOn"
    publish_wait(client, f"edge/{site}/logs/gw", "\n".join(LOG_LINES))
    collect.wait_for(lambda _m: bool(collect.on(f"edge/{site}/summary/gw")), timeout=30)
    activated = [e for e in agent.events() if e.get("event") == "app.bundle_activated"]
    assert activated and activated[0]["logs_swapped"] is True
    stats = latest_stats(collect, site, lambda s: s["counters"].get("out_intent", 0) >= 2)
    rt = stats["runtime"]
    assert rt["switches"][0]["at"] >= installed_at  # the new bundle's own chain, probed at install
    assert rt["active"] == "cpu" and rt["backends"][0]["status"] == "unavailable"
