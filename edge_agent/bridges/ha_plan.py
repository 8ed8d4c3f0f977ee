"""What the Wyoming service sends Home Assistant for a recognized intent, and what the user hears.

HA's Wyoming conversation entity runs the intent we send on its entities and speaks our text
whenever its own handler set no speech, which is almost always: for a question the text we send
is the answer the user hears. ``plan`` turns one recognition into one of:

- ``Send(intent, slots, text)``: an intent the listening HA runs (``ha_intents.runs``), with slots
  HA understands (``name: all`` is dropped: HA reads it as "no name" and it would only leak into
  speech) and a spoken text: a confirmation, or for a question the answer read from HA's states;
- ``Explain(text)``: nothing HA can run has the same effect; the text says what is missing
  ("Muting needs Home Assistant 2025.11 or newer."). The service answers it with ``not-handled``,
  which HA speaks as a failed request.

Mapped to an intent with the same effect when the listening HA lacks the original (needs the
entities' states, ``HomeView.states``): ``EdgeLightSetRelative`` -> ``HassLightSet`` with the
brightness computed from the current one; ``EdgeClimateSetRelative`` -> ``HassClimateSetTemperature``
from the current target temperature; ``HassSetVolumeRelative`` -> ``HassSetVolume`` from the current
volume; ``HassShoppingListCompleteItem`` -> ``HassListCompleteItem`` on HA's shopping list.
Not mapped: mute/unmute (``HassSetVolume`` 0 loses the volume to come back to, so it is not the
same effect), fan speed, media search, stop moving, the mower, broadcast. Timers: HA refuses a
timer without a satellite device, which this path never has, and finds only a satellite's timers to
cancel or ask about: a delayed command ("in 5 minutes turn off the lights") is sent, every other
timer intent is explained.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from edge_agent.bridges.ha_api import EntityState
from edge_agent.bridges.ha_intents import SINCE, HaVersion, runs

__all__ = [
    "BRIGHTNESS_STEP",
    "QUESTIONS",
    "TEMPERATURE_STEP",
    "TIMERS_TEXT",
    "TIMER_CONTROL_TEXT",
    "VOLUME_STEP",
    "Explain",
    "HomeView",
    "Send",
    "answer",
    "find_targets",
    "needs_states",
    "plan",
    "spoken_confirmation",
]

BRIGHTNESS_STEP = 25  # percentage points of "brighter" / "dimmer" without a number
TEMPERATURE_STEP = 1  # degrees of "warmer" / "cooler" without a number
VOLUME_STEP = 10  # percentage points of "louder" / "quieter" (HA's own default volume step)
QUESTIONS = frozenset(("HassGetState", "HassClimateGetTemperature", "HassGetWeather"))
TIMERS_TEXT = (
    "Home Assistant runs timers only for a voice satellite, and this request has none. "
    "A delayed command works, like: in 10 minutes turn off the lights."
)
TIMER_CONTROL_TEXT = (
    "Home Assistant keeps timers only for voice satellites, and this request has none, "
    "so there is no timer here to change or ask about."
)
# the timer intents that act on a timer HA already has: HA finds only a satellite's timers, never a
# delayed command, so on this path (no satellite) there is never one to find
_TIMER_CONTROL = frozenset(
    ("HassCancelTimer", "HassCancelAllTimers", "HassPauseTimer", "HassUnpauseTimer", "HassTimerStatus",
     "HassIncreaseTimer", "HassDecreaseTimer")
)
NO_STATES_TEXT = "I can't see the state of your home from here, so I can't answer that."
# what the user is told is missing, per intent HA may lack ("Muting needs Home Assistant 2025.11 ...")
_WHAT: dict[str, str] = {
    "HassStopMoving": "Stopping a cover",
    "HassClimateSetTemperature": "Setting the temperature",
    "HassFanSetSpeed": "Setting a fan's speed",
    "HassLawnMowerStartMowing": "Starting the mower",
    "HassLawnMowerDock": "Docking the mower",
    "HassSetVolumeRelative": "Turning the volume up or down",
    "HassMediaPlayerMute": "Muting",
    "HassMediaPlayerUnmute": "Unmuting",
    "HassMediaSearchAndPlay": "Playing something by name",
    "HassCancelAllTimers": "Cancelling all timers",
    "HassListCompleteItem": "Checking off list items",
    "HassShoppingListCompleteItem": "Checking off shopping list items",
    "HassBroadcast": "Broadcasting a message",
}


@dataclass(frozen=True)
class Send:
    """Send ``intent`` with ``slots`` to HA; ``text`` is spoken (None: HA's own answer, if any)."""

    intent: str
    slots: dict[str, Any]
    text: str | None


@dataclass(frozen=True)
class Explain:
    """Send nothing HA runs; say ``text``. ``reason`` goes to the log."""

    text: str
    reason: str


@dataclass(frozen=True)
class HomeView:
    """What the agent knows of the listening HA: its release (``version_known``: learned or
    configured, not assumed) and, when it can ask, its entities' states."""

    version: HaVersion
    version_known: bool = True
    states: Sequence[EntityState] | None = None
    now: dt.datetime | None = None


# -- confirmations ------------------------------------------------------------------------------
_ACTIONS: dict[str, str] = {
    "HassTurnOn": "Turned on {target}.",
    "HassTurnOff": "Turned off {target}.",
    "HassToggle": "Toggled {target}.",
    "HassStopMoving": "Stopped {target}.",
    "HassVacuumStart": "Started {target}.",
    "HassVacuumReturnToBase": "Sent {target} back to its dock.",
    "HassLawnMowerStartMowing": "Started mowing.",
    "HassLawnMowerDock": "Sent the mower back to its dock.",
    "HassMediaPause": "Paused.",
    "HassMediaUnpause": "Resumed.",
    "HassMediaNext": "Skipped to the next one.",
    "HassMediaPrevious": "Went back to the previous one.",
    "HassSetVolumeRelative": "Changed the volume.",
    "HassMediaPlayerMute": "Muted.",
    "HassMediaPlayerUnmute": "Unmuted.",
    "HassCancelTimer": "Timer cancelled.",
    "HassCancelAllTimers": "All timers cancelled.",
    "HassPauseTimer": "Timer paused.",
    "HassUnpauseTimer": "Timer resumed.",
    "HassIncreaseTimer": "Added time to the timer.",
    "HassDecreaseTimer": "Took time off the timer.",
    "HassNevermind": "OK.",
    "HassBroadcast": "Message sent.",
    "EdgeLightSetRelative": "Adjusted {target}.",
    "EdgeClimateSetRelative": "Adjusted the temperature.",
}


def _target(slots: Mapping[str, Any]) -> str:
    """'the kitchen light', 'the kitchen lights', 'the lights upstairs', 'it'."""
    name, area, floor = slots.get("name"), slots.get("area"), slots.get("floor")
    if name and name != "all":
        place = f" in the {area}" if area and str(area).lower() not in str(name).lower() else ""
        return f"the {name}{place}"
    kind = slots.get("device_class") or slots.get("domain")
    if isinstance(kind, list):
        kind = kind[0] if kind else None
    things = f"{str(kind).replace('_', ' ')}s" if kind else "devices"
    where = area or floor
    return f"the {where} {things}" if where else f"the {things}"


def _duration(slots: Mapping[str, Any]) -> str:
    parts = [
        f"{slots[unit]} {unit if slots[unit] != 1 else unit[:-1]}"
        for unit in ("hours", "minutes", "seconds")
        if slots.get(unit)
    ]
    return " and ".join(parts) if parts else "the time you asked"


def _with_value(intent: str, slots: Mapping[str, Any]) -> str | None:
    target = _target(slots)
    if intent == "HassLightSet":
        if slots.get("brightness") is not None:
            return f"Set {target} to {slots['brightness']} percent."
        return f"Set {target} to {slots['color']}." if slots.get("color") else f"Set {target}."
    if intent == "HassSetPosition" and slots.get("position") is not None:
        return f"Set {target} to {slots['position']} percent."
    if intent == "HassFanSetSpeed" and slots.get("percentage") is not None:
        return f"Set {target} to {slots['percentage']} percent."
    if intent == "HassClimateSetTemperature" and slots.get("temperature") is not None:
        return f"Set the temperature to {_number(slots['temperature'])} degrees."
    if intent == "HassSetVolume" and slots.get("volume_level") is not None:
        return f"Volume set to {slots['volume_level']} percent."
    if intent == "HassStartTimer":
        if slots.get("conversation_command"):
            return f"I'll do that in {_duration(slots)}."
        return f"Timer started for {_duration(slots)}."
    if intent in ("HassListAddItem", "HassShoppingListAddItem") and slots.get("item"):
        where = slots.get("name") or "shopping"
        return f"Added {slots['item']} to your {str(where).removesuffix(' list').removesuffix(' List')} list."
    if intent in ("HassListCompleteItem", "HassShoppingListCompleteItem") and slots.get("item"):
        return f"Checked off {slots['item']}."
    if intent == "HassMediaSearchAndPlay" and slots.get("search_query"):
        return f"Playing {slots['search_query']}."
    return None


def spoken_confirmation(intent: str, slots: Mapping[str, Any], now: dt.datetime | None = None) -> str | None:
    """A short spoken answer for a recognized intent; None when it cannot be said without HA's
    states (questions about the home, the weather, a timer's remaining time)."""
    if intent == "HassGetCurrentTime":
        t = now or dt.datetime.now()
        return f"It is {t.hour % 12 or 12}:{t.minute:02d} {'AM' if t.hour < 12 else 'PM'}."
    if intent == "HassGetCurrentDate":
        d = now or dt.datetime.now()
        return f"Today is {d:%A}, {d:%B} {d.day}."
    domain = slots.get("domain")
    if intent in ("HassTurnOn", "HassTurnOff") and isinstance(domain, str) and domain in _OPEN_CLOSE:
        return f"{_OPEN_CLOSE[domain][intent == 'HassTurnOff']} {_target(slots)}."
    template = _ACTIONS.get(intent)
    if template is not None:
        return template.format(target=_target(slots))
    return _with_value(intent, slots)


# what HA's HassTurnOn / HassTurnOff do to these domains (open_cover, lock, ...)
_OPEN_CLOSE = {"cover": ("Opened", "Closed"), "valve": ("Opened", "Closed"), "lock": ("Locked", "Unlocked")}


# -- the plan -----------------------------------------------------------------------------------
def needs_states(intent: str, version: HaVersion) -> bool:
    """Whether ``plan`` reads HA's states for ``intent`` (asked only then)."""
    if intent in QUESTIONS or intent in _SUBSTITUTES:
        return True
    return intent in ("HassSetVolumeRelative", "HassShoppingListCompleteItem") and not runs(intent, version)


def plan(intent: str, slots: Mapping[str, Any], view: HomeView) -> Send | Explain:
    """What to send HA for ``intent`` with ``slots`` (normalized values), given what the agent
    knows of the listening HA."""
    clean = {k: v for k, v in slots.items() if not (k == "name" and v == "all")}
    if intent == "HassStartTimer" and not clean.get("conversation_command"):
        return Explain(TIMERS_TEXT, "timers need a satellite device; HA's Wyoming agent passes none")
    if intent in _TIMER_CONTROL:
        return Explain(TIMER_CONTROL_TEXT, "HA finds only a satellite's timers; this path has no satellite")
    if intent in _SUBSTITUTES or not runs(intent, view.version):
        return _substitute(intent, clean, view)
    if intent in QUESTIONS:
        return Send(intent, clean, answer(intent, clean, view.states))
    return Send(intent, clean, spoken_confirmation(intent, clean, view.now) or "Done.")


def _needs(intent: str, view: HomeView, via: str | None = None) -> Explain:
    """``intent`` explained; ``via``: the intent it could be mapped to, whose release is the one needed."""
    since = SINCE.get(via or intent)
    what = _WHAT.get(intent, "That")
    if since is None:
        return Explain(f"{what} can't be done by Home Assistant.", f"{intent}: no HA release runs it")
    return Explain(
        f"{what} needs Home Assistant {since.version} or newer.",
        f"{intent}: needs HA {since.version}, listening: {view.version}"
        + ("" if view.version_known else " (assumed: set wyoming.ha_version or ha_url)"),
    )


def _substitute(intent: str, slots: dict[str, Any], view: HomeView) -> Send | Explain:
    if intent == "EdgeLightSetRelative":
        return _relative_light(slots, view)
    if intent == "EdgeClimateSetRelative":
        return _relative_climate(slots, view)
    if intent == "HassSetVolumeRelative":
        return _relative_volume(slots, view)
    if intent == "HassShoppingListCompleteItem":
        if not runs("HassListCompleteItem", view.version):
            return _needs(intent, view, via="HassListCompleteItem")
        target = {"item": slots.get("item"), "name": _shopping_list_name(view.states)}
        return Send("HassListCompleteItem", target, spoken_confirmation("HassListCompleteItem", target))
    return _needs(intent, view)


_SUBSTITUTES = frozenset(("EdgeLightSetRelative", "EdgeClimateSetRelative"))
_PLACE_SLOTS = ("name", "area", "floor")


def _place(slots: Mapping[str, Any]) -> dict[str, Any]:
    return {k: slots[k] for k in _PLACE_SLOTS if slots.get(k) is not None}


def _step(value: Any, default: int) -> int | None:
    if value == "up":
        return default
    if value == "down":
        return -default
    if isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    return None


def _relative_light(slots: dict[str, Any], view: HomeView) -> Send | Explain:
    step = _step(slots.get("brightness_step"), BRIGHTNESS_STEP)
    target = _target({**slots, "domain": slots.get("domain") or "light"})
    if step is None:
        return Explain("Say how much brighter or dimmer, like 20 percent.", "no brightness_step")
    if view.states is None:
        return Explain(
            f"I can't see how bright {target} is now, so say a level, like 50 percent.",
            "EdgeLightSetRelative needs the light's brightness (wyoming.ha_url + token)",
        )
    lights = find_targets(view.states, slots, ("light",))
    if not lights:
        return Explain(f"I can't find {target} in Home Assistant.", "no matching light in HA's states")
    now = [_brightness(s) for s in lights]
    current = round(sum(now) / len(now))
    low = 1 if step < 0 and current > 0 else 0  # dimming keeps a light on
    new = max(low, min(100, current + step))
    out = {**_place(slots), "domain": "light", "brightness": new}
    if new == current:
        return Send("HassLightSet", out, f"{target[0].upper()}{target[1:]} is already at {new} percent.")
    return Send("HassLightSet", out, f"Set {target} to {new} percent.")


def _brightness(state: EntityState) -> int:
    if state.state != "on":
        return 0
    raw = state.attributes.get("brightness")
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        return round(float(raw) / 255 * 100)
    return 100  # on, without a brightness: a light that only switches


def _relative_climate(slots: dict[str, Any], view: HomeView) -> Send | Explain:
    if not runs("HassClimateSetTemperature", view.version):
        return _needs("HassClimateSetTemperature", view)
    step = _step(slots.get("temperature_step"), TEMPERATURE_STEP)
    if step is None:
        return Explain("Say how many degrees warmer or cooler.", "no temperature_step")
    if view.states is None:
        return Explain(
            "I can't see the thermostat's setting from here, so say a temperature, like 21 degrees.",
            "EdgeClimateSetRelative needs the thermostat's state (wyoming.ha_url + token)",
        )
    climates = find_targets(view.states, slots, ("climate",))
    found = [s for s in climates if _num(s.attributes.get("temperature")) is not None]
    if not found:
        return Explain("I can't find a thermostat with a set temperature.", "no climate entity with a target")
    climate = found[0]
    current = _num(climate.attributes.get("temperature"))
    assert current is not None
    new = current + step
    low, high = _num(climate.attributes.get("min_temp")), _num(climate.attributes.get("max_temp"))
    new = max(low, new) if low is not None else new
    new = min(high, new) if high is not None else new
    out = {**_place(slots), "temperature": new}
    if not _place(slots):
        out["name"] = climate.name
    return Send("HassClimateSetTemperature", out, f"Set the temperature to {_number(new)} degrees.")


def _relative_volume(slots: dict[str, Any], view: HomeView) -> Send | Explain:
    step = _step(slots.get("volume_step"), VOLUME_STEP)
    if view.states is None or step is None:
        return _needs("HassSetVolumeRelative", view)
    players = find_targets(view.states, slots, ("media_player",))
    if not _place(slots):
        players = [p for p in players if p.state == "playing"]
    levels = [v for v in (_num(p.attributes.get("volume_level")) for p in players) if v is not None]
    if not levels:
        return Explain(
            "I can't find a playing media player to change the volume of.", "no media player with a volume"
        )
    current = round(levels[0] * 100)
    new = max(0, min(100, current + step))
    out = {**_place(slots), "volume_level": new}
    return Send("HassSetVolume", out, f"Volume set to {new} percent.")


def _shopping_list_name(states: Sequence[EntityState] | None) -> str:
    for state in states or ():
        if state.entity_id == "todo.shopping_list":
            return state.name
    return "Shopping List"  # the name HA gives the shopping list integration's to-do entity


# -- answers to questions -----------------------------------------------------------------------
def answer(intent: str, slots: Mapping[str, Any], states: Sequence[EntityState] | None) -> str:
    """The spoken answer to a question from HA's states; an honest sentence without them."""
    if states is None:
        return NO_STATES_TEXT
    if intent == "HassClimateGetTemperature":
        return _temperature_answer(slots, states)
    if intent == "HassGetWeather":
        return _weather_answer(slots, states)
    return _state_answer(slots, states)


def _state_answer(slots: Mapping[str, Any], states: Sequence[EntityState]) -> str:
    found = find_targets(states, slots, None)
    if not found:
        return f"I can't find {_target(slots)} in Home Assistant."
    wanted = slots.get("state")
    if wanted is None:
        said = [f"the {s.name} {_is(s.name)} {_said(s)}" for s in found[:5]]
        text = ", ".join(said)
        return text[0].upper() + text[1:] + "."
    wanted = str(wanted)
    matching = [s for s in found if _in_state(s, wanted)]
    word = _state_word(found[0], wanted)
    if len(found) == 1:
        state = found[0]
        verb = _is(state.name)
        if matching:
            return f"Yes, the {state.name} {verb} {word}."
        return f"No, the {state.name} {verb} {_said(state)}."
    if matching:
        names = _and([s.name for s in matching[:5]])
        return f"Yes, {names} {'is' if len(matching) == 1 else 'are'} {word}."
    return f"No, none of {_target(slots)} are {word}."


def _temperature_answer(slots: Mapping[str, Any], states: Sequence[EntityState]) -> str:
    found = find_targets(states, slots, ("climate",))
    if not found and _place(slots):
        found = [
            s for s in find_targets(states, slots, ("sensor",))
            if s.attributes.get("device_class") == "temperature"
        ]
    if not found:
        return f"I can't find a thermostat for {_target(slots)} in Home Assistant."
    state = found[0]
    raw = state.attributes.get("current_temperature") if state.domain == "climate" else state.state
    value = _num(raw)
    if value is None:
        return f"The {state.name} doesn't report a temperature right now."
    where = slots.get("area") or state.area
    if where:
        return f"It is {_number(value)} degrees in the {where}."
    return f"The {state.name} reads {_number(value)} degrees."


_CONDITIONS = {
    "clear-night": "clear",
    "partlycloudy": "partly cloudy",
    "lightning-rainy": "stormy with rain",
    "snowy-rainy": "sleeting",
    "windy-variant": "windy and cloudy",
}


def _weather_answer(slots: Mapping[str, Any], states: Sequence[EntityState]) -> str:
    found = find_targets(states, {k: v for k, v in slots.items() if k == "name"}, ("weather",))
    if not found:
        return "I can't find a weather service in Home Assistant."
    weather = found[0]
    condition = _CONDITIONS.get(weather.state, weather.state.replace("-", " "))
    temp = _num(weather.attributes.get("temperature"))
    return f"It is {condition}, {_number(temp)} degrees." if temp is not None else f"It is {condition}."


# -- matching our slots to HA's entities ---------------------------------------------------------
def _key(text: Any) -> str:
    return " ".join(re.sub(r"[^0-9a-z]+", " ", str(text).casefold()).split())


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def find_targets(
    states: Sequence[EntityState], slots: Mapping[str, Any], domains: Sequence[str] | None
) -> list[EntityState]:
    """HA's entities that ``slots`` name: by name (friendly name or object id), else by area,
    narrowed by the slots' domain / device class (or ``domains``). A floor is not known here."""
    wanted = _as_list(slots.get("domain")) or list(domains or ())
    if domains is not None and wanted:
        wanted = [d for d in wanted if d in domains] or list(domains)
    classes = _as_list(slots.get("device_class"))
    pool = [s for s in states if (not wanted or s.domain in wanted)]
    if classes:
        pool = [s for s in pool if s.attributes.get("device_class") in classes] or pool
    name, area = slots.get("name"), slots.get("area")
    if name and name != "all":
        key = _key(name)
        by_name = [s for s in pool if _key(s.name) == key or _key(s.entity_id.split(".", 1)[-1]) == key]
        if area and len(by_name) > 1:
            by_name = [s for s in by_name if s.area is not None and _key(s.area) == _key(area)] or by_name
        return by_name
    if area:
        return [s for s in pool if s.area is not None and _key(s.area) == _key(area)]
    if slots.get("floor"):
        return []
    return pool


# speech of a binary sensor's on/off by device class
_BINARY_WORDS: dict[str, tuple[str, str]] = {
    "door": ("open", "closed"),
    "window": ("open", "closed"),
    "garage_door": ("open", "closed"),
    "opening": ("open", "closed"),
    "lock": ("unlocked", "locked"),
    "moisture": ("wet", "dry"),
    "motion": ("detecting motion", "clear"),
    "occupancy": ("occupied", "clear"),
    "presence": ("home", "away"),
    "smoke": ("detecting smoke", "clear"),
    "gas": ("detecting gas", "clear"),
    "carbon_monoxide": ("detecting carbon monoxide", "clear"),
    "battery": ("low", "normal"),
    "battery_charging": ("charging", "not charging"),
    "connectivity": ("connected", "disconnected"),
    "problem": ("reporting a problem", "OK"),
}
_UNITS = {"°C": "degrees", "°F": "degrees", "%": "percent"}


# domains whose states are richer than on/off: "on" is any state but these ("is the TV on": playing)
_NOT_ON = frozenset(("off", "standby", "unavailable", "unknown"))
_RICH_STATES = frozenset(("media_player", "climate", "vacuum", "water_heater", "humidifier", "remote"))


def _in_state(state: EntityState, wanted: str) -> bool:
    if state.state == wanted:
        return True
    if state.domain in _RICH_STATES and wanted in ("on", "off"):
        return (state.state not in _NOT_ON) == (wanted == "on")
    return False


def _state_word(state: EntityState, value: str) -> str:
    if state.domain == "binary_sensor" and value in ("on", "off"):
        words = _BINARY_WORDS.get(str(state.attributes.get("device_class")))
        if words is not None:
            return words[0] if value == "on" else words[1]
    return {"not_home": "away", "unavailable": "unavailable right now"}.get(value, value.replace("_", " "))


def _said(state: EntityState) -> str:
    word = _state_word(state, state.state)
    unit = state.attributes.get("unit_of_measurement")
    if isinstance(unit, str) and unit and _num(state.state) is not None:
        return f"{_number(_num(state.state))} {_UNITS.get(unit, unit)}"
    return word


def _num(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _number(value: Any) -> str:
    number = _num(value)
    if number is None:
        return str(value)
    return str(int(number)) if number == int(number) else f"{number:.1f}".rstrip("0").rstrip(".")


def _is(name: str) -> str:
    """'is', or 'are' for a name that reads as a plural ("Living Room Blinds")."""
    last = name.split()[-1].casefold() if name.split() else ""
    return "are" if last.endswith("s") and not last.endswith(("ss", "us", "is")) and len(last) > 3 else "is"


def _and(names: Sequence[str]) -> str:
    names = [f"the {n}" for n in names]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
