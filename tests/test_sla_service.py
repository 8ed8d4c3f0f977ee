"""The SLA ladder in a running agent (``edge-agent run`` as a subprocess, real broker, real model):
a fake thermal file raised past the limit and lowered again, and a gcc-built test delegate that
sleeps while a flag file exists. Each test streams transcripts across the switches and checks
that every one is answered exactly once."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

import orjson
import paho.mqtt.client as paho
import pytest
from broker import AgentProcess, Collector, TestBroker, eventually

sys.path.insert(0, str(Path(__file__).resolve().parent / "delegates"))
from fixtures import build_delegates

LONG = "turn on the kitchen light and then please also dim the bedroom lamp to twenty percent tonight"


class Stream:
    """Publishes transcripts with ids t0, t1, ... every ``period_s`` until stopped."""

    def __init__(self, client: paho.Client, topic: str, period_s: float = 0.02) -> None:
        self.client, self.topic, self.period_s = client, topic, period_s
        self.sent: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Stream:
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.period_s):
            tid = f"t{len(self.sent)}"
            info = self.client.publish(self.topic, orjson.dumps({"id": tid, "text": LONG}), qos=1)
            info.wait_for_publish(10)
            self.sent.append(tid)

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join(10)


def intents(collect: Collector, site: str) -> list[dict[str, Any]]:
    return [orjson.loads(p) for p in collect.on(f"edge/{site}/intent")]


def stats(collect: Collector, site: str) -> list[dict[str, Any]]:
    return [orjson.loads(p) for p in collect.on(f"edge/{site}/stats")]


def start_agent(
    broker: TestBroker, site: str, tmp_path: Path, agents: list[AgentProcess], **sections: Any
) -> AgentProcess:
    config = {"site_id": site, "mqtt": broker.agent_mqtt(), "pipeline": {"stats_interval_s": 0.3}, **sections}
    agent = AgentProcess(config, tmp_path).start()
    agents.append(agent)
    return agent


def wait_online(collect: Collector, site: str) -> None:
    collect.wait_for(lambda m: any(t == f"edge/{site}/status" and p == b"online" for t, p, _ in m), 120)


def modes_after(collect: Collector, site: str, mode: str, after: int = 0) -> bool:
    return any(i["mode"] == mode for i in intents(collect, site)[after:])


def assert_each_answered_once(collect: Collector, site: str, sent: list[str]) -> list[dict[str, Any]]:
    collect.wait_count(f"edge/{site}/intent", len(sent), timeout=60)
    got = intents(collect, site)
    assert sorted(i["id"] for i in got) == sorted(sent)  # none lost, none answered twice
    assert not collect.on(f"edge/{site}/dlq")
    return got


def switches(agent: AgentProcess, task: str) -> list[tuple[str, str, str]]:
    return [
        (e["before"], e["after"], e["reason"])
        for e in agent.events()
        if e.get("event") == "sla.switch" and e.get("task") == task
    ]


def log_batch(client: paho.Client, topic: str, agent: AgentProcess, switched: int) -> None:
    """One log batch, then wait for the logs ladder's ``switched``-th switch it causes."""
    client.publish(topic, b"kernel: usb 1-1: device descriptor read/64, error -71", qos=1)
    assert eventually(lambda: len(switches(agent, "logs")) >= switched, 30)


def test_thermal_file_past_the_limit_degrades_and_recovers(
    broker: TestBroker,
    client: paho.Client,
    collect: Collector,
    site: str,
    tmp_path: Path,
    agents: list[AgentProcess],
) -> None:
    temp = tmp_path / "temp"
    temp.write_text("45000\n")
    sla = {
        "thermal_path": str(temp),
        "thermal_limit_c": 70,
        "thermal_hysteresis_c": 5,
        "thermal_poll_s": 0,
        "dwell_s": 0,
        "recover_after_s": 0,
        "intents_p95_ms": 600000,
        "logs_p95_ms": 600000,
    }
    agent = start_agent(broker, site, tmp_path, agents, sla=sla)
    wait_online(collect, site)
    logs_topic = f"edge/{site}/logs/kernel"
    with Stream(client, f"edge/{site}/transcript") as stream:
        assert eventually(lambda: len(intents(collect, site)) >= 10, 60)
        temp.write_text("91000\n")
        assert eventually(lambda: modes_after(collect, site, "degraded"), 30)
        for n in (1, 2, 3):  # the logs ladder steps once per batch: three reach rules_only
            log_batch(client, logs_topic, agent, n)
        assert eventually(lambda: any(s["mode"] == "degraded" for s in stats(collect, site)), 30)
        temp.write_text("67000\n")  # under the limit, not under limit - hysteresis: stays degraded
        seen = len(intents(collect, site))
        assert eventually(lambda: len(intents(collect, site)) >= seen + 10, 30)
        assert all(i["mode"] == "degraded" for i in intents(collect, site)[seen + 2 :])
        temp.write_text("40000\n")
        seen = len(intents(collect, site))
        assert eventually(lambda: modes_after(collect, site, "normal", seen), 30)
        for n in (4, 5, 6):
            log_batch(client, logs_topic, agent, n)
    got = assert_each_answered_once(collect, site, stream.sent)
    modes = [i["mode"] for i in got]
    first_bad, last_bad = modes.index("degraded"), len(modes) - 1 - modes[::-1].index("degraded")
    assert set(modes[:first_bad]) == {"normal"} and modes[-1] == "normal"
    degraded = [i for i in got if i["mode"] == "degraded"]
    # the shipped bundle has the small variant: hot batches step down to it, one step at a time
    assert {i["step"] for i in degraded} == {"short_input", "small_model"}
    assert degraded[0]["step"] == "short_input" and degraded[-1]["step"] == "short_input"
    assert all(i["truncated"] for i in degraded) and all(i["text"] == LONG for i in got)
    assert all(i["step"] == "normal" for i in got[last_bad + 1 :])
    steps = switches(agent, "intents")
    assert steps[0][:2] == ("normal", "short_input") and "91.0 C >= limit 70 C" in steps[0][2]
    assert [s[:2] for s in steps] == [
        ("normal", "short_input"),
        ("short_input", "small_model"),
        ("small_model", "short_input"),
        ("short_input", "normal"),
    ]
    assert "not hot" in steps[-1][2]
    logs = [s[1] for s in switches(agent, "logs")]
    assert logs == ["short_input", "small_model", "rules_only", "small_model", "short_input", "normal"]
    assert not [e for e in agent.events() if e.get("event") == "sla.step_skipped"]
    assert eventually(lambda: stats(collect, site)[-1]["sla"]["switches"] == 10, 10)
    last = stats(collect, site)[-1]
    assert last["mode"] == "normal" and last["sla"]["temperature_c"] == 40.0


@pytest.mark.slow
def test_slow_delegate_steps_down_to_the_small_model_and_back(
    broker: TestBroker,
    client: paho.Client,
    collect: Collector,
    site: str,
    tmp_path: Path,
    agents: list[AgentProcess],
) -> None:
    libs = build_delegates(tmp_path)
    slow = tmp_path / "slow"
    npu = {
        "kind": "external",
        "name": "npu",
        "library": str(libs["good"]),
        "options": {"slow_flag": str(slow), "slow_ms": 80},
    }
    sla = {
        "thermal_path": None,
        "intents_p95_ms": 50,
        "window": 10,
        "min_samples": 5,
        "latency_hysteresis": 0.5,
        "dwell_s": 0,
        "recover_after_s": 1,
    }
    agent = start_agent(
        broker,
        site,
        tmp_path,
        agents,
        sla=sla,
        runtime={"delegates": [npu, {"kind": "cpu"}]},
    )
    wait_online(collect, site)
    with Stream(client, f"edge/{site}/transcript", period_s=0.05) as stream:
        assert eventually(lambda: len(intents(collect, site)) >= 10, 60)
        slow.touch()  # the chip slows down: 80 ms per invoke against a 50 ms p95 budget
        assert eventually(lambda: any(i["step"] == "small_model" for i in intents(collect, site)), 60)
        slow.unlink()
        seen = len(intents(collect, site))
        assert eventually(lambda: modes_after(collect, site, "normal", seen), 60)
    got = assert_each_answered_once(collect, site, stream.sent)
    assert got[-1]["mode"] == "normal"
    steps = [s[:2] for s in switches(agent, "intents")]
    assert steps[:2] == [("normal", "short_input"), ("short_input", "small_model")]
    assert steps[-2:] == [("small_model", "short_input"), ("short_input", "normal")]
    assert all("p95" in s[2] and "> budget 50 ms" in s[2] for s in switches(agent, "intents")[:2])
    loaded = [e for e in agent.events() if e.get("event") == "sla.small_model_loaded"]
    assert [e["task"] for e in loaded] == ["intents"]  # loaded once, on first need
