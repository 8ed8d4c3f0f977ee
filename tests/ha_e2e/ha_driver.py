"""Drives a real Home Assistant core for tests/test_ha_wyoming_e2e.py; runs in HA's own venv
(scripts/ha_wyoming_e2e.sh makes it), never in the agent's.

``requirements``: prints the pip requirements of the integrations HA sets up here (its default
ones, their dependencies and the ones this test adds), for the install script; HA itself then
runs with ``skip_pip`` and needs no network.

``run --config-dir DIR --port N --text TEXT``: writes a configuration.yaml with a template light
"Kitchen Light", boots HA from it (HA's own bootstrap), adds the Wyoming integration through its
config flow against the agent on 127.0.0.1:N, says TEXT to the Wyoming conversation agent
(service ``conversation.process``) and prints one JSON line: HA's version, the flow's result, the
agent's entity id, HA's answer and the light's state before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

# what this test adds to HA's default integrations
EXTRA_INTEGRATIONS = ("wyoming", "conversation", "intent", "template", "light", "input_boolean")
LIGHT = "light.kitchen_light"

CONFIGURATION = """\
homeassistant:
  name: edge-agent e2e
  latitude: 52.37
  longitude: 4.89
  elevation: 0
  unit_system: metric
  time_zone: UTC
  country: NL
  language: en
  currency: EUR
conversation:
intent:
logger:
  default: warning
  logs:
    homeassistant.components.wyoming: debug
input_boolean:
  kitchen_light_power:
    name: Kitchen power switch
light:
  - platform: template
    lights:
      kitchen_light:
        unique_id: edge_agent_e2e_kitchen_light
        friendly_name: Kitchen Light
        value_template: "{{ is_state('input_boolean.kitchen_light_power', 'on') }}"
        turn_on:
          - action: input_boolean.turn_on
            target: {entity_id: input_boolean.kitchen_light_power}
        turn_off:
          - action: input_boolean.turn_off
            target: {entity_id: input_boolean.kitchen_light_power}
"""


def requirements() -> list[str]:
    """pip requirements of every integration HA sets up in ``run`` (manifests, recursively)."""
    import homeassistant
    from homeassistant import bootstrap

    components = Path(homeassistant.__file__).parent / "components"
    todo = [*bootstrap.CORE_INTEGRATIONS, *bootstrap.LOGGING_AND_HTTP_DEPS_INTEGRATIONS,
            *bootstrap.DEFAULT_INTEGRATIONS, *EXTRA_INTEGRATIONS]
    seen: set[str] = set()
    reqs: list[str] = []
    while todo:
        name = todo.pop()
        if name in seen or not (components / name / "manifest.json").is_file():
            continue
        seen.add(name)
        manifest = json.loads((components / name / "manifest.json").read_text(encoding="utf-8"))
        reqs += [r for r in manifest.get("requirements", []) if r not in reqs]
        todo += manifest.get("dependencies", [])
    return reqs


async def run(config_dir: Path, port: int, text: str) -> dict[str, Any]:
    from homeassistant import bootstrap
    from homeassistant.const import __version__
    from homeassistant.helpers import entity_registry as er
    from homeassistant.runner import RuntimeConfig

    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / "configuration.yaml").write_text(CONFIGURATION, encoding="utf-8")
    hass = await bootstrap.async_setup_hass(
        RuntimeConfig(config_dir=str(config_dir), skip_pip=True, recovery_mode=False)
    )
    if hass is None:
        return {"error": "HA did not set up; see home-assistant.log in the config dir"}
    await hass.async_start()
    try:
        await hass.async_block_till_done()
        before = hass.states.get(LIGHT)
        flow = await hass.config_entries.flow.async_init(
            "wyoming", context={"source": "user"}, data={"host": "127.0.0.1", "port": port}
        )
        await hass.async_block_till_done()
        agents = [e.entity_id for e in er.async_get(hass).entities.values()
                  if e.platform == "wyoming" and e.domain == "conversation"]
        out: dict[str, Any] = {
            "ha_version": __version__, "flow": {"type": str(flow.get("type")), "title": flow.get("title")},
            "agents": agents, "before": before.state if before else None,
        }
        if len(agents) != 1:
            return out
        response = await hass.services.async_call(
            "conversation", "process", {"text": text, "agent_id": agents[0], "language": "en"},
            blocking=True, return_response=True,
        )
        await hass.async_block_till_done()
        after = hass.states.get(LIGHT)
        out.update(after=after.state if after else None, response=_jsonable(response))
        return out
    finally:
        await hass.async_stop()


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("requirements")
    go = sub.add_parser("run")
    go.add_argument("--config-dir", type=Path, required=True)
    go.add_argument("--port", type=int, required=True)
    go.add_argument("--text", required=True)
    args = parser.parse_args()
    if args.cmd == "requirements":
        print("\n".join(requirements()))
        return 0
    result = asyncio.run(run(args.config_dir, args.port, args.text))
    print(json.dumps(result), flush=True)
    return 0 if "error" not in result else 1


if __name__ == "__main__":
    sys.exit(main())
