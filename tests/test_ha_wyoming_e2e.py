"""End to end with a real Home Assistant core: its Wyoming integration, configured through its own
config flow against the running agent (shipped model, real mosquitto), takes the agent as its
conversation agent, and "turn on the kitchen light" turns HA's light entity on.

Needs HA core in a venv of its own: run scripts/ha_wyoming_e2e.sh, which installs it (once) and
then runs this test (``pytest -m ha_e2e``; the default run leaves it out). The script passes HA's
interpreter in $EDGE_AGENT_HA_PYTHON.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from broker import AgentProcess, TestBroker, eventually, unique
from conftest import agent_config

pytestmark = pytest.mark.ha_e2e

DRIVER = Path(__file__).parent / "ha_e2e" / "ha_driver.py"
HOME = {"areas": ["Kitchen"], "entities": [{"name": "Kitchen Light", "domain": "light", "area": "Kitchen"}]}


def _ha_python() -> str:
    path = os.environ.get("EDGE_AGENT_HA_PYTHON", "")
    assert path and Path(path).is_file(), (
        "EDGE_AGENT_HA_PYTHON must name the python of a venv with homeassistant installed; "
        "run scripts/ha_wyoming_e2e.sh"
    )
    return path


def test_home_assistant_turns_on_the_kitchen_light_through_the_agent(
    broker: TestBroker, tmp_path: Path, agents: list[AgentProcess]
) -> None:
    ha_python = _ha_python()
    site = unique("ha")
    config = agent_config(broker, site, home=HOME, wyoming={"enabled": True, "port": 0})
    agent = AgentProcess(config, tmp_path).start()
    agents.append(agent)

    def port() -> int | None:
        found = [e["port"] for e in agent.events() if e.get("event") == "wyoming.listening"]
        return found[-1] if found else None

    assert eventually(lambda: port() is not None, timeout=120), agent.log()[-3000:]
    ha_dir = tmp_path / "ha"
    run = subprocess.run(
        [ha_python, str(DRIVER), "run", "--config-dir", str(ha_dir), "--port", str(port()),
         "--text", "turn on the kitchen light"],
        capture_output=True, text=True, timeout=600, check=False,
    )
    log = (ha_dir / "home-assistant.log")
    detail = f"{run.stdout[-3000:]}\n{run.stderr[-3000:]}\n{log.read_text()[-4000:] if log.exists() else ''}"
    assert run.returncode == 0, detail
    result = json.loads(run.stdout.strip().splitlines()[-1])
    print(json.dumps(result))  # shown with pytest -s
    assert result["flow"] == {"type": "create_entry", "title": "edge-agent-intent"}, detail
    assert len(result["agents"]) == 1, detail
    assert result["before"] == "off", detail
    assert result["after"] == "on", detail
    answer = result["response"]["response"]
    assert answer["response_type"] == "action_done", detail
    assert [t["id"] for t in answer["data"]["success"]] == ["light.kitchen_light"], detail
    assert answer["speech"]["plain"]["speech"] == "Turned on the Kitchen Light.", detail
    served = [e for e in agent.events() if e.get("event") == "wyoming.listening"]
    assert served and agent.proc is not None and agent.proc.poll() is None
