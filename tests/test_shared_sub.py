"""Scale-out: three agents in one MQTT 5 shared subscription group split one site's inputs.

Every input is processed by exactly one agent (no duplicate result at all, not even before dedup)
and each agent takes its share within +-20 %. Each agent's count comes from its own log
(``app.stopped`` counters after SIGTERM), not from the results.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from broker import AgentProcess, Collector, TestBroker, unique
from conftest import agent_config

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

AGENTS = 3
INPUTS = 600


def wait_until(predicate: Callable[[], bool], timeout: float, step: float = 0.2) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


def _stopped_counters(agent: AgentProcess) -> dict[str, int]:
    for event in reversed(agent.events()):
        if event.get("event") == "app.stopped":
            return dict(event["counters"])
    raise AssertionError(f"no app.stopped event; log:\n{agent.log()[-2000:]}")


def test_three_agents_share_the_load_and_process_each_input_once(
    broker: TestBroker, tmp_path: Path, agents: list[AgentProcess]
) -> None:
    site = unique("sh")
    client = broker.client()
    collect = Collector(client, f"edge/{site}/#")
    for n in range(AGENTS):
        config = agent_config(
            broker, site,
            mqtt={"client_id": f"edge-{site}-{n}", "shared_group": "gw"},
            pipeline={"stats_interval_s": 0},
        )  # fmt: skip
        agents.append(AgentProcess(config, tmp_path, engine="real").start())
    ready = wait_until(
        lambda: sum(1 for a in agents if "mqtt.connected" in a.log()) == AGENTS, timeout=120, step=0.2
    )
    assert ready, "\n".join(a.log()[-1500:] for a in agents)
    topic = f"edge/{site}/transcript"
    infos = []
    for i in range(INPUTS):
        body = json.dumps({"id": f"s{i}", "text": f"turn on light number {i % 7}"})
        infos.append(client.publish(topic, body, qos=1))
    for info in infos:
        info.wait_for_publish(30)
    results = collect.wait_count(f"edge/{site}/intent", INPUTS, timeout=180)
    ids = [json.loads(p)["id"] for p in results]
    assert len(ids) == INPUTS and set(ids) == {f"s{i}" for i in range(INPUTS)}  # once each, no copies
    for agent in agents:
        assert agent.terminate(timeout=60) == 0
    per_agent = [_stopped_counters(a).get("out_intent", 0) for a in agents]
    assert sum(per_agent) == INPUTS
    share = INPUTS / AGENTS
    print(f"shared group: per agent {per_agent}, ideal {share:.0f}")
    for count in per_agent:
        assert abs(count - share) <= 0.2 * share, per_agent
    client.disconnect()
    client.loop_stop()
