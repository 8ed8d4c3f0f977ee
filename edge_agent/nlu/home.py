"""The user's home: areas, floors, entities and lists, and resolution of spoken names.

The home file is YAML::

    areas: [Kitchen, Living Room]
    floors: [Upstairs]                      # optional
    entities:
      - {name: Ceiling Light, domain: light, area: Kitchen, aliases: [big light]}
      - {name: Tablet, domain: binary_sensor, device_class: battery}  # device_class optional
    lists: [Groceries, Housework]            # optional

Resolution (``resolve_entity``, ``resolve_area``, ``resolve_floor``, ``resolve_list``) tries an
exact match, then a case- and punctuation-insensitive match, then a fuzzy match
(``difflib`` ratio >= ``FUZZY_THRESHOLD``). It returns ``None`` when nothing is close enough;
the caller then reports the spoken text raw.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from edge_agent.errors import EdgeAgentError

__all__ = ["DOMAINS", "FUZZY_THRESHOLD", "Entity", "Home", "HomeFileError", "canonical_key"]

FUZZY_THRESHOLD = 0.82
# Home Assistant entity domains a home file may name: those the intents address (tests/test_home.py
# checks that every domain the slot code names is here) and the other common HA entity domains, so
# that a home exported from HA loads; a domain outside this list (a typo: "vaccum") is refused
DOMAINS: tuple[str, ...] = (
    "alarm_control_panel",
    "binary_sensor",
    "button",
    "calendar",
    "camera",
    "climate",
    "counter",
    "cover",
    "device_tracker",
    "fan",
    "humidifier",
    "input_boolean",
    "input_button",
    "input_number",
    "input_select",
    "input_text",
    "lawn_mower",
    "light",
    "lock",
    "media_player",
    "number",
    "person",
    "remote",
    "scene",
    "script",
    "select",
    "sensor",
    "siren",
    "switch",
    "timer",
    "todo",
    "update",
    "vacuum",
    "valve",
    "water_heater",
    "weather",
    "zone",
)
_ARTICLES = re.compile(r"^(?:the|my|our|a|an)\s+")
_NON_WORD = re.compile(r"[^a-z0-9]+")


class HomeFileError(EdgeAgentError):
    """The home file is missing, is not YAML, or does not have the documented shape."""


@functools.lru_cache(maxsize=4096)
def canonical_key(text: str) -> str:
    """Lower-case, drop leading articles and possessive 's, collapse punctuation to spaces.
    Memoized: the home's names and the words people say repeat from one utterance to the next."""
    key = text.strip().lower().replace("'s ", "s ").replace("\u2019s ", "s ")
    if key.endswith("'s") or key.endswith("\u2019s"):
        key = key[:-2] + "s"
    key = _NON_WORD.sub(" ", key).strip()
    while True:
        stripped = _ARTICLES.sub("", key)
        if stripped == key:
            return key
        key = stripped


@dataclass(frozen=True)
class Entity:
    name: str
    domain: str
    area: str | None = None
    aliases: tuple[str, ...] = ()
    device_class: str | None = None

    def spoken_names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)


class _Names:
    """canonical_key -> value, plus what ``_resolve`` looks up on every call, built once: the
    set of values and the keys by first character (it was a scan of every name, twice)."""

    __slots__ = ("by_initial", "keys", "values")

    def __init__(self, keys: dict[str, str]) -> None:
        self.keys = keys
        self.values = frozenset(keys.values())
        self.by_initial: dict[str, list[str]] = {}
        for key in keys:
            self.by_initial.setdefault(key[:1], []).append(key)


def _resolve(text: str, names: _Names, fuzzy: bool = True, plural: bool = True) -> str | None:
    """Map ``text`` to a canonical value: the value itself, its canonical key, the key's
    singular/plural, or (``fuzzy``) a close misspelling of the key."""
    if not text.strip():
        return None
    if text in names.values:
        return text
    candidates = names.keys
    key = canonical_key(text)
    if key in candidates:
        return candidates[key]
    singular = key[:-1] if key.endswith("s") else key + "s"
    if plural and singular in candidates:
        return candidates[singular]
    if not fuzzy:
        return None
    # a misheard name keeps its first letter and roughly its length; partial names do not count
    slack = max(2, len(key) // 6)
    pool = [c for c in names.by_initial.get(key[:1], ()) if abs(len(c) - len(key)) <= slack]
    best = difflib.get_close_matches(key, pool, n=1, cutoff=FUZZY_THRESHOLD)
    return candidates[best[0]] if best else None


def _key_map(values: Iterable[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        out.setdefault(canonical_key(value), value)
    return out


@dataclass
class Home:
    areas: list[str] = field(default_factory=list)
    entities: list[Entity] = field(default_factory=list)
    lists: list[str] = field(default_factory=list)
    floors: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._areas = _Names(_key_map(self.areas))
        self._floors = _Names(_key_map(self.floors))
        self._lists = _Names(_key_map(self.lists))
        entity_keys: dict[str, str] = {}
        self._by_name: dict[str, Entity] = {}
        for entity in self.entities:
            self._by_name.setdefault(entity.name, entity)
            for spoken in entity.spoken_names():
                entity_keys.setdefault(canonical_key(spoken), entity.name)
        self._entities = _Names(entity_keys)

    # -- loading -----------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | Path) -> Home:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise HomeFileError(f"cannot read home file {path}: {exc}") from exc
        except UnicodeDecodeError as exc:
            raise HomeFileError(f"home file {path} is not UTF-8: {exc}") from exc
        data = _parse_yaml(text, path)
        return cls.from_dict(data if data is not None else {}, source=str(path))

    @classmethod
    def from_dict(cls, data: Any, source: str = "home") -> Home:
        if not isinstance(data, dict):
            raise HomeFileError(f"{source}: top level must be a mapping with areas/entities/lists")
        unknown = set(data) - {"areas", "entities", "lists", "floors"}
        if unknown:
            raise HomeFileError(f"{source}: unknown keys {sorted(unknown)}")
        return cls(
            areas=_str_list(data.get("areas"), f"{source}: areas"),
            entities=[
                _entity(e, f"{source}: entities[{i}]") for i, e in enumerate(data.get("entities") or [])
            ],
            lists=_str_list(data.get("lists"), f"{source}: lists"),
            floors=_str_list(data.get("floors"), f"{source}: floors"),
        )

    def to_dict(self) -> dict[str, Any]:
        entities: list[dict[str, Any]] = []
        for e in self.entities:
            item: dict[str, Any] = {"name": e.name, "domain": e.domain}
            if e.area:
                item["area"] = e.area
            if e.aliases:
                item["aliases"] = list(e.aliases)
            if e.device_class:
                item["device_class"] = e.device_class
            entities.append(item)
        return {
            "areas": list(self.areas),
            "floors": list(self.floors),
            "entities": entities,
            "lists": list(self.lists),
        }

    # -- resolution --------------------------------------------------------------------
    def resolve_entity(self, text: str, fuzzy: bool = True, plural: bool = True) -> Entity | None:
        """The entity called ``text``; ``plural`` lets "lamps" match "Lamp", ``fuzzy`` allows misspellings."""
        name = _resolve(text, self._entities, fuzzy, plural)
        return self._by_name[name] if name is not None else None

    def resolve_name(self, text: str) -> str | None:
        entity = self.resolve_entity(text)
        return entity.name if entity is not None else None

    def resolve_area(self, text: str, fuzzy: bool = True) -> str | None:
        return _resolve(text, self._areas, fuzzy)

    def resolve_floor(self, text: str, fuzzy: bool = True) -> str | None:
        return _resolve(text, self._floors, fuzzy)

    def resolve_list(self, text: str, fuzzy: bool = True) -> str | None:
        return _resolve(text, self._lists, fuzzy)

    def entities_named(self, name: str) -> list[Entity]:
        return [e for e in self.entities if e.name == name]


def _parse_yaml(text: str, path: str | Path) -> Any:
    """Safe YAML with libyaml's parser when PyYAML has it (a home of 300 entities: ~4 ms instead
    of ~75 ms of start-up); a document it refuses is parsed again by the pure-Python loader,
    whose error message quotes the offending line. Imported here: only a home file needs yaml."""
    import yaml

    try:
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        pass
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise HomeFileError(f"home file {path} is not valid YAML: {exc}") from exc


def _str_list(value: Any, where: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise HomeFileError(f"{where} must be a list of strings")
    out: list[str] = []
    for item in value:
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            out.append(item["name"])  # tolerate [{name: ...}] as written by HA exports
        elif isinstance(item, str) and item.strip():
            out.append(item)
        else:
            raise HomeFileError(f"{where}: {item!r} is not a non-empty string")
    return out


def _entity(value: Any, where: str) -> Entity:
    if not isinstance(value, dict):
        raise HomeFileError(f"{where} must be a mapping with name and domain")
    unknown = set(value) - {"name", "domain", "area", "aliases", "device_class"}
    if unknown:
        raise HomeFileError(f"{where}: unknown keys {sorted(unknown)}")
    name, domain = value.get("name"), value.get("domain")
    if not isinstance(name, str) or not name.strip():
        raise HomeFileError(f"{where}: name must be a non-empty string")
    if not isinstance(domain, str) or not domain.strip():
        raise HomeFileError(f"{where}: domain must be a non-empty string")
    if domain not in DOMAINS:
        close = difflib.get_close_matches(domain, DOMAINS, n=1)
        guess = f"did you mean {close[0]!r}? " if close else ""
        raise HomeFileError(f"{where}: unknown domain {domain!r}; {guess}use one of {', '.join(DOMAINS)}")
    area = value.get("area")
    if area is not None and not isinstance(area, str):
        raise HomeFileError(f"{where}: area must be a string")
    device_class = value.get("device_class")
    if device_class is not None and not isinstance(device_class, str):
        raise HomeFileError(f"{where}: device_class must be a string")
    aliases = _str_list(value.get("aliases"), f"{where}: aliases")
    return Entity(name=name, domain=domain, area=area, aliases=tuple(aliases), device_class=device_class)
