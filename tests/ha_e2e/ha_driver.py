"""Drives a real Home Assistant core for tests/test_ha_wyoming_e2e.py; runs in HA's own venv
(scripts/ha_wyoming_e2e.sh makes it), never in the agent's.

``requirements``: prints the pip requirements of the integrations HA sets up here (its default
ones, their dependencies and the ones this test adds), for the install script; HA itself then
runs with ``skip_pip`` and needs no network.

``run --config-dir DIR --http-port N --steps FILE``: writes a configuration.yaml with a small home
(template lights, cover, fan, switch and weather, a generic thermostat, a universal media player
"TV", the shopping list) in three areas, boots HA from it (HA's own bootstrap), creates a
long-lived access token of an admin user (written to DIR/ha_token, mode 0600) and prints one JSON
line ``{"ready": ..., "token_file", "http_port", "ha_version"}``. It then reads one JSON line on
stdin, ``{"agents": {label: port}}``, adds the Wyoming integration through its config flow for
every agent, says each step's text (``[{"agent": label, "text": ...}]`` in FILE) to that agent's
conversation entity (service ``conversation.process``) and prints one JSON line: HA's version, the
intents HA registered, the flows, and for every step HA's answer with the home's states before
and after.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

# what this test adds to HA's default integrations
EXTRA_INTEGRATIONS = (
    "wyoming", "conversation", "intent", "template", "light", "input_boolean", "input_number",
    "input_select", "cover", "climate", "generic_thermostat", "media_player", "universal", "fan",
    "switch", "sensor", "shopping_list", "todo", "api", "http", "weather",
)
AREAS = {
    "Kitchen": ["light.kitchen_light", "switch.coffee_maker"],
    "Living Room": ["light.living_room_lamp", "light.ceiling_light", "cover.living_room_blinds",
                    "climate.thermostat", "media_player.tv"],
    "Bedroom": ["light.bedroom_light", "fan.ceiling_fan"],
}
# an entity HA is told not to expose to Assist: does the Wyoming path still run intents on it?
UNEXPOSED = "switch.coffee_maker"


def _on_off_light(key: str, name: str, power: str) -> str:
    return f"""\
      {key}:
        unique_id: edge_agent_e2e_{key}
        friendly_name: {name}
        value_template: "{{{{ is_state('input_boolean.{power}', 'on') }}}}"
        turn_on:
          - action: input_boolean.turn_on
            target: {{entity_id: input_boolean.{power}}}
        turn_off:
          - action: input_boolean.turn_off
            target: {{entity_id: input_boolean.{power}}}
"""


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
http:
  server_host: 127.0.0.1
  server_port: {http_port}
api:
conversation:
intent:
logger:
  default: warning
  logs:
    homeassistant.components.wyoming: debug
input_boolean:
  kitchen_light_power: {{name: Kitchen light power}}
  lamp_power: {{name: Lamp power, initial: true}}
  ceiling_light_power: {{name: Ceiling light power, initial: true}}
  bedroom_light_power: {{name: Bedroom light power, initial: true}}
  fan_power: {{name: Fan power}}
  coffee_power: {{name: Coffee power}}
  heater: {{name: Heater}}
  tv_muted: {{name: TV muted}}
  tv_skipped: {{name: TV skipped a track}}
input_number:
  lamp_level: {{min: 0, max: 255, step: 1, initial: 128}}
  blinds_position: {{min: 0, max: 100, step: 1, initial: 0}}
  fan_percentage: {{min: 0, max: 100, step: 1, initial: 0}}
  tv_volume: {{min: 0, max: 1, step: 0.01, initial: 0.2}}
input_select:
  tv_state: {{options: ["off", "playing", "paused"], initial: "off"}}
light:
  - platform: template
    lights:
{lights}      living_room_lamp:
        unique_id: edge_agent_e2e_living_room_lamp
        friendly_name: Living Room Lamp
        value_template: "{{{{ is_state('input_boolean.lamp_power', 'on') }}}}"
        level_template: "{{{{ states('input_number.lamp_level') | int }}}}"
        turn_on:
          - action: input_boolean.turn_on
            target: {{entity_id: input_boolean.lamp_power}}
        turn_off:
          - action: input_boolean.turn_off
            target: {{entity_id: input_boolean.lamp_power}}
        set_level:
          - action: input_number.set_value
            target: {{entity_id: input_number.lamp_level}}
            data: {{value: "{{{{ brightness }}}}"}}
          - action: input_boolean.turn_on
            target: {{entity_id: input_boolean.lamp_power}}
cover:
  - platform: template
    covers:
      living_room_blinds:
        unique_id: edge_agent_e2e_living_room_blinds
        friendly_name: Living Room Blinds
        device_class: blind
        position_template: "{{{{ states('input_number.blinds_position') | int }}}}"
        open_cover:
          - action: input_number.set_value
            target: {{entity_id: input_number.blinds_position}}
            data: {{value: 100}}
        close_cover:
          - action: input_number.set_value
            target: {{entity_id: input_number.blinds_position}}
            data: {{value: 0}}
        set_cover_position:
          - action: input_number.set_value
            target: {{entity_id: input_number.blinds_position}}
            data: {{value: "{{{{ position }}}}"}}
fan:
  - platform: template
    fans:
      ceiling_fan:
        unique_id: edge_agent_e2e_ceiling_fan
        friendly_name: Ceiling Fan
        value_template: "{{{{ is_state('input_boolean.fan_power', 'on') }}}}"
        percentage_template: "{{{{ states('input_number.fan_percentage') | int }}}}"
        speed_count: 4
        turn_on:
          - action: input_boolean.turn_on
            target: {{entity_id: input_boolean.fan_power}}
        turn_off:
          - action: input_boolean.turn_off
            target: {{entity_id: input_boolean.fan_power}}
        set_percentage:
          - action: input_number.set_value
            target: {{entity_id: input_number.fan_percentage}}
            data: {{value: "{{{{ percentage }}}}"}}
switch:
  - platform: template
    switches:
      coffee_maker:
        unique_id: edge_agent_e2e_coffee_maker
        friendly_name: Coffee Maker
        value_template: "{{{{ is_state('input_boolean.coffee_power', 'on') }}}}"
        turn_on:
          - action: input_boolean.turn_on
            target: {{entity_id: input_boolean.coffee_power}}
        turn_off:
          - action: input_boolean.turn_off
            target: {{entity_id: input_boolean.coffee_power}}
template:
  - sensor:
      - name: Thermostat sensor
        unique_id: edge_agent_e2e_thermostat_sensor
        unit_of_measurement: "°C"
        device_class: temperature
        state: "21.5"
climate:
  - platform: generic_thermostat
    name: Thermostat
    unique_id: edge_agent_e2e_thermostat
    heater: input_boolean.heater
    target_sensor: sensor.thermostat_sensor
    target_temp: 20
    min_temp: 7
    max_temp: 30
    initial_hvac_mode: heat
weather:
  - platform: template
    name: Home
    unique_id: edge_agent_e2e_weather
    condition_template: "sunny"
    temperature_template: "{{{{ 18 }}}}"
    humidity_template: "{{{{ 60 }}}}"
    temperature_unit: "°C"
media_player:
  - platform: universal
    name: TV
    unique_id: edge_agent_e2e_tv
    device_class: tv
    state_template: "{{{{ states('input_select.tv_state') }}}}"
    attributes:
      volume_level: input_number.tv_volume
      is_volume_muted: input_boolean.tv_muted
    commands:
      turn_on:
        action: input_select.select_option
        target: {{entity_id: input_select.tv_state}}
        data: {{option: playing}}
      turn_off:
        action: input_select.select_option
        target: {{entity_id: input_select.tv_state}}
        data: {{option: "off"}}
      media_play:
        action: input_select.select_option
        target: {{entity_id: input_select.tv_state}}
        data: {{option: playing}}
      media_pause:
        action: input_select.select_option
        target: {{entity_id: input_select.tv_state}}
        data: {{option: paused}}
      media_next_track:
        action: input_boolean.turn_on
        target: {{entity_id: input_boolean.tv_skipped}}
      volume_set:
        action: input_number.set_value
        target: {{entity_id: input_number.tv_volume}}
        data: {{value: "{{{{ volume_level }}}}"}}
      volume_mute:
        action: "input_boolean.turn_{{{{ 'on' if is_volume_muted else 'off' }}}}"
        target: {{entity_id: input_boolean.tv_muted}}
"""


def configuration(http_port: int) -> str:
    lights = "".join(
        _on_off_light(key, name, power)
        for key, name, power in (
            ("kitchen_light", "Kitchen Light", "kitchen_light_power"),
            ("ceiling_light", "Ceiling Light", "ceiling_light_power"),
            ("bedroom_light", "Bedroom Light", "bedroom_light_power"),
        )
    )
    return CONFIGURATION.format(http_port=http_port, lights=lights)


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


def _emit(value: dict[str, Any]) -> None:
    print(json.dumps(value, default=str), flush=True)


async def _areas(hass: Any) -> dict[str, str]:
    from homeassistant.helpers import area_registry as ar
    from homeassistant.helpers import entity_registry as er

    areas, entities = ar.async_get(hass), er.async_get(hass)
    placed: dict[str, str] = {}
    for name, members in AREAS.items():
        area = areas.async_get_area_by_name(name) or areas.async_create(name)
        for entity_id in members:
            if entities.async_get(entity_id) is not None:
                entities.async_update_entity(entity_id, area_id=area.id)
                placed[entity_id] = name
    return placed


async def _token(hass: Any, config_dir: Path) -> Path:
    from homeassistant.auth.const import GROUP_ID_ADMIN
    from homeassistant.auth.models import TOKEN_TYPE_LONG_LIVED_ACCESS_TOKEN

    user = await hass.auth.async_create_user("edge-agent e2e", group_ids=[GROUP_ID_ADMIN])
    refresh = await hass.auth.async_create_refresh_token(
        user, client_name="edge-agent e2e", token_type=TOKEN_TYPE_LONG_LIVED_ACCESS_TOKEN,
        access_token_expiration=timedelta(days=1),
    )
    path = config_dir / "ha_token"
    token = hass.auth.async_create_access_token(refresh)

    def write() -> None:
        path.write_text(token + "\n", encoding="utf-8")
        os.chmod(path, 0o600)

    await hass.async_add_executor_job(write)
    return path


def _snapshot(hass: Any) -> dict[str, Any]:
    keep = ("brightness", "current_position", "temperature", "current_temperature", "percentage",
            "volume_level", "is_volume_muted")
    out: dict[str, Any] = {}
    for state in hass.states.async_all():
        if state.domain in ("light", "cover", "climate", "media_player", "fan", "switch", "todo") or (
            state.entity_id == "input_boolean.tv_skipped"
        ):
            attrs = {k: state.attributes[k] for k in keep if k in state.attributes}
            out[state.entity_id] = {"state": state.state, **attrs}
    return out


async def _shopping_items(hass: Any) -> dict[str, list[str]]:
    data = hass.data.get("shopping_list")
    items = getattr(data, "items", [])
    return {"open": [i["name"] for i in items if not i["complete"]],
            "done": [i["name"] for i in items if i["complete"]]}


async def run(config_dir: Path, http_port: int, steps: list[dict[str, str]]) -> dict[str, Any]:
    from homeassistant import bootstrap
    from homeassistant.components.homeassistant.exposed_entities import (
        async_expose_entity,
        async_should_expose,
    )
    from homeassistant.const import __version__
    from homeassistant.helpers import entity_registry as er
    from homeassistant.helpers import intent
    from homeassistant.runner import RuntimeConfig

    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / "configuration.yaml").write_text(configuration(http_port), encoding="utf-8")
    hass = await bootstrap.async_setup_hass(
        RuntimeConfig(config_dir=str(config_dir), skip_pip=True, recovery_mode=False)
    )
    if hass is None:
        return {"error": "HA did not set up; see home-assistant.log in the config dir"}
    await hass.async_start()
    try:
        await hass.async_block_till_done()
        # the shopping list is set up as in HA's UI (its YAML import stops at a form in 2025.4)
        shopping = await hass.config_entries.flow.async_init(
            "shopping_list", context={"source": "user"}, data={}
        )
        await hass.async_block_till_done()
        placed = await _areas(hass)
        async_expose_entity(hass, "conversation", UNEXPOSED, False)
        token_file = await _token(hass, config_dir)
        _emit({"ready": True, "token_file": str(token_file), "http_port": http_port,
               "ha_version": __version__})
        line = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        ports: dict[str, int] = json.loads(line)["agents"]
        flows, agents = {}, {}
        registry = er.async_get(hass)
        for label, port in ports.items():
            flow = await hass.config_entries.flow.async_init(
                "wyoming", context={"source": "user"}, data={"host": "127.0.0.1", "port": port}
            )
            await hass.async_block_till_done()
            flows[label] = {"type": str(flow.get("type")), "title": flow.get("title")}
            entry = flow.get("result")
            found = [e.entity_id for e in registry.entities.values()
                     if e.platform == "wyoming" and e.domain == "conversation"
                     and entry is not None and e.config_entry_id == entry.entry_id]
            agents[label] = found[0] if len(found) == 1 else None
        out: dict[str, Any] = {
            "ha_version": __version__,
            "registered_intents": sorted(h.intent_type for h in intent.async_get(hass)),
            "components": sorted(hass.config.components),
            "flows": flows, "agents": agents, "areas": placed, "shopping_list": str(shopping.get("type")),
            "unexposed": {UNEXPOSED: async_should_expose(hass, "conversation", UNEXPOSED)},
            "steps": [],
        }
        for step in steps:
            agent_id = agents.get(step["agent"])
            before, items_before = _snapshot(hass), await _shopping_items(hass)
            response = await hass.services.async_call(
                "conversation", "process", {"text": step["text"], "agent_id": agent_id, "language": "en"},
                blocking=True, return_response=True,
            )
            await hass.async_block_till_done()
            out["steps"].append({
                **step, "response": _jsonable(response), "before": before, "after": _snapshot(hass),
                "shopping_before": items_before, "shopping_after": await _shopping_items(hass),
            })
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
    go.add_argument("--http-port", type=int, required=True)
    go.add_argument("--steps", type=Path, required=True)
    args = parser.parse_args()
    if args.cmd == "requirements":
        print("\n".join(requirements()))
        return 0
    steps = json.loads(args.steps.read_text(encoding="utf-8"))
    result = asyncio.run(run(args.config_dir, args.http_port, steps))
    _emit(result)
    return 0 if "error" not in result else 1


if __name__ == "__main__":
    sys.exit(main())
