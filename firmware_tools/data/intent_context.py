"""What every intent generator draws on: random homes, the per-example state ``Gen`` (rng, home,
placeholder fills) and spoken numbers.

Its own module so that ``intents`` (assembly), ``intent_makers`` (one generator per intent) and
``intent_oos`` (out of scope) all import it, and none of them the others in a circle.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import TypeVar

from edge_agent.nlu.home import Entity, Home
from edge_agent.nlu.slots import spoken_device_words
from firmware_tools.data import intent_lexicon as lx
from firmware_tools.data.intent_grammar import Fill, expand

__all__ = [
    "GLOBAL",
    "HERE",
    "Gen",
    "invented_name",
    "number_words",
    "pct_text",
    "pct_value",
    "sample_home",
    "spoken_number",
]

_T = TypeVar("_T")


# ------------------------------------------------------------------------------ numbers
_ONES = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
]  # fmt: skip
_TENS = ["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


def number_words(n: int) -> str:
    """0..999 in English words ("twenty two", "one hundred five")."""
    if n < 20:
        return _ONES[n]
    if n < 100:
        tens, ones = divmod(n, 10)
        return _TENS[tens] + ("" if ones == 0 else (" " if True else "-") + _ONES[ones])
    hundreds, rest = divmod(n, 100)
    head = _ONES[hundreds] + " hundred"
    return head if rest == 0 else f"{head} {number_words(rest)}"


def spoken_number(rng: random.Random, n: int, words_p: float = 0.3) -> str:
    if rng.random() < words_p:
        w = number_words(n)
        return w.replace(" ", "-") if rng.random() < 0.1 and " " in w and n < 100 else w
    return str(n)


def pct_text(rng: random.Random, n: int, bare_ok: bool = True) -> str:
    r = rng.random()
    if r < 0.35:
        return f"{n}%"
    if r < 0.6:
        return f"{n} percent"
    if r < 0.8:
        return f"{number_words(n)} percent"
    if bare_ok and r < 0.92:
        return str(n)
    if bare_ok:
        return number_words(n)
    return f"{n} percent"


def pct_value(rng: random.Random) -> int:
    r = rng.random()
    if r < 0.5:
        return rng.choice((10, 20, 25, 30, 40, 50, 60, 70, 75, 80, 90, 100))
    return rng.randint(1, 100)


# ------------------------------------------------------------------------------ homes
def invented_name(rng: random.Random) -> str:
    word = "".join(rng.choice(lx.SYLLABLES) for _ in range(rng.choice((2, 2, 3))))
    return word.capitalize()


def _entity_name(rng: random.Random, noun: str, areas: list[str]) -> tuple[str, str | None]:
    r = rng.random()
    area = rng.choice(areas) if areas and rng.random() < 0.7 else None
    if r < 0.3 and areas:
        area = rng.choice(areas)
        return f"{area} {noun}", area
    if r < 0.55:
        return f"{rng.choice(lx.MODIFIERS)} {noun}", area
    if r < 0.68:
        return f"{invented_name(rng)} {noun}", area
    if r < 0.78:
        return f"{rng.choice(lx.PEOPLE)}'s {noun}", area
    if r < 0.85:
        return f"{rng.choice(lx.MODIFIERS)} {rng.choice(lx.MODIFIERS)} {noun}", area
    if r < 0.93:
        return f"{noun} {rng.choice(lx.SUFFIXES)}", area
    return invented_name(rng), area


_SCENES = (
    "Movie Night",
    "Good Morning",
    "Good Night",
    "Date Night",
    "Dinner Time",
    "Reading Mode",
    "Romantic",
    "Focus Mode",
    "Bedtime",
    "Wake Up",
    "Relax",
    "Away Mode",
    "Welcome Home",
    "Game Night",
    "Cleaning Mode",
    "Cozy Evening",
    "Sunrise",
    "Night Light",
    "Bright Mode",
    "Energy Saver",
    "Guest Mode",
    "Holiday Lights",
    "Lazy Sunday",
    "Morning Routine",
)


_DEVICE_WORDS = spoken_device_words()  # an entity called "Lights" would be ambiguous by design
_ESSENTIAL_DOMAINS = (
    "light",
    "switch",
    "fan",
    "cover",
    "lock",
    "climate",
    "media_player",
    "vacuum",
    "lawn_mower",
    "valve",
)


def sample_home(seed: int) -> Home:
    """A random home: areas, floors, lists and 20-60 entities over all supported domains."""
    rng = random.Random(f"home-{seed}")
    areas = rng.sample(lx.AREAS, rng.randint(3, 12))
    for _ in range(rng.choice((0, 0, 1, 2))):
        areas.append(
            rng.choice((f"{invented_name(rng)} Room", f"{rng.choice(lx.PEOPLE)}'s Room", invented_name(rng)))
        )
    floors = rng.sample(lx.FLOORS, rng.randint(1, 4)) if rng.random() < 0.7 else []
    entities: list[Entity] = []
    names: set[str] = set()

    def add(name: str, domain: str, area: str | None, dc: str | None = None) -> None:
        if name in names or name.lower() in _DEVICE_WORDS:
            return
        names.add(name)
        aliases: tuple[str, ...] = ()
        if rng.random() < 0.1:
            aliases = (f"{rng.choice(lx.MODIFIERS)} {name.split()[-1]}",)
        entities.append(Entity(name=name, domain=domain, area=area, aliases=aliases, device_class=dc))

    for _ in range(rng.randint(14, 40)):
        noun, domain, dc = rng.choice(lx.DEVICE_NOUNS)
        name, area = _entity_name(rng, noun, areas)
        add(name, domain, area, dc)
    for domain in _ESSENTIAL_DOMAINS:  # every intent needs at least one target of its domain
        if not any(e.domain == domain for e in entities):
            noun = rng.choice([n for n, d, _ in lx.DEVICE_NOUNS if d == domain])
            dc = next(c for n, d, c in lx.DEVICE_NOUNS if n == noun and d == domain)
            name, area = _entity_name(rng, noun, areas)
            add(name, domain, area, dc)
    for _ in range(rng.randint(2, 8)):
        dc = rng.choice(list(lx.BINARY_CLASSES))
        base = rng.choice(("Sensor", "Detector", rng.choice(lx.BINARY_CLASSES[dc][0]).title()))
        name, area = _entity_name(rng, base, areas)
        add(name, "binary_sensor", area, dc)
    for device in rng.sample(lx.SENSOR_DEVICES, rng.randint(1, 4)):  # one name, several classes
        area = rng.choice([None, *areas])
        for dc in rng.sample(list(lx.BINARY_CLASSES), rng.randint(1, 4)):
            names.discard(device)
            add(device, "binary_sensor", area, dc)
    for _ in range(rng.randint(2, 8)):
        dc = rng.choice(list(lx.SENSOR_CLASSES))
        name, area = _entity_name(rng, rng.choice(lx.SENSOR_CLASSES[dc][1]), areas)
        add(name, "sensor", area, dc)
    for scene in rng.sample(_SCENES, rng.randint(1, 4)):
        add(scene, rng.choice(("scene", "scene", "script")), rng.choice([None, *areas]))
    if rng.random() < 0.3:
        add(f"{invented_name(rng)} Mode", "scene", None)
    for person in rng.sample(lx.PEOPLE, rng.randint(0, 3)):
        add(person, "person", None)
    lists = rng.sample(lx.LIST_NAMES, rng.randint(1, 5))
    if rng.random() < 0.2:
        lists.append(invented_name(rng))
    return Home(areas=areas, entities=entities, lists=lists, floors=floors)


# ------------------------------------------------------------------------------ context
GLOBAL = "_global"
HERE = "_here"


class Gen:
    """Per-example generation state: rng, home, and placeholder fills (memoized)."""

    def __init__(self, rng: random.Random, home: Home) -> None:
        self.rng = rng
        self.home = home
        self.lower = rng.random() < 0.55
        self._cache: dict[str, Fill] = {}
        self.makers: dict[str, Callable[[], Fill]] = {}

    # placeholder access for expand()
    def __call__(self, kind: str) -> Fill:
        if kind not in self._cache:
            if kind not in self.makers:
                raise KeyError(f"no filler for {{{kind}}}")
            self._cache[kind] = self.makers[kind]()
        return self._cache[kind]

    def choice(self, seq: Sequence[_T]) -> _T:
        return seq[self.rng.randrange(len(seq))]

    def surface(self, canonical: str) -> str:
        if self.lower or self.rng.random() < 0.3:
            return canonical.lower()
        return canonical

    def sub(self, template: str, **makers: Callable[[], Fill]) -> Fill:
        """Expand a sub-template into one Fill (its pieces keep their own tags)."""
        saved_makers = dict(self.makers)
        saved_cache = {k: self._cache.pop(k) for k in makers if k in self._cache}
        self.makers.update(makers)
        slots: dict[str, object] = {}
        pieces = expand(template, self.rng, self, slots)
        for k in makers:
            self._cache.pop(k, None)
        self._cache.update(saved_cache)
        self.makers = saved_makers
        return Fill(pieces, slots)

    # ---- basic fills ----------------------------------------------------------------
    def area(self) -> Fill:
        area = self.choice(self.home.areas)
        return Fill([(self.surface(area), "area")], {"area": area})

    def floor(self) -> Fill:
        floors = self.home.floors or list(lx.FLOORS[:3])
        floor = self.choice(floors)
        return Fill([(self.surface(floor), "floor")], {"floor": floor})

    def entities(self, *domains: str) -> list[Entity]:
        return [e for e in self.home.entities if e.domain in domains]

    def entity_fill(self, entity: Entity, with_domain: bool = True) -> Fill:
        spoken = entity.name
        if entity.aliases and self.rng.random() < 0.4:
            spoken = self.choice(list(entity.aliases))
        slots: dict[str, object] = {"name": entity.name}
        if with_domain:
            slots["domain"] = entity.domain
            if entity.device_class:
                slots["device_class"] = entity.device_class
        return Fill([(self.surface(spoken), "name")], slots)

    def named(self, *domains: str) -> Fill:
        ents = self.entities(*domains)
        if not ents:  # not in this home: the name is reported raw, nothing implied
            name = invented_name(self.rng)
            return Fill([(self.surface(name), "name")], {"name": name})
        return self.entity_fill(self.rng.choice(ents))

    def word(self, text: str, slot: str, **slots: object) -> Fill:
        return Fill([(text, slot)], dict(slots))
