"""Tagged spans -> final Home Assistant style slots (docs/intents.md).

``build_slots`` normalizes values (numbers, durations, colors, steps), resolves ``name``,
``area``, ``floor`` and list names against the home, derives ``domain`` / ``device_class`` /
``state`` from the words that were tagged ("lights" -> light, "blinds" -> cover + blind,
"motion sensors" -> binary_sensor + motion, "wet" -> on), renames ``timer_name`` and
``list_name`` to ``name``, and fills ``area`` from the satellite's area when the request is
about "here" and no place was spoken.

The spoken-word tables here are the single source for the training-data generator as well.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence

from edge_agent.nlu import normalize as nz
from edge_agent.nlu.home import Entity, Home, canonical_key
from edge_agent.nlu.result import SlotValue, Span

__all__ = [
    "BINARY_CLASSES",
    "CONTEXT_INTENTS",
    "COVER_CLASS_WORDS",
    "DOMAIN_WORDS",
    "MEDIA_CLASSES",
    "SENSOR_CLASSES",
    "build_slots",
    "device_class_for",
    "is_global_request",
    "mentions_here",
    "spoken_device_words",
]

# ------------------------------------------------------------------------------ word tables
DOMAIN_WORDS: dict[str, tuple[str, ...]] = {
    "light": ("lights", "light", "lamps", "lamp", "lighting", "bulbs", "light bulbs", "lites", "bulb"),
    "switch": (
        "switches",
        "switch",
        "plugs",
        "outlets",
        "sockets",
        "smart plugs",
        "plug",
        "outlet",
        "socket",
    ),
    "fan": ("fans", "fan"),
    "lock": ("locks", "lock", "doors", "door", "door locks", "door lock"),
    "media_player": ("tv", "speaker", "speakers", "media player", "music", "television", "media players"),
    "climate": ("thermostat", "heating", "ac", "air conditioning", "heat", "thermostats"),
    "vacuum": ("vacuum", "robot vacuum", "vacuums"),
    "valve": ("valve", "valves"),
    "person": (
        "people",
        "anyone",
        "anybody",
        "someone",
        "everyone",
        "everybody",
        "persons",
        "residents",
        "family members",
        "family",
    ),
}

COVER_CLASS_WORDS: dict[str, tuple[str, ...]] = {
    "blind": ("blinds", "blind", "window blinds"),
    "curtain": ("curtains", "curtain", "drapes"),
    "shade": ("shades", "shade", "roller shades"),
    "shutter": ("shutters", "shutter", "roller shutters"),
    "garage": ("garage door", "garage doors", "garage"),
    "window": ("windows", "window", "skylights"),
    "gate": ("gate", "gates"),
    "awning": ("awning", "awnings"),
    "door": ("door", "doors"),
}

# binary sensor classes: (spoken class words, words for "on", words for "off")
BINARY_CLASSES: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "motion": (
        ("motion sensor", "motion sensors", "motion detector", "movement sensor", "motion", "movement"),
        ("triggered", "detecting motion", "active", "tripped", "detected"),
        ("clear", "idle"),
    ),
    "moisture": (
        (
            "leak sensor",
            "leak sensors",
            "water sensor",
            "water sensors",
            "flood sensor",
            "leak",
            "leaks",
            "water leak",
            "flooding",
        ),
        ("wet", "leaking", "detecting water", "triggered", "flooded", "detected"),
        ("dry",),
    ),
    "occupancy": (
        ("occupancy sensor", "occupancy sensors", "presence detector", "occupancy"),
        ("occupied", "detecting someone", "detected", "triggered"),
        ("empty", "unoccupied", "clear"),
    ),
    "smoke": (
        ("smoke detector", "smoke detectors", "smoke alarm", "smoke sensor", "smoke sensors", "smoke"),
        ("detecting smoke", "going off", "triggered", "alarming", "detected"),
        ("clear", "quiet"),
    ),
    "gas": (
        ("gas sensor", "gas sensors", "gas detector", "gas alarm", "gas"),
        ("detecting gas", "going off", "triggered", "detected"),
        ("clear",),
    ),
    "carbon_monoxide": (
        (
            "co detector",
            "carbon monoxide sensor",
            "carbon monoxide sensors",
            "carbon monoxide detector",
            "co alarm",
            "carbon monoxide",
            "co",
        ),
        ("detecting carbon monoxide", "going off", "triggered", "detected"),
        ("clear",),
    ),
    "door": (("door sensor", "door sensors", "door contact"), ("open", "opened"), ("closed", "shut")),
    "window": (("window sensor", "window sensors", "window contact"), ("open", "opened"), ("closed", "shut")),
    "garage_door": (("garage door sensor", "garage sensor"), ("open", "up"), ("closed", "shut", "down")),
    "opening": (
        ("contact sensor", "contact sensors", "opening sensor", "openings"),
        ("open", "opened"),
        ("closed", "shut"),
    ),
    "battery": (
        ("battery sensor", "battery", "batteries"),
        ("low", "running low", "almost empty", "dead"),
        ("fine", "normal", "ok", "charged", "full"),
    ),
    "battery_charging": (
        ("charger", "charging sensor"),
        ("charging", "plugged in to charge"),
        ("not charging", "discharging"),
    ),
    "connectivity": (
        ("connection sensor", "network sensor"),
        ("connected", "online"),
        ("disconnected", "offline", "not connected"),
    ),
    "plug": (("plug sensor",), ("plugged in",), ("unplugged", "not plugged in")),
    "power": (
        ("power sensor", "mains sensor"),
        ("powered", "on power", "powered on"),
        ("without power", "unpowered", "powered off"),
    ),
    "running": (("run sensor", "running sensor"), ("running", "working"), ("stopped",)),
    "update": (("updates", "update"), ("available", "pending"), ("up to date", "installed")),
    "problem": (
        ("problem sensor", "fault sensor"),
        ("reporting a problem", "faulty", "problem", "problems", "issue", "issues", "a problem"),
        ("ok", "fine"),
    ),
    "vibration": (("vibration sensor", "vibration sensors"), ("vibrating", "shaking"), ("still",)),
    "sound": (
        ("sound sensor", "sound sensors", "noise sensor", "noise", "sound"),
        ("detecting sound", "hearing something", "detected", "triggered"),
        ("quiet",),
    ),
    "tamper": (("tamper sensor",), ("tampered with", "tampered"), ("untouched",)),
    "presence": (("presence sensor",), ("home", "present", "at home"), ("away", "not home")),
    "cold": (("frost sensor", "freeze sensor"), ("cold", "freezing", "too cold"), ("warm",)),
    "heat": (("heat sensor", "overheat sensor"), ("hot", "overheating", "too hot"), ("cool",)),
    "safety": (("safety sensor",), ("unsafe", "dangerous"), ("safe",)),
    "light": (("light sensor", "daylight sensor"), ("detecting light", "bright", "detected"), ("dark",)),
    "lock": (("lock sensor",), ("unlocked", "open"), ("locked",)),
}

# state words that name a binary-sensor class by themselves ("which devices are connected?")
STATE_CLASSES: dict[str, str] = {
    "connected": "connectivity",
    "disconnected": "connectivity",
    "online": "connectivity",
    "offline": "connectivity",
    "not connected": "connectivity",
    "plugged in": "plug",
    "unplugged": "plug",
    "not plugged in": "plug",
    "powered on": "power",
    "powered": "power",
    "unpowered": "power",
    "without power": "power",
    "running": "running",
    "stopped": "running",
    "charging": "battery_charging",
    "not charging": "battery_charging",
    "discharging": "battery_charging",
    "wet": "moisture",
    "dry": "moisture",
    "leaking": "moisture",
    "flooded": "moisture",
    "cold": "cold",
    "freezing": "cold",
    "too cold": "cold",
    "hot": "heat",
    "overheating": "heat",
    "too hot": "heat",
    "vibrating": "vibration",
    "shaking": "vibration",
    "occupied": "occupancy",
    "unoccupied": "occupancy",
    "tampered with": "tamper",
    "tampered": "tamper",
    "home": "presence",
    "at home": "presence",
    "present": "presence",
    "away": "presence",
    "unsafe": "safety",
    "low": "battery",
    "running low": "battery",
    "problem": "problem",
    "problems": "problem",
    "issue": "problem",
    "issues": "problem",
    "a problem": "problem",
}

# numeric sensor classes: (spoken class words, typical entity-name nouns)
SENSOR_CLASSES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "temperature": (("temperature", "temp"), ("Temperature", "Thermometer", "Temp Sensor")),
    "humidity": (("humidity", "relative humidity"), ("Humidity", "Hygrometer")),
    "pressure": (("pressure",), ("Pressure", "Tyre Pressure", "Water Pressure")),
    "atmospheric_pressure": (("air pressure", "barometric pressure"), ("Barometer", "Weather Station")),
    "power": (("power", "power usage", "power draw", "wattage"), ("Power", "Power Meter", "Consumption")),
    "energy": (("energy", "energy usage", "energy production"), ("Energy", "Energy Meter", "Production")),
    "battery": (("battery", "battery level", "charge"), ("Battery", "Battery Level")),
    "carbon_dioxide": (("co2", "carbon dioxide", "co2 level"), ("CO2 Sensor", "Air Monitor")),
    "illuminance": (("illuminance", "light level", "brightness level"), ("Lux Sensor", "Illuminance")),
    "voltage": (("voltage",), ("Voltage", "Mains Voltage")),
    "current": (("current", "amperage", "current draw"), ("Current", "Amp Meter")),
    "speed": (("speed",), ("Speed", "Speedometer")),
    "wind_speed": (("wind speed", "wind"), ("Wind Sensor", "Anemometer")),
    "precipitation": (("rainfall", "precipitation", "rain"), ("Rain Gauge", "Rainfall")),
    "pm25": (("pm2.5", "pm 2.5", "fine dust"), ("Particulate Sensor", "Dust Sensor")),
    "aqi": (("air quality", "air quality index", "aqi"), ("Air Quality", "Air Quality Sensor")),
    "sound_pressure": (("noise level", "sound level", "decibels"), ("Noise Meter", "Sound Meter")),
    "distance": (("distance", "mileage", "range"), ("Distance Sensor", "Odometer", "Mileage")),
    "weight": (("weight",), ("Scale", "Weight")),
    "gas": (("gas usage", "gas consumption"), ("Gas Meter", "Gas Consumption")),
    "water": (("water usage", "water consumption"), ("Water Meter", "Water Consumption")),
    "signal_strength": (("signal strength", "signal", "wifi signal"), ("Signal", "Router Signal")),
    "data_rate": (("download speed", "upload speed", "data rate", "bandwidth"), ("Internet Speed", "Router")),
    "data_size": (("size", "file size", "disk usage"), ("Disk", "Storage", "Backup Size")),
    "frequency": (("frequency",), ("Grid Frequency", "Frequency")),
    "moisture": (("moisture", "soil moisture"), ("Soil Sensor", "Plant Sensor")),
    "monetary": (("price", "cost", "electricity price"), ("Electricity Price", "Energy Cost")),
    "duration": (("duration", "remaining time", "run time"), ("Program Duration", "Cycle Time")),
    "volatile_organic_compounds": (("voc", "voc level", "organic compounds"), ("VOC Sensor",)),
    "ozone": (("ozone", "ozone level"), ("Ozone Sensor",)),
    "irradiance": (("irradiance", "solar irradiance"), ("Pyranometer", "Solar Sensor")),
    "apparent_power": (("apparent power", "volt amperes"), ("Apparent Power", "Load")),
    "reactive_power": (("reactive power",), ("Reactive Power", "Inverter")),
    "power_factor": (("power factor",), ("Power Factor", "Grid Meter")),
    "energy_storage": (("stored energy", "energy stored", "energy storage"), ("Home Battery", "Powerwall")),
    "carbon_monoxide": (("carbon monoxide level", "co level"), ("CO Monitor",)),
    "nitrogen_dioxide": (("nitrogen dioxide", "no2"), ("NO2 Sensor",)),
    "nitrogen_monoxide": (("nitrogen monoxide", "nitric oxide"), ("NO Sensor",)),
    "nitrous_oxide": (("nitrous oxide", "n2o"), ("N2O Sensor",)),
    "sulphur_dioxide": (("sulphur dioxide", "sulfur dioxide", "so2"), ("SO2 Sensor",)),
    "pm1": (("pm1", "pm 1"), ("PM1 Sensor",)),
    "pm10": (("pm10", "pm 10", "coarse dust"), ("PM10 Sensor",)),
    "precipitation_intensity": (("rain rate", "rainfall rate", "precipitation intensity"), ("Rain Rate",)),
    "volume": (("volume of water", "tank volume", "fill volume"), ("Tank", "Water Tank")),
    "volume_storage": (("stored volume", "volume stored", "tank level"), ("Buffer Tank", "Cistern")),
    "date": (("date",), ("Next Birthday", "Next Holiday")),
    "timestamp": (("last seen", "last changed", "time of"), ("Last Motion", "Last Seen")),
}

MEDIA_CLASSES: dict[str, tuple[str, ...]] = {
    "track": ("song", "track", "tune", "songs", "tracks"),
    "album": ("album", "record", "albums"),
    "artist": ("artist", "band", "singer", "group"),
    "playlist": ("playlist", "mix", "playlists"),
    "movie": ("movie", "film", "movies"),
    "tv_show": ("tv show", "show", "series", "tv series", "shows"),
    "podcast": ("podcast", "podcasts"),
    "channel": ("channel", "station", "radio station"),
    "episode": ("episode",),
}

_MEDIA_INTENTS = frozenset(
    {
        "HassMediaPause",
        "HassMediaUnpause",
        "HassMediaNext",
        "HassMediaPrevious",
        "HassSetVolume",
        "HassSetVolumeRelative",
        "HassMediaPlayerMute",
        "HassMediaPlayerUnmute",
        "HassMediaSearchAndPlay",
    }
)
# intents that take the satellite's area when none is spoken
CONTEXT_INTENTS = _MEDIA_INTENTS | frozenset(
    {
        "HassTurnOn",
        "HassTurnOff",
        "HassToggle",
        "HassLightSet",
        "HassSetPosition",
        "HassStopMoving",
        "HassClimateSetTemperature",
        "HassClimateGetTemperature",
        "HassFanSetSpeed",
        "EdgeLightSetRelative",
        "EdgeClimateSetRelative",
        "HassGetState",
        "HassVacuumStart",
    }
)
_TIMER_INTENTS = frozenset(
    {
        "HassStartTimer",
        "HassCancelTimer",
        "HassCancelAllTimers",
        "HassPauseTimer",
        "HassUnpauseTimer",
        "HassTimerStatus",
        "HassIncreaseTimer",
        "HassDecreaseTimer",
    }
)
_HERE = re.compile(r"\b(here|this room|this space|where i am|around me|the room)\b", re.IGNORECASE)
_GLOBAL = re.compile(
    r"\b(everywhere|whole house|entire house|throughout the house|all over the house|every room|"
    r"around the house|in the house|at home|anywhere|entire home|whole home|across the home|all over)\b",
    re.IGNORECASE,
)


def spoken_device_words() -> frozenset[str]:
    """Every word the tables treat as a domain or device class (entity names should avoid them)."""
    words = set(_DOMAIN_BY_WORD) | set(_COVER_BY_WORD) | set(_BINARY_BY_WORD) | set(_SENSOR_BY_WORD)
    return frozenset(words)


def mentions_here(text: str) -> bool:
    """The request is about the satellite's own room ("in here", "this room")."""
    return _HERE.search(text) is not None


def is_global_request(text: str) -> bool:
    """The request is about the whole home or all devices ("everywhere", "all the lights")."""
    return _GLOBAL.search(text) is not None and not mentions_here(text)


# ------------------------------------------------------------------------------ lookups
def _table(pairs: dict[str, tuple[str, ...]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for value, words in pairs.items():
        for word in words:
            out.setdefault(word, value)
    return out


_DOMAIN_BY_WORD = _table(DOMAIN_WORDS)
_DOMAIN_BY_WORD.update(
    {"illuminate": "light", "light up": "light", "light": "light"}
)  # verbs that imply lights
_COVER_BY_WORD = _table(COVER_CLASS_WORDS)
_BINARY_BY_WORD = _table({k: v[0] for k, v in BINARY_CLASSES.items()})
_SENSOR_BY_WORD = _table({k: v[0] for k, v in SENSOR_CLASSES.items()})
_MEDIA_BY_WORD = _table(MEDIA_CLASSES)
_LEADING = re.compile(r"^(?:(?:all|the|of|my|our|every|each|any|some|these|those)\s+)+")


def _key(text: str) -> str:
    return _LEADING.sub("", re.sub(r"\s+", " ", text.lower().strip(" ?.!,"))).strip()


def _lookup(table: dict[str, str], text: str) -> str | None:
    key = _key(text)
    for candidate in (key, key.rstrip("s"), key + "s", key.split(" ")[-1], key.split(" ")[-1].rstrip("s")):
        if candidate in table:
            return table[candidate]
    return None


def device_class_for(word: str, intent: str, has_state: bool) -> tuple[str, str] | None:
    """(domain, device_class) for a tagged device-class word; a span that ran on ("batteries low")
    is read by its longest leading words that name a class."""
    words = _key(word).split(" ")
    for n in range(len(words), 0, -1):
        found = _device_class_exact(" ".join(words[:n]), intent, has_state)
        if found is not None:
            return found
    return None


def _device_class_exact(key: str, intent: str, has_state: bool) -> tuple[str, str] | None:
    if intent == "HassGetState":
        if has_state and key in _BINARY_BY_WORD:
            return "binary_sensor", _BINARY_BY_WORD[key]
        if key in _SENSOR_BY_WORD and not has_state:
            return "sensor", _SENSOR_BY_WORD[key]
        cover = _lookup(_COVER_BY_WORD, key)
        if cover is not None:
            return "cover", cover
        binary = _lookup(_BINARY_BY_WORD, key)
        if binary is not None:
            return "binary_sensor", binary
        sensor = _lookup(_SENSOR_BY_WORD, key)
        return ("sensor", sensor) if sensor is not None else None
    cover = _lookup(_COVER_BY_WORD, key)
    if cover is not None:
        return "cover", cover
    binary = _lookup(_BINARY_BY_WORD, key)
    if binary is not None:
        return "binary_sensor", binary
    sensor = _lookup(_SENSOR_BY_WORD, key)
    return ("sensor", sensor) if sensor is not None else None


_ON_WORDS = ("on", "turned on", "switched on", "lit", "running", "spinning", "active", "powered on")
_OFF_WORDS = ("off", "turned off", "switched off", "not running", "powered off")
_OPEN_WORDS = ("open", "opened", "up", "raised")
_CLOSED_WORDS = ("closed", "shut", "down", "lowered", "drawn")
_BINARY_OFF = (
    "clear",
    "ok",
    "okay",
    "fine",
    "normal",
    "safe",
    "dry",
    "idle",
    "quiet",
    "off",
    "no",
    "gone",
    "away",
    "charged",
    "full",
    "secure",
    "locked",
    "inactive",
    "undetected",
)
_HOME_WORDS = ("home", "at home", "here", "present", "in")
_AWAY_WORDS = ("away", "out", "not home", "gone", "not here")


_STATE_FILLER = re.compile(r"^(?:(?:still|currently|now|already|left|all)\s+)+")


def _state_value(word: str, domain: str | None, device_class: str | None) -> str:
    key = _key(word)
    key = _STATE_FILLER.sub("", key) or key  # "still on" -> "on"
    if domain == "binary_sensor":
        cls = BINARY_CLASSES.get(device_class or "")
        if cls is not None:
            if key in cls[1]:
                return "on"
            if key in cls[2]:
                return "off"
        if key in _OFF_WORDS or key in _CLOSED_WORDS or key in _BINARY_OFF or key.startswith(("not ", "no ")):
            return "off"
        return "on"
    if domain == "cover" or (domain is None and key in _OPEN_WORDS + _CLOSED_WORDS):
        if key in _CLOSED_WORDS:
            return "closed"
        if key in _OPEN_WORDS:
            return "open"
    if domain == "lock" or key in ("locked", "unlocked", "secured"):
        if key in ("open", "opened"):
            return "open"
        return "unlocked" if key == "unlocked" else "locked"
    if domain == "person" or (domain is None and key in _HOME_WORDS + _AWAY_WORDS):
        return "not_home" if key in _AWAY_WORDS else "home"
    if key in _OFF_WORDS:
        return "off"
    if key in _ON_WORDS:
        return "on"
    return key


# ------------------------------------------------------------------------------ builder
class _Out:
    def __init__(self) -> None:
        self.slots: dict[str, SlotValue] = {}

    def put(self, name: str, value: object, span: Span, raw: str, overwrite: bool = False) -> None:
        if name in self.slots and not overwrite:
            return
        self.slots[name] = SlotValue(value, raw, span.start, span.end, span.confidence)


def _group(text: str, spans: Sequence[Span]) -> dict[str, list[tuple[Span, str]]]:
    groups: dict[str, list[tuple[Span, str]]] = {}
    for span in sorted(spans, key=lambda s: s.start):
        start, end = max(0, span.start), min(len(text), span.end)
        raw = text[start:end].strip()
        if raw:
            groups.setdefault(span.slot, []).append((span, raw))
    return groups


_JOINERS = re.compile(r"^[\s,]*(?:and|plus)?[\s,]*$", re.IGNORECASE)


def _timer_spans(text: str, intent: str, spans: list[Span], home: Home | None) -> list[Span]:
    """Timer intents fix the role of a duration: a new timer only has a length ("duration"); cancel,
    pause, resume and status only identify one ("start_duration"); add/remove have both (the first
    one spoken without "timer" after it is the amount). A timer "name" that is a room is its area."""
    out: list[Span] = []
    for sp in spans:
        slot = sp.slot
        if slot in ("duration", "start_duration"):
            if intent == "HassStartTimer":
                slot = "duration"
            elif intent not in ("HassIncreaseTimer", "HassDecreaseTimer"):
                slot = "start_duration"
        elif slot == "timer_name" and home is not None:
            raw = text[max(0, sp.start) : sp.end]
            if home.resolve_area(raw, fuzzy=False) is not None:
                slot = "area"
        out.append(Span(sp.start, sp.end, slot, sp.confidence))
    durations = [i for i, sp in enumerate(out) if sp.slot == "duration"]
    if intent in ("HassIncreaseTimer", "HassDecreaseTimer") and len(durations) > 1:
        for i in durations:  # "increase the 1 hour timer by 5 minutes": the one naming the timer
            sp = out[i]
            if text[sp.end :].lstrip().lower().startswith("timer") or re.search(
                r"timer (?:for|of)\s*$", text[: sp.start], re.IGNORECASE
            ):
                out[i] = Span(sp.start, sp.end, "start_duration", sp.confidence)
                break
    if intent in ("HassIncreaseTimer", "HassDecreaseTimer") and not any(sp.slot == "duration" for sp in out):
        for i, sp in enumerate(out):
            if sp.slot == "start_duration" and not text[sp.end :].lstrip().lower().startswith("timer"):
                out[i] = Span(sp.start, sp.end, "duration", sp.confidence)
                break
    return out


def _merged(text: str, items: list[tuple[Span, str]]) -> tuple[Span, str]:
    """Pieces of one slot read together: the text between them when only "and"/commas separate them."""
    first, last = items[0][0], items[-1][0]
    conf = min(s.confidence for s, _ in items)
    gaps = [text[a[0].end : b[0].start] for a, b in itertools.pairwise(items)]
    if all(_JOINERS.match(gap) for gap in gaps):
        return Span(first.start, last.end, first.slot, conf), text[first.start : last.end].strip()
    return Span(first.start, last.end, first.slot, conf), " ".join(raw for _, raw in items)


def build_slots(
    text: str,
    intent: str,
    spans: list[Span],
    home: Home | None,
    context_area: str | None,
) -> dict[str, SlotValue]:
    """Final slots for one recognized utterance (see module docstring)."""
    spans = snap_to_words(text, spans)
    if home is not None:
        spans = _align_to_home(text, spans, home)
        spans = _repair_names(text, intent, list(spans), home)
    if intent in _TIMER_INTENTS:
        spans = _timer_spans(text, intent, list(spans), home)
    spans = _grow_spans(text, spans, home)
    groups = _group(text, spans)
    out = _Out()
    _places(out, groups, home)
    _things(out, groups, intent, home)
    _values(out, text, groups)
    _names(out, groups, intent, home, text)
    if home is not None:
        _prefer_home_entity(out, text, intent, groups, home)
    if intent in ("HassTurnOn", "HassTurnOff") and "name" not in out.slots:
        domain = out.slots.get("domain")
        if domain is not None and domain.value in ("fan", "lock") and "device_class" not in out.slots:
            out.slots["name"] = SlotValue("all", domain.raw, domain.start, domain.end, domain.confidence)
    if home is not None:
        _fill_from_home(out, text, intent, spans, home)
    _implied_light(out, text, intent)
    _untagged_kind(out, text, intent, spans)
    _untagged_on_off(out, text, intent, spans)
    if intent == "HassMediaSearchAndPlay":
        _media_query(out, text, home)
        _tv_show(out, text)
    _context(out, text, intent, context_area)
    return out.slots


def _adjacent(text: str, left: Span, right: Span) -> bool:
    return left.end <= right.start and not text[left.end : right.start].strip()


_PLACE_SLOTS = ("name", "area", "floor")
_WORD = re.compile(r"[\w'.-]+")


def _known(home: Home, slot: str, raw: str) -> bool:
    if slot == "name":
        return home.resolve_entity(raw, fuzzy=False) is not None
    if slot == "area":
        return home.resolve_area(raw, fuzzy=False) is not None
    return home.resolve_floor(raw, fuzzy=False) is not None


def _merge_and_extend(text: str, spans: list[Span], home: Home) -> list[Span]:
    """Name/area/floor spans split by the tagger ("living" + "room") are joined when adjacent, and a
    span that matches nothing grows by one untagged word on either side when that makes a match."""
    merged: list[Span] = []
    for sp in spans:
        last = merged[-1] if merged else None
        joined = _joined_kind(text, last, sp, home) if last is not None else None
        if last is not None and joined is not None:
            merged[-1] = Span(last.start, sp.end, joined, min(last.confidence, sp.confidence))
        else:
            merged.append(sp)
    tagged = [(sp.start, sp.end) for sp in merged]
    out: list[Span] = []
    for sp in merged:
        raw = text[sp.start : sp.end]
        if sp.slot in _PLACE_SLOTS and not _known(home, sp.slot, raw):
            for start, end in _neighbour_words(text, sp):
                if any(a < end and start < b for a, b in tagged if (a, b) != (sp.start, sp.end)):
                    continue
                if _known(home, sp.slot, text[start:end]):
                    sp = Span(start, end, sp.slot, sp.confidence)
                    break
        out.append(sp)
    return out


def _joined_kind(text: str, left: Span, right: Span, home: Home) -> str | None:
    """Two adjacent place/name spans that belong together: same kind, or together a known place."""
    if left.slot not in _PLACE_SLOTS or right.slot not in _PLACE_SLOTS or not _adjacent(text, left, right):
        return None
    if left.slot == right.slot:
        return left.slot
    raw = text[left.start : right.end]
    for slot in ("area", "floor", "name"):
        if _known(home, slot, raw):
            return slot
    return None


def _neighbour_words(text: str, sp: Span) -> list[tuple[int, int]]:
    after = _WORD.match(text, sp.end + 1) if text[sp.end : sp.end + 1] == " " else None
    before = [m for m in _WORD.finditer(text, 0, max(0, sp.start - 1)) if m.end() == sp.start - 1]
    out = []
    if after is not None:
        out.append((sp.start, after.end()))
    if before:
        out.append((before[-1].start(), sp.end))
    return out


def _repair_names(text: str, intent: str, spans: list[Span], home: Home) -> list[Span]:
    """Fix name boundaries with the home: "overhead" + "light" -> the entity "Overhead Light",
    "kitchen" + "ceiling" -> "Kitchen ceiling", and a tagged area that is really an entity."""
    spans = _merge_and_extend(text, sorted(spans, key=lambda sp: sp.start), home)
    i = 0
    while i < len(spans):
        span = spans[i]
        raw = text[span.start : span.end]
        if (
            span.slot == "name"
            and home.resolve_entity(raw) is None
            and home.resolve_area(raw, fuzzy=False) is not None
        ):
            spans[i] = span = Span(span.start, span.end, "area", span.confidence)  # "kitchen" is a room here
        if span.slot == "name" and home.resolve_entity(raw, fuzzy=False) is None:
            nxt = spans[i + 1] if i + 1 < len(spans) else None
            prev = spans[i - 1] if i > 0 else None
            if (
                nxt is not None
                and nxt.slot in ("domain", "device_class")
                and _adjacent(text, span, nxt)
                and home.resolve_entity(text[span.start : nxt.end], fuzzy=False) is not None
            ):
                spans[i] = Span(span.start, nxt.end, "name", min(span.confidence, nxt.confidence))
                del spans[i + 1]
                continue
            if (
                prev is not None
                and prev.slot in ("area", "floor")
                and _adjacent(text, prev, span)
                and home.resolve_entity(text[prev.start : span.end], fuzzy=False) is not None
            ):
                spans[i - 1] = Span(prev.start, span.end, "name", min(span.confidence, prev.confidence))
                del spans[i]
                continue
        if span.slot in ("area", "floor"):
            nxt = spans[i + 1] if i + 1 < len(spans) else None
            if (
                nxt is not None
                and nxt.slot in ("domain", "device_class")
                and _adjacent(text, span, nxt)
                and home.resolve_entity(text[span.start : nxt.end], fuzzy=False) is not None
            ):
                spans[i] = Span(span.start, nxt.end, "name", min(span.confidence, nxt.confidence))
                del spans[i + 1]  # "the bedroom lamp" is the entity Bedroom Lamp, not a room + lights
                continue
            if (
                home.resolve_area(raw, fuzzy=False) is None
                and home.resolve_floor(raw, fuzzy=False) is None
                and home.resolve_entity(raw, fuzzy=False) is not None
            ):
                spans[i] = Span(span.start, span.end, "name", span.confidence)
        if span.slot in ("domain", "device_class") and not any(sp.slot == "name" for sp in spans):
            named = home.resolve_entity(raw, fuzzy=False, plural=False)
            if named is not None and (
                intent == "HassGetState" or named.domain not in ("sensor", "binary_sensor")
            ):
                spans[i] = Span(
                    span.start, span.end, "name", span.confidence
                )  # an entity called "CO" or "TV"
        if span.slot == "name" and home.resolve_entity(raw, fuzzy=False, plural=False) is None:
            # also "bedroom curtains" that only matched the entity "Bedroom Curtain" through the
            # plural: a room and a kind of device (HA reads it as a group), not that one entity
            split = _split_area_word(text, span, home)
            if split:
                spans[i : i + 1] = split
        i += 1
    return spans


def _split_area_word(text: str, span: Span, home: Home) -> list[Span]:
    """ "kitchen lights" tagged as one name, with no such entity -> area "kitchen" + domain "lights"."""
    raw = text[span.start : span.end]
    for cut in [m.start() for m in re.finditer(r" ", raw)]:
        head, tail = raw[:cut], raw[cut + 1 :]
        kind = (
            "area"
            if home.resolve_area(head, fuzzy=False)
            else "floor"
            if home.resolve_floor(head, fuzzy=False)
            else None
        )
        if kind is None:
            continue
        word = (
            "domain"
            if _lookup(_DOMAIN_BY_WORD, tail)
            else "device_class"
            if _lookup(_COVER_BY_WORD, tail)
            else None
        )
        if word is not None and _key(tail) in _DOMAIN_BY_WORD | _COVER_BY_WORD:
            return [
                Span(span.start, span.start + cut, kind, span.confidence),
                Span(span.start + cut + 1, span.end, word, span.confidence),
            ]
    return []


def _places(out: _Out, groups: dict[str, list[tuple[Span, str]]], home: Home | None) -> None:
    for span, raw in groups.get("area", [])[:1]:
        area = home.resolve_area(raw) if home else None
        floor = home.resolve_floor(raw, fuzzy=False) if home and area is None else None
        if floor is not None:
            out.put("floor", floor, span, raw)
        else:
            out.put("area", area if area is not None else raw, span, raw)
    for span, raw in groups.get("floor", [])[:1]:
        floor = home.resolve_floor(raw) if home else None
        area = home.resolve_area(raw, fuzzy=False) if home and floor is None else None
        if area is not None:
            out.put("area", area, span, raw)
        else:
            out.put("floor", floor if floor is not None else raw, span, raw)


_GENERIC_THINGS = frozenset(
    ("device", "devices", "thing", "things", "anything", "something", "stuff", "gadgets", "appliances")
)


def _things(out: _Out, groups: dict[str, list[tuple[Span, str]]], intent: str, home: Home | None) -> None:
    _state_words_as_class(groups)
    has_state = "state" in groups
    for span, raw in groups.get("device_class", [])[:1]:
        found = device_class_for(raw, intent, has_state)
        if found is not None:
            out.put("domain", found[0], span, raw)
            out.put("device_class", found[1], span, raw)
        else:
            out.put("device_class", _key(raw).replace(" ", "_"), span, raw)
    for span, raw in groups.get("domain", [])[:1]:
        if _key(raw) in _GENERIC_THINGS:
            continue  # "which devices are on?" names no kind of device
        domain = _lookup(_DOMAIN_BY_WORD, raw)
        if domain is None and "device_class" not in out.slots:
            found = device_class_for(raw, intent, has_state)
            if found is not None:  # "batteries" tagged as a domain word
                out.put("domain", found[0], span, raw)
                out.put("device_class", found[1], span, raw)
                continue
        if domain is None:
            cover = _lookup(_COVER_BY_WORD, raw)
            if cover is not None:
                out.put("domain", "cover", span, raw)
                out.put("device_class", cover, span, raw)
                continue
        out.put("domain", domain if domain is not None else _key(raw), span, raw)


_NUMBER_TAIL = re.compile(
    r"(?:\s+(?:and\s+a\s+half|point\s+\w+|hundred|thousand|percent|per\s+cent|degrees?|%|°|"
    r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|"
    r"seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)\b|%|°)+",
    re.IGNORECASE,
)


def _following(text: str, items: list[tuple[Span, str]]) -> list[tuple[Span, str]]:
    """The pieces after the first that continue it with only spaces between."""
    out: list[tuple[Span, str]] = []
    last = items[0][0]
    for span, raw in items[1:]:
        if text[last.end : span.start].strip():
            break
        out.append((span, raw))
        last = span
    return out


def _grow_number(text: str, span: Span) -> tuple[Span, str]:
    """A number cut short by the tagger ("one" of "one hundred percent") takes the rest of it."""
    start, end = max(0, span.start), min(len(text), span.end)
    if nz.find_number(text[start:end]) is not None:
        tail = _NUMBER_TAIL.match(text, end)
        if tail is not None:
            end = tail.end()
    return Span(start, end, span.slot, span.confidence), text[start:end].strip()


def _values(out: _Out, text: str, groups: dict[str, list[tuple[Span, str]]]) -> None:
    simple: dict[str, Callable[[str], object]] = {
        "brightness": nz.parse_brightness,
        "position": nz.parse_percentage,
        "percentage": nz.parse_percentage,
        "volume_level": nz.parse_percentage,
        "temperature": nz.parse_temperature,
        "color": nz.parse_color,
    }
    for slot, parse in simple.items():
        for span, raw in groups.get(slot, [])[:1]:
            if slot != "color":
                span, raw = _grow_number(text, span)
            value = parse(raw)
            out.put(slot, value if value is not None else raw, span, raw)
    for slot in ("brightness_step", "temperature_step", "volume_step"):
        if slot in groups:
            span, raw = _merged(text, groups[slot])
            step = nz.parse_step(raw)
            out.put(slot, step if step is not None else raw, span, raw)
    for slot, prefix in (("duration", ""), ("start_duration", "start_")):
        if slot in groups:
            span, raw = _merged(text, groups[slot])
            parts = nz.parse_duration(raw)
            if parts is None:
                out.put(slot, raw, span, raw)
                continue
            for unit, amount in parts.items():
                out.put(prefix + unit, amount, span, raw)
    for slot in ("item", "search_query", "message", "conversation_command"):
        if slot in groups:  # "Break" + "ing Bad": pieces of one title are read together
            span, raw = _merged(text, groups[slot][:1] + _following(text, groups[slot]))
            out.put(slot, raw.strip(" ?.!,"), span, raw)
    for span, raw in groups.get("media_class", [])[:1]:
        media = _lookup(_MEDIA_BY_WORD, raw)
        out.put("media_class", media if media is not None else _key(raw), span, raw)


def _names(
    out: _Out, groups: dict[str, list[tuple[Span, str]]], intent: str, home: Home | None, text: str = ""
) -> None:
    for span, raw in groups.get("timer_name", [])[:1]:
        out.put("name", raw.strip(" ?.!,"), span, raw)
    for span, raw in groups.get("list_name", [])[:1]:
        spoken = re.sub(r"\s+list$", "", raw.strip(" ?.!,"), flags=re.IGNORECASE)
        resolved = home.resolve_list(spoken) if home else None
        out.put("name", resolved if resolved is not None else spoken, span, raw)
    for span, raw in groups.get("name", [])[:1]:
        if intent == "HassGetWeather" or intent in _TIMER_INTENTS:
            out.put("name", raw.strip(" ?.!,"), span, raw)
            continue
        entity = home.resolve_entity(raw) if home else None
        allowed = _INTENT_DOMAINS.get(intent)
        if entity is not None and allowed is not None and entity.domain not in allowed:
            kind = _word_kind(raw, "name")
            if kind != "name":  # "lights" that only resolve to a light *sensor*: a kind of device
                _things(out, {kind: [(Span(span.start, span.end, kind, span.confidence), raw)]}, intent, home)
                continue
        if entity is None and intent == "HassGetState" and "device_class" not in out.slots:
            found = _class_word(raw)
            if found is not None:  # "is the water sensor wet" in a home with no such name: a class
                out.put("domain", found[0], span, raw)
                out.put("device_class", found[1], span, raw)
                continue
        if entity is None:
            out.put("name", raw.strip(" ?.!,"), span, raw)
            continue
        entity = _pick_same_name(home, entity, out, groups) if home else entity
        out.put("name", entity.name, span, raw)
        out.put("domain", entity.domain, span, raw, overwrite=True)
        if entity.device_class:  # the entity's own class, not a loosely tagged word ("amount")
            out.put("device_class", entity.device_class, span, raw, overwrite=True)
    _state(out, groups, intent, text)


def _class_word(raw: str) -> tuple[str, str] | None:
    """The whole of ``raw`` is a binary-sensor, sensor or cover class phrase."""
    key = _key(raw)
    for domain, table in (
        ("binary_sensor", _BINARY_BY_WORD),
        ("sensor", _SENSOR_BY_WORD),
        ("cover", _COVER_BY_WORD),
    ):
        if key in table:
            return domain, table[key]
    return None


def _pick_same_name(
    home: Home, entity: Entity, out: _Out, groups: dict[str, list[tuple[Span, str]]]
) -> Entity:
    """Several entities share a name ("Phone" battery, "Phone" connectivity): the spoken class or the
    state word chooses ("is the phone charging?" -> the battery_charging one)."""
    same = home.entities_named(entity.name)
    if len(same) < 2:
        return entity
    dc_slot = out.slots.get("device_class")
    if dc_slot is not None:
        for cand in same:
            if cand.device_class == dc_slot.value:
                return cand
    for _, raw in groups.get("state", [])[:1]:
        key = _key(raw)
        for cand in same:
            cls = BINARY_CLASSES.get(cand.device_class or "")
            if cand.domain == "binary_sensor" and cls is not None and key in cls[1] + cls[2]:
                if dc_slot is not None:
                    del out.slots["device_class"]
                return cand
        for cand in same:
            if STATE_CLASSES.get(key) == cand.device_class:
                if dc_slot is not None:
                    del out.slots["device_class"]
                return cand
    return entity


_PEOPLE_WORDS = re.compile(
    r"\b(who|anyone|anybody|everyone|everybody|someone|somebody|people|persons|residents|family)\b",
    re.IGNORECASE,
)


def _state(out: _Out, groups: dict[str, list[tuple[Span, str]]], intent: str, text: str = "") -> None:
    domain_slot, dc_slot = out.slots.get("domain"), out.slots.get("device_class")
    domain = domain_slot.value if domain_slot is not None else None
    dc = dc_slot.value if dc_slot is not None else None
    for span, raw in groups.get("state", [])[:1]:
        key = _key(raw)
        if key in ("locked", "unlocked", "secured") and domain == "cover" and dc == "door":
            domain, dc = "lock", None  # "are all doors locked?" asks about locks
            out.put("domain", "lock", span, raw, overwrite=True)
            out.slots.pop("device_class", None)
        if (
            intent == "HassGetState"
            and "name" not in out.slots
            and domain in (None, "person")
            and dc is None
            and key in _HOME_WORDS + _AWAY_WORDS
            and _PEOPLE_WORDS.search(text)
        ):
            domain = "person"  # "is anyone at home?", "who is home?"
            out.put("domain", "person", span, raw)
        if intent == "HassGetState" and "name" not in out.slots and domain != "person":
            implied = STATE_CLASSES.get(key)
            if domain == "light" and key == "detected":
                implied, domain = "light", None
            if (
                implied is not None
                and domain in (None, "binary_sensor")
                and not (
                    dc in BINARY_CLASSES and key in BINARY_CLASSES[str(dc)][1] + BINARY_CLASSES[str(dc)][2]
                )
            ):
                domain, dc = "binary_sensor", implied
                out.put("domain", domain, span, raw, overwrite=True)
                out.put("device_class", dc, span, raw, overwrite=True)
        out.put(
            "state",
            _state_value(
                raw, domain if isinstance(domain, str) else None, dc if isinstance(dc, str) else None
            ),
            span,
            raw,
        )
    if (
        "state" not in out.slots
        and intent == "HassGetState"
        and domain == "binary_sensor"
        and dc_slot is not None
        and "name" not in out.slots
    ):
        out.put("state", "on", dc_slot_span(dc_slot), dc_slot.raw)  # "is there any smoke?"


def dc_slot_span(slot: SlotValue) -> Span:
    return Span(slot.start, slot.end, "device_class", slot.confidence)


def _context(out: _Out, text: str, intent: str, context_area: str | None) -> None:
    if not context_area or intent not in CONTEXT_INTENTS:
        return
    spoken = {"area", "floor", "name"} & set(out.slots)
    if spoken and not (spoken == {"name"} and out.slots["name"].value == "all" and intent != "HassGetState"):
        return  # a place or a name was spoken; "all" (the fans of the room) still needs the room
    if intent == "HassGetState":
        if not mentions_here(text):
            return
    elif is_global_request(text):
        return
    out.slots["area"] = SlotValue(context_area, "", -1, -1, 1.0)


def canonical(text: str) -> str:
    """Exposed for tests and the bench: the comparison key used for names."""
    return canonical_key(text)


# ------------------------------------------------------------------------------ span repair
def _is_word_char(ch: str) -> bool:
    return ch.isalnum()


_JOINABLE = frozenset(
    (
        "list_name", "item", "search_query", "message", "conversation_command", "timer_name", "state",
        "brightness", "position", "percentage", "volume_level", "temperature", "color", "media_class",
    )
)  # fmt: skip


def snap_to_words(text: str, spans: Sequence[Span]) -> list[Span]:
    """Spans cut inside a word by sub-word tagging ("televi", "occup" + "an") grow to whole words;
    pieces that then overlap are merged (same slot) or the one that covered more text wins."""
    grown: list[tuple[Span, int]] = []
    for sp in sorted(spans, key=lambda s: (s.start, s.end)):
        start, end = max(0, sp.start), min(len(text), sp.end)
        if end <= start:
            grown.append((sp, 0))
            continue
        while start > 0 and _is_word_char(text[start - 1]) and _is_word_char(text[start]):
            start -= 1
        while end < len(text) and _is_word_char(text[end]) and _is_word_char(text[end - 1]):
            end += 1
        grown.append((Span(start, end, sp.slot, sp.confidence), min(len(text), sp.end) - max(0, sp.start)))
    out: list[tuple[Span, int]] = []
    for sp, covered in grown:
        if (
            out
            and covered
            and out[-1][1]
            and sp.slot == out[-1][0].slot
            and sp.slot in _JOINABLE
            and sp.start >= out[-1][0].end
            and not text[out[-1][0].end : sp.start].strip()
            and (sp.slot != "state" or _key(text[out[-1][0].start : sp.end]) in _STATE_PHRASES)
        ) or (
            out
            and sp.slot == out[-1][0].slot
            and sp.slot in ("domain", "device_class")
            and sp.start >= out[-1][0].end
            and not text[out[-1][0].end : sp.start].strip()
            and not _understood(text[out[-1][0].start : out[-1][0].end], sp.slot, None)
        ):
            prev, prev_cov = out[-1]  # "trader" + "joes": one value tagged word by word
            out[-1] = (
                Span(prev.start, sp.end, sp.slot, min(prev.confidence, sp.confidence)),
                prev_cov + covered,
            )
            continue
        if out and covered and out[-1][1] and sp.start < out[-1][0].end:
            prev, prev_cov = out[-1]
            if prev.slot == sp.slot:
                joined = Span(prev.start, max(prev.end, sp.end), sp.slot, min(prev.confidence, sp.confidence))
                out[-1] = (joined, prev_cov + covered)
            elif covered > prev_cov:
                out[-1] = (sp, covered)
            continue
        out.append((sp, covered))
    return [sp for sp, _ in out]


_MentionCache = dict[int, tuple[Home, "re.Pattern[str] | None", dict[str, tuple[str, str]]]]
_MENTIONS: _MentionCache = {}


def _mention_index(home: Home) -> tuple[re.Pattern[str] | None, dict[str, tuple[str, str]]]:
    """One regex over every spoken entity name, area and floor of the home (longest first)."""
    cached = _MENTIONS.get(id(home))
    if cached is not None and cached[0] is home:
        return cached[1], cached[2]
    table: dict[str, tuple[str, str]] = {}
    for kind, values in (
        ("floor", home.floors),
        ("area", home.areas),
        ("name", [n for e in home.entities for n in e.spoken_names()]),
    ):
        for value in values:
            key = re.sub(r"\s+", " ", value.lower()).strip()
            if len(key) >= 2:
                table[key] = (kind, value)  # an entity called like its room wins: it is more specific
    pattern = None
    if table:
        alts = "|".join(re.escape(k) for k in sorted(table, key=len, reverse=True))
        pattern = re.compile(rf"(?<![a-z0-9])(?:{alts})(?![a-z0-9])")
    if len(_MENTIONS) > 32:
        _MENTIONS.clear()
    _MENTIONS[id(home)] = (home, pattern, table)
    return pattern, table


def home_mentions(text: str, home: Home) -> list[tuple[int, int, str, str]]:
    """Word-bounded mentions of the home's names, areas and floors: (start, end, kind, value)."""
    pattern, table = _mention_index(home)
    if pattern is None:
        return []
    lowered = text.lower()
    if len(lowered) != len(text):
        return []
    out = []
    for m in pattern.finditer(lowered):
        kind, value = table[m.group(0)]
        out.append((m.start(), m.end(), kind, value))
    return out


def _resolves(home: Home, slot: str, raw: str) -> bool:
    if slot == "name":
        return home.resolve_entity(raw) is not None
    if slot == "area":
        return home.resolve_area(raw) is not None
    return home.resolve_floor(raw) is not None


def _align_to_home(text: str, spans: list[Span], home: Home) -> list[Span]:
    """A place span that resolves to nothing but overlaps a word-exact mention of a home name, area or
    floor ("living" of "living room", "room fan") takes the mention's extent and kind; what it
    covered outside the mention stays, re-read as a domain / class / state word when it is one. A
    kind span that ran into a place ("light upstairs") is split the same way."""
    for start, end, kind, _ in home_mentions(text, home):
        over = [sp for sp in spans if sp.start < end and start < sp.end and _misread(text, sp, home)]
        if not over or any(sp.start < end and start < sp.end and sp not in over for sp in spans):
            continue
        if all(
            sp.start <= start
            and sp.end >= end
            and sp.slot in _PLACE_SLOTS
            and not _state_left(text, sp, start, end)
            for sp in over
        ):
            continue  # a longer name that merely contains a room ("Outside Humidity") stays whole
        if len(over) == 1 and (over[0].start, over[0].end) == (start, end):
            continue
        conf = min(sp.confidence for sp in over)
        keep = [sp for sp in spans if sp not in over]
        keep.append(Span(start, end, kind, conf))
        for sp in over:
            for a, b in ((sp.start, start), (end, sp.end)):
                piece = text[a:b] if b > a else ""
                if not piece.strip():
                    continue
                lead = len(piece) - len(piece.lstrip())
                a2, b2 = a + lead, a + lead + len(piece.strip())
                keep.append(Span(a2, b2, _word_kind(text[a2:b2], sp.slot), sp.confidence))
        spans = sorted(keep, key=lambda sp: sp.start)
    return spans


def _misread(text: str, sp: Span, home: Home) -> bool:
    """A place span that resolves to nothing, or a kind span whose words name no kind."""
    raw = text[sp.start : sp.end]
    if sp.slot in _PLACE_SLOTS:
        return not _resolves(home, sp.slot, raw)
    if sp.slot == "domain":
        return _lookup(_DOMAIN_BY_WORD, raw) is None and device_class_for(raw, "", False) is None
    if sp.slot == "device_class":
        return device_class_for(raw, "HassGetState", False) is None
    return False


def _state_left(text: str, sp: Span, start: int, end: int) -> bool:
    """What a span holds besides the place is a state phrase ("kitchen flooded")."""
    rest = f"{text[sp.start : start]} {text[end : sp.end]}"
    return _key(rest) in _STATE_PHRASES


def _word_kind(raw: str, default: str) -> str:
    key = _key(raw)
    if key in _DOMAIN_BY_WORD:
        return "domain"
    if key in _COVER_BY_WORD or key in _BINARY_BY_WORD or key in _SENSOR_BY_WORD:
        return "device_class"
    if key in _STATE_PHRASES:
        return "state"
    return default


_INTENT_DOMAINS: dict[str, tuple[str, ...]] = {
    **{i: ("media_player",) for i in _MEDIA_INTENTS},
    "HassLightSet": ("light",),
    "EdgeLightSetRelative": ("light",),
    "HassSetPosition": ("cover", "valve"),
    "HassStopMoving": ("cover", "valve"),
    "HassClimateSetTemperature": ("climate",),
    "HassClimateGetTemperature": ("climate", "sensor"),
    "EdgeClimateSetRelative": ("climate",),
    "HassFanSetSpeed": ("fan",),
    "HassVacuumStart": ("vacuum",),
    "HassVacuumReturnToBase": ("vacuum",),
    "HassLawnMowerStartMowing": ("lawn_mower",),
    "HassLawnMowerDock": ("lawn_mower",),
    "HassTurnOn": ("light", "switch", "fan", "cover", "lock", "valve", "media_player", "scene", "script"),
    "HassTurnOff": ("light", "switch", "fan", "cover", "lock", "valve", "media_player", "script"),
    "HassToggle": ("light", "switch", "fan", "cover", "lock", "valve", "media_player"),
}


_MEDIA_AFTER = re.compile(r"\s+(\w+)")


def _media_word_starts(text: str, start: int, end: int) -> bool:
    """The mention begins a media class phrase ("tv" of "tv show")."""
    nxt = _MEDIA_AFTER.match(text, end)
    return nxt is not None and f"{text[start:end]} {nxt[1]}".lower() in _MEDIA_BY_WORD


def _fill_from_home(out: _Out, text: str, intent: str, spans: Sequence[Span], home: Home) -> None:
    """Targets the tagger missed: an untagged, word-exact mention of an entity of a kind this intent
    acts on becomes the name when none was found ("skip on the TV"), and an untagged mention of an
    area or floor becomes the place when none was found ("activate kitchen party mode")."""
    domains = _INTENT_DOMAINS.get(intent)
    if domains is None and intent != "HassGetState":
        return
    taken = [(sp.start, sp.end) for sp in spans if sp.slot not in _PLACE_SLOTS]
    taken += [(v.start, v.end) for v in out.slots.values() if v.start >= 0]  # where place spans ended up
    for start, end, kind, value in sorted(home_mentions(text, home), key=lambda m: m[0] - m[1]):
        if any(a < end and start < b for a, b in taken):
            continue
        raw = text[start:end]
        span = Span(start, end, kind, 0.5)
        if kind == "name":
            entity = home.resolve_entity(value, fuzzy=False)
            if "name" in out.slots or domains is None or entity is None or entity.domain not in domains:
                continue
            if _key(raw) in spoken_device_words() and domains == _INTENT_DOMAINS["HassTurnOn"]:
                continue  # "turn on the light" is not the entity called "Light"
            if _media_word_starts(text, start, end):
                continue  # "tv" of "tv show"
            out.put("name", entity.name, span, raw)
            out.put("domain", entity.domain, span, raw)
            if entity.device_class and "device_class" not in out.slots:
                out.put("device_class", entity.device_class, span, raw)
        elif not {"area", "floor"} & set(out.slots):
            out.put(kind, value, span, raw)
        else:
            continue
        taken.append((start, end))


_LIGHT_VERBS = re.compile(r"\b(light (?:it |them |everything )?up|illuminate)\b", re.IGNORECASE)


def _implied_light(out: _Out, text: str, intent: str) -> None:
    """ "light up the kitchen" / "illuminate the hall": the verb names the lights."""
    if intent not in ("HassTurnOn", "HassTurnOff") or {"domain", "name"} & set(out.slots):
        return
    m = _LIGHT_VERBS.search(text)
    if m is not None:
        out.put("domain", "light", Span(m.start(), m.end(), "domain", 0.5), m.group(0))


def _state_words_as_class(groups: dict[str, list[tuple[Span, str]]]) -> None:
    """A class word tagged as the state ("are any *openings* open?") is the device class."""
    if "device_class" in groups or "domain" in groups:
        return
    states = groups.get("state", [])
    for i, (span, raw) in enumerate(states):
        key = _key(raw)
        if key in _BINARY_BY_WORD and key not in STATE_CLASSES and _state_value(raw, None, None) == key:
            groups["device_class"] = [(Span(span.start, span.end, "device_class", span.confidence), raw)]
            del states[i]
            if not states:
                del groups["state"]
            return


def _overlaps(a: SlotValue, start: int, end: int) -> bool:
    return a.start >= 0 and a.start < end and start < a.end


def _prefer_home_entity(
    out: _Out, text: str, intent: str, groups: dict[str, list[tuple[Span, str]]], home: Home
) -> None:
    """The tagger's name resolves to nothing (or is missing) while the text says an entity's name
    word for word ("what is the Outside Humidity", "is the phone battery low"): that entity is the
    name, with its own domain and class; place and state pieces inside the name are dropped."""
    domains = _INTENT_DOMAINS.get(intent, () if intent != "HassGetState" else None)
    if domains == ():
        return
    name = out.slots.get("name")
    if name is not None and (name.value == "all" or home.resolve_entity(str(name.value), fuzzy=False)):
        return
    best: tuple[int, int, Entity] | None = None
    for start, end, kind, value in home_mentions(text, home):
        if kind != "name":
            continue
        entity = home.resolve_entity(value, fuzzy=False)
        if entity is None or (domains is not None and entity.domain not in domains):
            continue
        if _key(text[start:end]) in spoken_device_words() and any(
            _overlaps(out.slots[k], start, end) for k in ("domain", "device_class") if k in out.slots
        ):
            continue  # "turn on the light": the word was read as a kind of device
        if _media_word_starts(text, start, end) or (
            "media_class" in out.slots and _overlaps(out.slots["media_class"], start, end)
        ):
            continue
        if best is None or end - start > best[1] - best[0]:
            best = (start, end, entity)
    if best is None:
        return
    start, end, entity = best
    for slot in ("area", "floor"):
        if slot in out.slots and _overlaps(out.slots[slot], start, end):
            del out.slots[slot]
    out.slots.pop("state", None)  # read again for this entity's domain and class
    if "state" in groups:
        groups["state"] = [
            (sp, raw) for sp, raw in groups["state"] if not (sp.start < end and start < sp.end)
        ]
    raw = text[start:end]
    span = Span(start, end, "name", name.confidence if name is not None else 0.5)
    chosen = _pick_same_name(home, entity, out, groups)
    for slot in ("name", "domain", "device_class"):
        out.slots.pop(slot, None)
    out.put("name", chosen.name, span, raw)
    out.put("domain", chosen.domain, span, raw)
    if chosen.device_class:
        out.put("device_class", chosen.device_class, span, raw)
    _state(out, groups, intent, text)


_PLAY_LEAD = re.compile(
    r"^\W*(?:(?:hey|ok|okay|please|can you|could you|would you|i want to|i'd like to|let's)\s+)*"
    r"(?:play|put on|listen to|watch|stream|start playing|queue up|throw on|hear)\s+(?:me\s+|some\s+)?",
    re.IGNORECASE,
)
_PLACE_TAIL = re.compile(r"\s+(?:on|in|at|through|via)\s+(?:the\s+|my\s+|our\s+)?", re.IGNORECASE)
_QUERY_STOP = frozenset(
    (
        "play", "playing", "on", "the", "a", "an", "some", "me", "to", "listen", "watch", "hear", "put",
        "stream", "up", "queue", "throw", "find", "for", "search", "look", "start", "want", "like", "please",
        "can", "you", "could", "i", "i'd", "let's", "and", "it", "of",
    )
)  # fmt: skip


def _media_query(out: _Out, text: str, home: Home | None) -> None:
    """What to play, when the tagger missed it or cut it short: the words after the play verb up to
    the player or room ("play the Queen album on the TV"), less a media class word at either end."""
    slot = out.slots.get("search_query")
    if slot is not None and _key(str(slot.value)) in _QUERY_STOP | {""}:
        del out.slots["search_query"]  # "the": a piece of the verb phrase, not a title
        slot = None
    if slot is not None:
        _grow_query_left(out, text, slot)
        _split_media_word(out, text)
        _media_word_beside(out, text)
        return
    lead = _PLAY_LEAD.match(text)
    if lead is None:
        return
    start = lead.end()
    stop = len(text.rstrip(" ?.!,"))
    mentions = {m[0] for m in home_mentions(text, home)} if home is not None else set()
    for tail in _PLACE_TAIL.finditer(text, start):
        if tail.end() in mentions or mentions_here(text[tail.start() :]):
            stop = tail.start()
            break
    words = text[start:stop].split()
    media: tuple[str, str] | None = None
    if words and words[0].lower() == "the" and len(words) > 2 and _lookup(_MEDIA_BY_WORD, words[1]):
        words = words[1:]
    for pick in (2, 1):
        if len(words) > pick and " ".join(words[:pick]).lower() in _MEDIA_BY_WORD:
            media, words = (
                (_MEDIA_BY_WORD[" ".join(words[:pick]).lower()], " ".join(words[:pick])),
                words[pick:],
            )
            break
        if len(words) > pick and " ".join(words[-pick:]).lower() in _MEDIA_BY_WORD:
            media, words = (
                (_MEDIA_BY_WORD[" ".join(words[-pick:]).lower()], " ".join(words[-pick:])),
                words[:-pick],
            )
            if words and words[0].lower() == "the":
                words = words[1:]
            break
    query = " ".join(words).strip(" ?.!,")
    if not query:
        return
    q_start = text.find(query, start)
    q_end = q_start + len(query)
    for name in ("area", "floor", "name", "domain", "device_class", "media_class"):
        value = out.slots.get(name)
        if value is not None and value.start >= 0 and value.start < q_end and q_start < value.end:
            del out.slots[name]
    if home is not None and not {"area", "floor"} & set(out.slots):
        for m_start, m_end, kind, value_ in home_mentions(text, home):
            if kind != "name" and m_start >= q_end:  # the room after the title
                out.put(kind, value_, Span(m_start, m_end, kind, 0.5), text[m_start:m_end])
                break
    span = Span(q_start, q_end, "search_query", 0.5)
    out.put("search_query", query, span, query)
    if media is not None and "media_class" not in out.slots:
        m_start = text.lower().find(media[1].lower(), start)
        out.put("media_class", media[0], Span(m_start, m_start + len(media[1]), "media_class", 0.5), media[1])


def _grow_query_left(out: _Out, text: str, slot: SlotValue) -> None:
    """ "Abbey" + tagged "Road": untagged words just before the query that are not the verb, an
    article or a media class word belong to it."""
    if slot.start < 0:
        return
    taken = [(v.start, v.end) for k, v in out.slots.items() if k != "search_query" and v.start >= 0]
    start = slot.start
    for m in reversed(list(_WORD.finditer(text, 0, slot.start))):
        word = m.group(0)
        if (
            text[m.end() : start].strip()
            or (word.lower() in _QUERY_STOP and word != "The")  # a capital "The" starts a title
            or word.lower() in _MEDIA_BY_WORD
            or any(a < m.end() and m.start() < b for a, b in taken)
        ):
            break
        start = m.start()
    if start != slot.start:
        raw = text[start : slot.end]
        out.slots["search_query"] = SlotValue(raw.strip(" ?.!,"), raw, start, slot.end, slot.confidence)


# ------------------------------------------------------------------------------ cut-short spans
_STATE_PHRASES = frozenset(
    (*STATE_CLASSES, *_ON_WORDS, *_OFF_WORDS, *_OPEN_WORDS, *_CLOSED_WORDS, *_HOME_WORDS, *_AWAY_WORDS)
)
_VALUE_PARSERS: dict[str, Callable[[str], object]] = {
    "brightness": nz.parse_brightness,
    "position": nz.parse_percentage,
    "percentage": nz.parse_percentage,
    "volume_level": nz.parse_percentage,
    "temperature": nz.parse_temperature,
    "color": nz.parse_color,
}


def _understood(text: str, slot: str, home: Home | None) -> bool:
    """Whether a span's words already mean something for its slot."""
    key = _key(text)
    if slot == "state":
        key = _STATE_FILLER.sub("", key) or key
        return (
            key in _STATE_PHRASES
            or key in _BINARY_OFF
            or any(key in c[1] + c[2] for c in BINARY_CLASSES.values())
        )
    if slot == "domain":
        return _lookup(_DOMAIN_BY_WORD, text) is not None or device_class_for(text, "", False) is not None
    if slot == "device_class":
        return device_class_for(text, "HassGetState", False) is not None
    if slot == "media_class":
        return _lookup(_MEDIA_BY_WORD, text) is not None
    if slot == "list_name":
        spoken = re.sub(r"\s+list$", "", text.strip(" ?.!,"), flags=re.IGNORECASE)
        return home is None or home.resolve_list(spoken, fuzzy=False) is not None
    parse = _VALUE_PARSERS.get(slot)
    return parse is None or parse(text) is not None


def _grow_spans(text: str, spans: list[Span], home: Home | None) -> list[Span]:
    """A state, kind, value or list-name span the tagger cut short ("at" of "at home", "single" of
    "every single light", "the" of "the lowest", "trader" of "trader joes") takes up to two following
    untagged words when that makes it mean something; a value that is really a color becomes one."""
    out = sorted(spans, key=lambda sp: sp.start)
    for i, sp in enumerate(out):
        if sp.slot not in ("state", "domain", "device_class", "list_name", "media_class", *_VALUE_PARSERS):
            continue
        raw = text[max(0, sp.start) : sp.end]
        if not raw.strip() or _understood(raw, sp.slot, home):
            continue
        if sp.slot in _VALUE_PARSERS and sp.slot != "color" and nz.parse_color(raw) is not None:
            out[i] = Span(sp.start, sp.end, "color", sp.confidence)  # "set the first floor to red"
            continue
        limit = out[i + 1].start if i + 1 < len(out) else len(text)
        end = sp.end
        for _ in range(2):
            word = _WORD.match(text, end + 1) if text[end : end + 1] == " " else None
            if word is None or word.end() > limit:
                break
            end = word.end()
            if _understood(text[sp.start : end], sp.slot, home):
                out[i] = Span(sp.start, end, sp.slot, sp.confidence)
                break
    return out


_KIND_WORDS = re.compile(
    r"(?<![a-z0-9])(?:"
    + "|".join(re.escape(w) for w in sorted({*_COVER_BY_WORD, *_DOMAIN_BY_WORD}, key=len, reverse=True))
    + r")(?![a-z0-9])"
)
_KIND_INTENTS = frozenset(("HassTurnOn", "HassTurnOff", "HassToggle", "HassSetPosition", "HassStopMoving"))


def _untagged_kind(out: _Out, text: str, intent: str, spans: Sequence[Span]) -> None:
    """ "open the curtains" with nothing tagged: an untagged word for a kind of device is the kind."""
    if intent not in _KIND_INTENTS or {"name", "domain", "device_class"} & set(out.slots):
        return
    taken = [(sp.start, sp.end) for sp in spans]
    lowered = text.lower()
    for m in _KIND_WORDS.finditer(lowered):
        word = m.group(0)
        if any(a < m.end() and m.start() < b for a, b in taken):
            continue
        span = Span(m.start(), m.end(), "domain", 0.5)
        raw = text[m.start() : m.end()]
        if word in ("door", "doors") and re.search(r"\b(?:un)?lock", lowered):
            out.put("domain", "lock", span, raw)  # "lock the kitchen door"
        elif word in _COVER_BY_WORD:
            out.put("domain", "cover", span, raw)
            out.put("device_class", _COVER_BY_WORD[word], span, raw)
        elif word not in ("light", "light up", "music", "heat"):
            out.put("domain", _DOMAIN_BY_WORD[word], span, raw)
        else:
            continue
        return


_ON_OFF = re.compile(r"(?<![a-z0-9])(on|off)(?![a-z0-9])")


def _untagged_on_off(out: _Out, text: str, intent: str, spans: Sequence[Span]) -> None:
    """ "are any switches on at the first floor?": the untagged on/off of a state question."""
    if intent != "HassGetState" or "state" in out.slots:
        return
    domain = out.slots.get("domain")
    if domain is None or domain.value not in ("light", "switch", "fan", "media_player"):
        return
    taken = [(sp.start, sp.end) for sp in spans]
    for m in _ON_OFF.finditer(text.lower()):
        if not any(a < m.end() and m.start() < b for a, b in taken):
            out.put("state", m.group(1), Span(m.start(), m.end(), "state", 0.5), text[m.start() : m.end()])
            return


def _split_media_word(out: _Out, text: str) -> None:
    """ "Beatles artist" read as one query: a media class word at its end is the media class."""
    slot = out.slots["search_query"]
    words = str(slot.value).split()
    if len(words) < 2 or slot.start < 0 or words[-1].lower() not in _MEDIA_BY_WORD:
        return
    if all(w.lower() in _QUERY_STOP | {"my", "our", "your"} for w in words[:-1]):
        return  # "my playlist" is the query itself
    last = words[-1]
    if "media_class" not in out.slots:
        m_start = slot.start + slot.raw.rfind(last)
        out.put(
            "media_class",
            _MEDIA_BY_WORD[last.lower()],
            Span(m_start, m_start + len(last), "media_class", 0.5),
            last,
        )
    words = words[:-1]
    if len(words) > 1 and words[0] == "the":
        words = words[1:]
    query = " ".join(words)
    q_start = text.find(query, slot.start)
    out.slots["search_query"] = SlotValue(query, query, q_start, q_start + len(query), slot.confidence)


def home_supports(text: str, intent: str, home: Home | None) -> bool:
    """The text says, word for word, the name of one of the home's entities that ``intent`` can act
    on, and that name is not a bare device word ("the Sliding Door", "the phone" of a home with a
    Phone; not "a fan"). The recognizer may use this as evidence for a borderline in-scope reading."""
    if home is None:
        return False
    domains = _INTENT_DOMAINS.get(intent)
    if domains is None and intent != "HassGetState":
        return False
    for start, end, kind, value in home_mentions(text, home):
        if kind != "name" or _key(text[start:end]) in spoken_device_words():
            continue
        entity = home.resolve_entity(value, fuzzy=False)
        if entity is not None and (domains is None or entity.domain in domains):
            return True
    return False


_BEFORE_QUERY = re.compile(r"(\w+(?: \w+)?)\s+$")
_AFTER_QUERY = re.compile(r"\s+(\w+(?: \w+)?)")


def _media_word_beside(out: _Out, text: str) -> None:
    """ "put on the album Abbey Road": an untagged media class word right before or after the query."""
    slot = out.slots["search_query"]
    if "media_class" in out.slots or slot.start < 0:
        return
    before = _BEFORE_QUERY.search(text, 0, slot.start)
    after = _AFTER_QUERY.match(text, slot.end)
    for m in (before, after):
        if m is None:
            continue
        words = m.group(1).lower().split()
        for cand in (" ".join(words), words[-1] if m is before else words[0]):
            if cand in _MEDIA_BY_WORD:
                offset = m.group(1).lower().rfind(cand) if m is before else m.group(1).lower().find(cand)
                start = m.start(1) + offset
                span = Span(start, start + len(cand), "media_class", 0.5)
                out.put("media_class", _MEDIA_BY_WORD[cand], span, text[start : start + len(cand)])
                return


_SIBLING_INTENTS: dict[tuple[str, str], str] = {
    ("HassLawnMowerStartMowing", "vacuum"): "HassVacuumStart",
    ("HassVacuumStart", "lawn_mower"): "HassLawnMowerStartMowing",
    ("HassLawnMowerDock", "vacuum"): "HassVacuumReturnToBase",
    ("HassVacuumReturnToBase", "lawn_mower"): "HassLawnMowerDock",
    ("HassClimateGetTemperature", "sensor"): "HassGetState",
}


def refine_intent(intent: str, slots: dict[str, SlotValue], home: Home | None) -> str:
    """The sibling intent when the resolved entity cannot do what was recognized: "start Robbie" read
    as mowing while Robbie is a vacuum -> HassVacuumStart; the temperature of a named *sensor* is a
    state question. Only entities that resolve in the home count."""
    name = slots.get("name")
    if home is None or name is None:
        return intent
    entity = home.resolve_entity(str(name.value), fuzzy=False)
    if entity is None:
        return intent
    return _SIBLING_INTENTS.get((intent, entity.domain), intent)


def _tv_show(out: _Out, text: str) -> None:
    """ "tv" of "tv show" read as the player: it is part of the media class."""
    name = out.slots.get("name")
    if name is None or name.start < 0:
        return
    media = out.slots.get("media_class")
    if not (
        _media_word_starts(text, name.start, name.end)
        or (media is not None and _overlaps(media, name.start, name.end))
    ):
        return
    for slot in ("name", "domain", "device_class"):
        if slot in out.slots and out.slots[slot].start == name.start:
            del out.slots[slot]
    nxt = _MEDIA_AFTER.match(text, name.end)
    if nxt is not None:
        phrase = f"{text[name.start : name.end]} {nxt[1]}"
        span = Span(name.start, nxt.end(1), "media_class", name.confidence)
        out.put("media_class", _MEDIA_BY_WORD.get(phrase.lower(), "tv_show"), span, phrase, overwrite=True)
