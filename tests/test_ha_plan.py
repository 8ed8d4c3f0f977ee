"""What the Wyoming service sends Home Assistant, per HA release: the version table (and its copy
in docs/home-assistant.md), intents mapped or explained, answers read from HA's states.

The states are HA's own JSON shapes (``GET /api/states``); the end-to-end test runs the same plan
against a real HA core (tests/test_ha_wyoming_e2e.py)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from edge_agent.bridges.ha_api import EntityState, entity_states
from edge_agent.bridges.ha_intents import OLDEST, SINCE, WYOMING_CONVERSATION, HaVersion, parse_version, runs
from edge_agent.bridges.ha_plan import (
    NO_STATES_TEXT,
    TIMER_CONTROL_TEXT,
    TIMERS_TEXT,
    Explain,
    HomeView,
    Send,
    answer,
    needs_states,
    plan,
)
from edge_agent.nlu.schema import INTENTS

DOC = Path(__file__).resolve().parents[1] / "docs" / "home-assistant.md"
V2025_4 = HaVersion(2025, 4)
RELEASES = sorted({OLDEST, *(s.version for s in SINCE.values()), HaVersion(2026, 2)})

STATES: list[dict[str, Any]] = [
    {"entity_id": "light.kitchen_light", "state": "on",
     "attributes": {"friendly_name": "Kitchen Light", "brightness": 255}},
    {"entity_id": "light.living_room_lamp", "state": "on",
     "attributes": {"friendly_name": "Living Room Lamp", "brightness": 128}},
    {"entity_id": "light.ceiling_light", "state": "off", "attributes": {"friendly_name": "Ceiling Light"}},
    {"entity_id": "cover.living_room_blinds", "state": "closed",
     "attributes": {"friendly_name": "Living Room Blinds", "current_position": 0, "device_class": "blind"}},
    {"entity_id": "climate.thermostat", "state": "heat",
     "attributes": {"friendly_name": "Thermostat", "temperature": 20.0, "current_temperature": 21.5,
                    "min_temp": 7, "max_temp": 30}},
    {"entity_id": "media_player.tv", "state": "playing",
     "attributes": {"friendly_name": "TV", "volume_level": 0.3, "is_volume_muted": False}},
    {"entity_id": "binary_sensor.front_door", "state": "on",
     "attributes": {"friendly_name": "Front Door", "device_class": "door"}},
    {"entity_id": "sensor.outside_humidity", "state": "63",
     "attributes": {"friendly_name": "Outside Humidity", "unit_of_measurement": "%"}},
    {"entity_id": "weather.home", "state": "partlycloudy",
     "attributes": {"friendly_name": "Home", "temperature": 18.4}},
    {"entity_id": "todo.shopping_list", "state": "2", "attributes": {"friendly_name": "Groceries"}},
]
AREAS = {"light.kitchen_light": "Kitchen", "light.living_room_lamp": "Living Room",
         "light.ceiling_light": "Living Room", "cover.living_room_blinds": "Living Room",
         "climate.thermostat": "Living Room", "media_player.tv": "Living Room"}


def home() -> list[EntityState]:
    return entity_states(STATES, AREAS)


def view(version: HaVersion = V2025_4, states: bool = True) -> HomeView:
    return HomeView(version, True, home() if states else None)


# -- the table ----------------------------------------------------------------------------------
def test_versions_parse_and_bad_ones_are_refused() -> None:
    assert parse_version("2025.4.4") == HaVersion(2025, 4)
    assert parse_version("2025.12.0b3") == HaVersion(2025, 12)
    assert str(parse_version("2024.11")) == "2024.11"
    for bad in ("2025", "2025.13", "25.4", "latest", ""):
        with pytest.raises(ValueError, match="not a Home Assistant version"):
            parse_version(bad)


def test_the_table_covers_our_inventory_and_never_our_extensions() -> None:
    ours = {i for i in INTENTS if not i.startswith("Edge")}
    assert set(SINCE) == ours
    assert not any(runs(e, HaVersion(2099, 1)) for e in ("EdgeLightSetRelative", "EdgeClimateSetRelative"))
    assert all(s.version >= WYOMING_CONVERSATION for s in SINCE.values())


def test_what_ha_2025_4_lacks() -> None:
    lacking = {name for name in SINCE if not runs(name, V2025_4)}
    assert lacking == {
        "HassStopMoving", "HassFanSetSpeed", "HassLawnMowerStartMowing", "HassLawnMowerDock",
        "HassSetVolumeRelative", "HassMediaPlayerMute", "HassMediaPlayerUnmute",
        "HassMediaSearchAndPlay", "HassShoppingListCompleteItem",
    }


def _doc_table() -> dict[str, tuple[str, str]]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("### Which Home Assistant runs which intent", 1)[1].split("\n#", 1)[0]
    rows: dict[str, tuple[str, str]] = {}
    for line in section.splitlines():
        match = re.match(r"^\| `(\w+)` \| ([^|]+?) \| ([^|]+?) \|", line)
        if match:
            rows[match.group(1)] = (match.group(2).strip(), match.group(3).strip().strip("`"))
    return rows


def test_the_doc_table_and_the_code_table_agree() -> None:
    rows = _doc_table()
    assert set(rows) == set(SINCE) | {"EdgeLightSetRelative", "EdgeClimateSetRelative"}
    for name, (since, integration) in rows.items():
        if name not in SINCE:
            assert since == "never", (name, since)
            continue
        want = SINCE[name]
        shown = str(want.version) + (" (every release)" if want.version == OLDEST else "")
        assert (since, integration) == (shown, want.integration), name


# -- never an intent the listening HA cannot run --------------------------------------------------
SLOTS = {
    "HassLightSet": {"name": "Living Room Lamp", "brightness": 40},
    "EdgeLightSetRelative": {"name": "Living Room Lamp", "brightness_step": "up"},
    "EdgeClimateSetRelative": {"temperature_step": 2},
    "HassClimateSetTemperature": {"temperature": 22},
    "HassSetVolumeRelative": {"volume_step": "down"},
    "HassShoppingListCompleteItem": {"item": "milk"},
    "HassStartTimer": {"minutes": 5},
    "HassFanSetSpeed": {"name": "Ceiling Fan", "percentage": 50},
    "HassMediaPlayerMute": {"name": "TV"},
}


@pytest.mark.parametrize("version", RELEASES, ids=str)
@pytest.mark.parametrize("states", [True, False], ids=["states", "no-states"])
def test_every_intent_is_sent_only_where_ha_runs_it(version: HaVersion, states: bool) -> None:
    for intent in INTENTS:
        if intent == "__none__":
            continue
        got = plan(intent, SLOTS.get(intent, {"name": "Kitchen Light"}), view(version, states))
        if isinstance(got, Send):
            assert runs(got.intent, version), (intent, got)
            assert not got.intent.startswith("Edge"), (intent, got)
            assert got.text, (intent, got)  # something is always said
        else:
            assert got.text and "Edge" not in got.text and "Hass" not in got.text, (intent, got)


def test_muting_and_fan_speed_are_explained_on_2025_4_and_sent_where_ha_has_them() -> None:
    mute = plan("HassMediaPlayerMute", {"name": "TV", "domain": "media_player"}, view())
    assert mute == Explain("Muting needs Home Assistant 2025.11 or newer.", mute.reason)
    sent = plan("HassMediaPlayerMute", {"name": "TV"}, view(HaVersion(2025, 11)))
    assert isinstance(sent, Send) and sent.intent == "HassMediaPlayerMute"
    fan = plan("HassFanSetSpeed", {"name": "Ceiling Fan", "percentage": 50}, view())
    assert isinstance(fan, Explain)
    assert fan.text == "Setting a fan's speed needs Home Assistant 2025.9 or newer."
    fan9 = plan("HassFanSetSpeed", {"name": "Ceiling Fan", "percentage": 50}, view(HaVersion(2025, 9)))
    assert fan9 == Send("HassFanSetSpeed", {"name": "Ceiling Fan", "percentage": 50},
                        "Set the Ceiling Fan to 50 percent.")


def test_brighter_becomes_a_brightness_from_the_current_one() -> None:
    got = plan("EdgeLightSetRelative", {"name": "Living Room Lamp", "domain": "light",
                                        "brightness_step": "up"}, view())
    # 128 of 255 is 50 %; one step is 25 points
    assert got == Send("HassLightSet", {"name": "Living Room Lamp", "domain": "light", "brightness": 75},
                       "Set the Living Room Lamp to 75 percent.")
    dim = plan("EdgeLightSetRelative", {"name": "Living Room Lamp", "brightness_step": -80}, view())
    assert isinstance(dim, Send) and dim.slots["brightness"] == 1  # dimming keeps the lamp on
    off = plan("EdgeLightSetRelative", {"name": "Ceiling Light", "brightness_step": "up"}, view())
    assert isinstance(off, Send) and off.slots["brightness"] == 25  # off counts as 0
    full = plan("EdgeLightSetRelative", {"name": "Kitchen Light", "brightness_step": 10}, view())
    assert isinstance(full, Send) and full.text == "The Kitchen Light is already at 100 percent."
    room = plan("EdgeLightSetRelative", {"area": "Living Room", "domain": "light",
                                         "brightness_step": "down"}, view())
    # the room's lights average (50 + 0) / 2 = 25 %
    assert room == Send("HassLightSet", {"area": "Living Room", "domain": "light", "brightness": 1},
                        "Set the Living Room lights to 1 percent.")


def test_brighter_without_states_is_an_honest_sentence() -> None:
    slots = {"name": "Living Room Lamp", "brightness_step": "up"}
    got = plan("EdgeLightSetRelative", slots, view(states=False))
    assert isinstance(got, Explain)
    assert got.text == "I can't see how bright the Living Room Lamp is now, so say a level, like 50 percent."
    missing = plan("EdgeLightSetRelative", {"name": "Garage Light", "brightness_step": "up"}, view())
    assert isinstance(missing, Explain) and "can't find the Garage Light" in missing.text


def test_warmer_becomes_a_temperature_where_ha_can_set_one() -> None:
    got = plan("EdgeClimateSetRelative", {"temperature_step": "up"}, view())
    assert got == Send("HassClimateSetTemperature", {"temperature": 21.0, "name": "Thermostat"},
                       "Set the temperature to 21 degrees.")
    capped = plan("EdgeClimateSetRelative", {"area": "Living Room", "temperature_step": 30}, view())
    assert isinstance(capped, Send) and capped.slots == {"area": "Living Room", "temperature": 30}
    old = plan("EdgeClimateSetRelative", {"temperature_step": "up"}, view(HaVersion(2025, 1)))
    assert isinstance(old, Explain)
    assert old.text == "Setting the temperature needs Home Assistant 2025.2 or newer."


def test_louder_becomes_a_volume_before_ha_has_relative_volume() -> None:
    got = plan("HassSetVolumeRelative", {"volume_step": "up"}, view())
    assert got == Send("HassSetVolume", {"volume_level": 40}, "Volume set to 40 percent.")
    by_name = plan("HassSetVolumeRelative", {"name": "TV", "volume_step": -50}, view())
    assert isinstance(by_name, Send) and by_name.slots == {"name": "TV", "volume_level": 0}
    native = plan("HassSetVolumeRelative", {"volume_step": "up"}, view(HaVersion(2025, 9)))
    assert isinstance(native, Send) and native.intent == "HassSetVolumeRelative"
    blind = plan("HassSetVolumeRelative", {"volume_step": "up"}, view(states=False))
    assert isinstance(blind, Explain) and "2025.9" in blind.text


def test_checking_off_the_shopping_list_uses_the_to_do_list_before_2025_7() -> None:
    got = plan("HassShoppingListCompleteItem", {"item": "milk"}, view())
    assert got == Send("HassListCompleteItem", {"item": "milk", "name": "Groceries"}, "Checked off milk.")
    blind = plan("HassShoppingListCompleteItem", {"item": "milk"}, view(states=False))
    assert isinstance(blind, Send) and blind.slots["name"] == "Shopping List"
    older = plan("HassShoppingListCompleteItem", {"item": "milk"}, view(HaVersion(2025, 3)))
    assert isinstance(older, Explain) and "2025.4" in older.text


def test_timers_are_explained_and_delayed_commands_are_sent() -> None:
    timer = plan("HassStartTimer", {"minutes": 5}, view(HaVersion(2026, 2)))
    assert timer == Explain(TIMERS_TEXT, timer.reason)
    for intent in ("HassCancelTimer", "HassTimerStatus", "HassPauseTimer", "HassIncreaseTimer"):
        assert plan(intent, {}, view()) == Explain(TIMER_CONTROL_TEXT, plan(intent, {}, view()).reason)
    delayed = plan("HassStartTimer", {"minutes": 5, "conversation_command": "turn off the lights"}, view())
    assert delayed == Send("HassStartTimer", {"minutes": 5, "conversation_command": "turn off the lights"},
                           "I'll do that in 5 minutes.")


def test_name_all_is_never_sent_nor_said() -> None:
    got = plan("HassTurnOff", {"area": "Bedroom", "domain": "fan", "name": "all"}, view())
    assert got == Send("HassTurnOff", {"area": "Bedroom", "domain": "fan"}, "Turned off the Bedroom fans.")


def test_states_are_read_only_when_the_plan_needs_them() -> None:
    assert needs_states("HassGetState", V2025_4) and needs_states("EdgeLightSetRelative", V2025_4)
    assert needs_states("HassSetVolumeRelative", V2025_4) and not needs_states("HassSetVolumeRelative",
                                                                                HaVersion(2025, 9))
    assert not needs_states("HassTurnOn", V2025_4) and not needs_states("HassTimerStatus", V2025_4)


# -- answers ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("intent", "slots", "said"),
    [
        ("HassGetState", {"name": "Kitchen Light", "domain": "light", "state": "on"},
         "Yes, the Kitchen Light is on."),
        ("HassGetState", {"name": "Ceiling Light", "state": "on"}, "No, the Ceiling Light is off."),
        ("HassGetState", {"name": "Living Room Blinds", "state": "open"},
         "No, the Living Room Blinds are closed."),
        ("HassGetState", {"name": "Front Door", "state": "on"}, "Yes, the Front Door is open."),
        ("HassGetState", {"name": "TV", "state": "on"}, "Yes, the TV is on."),
        ("HassGetState", {"name": "TV", "state": "off"}, "No, the TV is playing."),
        ("HassGetState", {"name": "Outside Humidity"}, "The Outside Humidity is 63 percent."),
        ("HassGetState", {"area": "Living Room", "domain": "light", "state": "on"},
         "Yes, the Living Room Lamp is on."),
        ("HassGetState", {"area": "Living Room", "domain": "light", "state": "off"},
         "Yes, the Ceiling Light is off."),
        ("HassGetState", {"area": "Kitchen", "domain": "cover", "state": "open"},
         "I can't find the Kitchen covers in Home Assistant."),
        ("HassGetState", {"area": "Living Room", "domain": "light"},
         "The Living Room Lamp is on, the Ceiling Light is off."),
        ("HassClimateGetTemperature", {"area": "Living Room"}, "It is 21.5 degrees in the Living Room."),
        ("HassClimateGetTemperature", {}, "It is 21.5 degrees in the Living Room."),
        ("HassGetWeather", {}, "It is partly cloudy, 18.4 degrees."),
    ],
)
def test_questions_are_answered_from_has_states(intent: str, slots: dict[str, Any], said: str) -> None:
    assert answer(intent, slots, home()) == said
    got = plan(intent, slots, view())
    assert got == Send(intent, slots, said)


def test_questions_without_states_get_an_honest_sentence() -> None:
    got = plan("HassGetState", {"name": "Kitchen Light", "state": "on"}, view(states=False))
    assert got == Send("HassGetState", {"name": "Kitchen Light", "state": "on"}, NO_STATES_TEXT)
