"""The spoken-word tables (the single source for the training-data generator too) and the
lookups over them: device words -> domain / device_class, state words -> state values."""

from __future__ import annotations

import functools
import re

from edge_agent.nlu.home import canonical_key
from edge_agent.nlu.schema import MEDIA_INTENTS

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
        ("power sensor", "outage sensor"),
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

# state words that name a binary-sensor class by themselves ("is anything offline?")
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
    "pressure": (("pressure",), ("Pressure", "Pressure Gauge", "Water Pressure")),
    "atmospheric_pressure": (("air pressure", "barometric pressure"), ("Barometer", "Weather Station")),
    "power": (("power", "power usage", "power draw", "wattage"), ("Power", "Power Meter", "Consumption")),
    "energy": (("energy", "energy usage", "energy production"), ("Energy", "Energy Meter", "Production")),
    "battery": (("battery", "battery level", "charge"), ("Battery", "Battery Level")),
    "carbon_dioxide": (("co2", "carbon dioxide", "co2 level"), ("CO2 Sensor", "Air Monitor")),
    "illuminance": (("illuminance", "light level", "brightness level"), ("Lux Sensor", "Illuminance")),
    "voltage": (("voltage",), ("Voltage", "Line Voltage")),
    "current": (("current", "amperage", "current draw"), ("Current", "Amp Meter")),
    "speed": (("speed",), ("Speed", "Speedometer")),
    "wind_speed": (("wind speed", "wind"), ("Wind Sensor", "Anemometer")),
    "precipitation": (("rainfall", "precipitation", "rain"), ("Rain Gauge", "Rainfall")),
    "pm25": (("pm2.5", "pm 2.5", "fine dust"), ("Particulate Sensor", "Dust Sensor")),
    "aqi": (("air quality", "air quality index", "aqi"), ("Air Quality", "Air Quality Sensor")),
    "sound_pressure": (("noise level", "sound level", "decibels"), ("Noise Meter", "Sound Meter")),
    "distance": (("distance", "mileage", "range"), ("Distance Sensor", "Odometer", "Trip Meter")),
    "weight": (("weight",), ("Scale", "Weight")),
    "gas": (("gas usage", "gas consumption"), ("Gas Meter", "Gas Consumption")),
    "water": (("water usage", "water consumption"), ("Water Meter", "Water Consumption")),
    "signal_strength": (("signal strength", "signal", "wifi signal"), ("Signal", "Router Signal")),
    "data_rate": (("download speed", "upload speed", "data rate", "bandwidth"), ("Internet Speed", "Router")),
    "data_size": (("size", "file size", "disk usage"), ("Disk", "Storage", "Backup Size")),
    "frequency": (("frequency",), ("Line Frequency", "Frequency")),
    "moisture": (("moisture", "soil moisture"), ("Soil Sensor", "Plant Sensor")),
    "monetary": (("price", "cost", "electricity price"), ("Electricity Price", "Energy Cost")),
    "duration": (("duration", "remaining time", "run time"), ("Cycle Time", "Time Remaining")),
    "volatile_organic_compounds": (("voc", "voc level", "organic compounds"), ("VOC Sensor",)),
    "ozone": (("ozone", "ozone level"), ("Ozone Sensor",)),
    "irradiance": (("irradiance", "solar irradiance"), ("Pyranometer", "Solar Sensor")),
    "apparent_power": (("apparent power", "volt amperes"), ("Apparent Power", "Load")),
    "reactive_power": (("reactive power",), ("Reactive Power", "Inverter")),
    "power_factor": (("power factor",), ("Power Factor", "Grid Meter")),
    "energy_storage": (
        ("stored energy", "energy stored", "energy storage"),
        ("Home Battery", "Battery Pack"),
    ),
    "carbon_monoxide": (("carbon monoxide level", "co level"), ("CO Monitor",)),
    "nitrogen_dioxide": (("nitrogen dioxide", "no2"), ("NO2 Sensor",)),
    "nitrogen_monoxide": (("nitrogen monoxide", "nitric oxide"), ("NO Sensor",)),
    "nitrous_oxide": (("nitrous oxide", "n2o"), ("N2O Sensor",)),
    "sulphur_dioxide": (("sulphur dioxide", "sulfur dioxide", "so2"), ("SO2 Sensor",)),
    "pm1": (("pm1", "pm 1"), ("PM1 Sensor",)),
    "pm10": (("pm10", "pm 10", "coarse dust"), ("PM10 Sensor",)),
    "precipitation_intensity": (("rain rate", "rainfall rate", "precipitation intensity"), ("Rain Rate",)),
    "volume": (("volume of water", "tank volume", "fill volume"), ("Tank", "Water Tank")),
    "volume_storage": (("stored volume", "volume stored", "tank level"), ("Storage Tank", "Cistern")),
    "date": (("date",), ("Next Holiday", "Bin Day", "Next Service")),
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

# intents that take the satellite's area when none is spoken
CONTEXT_INTENTS = frozenset(MEDIA_INTENTS) | frozenset(
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
TIMER_INTENTS = frozenset(
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
    words = set(DOMAIN_BY_WORD) | set(COVER_BY_WORD) | set(BINARY_BY_WORD) | set(_SENSOR_BY_WORD)
    return frozenset(words)


def mentions_here(text: str) -> bool:
    """The request is about the satellite's own room ("in here", "this room")."""
    return _HERE.search(text) is not None


def is_global_request(text: str) -> bool:
    """The request is about the whole home or all devices ("everywhere", "all the lights")."""
    return _GLOBAL.search(text) is not None and not mentions_here(text)


def _table(pairs: dict[str, tuple[str, ...]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for value, words in pairs.items():
        for word in words:
            out.setdefault(word, value)
    return out


# verbs that imply lights ("illuminate the hall") count as device words too
DOMAIN_BY_WORD = {**_table(DOMAIN_WORDS), "illuminate": "light", "light up": "light", "light": "light"}
COVER_BY_WORD = _table(COVER_CLASS_WORDS)
BINARY_BY_WORD = _table({k: v[0] for k, v in BINARY_CLASSES.items()})
_SENSOR_BY_WORD = _table({k: v[0] for k, v in SENSOR_CLASSES.items()})
MEDIA_BY_WORD = _table(MEDIA_CLASSES)
_LEADING = re.compile(r"^(?:(?:all|the|of|my|our|every|each|any|some|these|those)\s+)+")


_SPACES = re.compile(r"\s+")


@functools.lru_cache(maxsize=4096)
def word_key(text: str) -> str:
    return _LEADING.sub("", _SPACES.sub(" ", text.lower().strip(" ?.!,"))).strip()


def lookup_word(table: dict[str, str], text: str) -> str | None:
    key = word_key(text)
    for candidate in (key, key.rstrip("s"), key + "s", key.split(" ")[-1], key.split(" ")[-1].rstrip("s")):
        if candidate in table:
            return table[candidate]
    return None


def device_class_for(word: str, intent: str, has_state: bool) -> tuple[str, str] | None:
    """(domain, device_class) for a tagged device-class word; a span that ran on ("batteries low")
    is read by its longest leading words that name a class."""
    words = word_key(word).split(" ")
    for n in range(len(words), 0, -1):
        found = _device_class_exact(" ".join(words[:n]), intent, has_state)
        if found is not None:
            return found
    return None


def _device_class_exact(key: str, intent: str, has_state: bool) -> tuple[str, str] | None:
    if intent == "HassGetState":
        if has_state and key in BINARY_BY_WORD:
            return "binary_sensor", BINARY_BY_WORD[key]
        if key in _SENSOR_BY_WORD and not has_state:
            return "sensor", _SENSOR_BY_WORD[key]
        cover = lookup_word(COVER_BY_WORD, key)
        if cover is not None:
            return "cover", cover
        binary = lookup_word(BINARY_BY_WORD, key)
        if binary is not None:
            return "binary_sensor", binary
        sensor = lookup_word(_SENSOR_BY_WORD, key)
        return ("sensor", sensor) if sensor is not None else None
    cover = lookup_word(COVER_BY_WORD, key)
    if cover is not None:
        return "cover", cover
    binary = lookup_word(BINARY_BY_WORD, key)
    if binary is not None:
        return "binary_sensor", binary
    sensor = lookup_word(_SENSOR_BY_WORD, key)
    return ("sensor", sensor) if sensor is not None else None


_ON_WORDS = ("on", "turned on", "switched on", "lit", "running", "spinning", "active", "powered on")
_OFF_WORDS = ("off", "turned off", "switched off", "not running", "powered off")
_OPEN_WORDS = ("open", "opened", "up", "raised")
_CLOSED_WORDS = ("closed", "shut", "down", "lowered", "drawn")
BINARY_OFF = (
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
HOME_WORDS = ("home", "at home", "here", "present", "in")
AWAY_WORDS = ("away", "out", "not home", "gone", "not here")


STATE_FILLER = re.compile(r"^(?:(?:still|currently|now|already|left|all)\s+)+")


def state_value(word: str, domain: str | None, device_class: str | None) -> str:
    key = word_key(word)
    key = STATE_FILLER.sub("", key) or key  # "still on" -> "on"
    if domain == "binary_sensor":
        cls = BINARY_CLASSES.get(device_class or "")
        if cls is not None:
            if key in cls[1]:
                return "on"
            if key in cls[2]:
                return "off"
        if key in _OFF_WORDS or key in _CLOSED_WORDS or key in BINARY_OFF or key.startswith(("not ", "no ")):
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
    if domain == "person" or (domain is None and key in HOME_WORDS + AWAY_WORDS):
        return "not_home" if key in AWAY_WORDS else "home"
    if key in _OFF_WORDS:
        return "off"
    if key in _ON_WORDS:
        return "on"
    return key


WORD = re.compile(r"[\w'.-]+")


def class_word(raw: str) -> tuple[str, str] | None:
    """The whole of ``raw`` is a binary-sensor, sensor or cover class phrase."""
    key = word_key(raw)
    for domain, table in (
        ("binary_sensor", BINARY_BY_WORD),
        ("sensor", _SENSOR_BY_WORD),
        ("cover", COVER_BY_WORD),
    ):
        if key in table:
            return domain, table[key]
    return None


def canonical(text: str) -> str:
    """Exposed for tests and the bench: the comparison key used for names."""
    return canonical_key(text)


def word_kind(raw: str, default: str) -> str:
    key = word_key(raw)
    if key in DOMAIN_BY_WORD:
        return "domain"
    if key in COVER_BY_WORD or key in BINARY_BY_WORD or key in _SENSOR_BY_WORD:
        return "device_class"
    if key in STATE_PHRASES:
        return "state"
    return default


INTENT_DOMAINS: dict[str, tuple[str, ...]] = {
    **{i: ("media_player",) for i in MEDIA_INTENTS},
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


STATE_PHRASES = frozenset(
    (*STATE_CLASSES, *_ON_WORDS, *_OFF_WORDS, *_OPEN_WORDS, *_CLOSED_WORDS, *HOME_WORDS, *AWAY_WORDS)
)
