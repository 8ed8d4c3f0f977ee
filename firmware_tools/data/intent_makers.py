"""One generator per in-scope intent: templates + slot fills -> tagged pieces and expected slots.

Templates use the ``intent_grammar`` syntax. Every template here was written for this
project; expected slot values follow Home Assistant's slot semantics (docs/intents.md).
"""

from __future__ import annotations

from collections.abc import Callable

from edge_agent.nlu.home import Entity
from edge_agent.nlu.slots import BINARY_CLASSES, STATE_CLASSES, device_class_for
from firmware_tools.data import intent_lexicon as lx
from firmware_tools.data.intent_context import (
    GLOBAL,
    HERE,
    Gen,
    invented_name,
    number_words,
    pct_text,
    pct_value,
    spoken_number,
)
from firmware_tools.data.intent_grammar import Fill, Piece, expand

__all__ = ["MAKERS", "WEIGHTS"]

Result = tuple["str | None", list[Piece], dict[str, object]]


def _run(g: Gen, intent: str, templates: tuple[str, ...], **makers: Callable[[], Fill]) -> Result:
    g.makers.update(makers)
    slots: dict[str, object] = {}
    pieces = expand(g.choice(templates), g.rng, g, slots)
    return intent, pieces, slots


def _dom(g: Gen, domain: str) -> Callable[[], Fill]:
    return lambda: g.word(g.choice(lx.DOMAIN_WORDS[domain]), "domain", domain=domain)


def _cover_dc(g: Gen, dc: str | None = None) -> Callable[[], Fill]:
    def make() -> Fill:
        cls = dc or g.choice(
            ["blind", "blind", "curtain", "curtain", "shade", "shutter", "garage", "window", "gate", "awning"]
        )
        return g.word(g.choice(lx.COVER_CLASS_WORDS[cls]), "device_class", domain="cover", device_class=cls)

    return make


def _marker(key: str) -> Callable[[], Fill]:
    return lambda: Fill([], {key: True})


# ------------------------------------------------------------------------------ targets
def _group_target(g: Gen, dom: Callable[[], Fill], area_alone: bool = False) -> Fill:
    """Area/floor/here/everywhere + a domain or device-class word."""
    r = g.rng.random()
    if r < 0.45:
        t: tuple[str, ...] = (
            "[the] {a} {d}",
            "<the> {d} in [the] {a}",
            "<all> {d} in [the] {a}",
            "<all> [the] {a} {d}",
            "[the] {d} (in|for|of) [the] {a}",
            "<the> {a} {d}",
            "{d} in {a}",
            "<all> the {d} in the {a}",
        )
        if area_alone:
            t = (
                *t,
                "[the] {a}",
                "[the] {a}",
                "[the] {a}",
                "the {a}",
                "{a}",
                "everything in the {a}",
                "the {f}",
            )
        return g.sub(g.choice(t), a=g.area, d=dom, f=g.floor)
    if r < 0.6:
        return g.sub(
            g.choice(
                (
                    "[the] {f} {d}",
                    "<all> {d} (on|in) the {f}",
                    "<all> [the] {f} {d}",
                    "[the] {d} on [the] {f}",
                    "every {d} on the {f}",
                )
            ),
            f=g.floor,
            d=dom,
        )
    if r < 0.8:
        return g.sub(
            g.choice(("[the] {d} <here>", "<the> {d} <here>", "<all> {d} <here>", "[the] {d} {h}")),
            d=dom,
            h=lambda: Fill([], {HERE: True}),
        )
    if r < 0.9:
        return g.sub(
            g.choice(
                (
                    "<all> [the] {d} <everywhere> {x}",
                    "every {d} [in the house] {x}",
                    "<all> {d} {x}",
                    "[the] whole house {d} {x}",
                    "all [the] {d} in the house {x}",
                )
            ),
            d=dom,
            x=_marker(GLOBAL),
        )
    return g.sub(g.choice(("[the] {d}", "<the> {d}", "the {d}")), d=dom)


def _light_target(g: Gen, area_alone: bool = False) -> Fill:
    if g.rng.random() < 0.3:
        return g.sub("[the] {n}", n=lambda: g.named("light"))
    return _group_target(g, _dom(g, "light"), area_alone)


# ------------------------------------------------------------------------------ on / off
_ON = (
    "(turn|switch|power|put|flip) on {t}",
    "(turn|switch|power|flip) {t} on",
    "{t} on",
    "activate {t}",
    "enable {t}",
    "start {t}",
    "{t} on please",
    "get {t} on",
    "<pls> turn on {t}",
    "<pls> switch on {t}",
    "<pls> turn {t} on",
    "<pls> switch {t} on",
    "<pls> activate {t}",
    "i want {t} on",
    "i'd like {t} on",
    "{t}, on",
    "bring {t} on",
    "fire up {t}",
    "light up {t}",
    "(let's|lets) have {t} on",
    "on {t}",
    "turn on {t} <pls_end>",
    "can i get {t} on",
    "{t} (needs|need) to be on",
    "make sure {t} (is|are) on",
    "{t} on now",
    "please turn {t} on",
)
_OFF = (
    "(turn|switch|power|shut|flip) off {t}",
    "(turn|switch|power|shut|flip) {t} off",
    "{t} off",
    "deactivate {t}",
    "disable {t}",
    "kill {t}",
    "<pls> turn off {t}",
    "<pls> switch off {t}",
    "<pls> turn {t} off",
    "<pls> shut off {t}",
    "<pls> deactivate {t}",
    "i want {t} off",
    "{t}, off",
    "cut {t}",
    "off {t}",
    "turn off {t} <pls_end>",
    "{t} (needs|need) to be off",
    "make sure {t} (is|are) off",
    "{t} off now",
    "please turn {t} off",
    "shut {t} down",
    "no more {t}",
    "{t} can go off",
    "{t} out",
)
_OPEN = (
    "open {t}",
    "<pls> open {t}",
    "open up {t}",
    "raise {t}",
    "lift {t}",
    "roll up {t}",
    "pull up {t}",
    "{t} up",
    "{t} open",
    "let some light in by opening {t}",
    "open {t} <pls_end>",
    "(put|get) {t} up",
    "i want {t} open",
)
_CLOSE = (
    "close {t}",
    "<pls> close {t}",
    "shut {t}",
    "lower {t}",
    "roll down {t}",
    "pull down {t}",
    "draw {t}",
    "{t} down",
    "{t} closed",
    "close {t} <pls_end>",
    "(put|let) {t} down",
    "i want {t} closed",
    "(close|shut) {t} (now|all the way)",
)
_LOCK = (
    "lock {t}",
    "<pls> lock {t}",
    "lock up {t}",
    "secure {t}",
    "{t} (lock|locked)",
    "make sure {t} (is|are) locked",
    "bolt {t}",
    "lock {t} <pls_end>",
)
_UNLOCK = (
    "unlock {t}",
    "<pls> unlock {t}",
    "unbolt {t}",
    "{t} unlock",
    "open the lock on {t}",
    "unlock {t} <pls_end>",
    "let me in by unlocking {t}",
)
_SCENE = (
    "activate {t}",
    "(turn|switch) on {t}",
    "{t} on",
    "start {t}",
    "run {t}",
    "(set|switch|change) to {t}",
    "<pls> activate {t}",
    "(trigger|launch|execute|play) {t}",
    "(go|transition) to {t}",
    "{t}",
    "{t} (please|now)",
    "it's time for {t}",
    "i want {t}",
    "(enable|apply) {t}",
    "put on {t}",
)
_INDIRECT_ON = (
    "i can't see (anything|a thing) {h}, {d} (on|please)",
    "it's pitch black {h}, [turn on the] {d}",
    "i need some {l} {h}",
    "give me some {l} {h}",
    "(we|i) need the {d} on {h}",
    "could use some {l} {h}",
    "it's pitch dark in the {a}, {d} please",
    "(i can't|can't) see in the {a}, (put|turn) the {d} on",
    "too dark to read {h} turn on the {d}",
    "(let there be|some) {l} {h}",
    "{l} please",
)
_INDIRECT_OFF = (
    "i'm (leaving|done in) the {a}, (kill|cut) the {d}",
    "nobody is in the {a}, (turn|switch) the {d} off",
    "i'm going to sleep, {d} off",
    "save some power and turn the {d} off in the {a}",
    "the {d} in the {a} (are|is) still on, turn (them|it) off",
    "(we|i) don't need the {d} {h} anymore",
)


def _onoff(g: Gen, on: bool) -> Result:
    intent = "HassTurnOn" if on else "HassTurnOff"
    r = g.rng.random()
    if r < 0.3:
        return _onoff_named(g, intent, on)
    if r < 0.6:
        return _run(g, intent, _ON if on else _OFF, t=lambda: _light_target(g))
    if r < 0.68:
        fan = _dom(g, "fan")
        intent_, pieces, slots = _run(g, intent, _ON if on else _OFF, t=lambda: _group_target(g, fan))
        slots.setdefault("name", "all")
        return intent_, pieces, slots
    if r < 0.74:
        sw = _dom(g, "switch")
        return _run(g, intent, _ON if on else _OFF, t=lambda: _group_target(g, sw))
    if r < 0.84:
        return _onoff_cover(g, intent, on)
    if r < 0.9:
        return _onoff_lock(g, intent, on)
    if r < 0.95 and on:
        return _scene_on(g, intent)
    if g.rng.random() < 0.15:
        return _onoff_room(g, intent, on)
    if on and g.rng.random() < 0.3:
        return _light_verb_on(g, intent)
    return _run(
        g,
        intent,
        _INDIRECT_ON if on else _INDIRECT_OFF,
        d=_dom(g, "light"),
        a=g.area,
        h=lambda: Fill([("in here", None)], {HERE: True}),
        l=lambda: g.word("light", "domain", domain="light"),
    )


_SWITCHABLE = ("light", "switch", "fan", "media_player", "climate", "vacuum", "valve", "light", "switch")


def _onoff_named(g: Gen, intent: str, on: bool) -> Result:
    """A named device of a switchable domain."""
    return _run(
        g,
        intent,
        _ON if on else _OFF,
        t=lambda: g.sub(
            g.choice(("[the] {n}", "{n}", "my {n}", "[the] {n} in [the] {a}")),
            n=lambda: g.named(g.choice(_SWITCHABLE)),
            a=g.area,
        ),
    )


def _onoff_cover(g: Gen, intent: str, on: bool) -> Result:
    """Covers: open is on, close is off."""
    if g.rng.random() < 0.4:
        return _run(
            g, intent, _OPEN if on else _CLOSE, t=lambda: g.sub("[the] {n}", n=lambda: g.named("cover"))
        )
    return _run(g, intent, _OPEN if on else _CLOSE, t=lambda: _group_target(g, _cover_dc(g)))


def _onoff_lock(g: Gen, intent: str, on: bool) -> Result:
    """Locks: lock is on, unlock is off; a group of locks is "all" of them."""
    if g.rng.random() < 0.5:
        return _run(
            g, intent, _LOCK if on else _UNLOCK, t=lambda: g.sub("[the] {n}", n=lambda: g.named("lock"))
        )
    lock = _dom(g, "lock")
    result = _run(g, intent, _LOCK if on else _UNLOCK, t=lambda: _group_target(g, lock))
    result[2].setdefault("name", "all")
    return result


def _scene_on(g: Gen, intent: str) -> Result:
    return _run(
        g,
        intent,
        _SCENE,
        t=lambda: g.sub(
            g.choice(
                (
                    "[the] {n} [scene]",
                    "{n}",
                    "[the] {n} (scene|mode|routine|script)",
                    "[the] {a} {n}",
                    "{n} in the {a}",
                )
            ),
            n=lambda: g.named("scene", "script"),
            a=g.area,
        ),
    )


_ROOM_ON = (
    "(turn|switch) on [everything in] the {a}",
    "{a} on",
    "power up the {a}",
    "turn everything on in the {a}",
)
_ROOM_OFF = (
    "(turn|switch) off [everything in] the {a}",
    "{a} off",
    "shut down the {a}",
    "power down the {a}",
)


def _onoff_room(g: Gen, intent: str, on: bool) -> Result:
    """A whole room: "turn off everything in the study"."""
    return _run(g, intent, _ROOM_ON if on else _ROOM_OFF, a=g.area)


def _light_verb_on(g: Gen, intent: str) -> Result:
    """The verb itself names the lights: "light up the porch"."""
    il = lambda: g.word(g.choice(("illuminate", "light up")), "domain", domain="light")  # noqa: E731
    lt = lambda: g.word("light", "domain", domain="light")  # noqa: E731
    return _run(
        g,
        intent,
        (
            "{il} [the] {a}",
            "<pls> {il} the {a}",
            "{il} the {f}",
            "{lt} it up {h}",
            "{lt} (it|this place|the room) up",
            "{il} the (whole|entire) (house|home) {x}",
            "{il} everything {x}",
        ),
        il=il,
        lt=lt,
        a=g.area,
        f=g.floor,
        h=lambda: Fill([("in here", None)], {HERE: True}),
        x=_marker(GLOBAL),
    )


def turn_on(g: Gen) -> Result:
    return _onoff(g, True)


def turn_off(g: Gen) -> Result:
    return _onoff(g, False)


def toggle(g: Gen) -> Result:
    t = (
        "toggle {t}",
        "<pls> toggle {t}",
        "flip {t}",
        "toggle {t} <pls_end>",
        "switch {t} (over|around)",
        "{t} toggle",
        "flip the switch on {t}",
        "change the state of {t}",
        "invert {t}",
        "toggle the state of {t}",
    )
    if g.rng.random() < 0.5:
        return _run(
            g, "HassToggle", t, t=lambda: g.sub("[the] {n}", n=lambda: g.named("light", "switch", "fan"))
        )
    return _run(g, "HassToggle", t, t=lambda: _light_target(g))


# ------------------------------------------------------------------------------ get state
def _state(g: Gen, word: str, value: str) -> Callable[[], Fill]:
    return lambda: g.word(word, "state", state=value)


def get_state(g: Gen) -> Result:
    r = g.rng.random()
    if r < 0.22:
        return _get_sensor_value(g)
    if r < 0.5:
        return _get_named_state(g)
    if r < 0.6:
        return _get_status(g)
    return get_state_group(g)


_SENSOR_QUESTIONS = (
    "<what_is> the {c} of [the] {n} ?",
    "<what_is> [the] {n} {c} ?",
    "what does [the] {n} (say|read|show) ?",
    "<what_is> [the] {n} ?",
    "what's [the] {n} reading ?",
    "how much {c} (is|does) [the] {n} (showing|report) ?",
    "<what_is> the value of [the] {n} ?",
    "what's {n} at ?",
    "{n} (value|reading|level) ?",
    "(current|latest) {n} ?",
    "how much is [the] {n} [showing] ?",
    "<what_is> {n} ?",
    "<what_is> the {n} (right now|now|today|at the moment) ?",
    "<what_is> the (current|latest) value of [the] {n} ?",
    "<what_is> the current {c} (on|of|from) [the] {n} ?",
    "(tell me|give me) the {c} (from|of) [the] {n}",
    "(check|read) [the] {n} [for me]",
    "what's the {c} (reading|level) on [the] {n} ?",
    "{n} {c} ?",
    "{c} (of|on) [the] {n} ?",
    "what {c} is [the] {n} (showing|reporting|at) ?",
    "<what_is> the {c} indicated by [the] {n} ?",
)


def _get_sensor_value(g: Gen) -> Result:
    """A numeric sensor by name ("what does the garage thermometer say?")."""
    ents = g.entities("sensor")
    ent = g.rng.choice(ents) if ents else None
    dc = ent.device_class if ent and ent.device_class else g.choice(list(lx.SENSOR_CLASSES))
    words = lx.SENSOR_CLASSES[dc][0]
    sensor = ent

    def n() -> Fill:
        return g.entity_fill(sensor) if sensor is not None else g.named("sensor")

    c = lambda: g.word(g.choice(words), "device_class", domain="sensor", device_class=dc)  # noqa: E731
    return _run(g, "HassGetState", _SENSOR_QUESTIONS, n=n, c=c)


_NAMED_STATE_QUESTIONS = (
    "is [the] {n} {s} ?",
    "(is|are) [the] {n} {s} (right now|now|at the moment) ?",
    "<pls> check if [the] {n} is {s}",
    "tell me (if|whether) [the] {n} is {s}",
    "{n} {s} ?",
    "do you know if [the] {n} is {s} ?",
    "is [the] {n} currently {s} ?",
    "can you check whether [the] {n} is {s} ?",
    "(was|is) [the] {n} left {s} ?",
    "did (i|we|someone|anyone) leave [the] {n} {s} ?",
    "(have|has) [the] {n} been {s} ?",
    "what's the (state|status) of [the] {n} ?",
    "(is|are) [the] {n} (on|off|open|closed) ?",
    "is [the] {n} in the {a} {s} ?",
)


def _get_named_state(g: Gen) -> Result:
    """A binary sensor, lock, cover, light, switch, fan or person by name with a state word."""
    ents = g.entities("binary_sensor", "lock", "cover", "light", "switch", "fan", "person")
    if not ents:
        return get_state_group(g)
    # everyday things that carry sensors ("the phone", "the car") share words with
    # out-of-scope requests: ask about them often so a bare noun does not mean "not mine"
    gadgets = [e for e in ents if e.domain == "binary_sensor" and e.name in _SENSOR_DEVICE_NAMES]
    ent = g.rng.choice(gadgets if gadgets and g.rng.random() < 0.4 else ents)
    value, word = _state_for_entity(g, ent.domain, ent.device_class)
    if ent.domain == "binary_sensor" and ent.device_class in BINARY_CLASSES and g.rng.random() < 0.4:
        return _get_named_class_state(g, ent, str(ent.device_class), value, word)
    t = _NAMED_STATE_QUESTIONS
    tpl = g.choice(t)
    if "(on|off|open|closed)" in tpl or "state" in tpl:
        tpl = g.choice(t[:10])
    g.makers.update(n=lambda: g.entity_fill(ent), s=_state(g, word, value), a=g.area)
    slots: dict[str, object] = {}
    pieces = expand(tpl, g.rng, g, slots)
    return "HassGetState", pieces, slots


def _get_named_class_state(g: Gen, ent: Entity, dc: str, value: str, word: str) -> Result:
    """ "is the tablet battery low?": name, then the class word, then the state."""
    bare = [
        w
        for w in BINARY_CLASSES[dc][0]
        if "sensor" not in w
        and "detector" not in w
        and device_class_for(w, "HassGetState", True) == ("binary_sensor", dc)
    ]
    if not bare:
        return get_state_group(g)
    c = lambda: g.word(g.choice(bare), "device_class", device_class=dc)  # noqa: E731
    return _run(
        g,
        "HassGetState",
        (
            "is [the] {n} {c} {s} ?",
            "(is|are) [the] {n} {c} {s} (right now|now) ?",
            "tell me if [the] {n} {c} is {s}",
            "{n} {c} {s} ?",
        ),
        n=lambda: g.entity_fill(ent),
        c=c,
        s=_state(g, word, value),
    )


_STATUS_QUESTIONS = (
    "<what_is> the (state|status) of [the] {n} ?",
    "how is [the] {n} doing ?",
    "is [the] {n} (on|off) or not ?",
    "status of [the] {n}",
    "(check|what about) [the] {n} ?",
    "where is {p} ?",
    "is {p} (home|at home|here) ?",
    "what's {p} up to ?",
    "(where is|where's|wheres) {p} [right now|at the moment] ?",
    "(do you know|can you tell me) where {p} is ?",
    "is {p} (home|at home|here) [yet|now] ?",
)


def _get_status(g: Gen) -> Result:
    """Where a person is, or the status of a named thing without a state word."""
    tpl = g.choice(_STATUS_QUESTIONS)
    if "{p}" in tpl:
        p = lambda: g.named("person")  # noqa: E731
        if "home" in tpl or "here" in tpl:
            tpl = "is {p} {s} ?"
            return _run(
                g, "HassGetState", (tpl,), p=p, s=_state(g, g.choice(("home", "at home", "here")), "home")
            )
        return _run(g, "HassGetState", (tpl,), p=p)
    return _run(
        g,
        "HassGetState",
        (tpl.replace(" (on|off) or not", " on"),),
        n=lambda: g.named("light", "switch", "fan", "cover", "lock", "media_player"),
    )


_SENSOR_DEVICE_NAMES = frozenset(lx.SENSOR_DEVICES)

_STATES_COMMON: dict[str, tuple[tuple[str, str], ...]] = {
    "light": (("on", "on"), ("off", "off"), ("turned on", "on"), ("switched off", "off"), ("lit", "on")),
    "switch": (("on", "on"), ("off", "off"), ("turned on", "on"), ("turned off", "off"), ("running", "on")),
    "fan": (("on", "on"), ("off", "off"), ("running", "on"), ("spinning", "on")),
    "cover": (
        ("open", "open"),
        ("closed", "closed"),
        ("opened", "open"),
        ("shut", "closed"),
        ("down", "closed"),
        ("up", "open"),
    ),
    "lock": (("locked", "locked"), ("unlocked", "unlocked"), ("open", "open"), ("secured", "locked")),
    "person": (
        ("home", "home"),
        ("at home", "home"),
        ("away", "not_home"),
        ("out", "not_home"),
        ("not home", "not_home"),
    ),
}


def _state_for_entity(g: Gen, domain: str, dc: str | None) -> tuple[str, str]:
    if domain == "binary_sensor" and dc in lx.BINARY_CLASSES:
        _, pos, neg = lx.BINARY_CLASSES[dc]
        if dc == "lock":
            return ("on", g.choice(("unlocked", "open"))) if g.rng.random() < 0.5 else ("off", "locked")
        if g.rng.random() < 0.65:
            return "on", g.choice(pos)
        return "off", g.choice(neg)
    options = _STATES_COMMON.get(domain, _STATES_COMMON["light"])
    word, value = g.rng.choice(options)
    return value, word


def get_state_implied(g: Gen) -> Result:
    """Binary sensors named only by their state or a bare class word ("is anything offline?")."""
    r = g.rng.random()
    if r < 0.55:
        word = g.choice(list(STATE_CLASSES))
        dc = STATE_CLASSES[word]
        value = "off" if word in BINARY_CLASSES[dc][2] else "on"
        s = lambda: g.word(word, "state", state=value, domain="binary_sensor", device_class=dc)  # noqa: E731
        t: tuple[str, ...] = (
            "(are|is) (any|all) [of the] (devices|things|sensors|gadgets) {s} {w} ?",
            "(which|what) (devices|things|sensors) are {s} {w} ?",
            "how many (devices|things|sensors) are {s} {w} ?",
            "is (anything|something|everything) {s} {w} ?",
            "(tell me|check) (if|whether) anything is {s} {w}",
            "is the {a} {s} ?",
            "(are|is) there (any|some) (devices|things) {s} {w} ?",
            "do i have (any|some) (devices|things) {s} {w} ?",
            "anything {s} {w} ?",
        )
        return _run(g, "HassGetState", t, s=s, w=lambda: _where(g), a=g.area)
    dc = g.choice(["motion", "moisture", "smoke", "gas", "carbon_monoxide", "sound", "occupancy"])
    bare = [
        w for w in BINARY_CLASSES[dc][0] if "sensor" not in w and "detector" not in w and "alarm" not in w
    ]
    c = lambda: g.word(  # noqa: E731
        g.choice(bare or list(BINARY_CLASSES[dc][0])),
        "device_class",
        domain="binary_sensor",
        device_class=dc,
        state="on",
    )
    d = lambda: g.word("detected", "state", state="on")  # noqa: E731
    t = (
        "is there (any|some) {c} {w} ?",
        "is (any|some) {c} {d} {w} ?",
        "is {c} {d} {w} ?",
        "(do|did) you (detect|notice) (any|some) {c} {w} ?",
        "(any|is there) {c} {w} ?",
        "has (any|some) {c} been {d} {w} ?",
        "is there (any|some) {c} {d} {w} ?",
    )
    return _run(g, "HassGetState", t, c=c, d=d, w=lambda: _where(g))


def get_state_group(g: Gen) -> Result:
    r = g.rng.random()
    if r < 0.2:
        return get_state_implied(g)
    if r < 0.5:  # light / switch / fan / lock / cover groups with state
        domain = g.choice(["light", "light", "switch", "fan", "lock", "cover", "cover"])
        value, word = _state_for_entity(g, domain, None)
        d = _cover_dc(g) if domain == "cover" else _dom(g, domain)
    elif r < 0.88:  # binary sensor groups
        dc = g.choice(list(lx.BINARY_CLASSES))
        value, word = _state_for_entity(g, "binary_sensor", dc)
        words = lx.BINARY_CLASSES[dc][0]
        d = lambda: g.word(g.choice(words), "device_class", domain="binary_sensor", device_class=dc)  # noqa: E731
    else:  # people
        value, word = _state_for_entity(g, "person", None)
        pw = lambda: g.word(  # noqa: E731
            g.choice(
                (
                    "people",
                    "anyone",
                    "anybody",
                    "someone",
                    "everyone",
                    "everybody",
                    "family",
                    "residents",
                )
            ),
            "domain",
            domain="person",
        )
        return _run(
            g,
            "HassGetState",
            (
                "(is|are) {pw} {s} ?",
                "how many {pw} are {s} ?",
                "is {pw} {s} (right now|now) ?",
                "(which|what) {pw} are {s} ?",
                "(are|is) (any|all) (of the|the) {pw} {s} ?",
                "tell me if {pw} is {s}",
                "(is|are) there {pw} {s} ?",
            ),
            s=_state(g, word, value),
            pw=pw,
        )
    s = _state(g, word, value)
    t = (
        "(are|is) (any|all) [of] [the] {d} {s} {w} ?",
        "(which|what) {d} are {s} {w} ?",
        "how many {d} are {s} {w} ?",
        "how many of the {d} are {s} {w} ?",
        "how many {w2} {d} are {s} ?",
        "(count|list) the {d} that are {s} {w}",
        "(are|is) there (any|some) {d} {s} {w} ?",
        "(tell me|let me know) (if|whether) (any|all) [of the] {d} (are|is) {s} {w}",
        "(is|are) [the] {d} {s} {w} ?",
        "(did i|did we) leave (any|the) {d} {s} {w} ?",
        "(any|all) {d} {s} {w} ?",
        "(are|is) (every|each) {d} {s} {w} ?",
        "do (any|all) [of the] {d} (show|report) {s} {w} ?",
        "(list|show me) [all] [the] {d} that are {s} {w}",
        "any of the {d} {s} {w} ?",
        "are [the] {w2} {d} {s} ?",
        "(is|are) the {d} {s} (right now|at the moment) ?",
    )
    return _run(g, "HassGetState", t, d=d, s=s, w=lambda: _where(g), w2=lambda: _where_pre(g))


def _where(g: Gen) -> Fill:
    r = g.rng.random()
    if r < 0.35:
        return g.sub("(in|inside) [the] {a}", a=g.area)
    if r < 0.5:
        return g.sub("(on|in) the {f}", f=g.floor)
    if r < 0.55:
        return Fill([("in here", None)], {HERE: True})
    if r < 0.62:
        return g.sub("(in the house|at home|anywhere|around the house) {x}", x=_marker(GLOBAL))
    return Fill([], {})


def _where_pre(g: Gen) -> Fill:
    if g.rng.random() < 0.7:
        return g.sub("{a}", a=g.area)
    return g.sub("{f}", f=g.floor)


# ------------------------------------------------------------------------------ lights
_MAXMIN = (
    ("max", 100),
    ("maximum", 100),
    ("full", 100),
    ("full brightness", 100),
    ("highest", 100),
    ("the max", 100),
    ("the maximum", 100),
    ("the highest", 100),
    ("a hundred percent", 100),
    ("brightest", 100),
    ("min", 1),
    ("minimum", 1),
    ("lowest", 1),
    ("the lowest", 1),
    ("the minimum", 1),
    ("dimmest", 1),
    ("the min", 1),
    ("half", 50),
    ("half brightness", 50),
)


def _brightness(g: Gen) -> Fill:
    if g.rng.random() < 0.18:
        word, value = g.rng.choice(_MAXMIN)
        return g.word(word, "brightness", brightness=value)
    n = pct_value(g.rng)
    return g.word(pct_text(g.rng, n), "brightness", brightness=n)


def _color(g: Gen) -> Fill:
    c = g.choice(lx.COLORS)
    return g.word(c, "color", color=c)


def light_set(g: Gen) -> Result:
    r = g.rng.random()
    if r < 0.12:  # several attributes in one command
        both = (
            "set {t} to {c} at {b}",
            "(make|turn) {t} {c} (at|and) {b}",
            "set {t} to {b} and {c}",
            "<pls> set {t} to {c} and {b} brightness",
            "change {t} to {c} at {b}",
            "{t} {c} at {b}",
            "make {t} {c} and {b} bright",
            "set {t} to {b} brightness in {c}",
        )
        return _run(
            g, "HassLightSet", both, t=lambda: _light_target(g, area_alone=True),
            b=lambda: _brightness(g), c=lambda: _color(g),
        )  # fmt: skip
    if r < 0.6:
        t: tuple[str, ...] = (
            "set {t} to {b}",
            "set {t} brightness to {b}",
            "set the brightness of {t} to {b}",
            "{t} to {b}",
            "(dim|brighten|turn|put) {t} to {b}",
            "change {t} to {b} [brightness]",
            "{t} at {b}",
            "<pls> set {t} to {b} brightness",
            "make {t} {b} [bright]",
            "adjust {t} to {b}",
            "(set|change|turn) the brightness (of|in|for) {t} to {b}",
            "{b} brightness (for|on|in) {t}",
            "(set|put) {t} (at|on) {b} brightness",
            "brightness {b} (for|on) {t}",
            "(dim|bring) {t} down to {b}",
            "(bring|turn) {t} up to {b}",
            "{t} brightness {b}",
            "i want {t} at {b}",
            "(set|change) brightness to {b} {h}",
            "turn brightness to {b} {h}",
            "make it {b} brightness {h}",
            "{t} {b}",
            "{t} {b} <pls_end>",
            "{t} brightness to {b}",
            "{t} to {b} brightness",
        )
        return _run(
            g,
            "HassLightSet",
            t,
            t=lambda: _light_target(g, area_alone=True),
            b=lambda: _brightness(g),
            h=lambda: Fill([("in here", None)], {HERE: True}),
        )
    t = (
        "(set|make|turn|change) {t} {c}",
        "(set|make|turn|change) {t} to {c}",
        "set the color of {t} to {c}",
        "change the colou?r of {t} to {c}",
        "{t} {c}",
        "<pls> make {t} {c}",
        "i want {t} {c}",
        "{c} {t}",
        "(paint|color) {t} {c}",
        "switch {t} to {c} (light|color)",
        "(set|change) the (light|color) to {c} {h}",
        "make the (light|lights) {c} {h}",
        "turn {t} to the color {c}",
        "can {t} be {c}",
        "give me {c} {t}",
        "{t} in {c}",
    )
    t = tuple(x.replace("colou?r", "(color|colour)") for x in t)
    return _run(
        g,
        "HassLightSet",
        t,
        t=lambda: _light_target(g, area_alone=True),
        c=lambda: _color(g),
        h=lambda: Fill([("in here", None)], {HERE: True}),
    )


def light_relative(g: Gen) -> Result:
    r = g.rng.random()
    if r < 0.4:
        return _light_step(g)
    if r < 0.6:
        return _light_step_by(g)
    if r < 0.8:
        return _light_comparative(g)
    return _light_complaint(g)


def _up_or_down(g: Gen, ups: tuple[str, ...], downs: tuple[str, ...]) -> tuple[bool, str]:
    """A direction drawn at even odds, and a word for it."""
    up = g.rng.random() < 0.5
    return up, (g.choice(ups) if up else g.choice(downs))


def _step(g: Gen, slot: str, word: str, up: bool) -> Callable[[], Fill]:
    """A step word ("dim", "warmer") tagged as the step slot, with its direction as the value."""
    return lambda: g.word(word, slot, **{slot: "up" if up else "down"})


def _here() -> Fill:
    return Fill([("in here", None)], {HERE: True})


def _light_step(g: Gen) -> Result:
    """ "dim the lights a little" """
    up, word = _up_or_down(
        g,
        ("brighten", "brighten up", "turn up", "raise", "increase"),
        ("dim", "dim down", "turn down", "lower", "decrease", "reduce"),
    )
    return _run(
        g,
        "EdgeLightSetRelative",
        (
            "{s} {t}",
            "<pls> {s} {t}",
            "{s} {t} (a bit|a little|slightly|a notch)",
            "{s} {t} <pls_end>",
            "can you {s} {t} a little",
        ),
        s=_step(g, "brightness_step", word, up),
        t=lambda: _light_target(g),
    )


def _light_step_by(g: Gen) -> Result:
    """ "raise the porch lights by 20 percent" """
    up = g.rng.random() < 0.5
    n = g.choice((5, 10, 10, 15, 20, 20, 25, 30, 40, 50))
    verb = (
        g.choice(("increase", "raise", "turn up", "bump up", "brighten"))
        if up
        else g.choice(("decrease", "lower", "turn down", "dim", "reduce"))
    )
    signed = n if up else -n
    return _run(
        g,
        "EdgeLightSetRelative",
        ("{v} {t} by {n}", "{v} the brightness of {t} by {n}", "{v} {t} {n}", "<pls> {v} {t} by {n}"),
        v=lambda: g.word(verb, "brightness_step", brightness_step=signed),
        n=lambda: g.word(pct_text(g.rng, n), "brightness_step"),
        t=lambda: _light_target(g),
    )


def _light_comparative(g: Gen) -> Result:
    """ "make the hall lights brighter" """
    up, word = _up_or_down(
        g,
        ("brighter", "lighter", "more light", "less dim"),
        ("darker", "dimmer", "less bright", "softer"),
    )
    return _run(
        g,
        "EdgeLightSetRelative",
        (
            "make {t} {s}",
            "{t} {s} <pls_end>",
            "make it {s} {h}",
            "{s} {h} <pls_end>",
            "(a bit|a little|slightly) {s} {h}",
            "can you make {t} {s}",
            "i want {t} {s}",
            "make the {a} {s}",
        ),
        s=_step(g, "brightness_step", word, up),
        t=lambda: _light_target(g),
        h=_here,
        a=g.area,
    )


def _light_complaint(g: Gen) -> Result:
    """ "it's way too dark in here" """
    up, word = _up_or_down(
        g,
        ("too dark", "way too dark", "kind of dark", "a bit dark", "so dark", "not bright enough", "too dim"),
        ("too bright", "way too bright", "so bright", "blinding", "too harsh", "a bit bright"),
    )
    return _run(
        g,
        "EdgeLightSetRelative",
        (
            "it's {s} {h}",
            "its {s} {h}",
            "it is {s} in the {a}",
            "the {a} is {s}",
            "the lights are {s} {h}",
            "the {a} lights are {s}",
            "(man|wow|ugh) it's {s} {h}",
            "{s} {h}",
            "it's {s} in the {a}",
            "the light is {s}",
        ),
        s=_step(g, "brightness_step", word, up),
        h=_here,
        a=g.area,
    )


def set_position(g: Gen) -> Result:
    n = pct_value(g.rng)
    if g.rng.random() < 0.08:  # "open the blinds halfway": a position said without a number
        n = 50
        p = lambda: g.word(g.choice(("halfway", "half way")), "position", position=n)  # noqa: E731
    else:
        p = lambda: g.word(pct_text(g.rng, n), "position", position=n)  # noqa: E731
    if g.rng.random() < 0.3:
        tgt = lambda: g.sub("[the] {n}", n=lambda: g.named("cover", "valve"))  # noqa: E731
    else:
        tgt = lambda: _group_target(g, _cover_dc(g))  # noqa: E731
    t = (
        "set {t} to {p}",
        "set {t} position to {p}",
        "open {t} to {p}",
        "close {t} to {p}",
        "(lower|raise) {t} to {p}",
        "{t} to {p}",
        "<pls> set {t} to {p}",
        "(move|put|bring) {t} to {p}",
        "(adjust|change) {t} to {p}",
        "set the position of {t} to {p}",
        "{t} at {p}",
        "open {t} {p}",
        "i want {t} {p} open",
        "(roll|pull) {t} (up|down) to {p}",
        "(increase|decrease) {t} position to {p}",
        "{t} position {p}",
        "(open|close|lower|raise) {t} {p}",
    )
    return _run(g, "HassSetPosition", t, t=tgt, p=p)


def stop_moving(g: Gen) -> Result:
    tgt = (
        (lambda: g.sub("[the] {n}", n=lambda: g.named("cover", "valve")))
        if g.rng.random() < 0.4
        else (lambda: _group_target(g, _cover_dc(g)))
    )
    t = (
        "stop {t}",
        "<pls> stop {t}",
        "halt {t}",
        "(freeze|pause) {t}",
        "stop moving {t}",
        "{t} stop",
        "stop {t} (now|right there)",
        "{t}, stop",
        "(hold|keep) {t} (there|where (it is|they are))",
        "stop (opening|closing) {t}",
        "quit moving {t}",
        "stop the (movement|motion) of {t}",
    )
    return _run(g, "HassStopMoving", t, t=tgt)


# ------------------------------------------------------------------------------ climate
def _temp(g: Gen) -> Fill:
    r = g.rng.random()
    if r < 0.12:
        whole = g.rng.randint(16, 28)
        v: float = whole + 0.5
        text = g.choice(
            (
                f"{v}",
                f"{v} degrees",
                f"{number_words(whole)} and a half degrees",
                f"{number_words(whole)} point five",
                f"{v}°",
            )
        )
        return g.word(text, "temperature", temperature=v)
    n = g.rng.randint(15, 30) if g.rng.random() < 0.7 else g.rng.randint(55, 80)
    text = g.choice(
        (
            f"{n} degrees",
            f"{n}°",
            f"{n}",
            f"{number_words(n)} degrees",
            f"{number_words(n)}",
            f"{n} degrees celsius",
            f"{n} degrees fahrenheit",
            f"{n} °C",
            f"{n} deg",
        )
    )
    return g.word(text, "temperature", temperature=n)


def _climate_target(g: Gen) -> Fill:
    r = g.rng.random()
    if r < 0.3:
        return g.sub("[the] {n}", n=lambda: g.named("climate"))
    if r < 0.55:
        return g.sub(
            g.choice(
                (
                    "[the] {a} (thermostat|temperature|temp|heating|heat)",
                    "[the] (thermostat|temperature|temp|heat|heating) in [the] {a}",
                    "[the] {a}",
                )
            ),
            a=g.area,
        )
    if r < 0.65:
        return g.sub("[the] {f} (temperature|temp|thermostat|heating)", f=g.floor)
    return g.sub(
        g.choice(
            (
                "the (thermostat|temperature|temp|heat|heating|ac|air conditioning)",
                "[the] temp <here>",
                "the temperature {h}",
            )
        ),
        h=lambda: Fill([("in here", None)], {HERE: True}),
    )


def climate_set(g: Gen) -> Result:
    t = (
        "set {t} to {v}",
        "<pls> set {t} to {v}",
        "change {t} to {v}",
        "{t} to {v}",
        "(turn|put) {t} (to|at) {v}",
        "make it {v} in [the] {a}",
        "(heat|warm) [up] [the] {a} to {v}",
        "cool [down] [the] {a} to {v}",
        "i want it {v} in the {a}",
        "set it to {v} {h}",
        "make it {v} {h}",
        "{v} in the {a} <pls_end>",
        "adjust {t} to {v}",
        "set the temperature of [the] {a} to {v}",
        "thermostat {v}",
        "(keep|hold) [the] {a} at {v}",
        "(set|change) {t} for {v}",
        "i'd like {t} at {v}",
    )
    return _run(
        g,
        "HassClimateSetTemperature",
        t,
        t=lambda: _climate_target(g),
        v=lambda: _temp(g),
        a=g.area,
        h=lambda: Fill([("in here", None)], {HERE: True}),
    )


def climate_get(g: Gen) -> Result:
    t = (
        "what's the temperature [in the {a}] ?",
        "what is the temperature (in|of) the {a} ?",
        "how (warm|cold|hot) is it in the {a} ?",
        "how (warm|cold|hot) is it {h} ?",
        "what's the {a} temperature ?",
        "what's the (temp|temperature) {h} ?",
        "(what is|what's) [the] {n} (set to|at|reading) ?",
        "what temperature is [the] {n} (set to|at) ?",
        "<pls> tell me the temperature (in|of) the {a}",
        "{a} temperature ?",
        "temperature in the {a} ?",
        "is it (warm|cold|hot) in the {a} ?",
        "how many degrees is it in the {a} ?",
        "what's the current temperature {h} ?",
        "(check|read) the temperature (in|of) the {a}",
        "what temperature is it {h} ?",
        "what's the temperature on the {f} ?",
        "what is the temperature of [the] {n} ?",
        "what's the (indoor|inside|room) temperature ?",
        "how warm is it ?",
    )
    return _run(
        g,
        "HassClimateGetTemperature",
        t,
        a=g.area,
        f=g.floor,
        n=lambda: g.named("climate"),
        h=lambda: Fill([("in here", None)], {HERE: True}),
    )


def climate_relative(g: Gen) -> Result:
    r = g.rng.random()
    if r < 0.35:
        return _climate_comparative(g)
    if r < 0.6:
        return _climate_step(g)
    if r < 0.8:
        return _climate_step_by(g)
    return _climate_complaint(g)


def _climate_where(g: Gen) -> Callable[[], Fill]:
    return lambda: g.sub(g.choice(("in the {a}", "{h}", "", "")), a=g.area, h=_here)


def _climate_comparative(g: Gen) -> Result:
    """ "make it a bit warmer in the study" """
    up, word = _up_or_down(
        g,
        ("warmer", "hotter", "a bit warmer", "a little warmer", "toastier"),
        ("cooler", "colder", "a bit cooler", "a little colder", "less hot"),
    )
    return _run(
        g,
        "EdgeClimateSetRelative",
        (
            "make it {s} {w}",
            "<pls> make it {s} {w}",
            "(can|could) you make it {s} {w}",
            "i want it {s} {w}",
            "make the {a} {s}",
            "{s} {w} <pls_end>",
            "i'd like it {s} {w}",
        ),
        s=_step(g, "temperature_step", word, up),
        w=_climate_where(g),
        a=g.area,
    )


def _climate_step(g: Gen) -> Result:
    """ "turn the heating down a notch" """
    up, verb = _up_or_down(
        g,
        ("turn up", "raise", "increase", "bump up", "crank up"),
        ("turn down", "lower", "decrease", "reduce"),
    )
    obj = g.choice(("the heat", "the heating", "the temperature", "the temp", "the thermostat"))
    return _run(
        g,
        "EdgeClimateSetRelative",
        (
            "{s} " + obj + " {w}",
            "<pls> {s} " + obj + " {w}",
            "{s} " + obj + " (a bit|a little|a notch) {w}",
            "{s} " + obj + " in the {a}",
        ),
        s=_step(g, "temperature_step", verb, up),
        w=_climate_where(g),
        a=g.area,
    )


def _degrees(g: Gen, n: int) -> str:
    """ "3 degrees", "three degrees", "a couple of degrees" (n == 2) ..."""
    return g.choice(
        (
            f"{n} degrees",
            f"{number_words(n)} degrees",
            f"{n}",
            f"{n} degree" if n == 1 else f"{n} degrees",
            "one degree" if n == 1 else f"{number_words(n)} degrees",
            "a couple of degrees" if n == 2 else f"{n} degrees",
            "a couple degrees" if n == 2 else f"{n} degrees",
        )
    )


def _climate_step_by(g: Gen) -> Result:
    """ "lower the thermostat by two degrees" """
    up = g.rng.random() < 0.5
    n = g.choice((1, 1, 2, 2, 3, 4, 5))
    verb = (
        g.choice(("raise", "increase", "turn up", "bump up", "warm up"))
        if up
        else g.choice(("lower", "decrease", "turn down", "drop", "cool down"))
    )
    signed = n if up else -n
    amount = _degrees(g, n)
    return _run(
        g,
        "EdgeClimateSetRelative",
        (
            "{v} the (temperature|heat|thermostat|temp) by {n} {w}",
            "{v} [the] {a} by {n}",
            "<pls> {v} the temperature by {n}",
            "{v} the thermostat {n} {w}",
        ),
        v=lambda: g.word(verb, "temperature_step", temperature_step=signed),
        n=lambda: g.word(amount, "temperature_step"),
        w=_climate_where(g),
        a=g.area,
    )


def _climate_complaint(g: Gen) -> Result:
    """ "brr it's freezing in here" """
    up, word = _up_or_down(
        g,
        ("cold", "freezing", "chilly", "too cold", "so cold", "cold in here", "a bit chilly"),
        ("hot", "too hot", "boiling", "sweating", "too warm", "roasting", "so hot", "stuffy"),
    )
    return _run(
        g,
        "EdgeClimateSetRelative",
        (
            "i'm {s}",
            "i am {s}",
            "it's {s} {w}",
            "its {s} {w}",
            "(we're|we are) {s}",
            "it is {s} in the {a}",
            "(brr|ugh|man) it's {s} {w}",
            "the {a} is {s}",
            "i'm {s} can you fix that",
            "{s} {w}",
        ),
        s=_step(g, "temperature_step", word, up),
        w=_climate_where(g),
        a=g.area,
    )


def fan_speed(g: Gen) -> Result:
    r = g.rng.random()
    if r < 0.2:
        word, value = g.rng.choice(
            (
                ("low", 33),
                ("medium", 66),
                ("high", 100),
                ("max", 100),
                ("full speed", 100),
                ("half speed", 50),
                ("lowest", 1),
                ("minimum", 1),
                ("maximum", 100),
            )
        )
        p = lambda: g.word(word, "percentage", percentage=value)  # noqa: E731
    else:
        n = pct_value(g.rng)
        p = lambda: g.word(pct_text(g.rng, n), "percentage", percentage=n)  # noqa: E731
    tgt = (
        (lambda: g.sub("[the] {n}", n=lambda: g.named("fan")))
        if g.rng.random() < 0.45
        else (lambda: _group_target(g, _dom(g, "fan")))
    )
    t = (
        "set {t} speed to {p}",
        "set {t} to {p}",
        "set the speed of {t} to {p}",
        "{t} speed {p}",
        "(turn|put) {t} (to|on) {p}",
        "<pls> set {t} to {p} speed",
        "run {t} at {p}",
        "{t} to {p}",
        "change {t} speed to {p}",
        "{t} on {p}",
        "make {t} (spin|run) at {p}",
        "i want {t} at {p}",
        "(speed|slow) {t} (up|down) to {p}",
    )
    return _run(g, "HassFanSetSpeed", t, t=tgt, p=p)


# ------------------------------------------------------------------------------ vacuum / mower
def vacuum_start(g: Gen) -> Result:
    t = (
        "start {n}",
        "<pls> start {n}",
        "(start|begin) vacuuming",
        "vacuum the {a}",
        "clean the {a}",
        "clean the {f}",
        "vacuum (the|on the) {f}",
        "(run|start) the (vacuum|robot vacuum|hoover|roomba)",
        "(let's|lets) vacuum",
        "send {n} to clean [the {a}]",
        "{n}, (start cleaning|clean|go clean)",
        "(start|run) {n} in the {a}",
        "have {n} clean [the {a}]",
        "vacuum (the house|everywhere|the floors)",
        "start the cleaning (robot|cycle)",
        "(hoover|vacuum) [the] {a} <pls_end>",
        "time to vacuum",
        "get {n} going",
        "the floor is dirty, vacuum it",
        "(can|could) you vacuum the {a} ?",
        "(start|run) [the] {a} vacuum",
        "launch {n}",
    )
    return _run(g, "HassVacuumStart", t, n=lambda: g.named("vacuum"), a=g.area, f=g.floor)


def vacuum_dock(g: Gen) -> Result:
    t = (
        "return {n} to (base|the dock|its dock|the charger)",
        "send {n} (home|back to base|to the dock)",
        "dock {n}",
        "<pls> dock the (vacuum|robot|roomba)",
        "{n} go (home|back to your dock|charge)",
        "(tell|make) {n} (go|return) home",
        "stop vacuuming and (go home|dock)",
        "return the (vacuum|robot vacuum|roomba) to (base|its dock)",
        "send the (vacuum|roomba|robot) (home|back to the charger)",
        "(park|recall) {n}",
        "{n} return to base",
        "the vacuum should go back to its base",
    )
    return _run(g, "HassVacuumReturnToBase", t, n=lambda: g.named("vacuum"))


def mower_start(g: Gen) -> Result:
    t = (
        "(mow|cut) the (lawn|grass)",
        "start (mowing|the mower|the lawn mower)",
        "start {n}",
        "<pls> start {n}",
        "send {n} (out|out to mow) [the lawn]",
        "{n}, (start mowing|mow the lawn|get to work)",
        "(let's|lets) mow the lawn",
        "the grass is too long, (start|run) the mower",
        "(run|launch) {n}",
        "(begin|start) cutting the grass",
        "have {n} mow [the (lawn|yard|garden)]",
        "time to mow the (lawn|yard)",
        "mow the (yard|garden|backyard)",
    )
    return _run(g, "HassLawnMowerStartMowing", t, n=lambda: g.named("lawn_mower"))


def mower_dock(g: Gen) -> Result:
    t = (
        "dock {n}",
        "(dock|park) the (mower|lawn mower|lawnmower)",
        "send {n} (home|back to base|to the dock|to its station)",
        "return {n} to (base|the dock|its station)",
        "stop mowing and (go home|dock)",
        "{n}, go (home|back to base)",
        "<pls> send the (mower|lawn mower) (home|back)",
        "(bring|call) {n} back",
        "(recall|park) {n}",
    )
    return _run(g, "HassLawnMowerDock", t, n=lambda: g.named("lawn_mower"))


# ------------------------------------------------------------------------------ media
def _player(g: Gen) -> Fill:
    r = g.rng.random()
    if r < 0.4:
        return g.sub(
            g.choice(("on [the] {n}", "on [the] {n}", "(in|for) [the] {n}")),
            n=lambda: g.named("media_player"),
        )
    if r < 0.65:
        return g.sub(g.choice(("in [the] {a}", "on the {a} (speaker|tv)", "in the {a}")), a=g.area)
    if r < 0.72:
        return Fill([("in here", None)], {HERE: True})
    return Fill([], {})


def _media(g: Gen, intent: str, t: tuple[str, ...]) -> Result:
    return _run(g, intent, t, p=lambda: _player(g), n=lambda: g.named("media_player"), a=g.area)


def media_pause(g: Gen) -> Result:
    return _media(
        g,
        "HassMediaPause",
        (
            "pause {p}",
            "pause [the] (music|song|movie|show|tv|video|podcast|playback|media) {p}",
            "<pls> pause {p}",
            "{n} pause",
            "pause [the] {n}",
            "pause it {p}",
            "hold (it|on), pause {p}",
            "pause that",
            "hit pause {p}",
            "(stop|halt) the (music|playback|movie) for a second {p}",
            "stop the (music|song|movie|show|playback|podcast) {p}",
            "stop playing {p}",
            "pause the {a} (speaker|tv|media player)",
            "(can|could) you pause (this|it|the music) {p} ?",
            "pause playback {p} <pls_end>",
            "put (it|this|the movie) on pause {p}",
            "freeze the (movie|show|video) {p}",
            "wait, pause",
        ),
    )


def media_unpause(g: Gen) -> Result:
    return _media(
        g,
        "HassMediaUnpause",
        (
            "(resume|unpause|continue) {p}",
            "(resume|unpause|continue) [the] (music|song|movie|show|playback|podcast) {p}",
            "<pls> resume {p}",
            "{n} (resume|unpause)",
            "(resume|unpause) [the] {n}",
            "keep playing {p}",
            "(press|hit) play {p}",
            "continue playing {p}",
            "start (it|the music|the movie) again {p}",
            "carry on playing {p}",
            "unpause it {p}",
            "(resume|continue) playback <pls_end>",
            "play again {p}",
            "(ok|okay) resume",
            "back to the (movie|show|music) {p}",
        ),
    )


def media_next(g: Gen) -> Result:
    return _media(
        g,
        "HassMediaNext",
        (
            "(next|skip) {p}",
            "(next|skip) [the] (song|track|episode|one) {p}",
            "skip (this|this song|this track|ahead) {p}",
            "play the next (song|track|episode|one) {p}",
            "go to the next (song|track) {p}",
            "<pls> skip {p}",
            "{n} next",
            "skip to the next (song|track) {p}",
            "next please",
            "(i don't like|i hate) this song, skip it",
            "(change|switch) the song {p}",
            "move on to the next (song|track)",
            "can you skip this ?",
            "forward one (track|song) {p}",
            "skip forward {p}",
            "skip (song|track|item|episode) {p}",
            "next (item|thing|video|chapter) {p}",
            "{n} skip",
            "{n} (next|skip) (song|track)",
            "skip to the next one {p}",
            "this song is (boring|terrible), next",
            "(may|can|could) we (go|move on|skip ahead) to the next (song|track|one) {p} ?",
            "skip this one [please] {p}",
            "let's (skip|move on|hear the next one) {p}",
            "i'd like the next (song|track) <pls_end>",
            "on to the next (one|song|track) {p}",
            "not this one, (next|skip it|skip)",
            "(can|could) you play the next one {p} ?",
            "go forward a (song|track) {p}",
            "(give me|let's have) the next (one|song) {p}",
            "i've heard this one (already|before), skip (it|)",
            "jump to the next (song|track) {p}",
            "(another|a different) song <pls_end>",
        ),
    )


def media_previous(g: Gen) -> Result:
    return _media(
        g,
        "HassMediaPrevious",
        (
            "previous {p}",
            "(previous|last) (song|track|episode) {p}",
            "go back [a|one] (song|track) {p}",
            "play the (previous|last) (song|track|one) [again] {p}",
            "(back|rewind) one (track|song) {p}",
            "{n} previous",
            "replay (that|the last song|the previous track) {p}",
            "<pls> go back to the previous (song|track) {p}",
            "play that (song|track) again {p}",
            "skip back {p}",
            "(previous|back) please",
            "go to the previous (song|track) {p}",
            "i want to hear the last song again",
            "back to the previous (song|track) {p}",
            "go back {p}",
            "{n} go back [to the previous (song|track)]",
            "(restart|replay) the (previous|last) (song|track|episode) {p}",
            "play the one before {p}",
            "previous (item|video|chapter) {p}",
            "(may|can|could) we go back (a|one) (song|track) {p} ?",
            "play the last one again {p}",
            "(bring|put) back the (last|previous) (song|track|one) {p}",
            "go back one {p}",
            "(back up|jump back) a (song|track) {p}",
            "i want the previous (song|track) again",
            "that last song again <pls_end>",
            "(wait|hold on), go back to the (song|track) before",
        ),
    )


def _volume_level(g: Gen) -> Fill:
    n = (
        g.choice((10, 20, 25, 30, 35, 40, 50, 60, 70, 75, 80, 90, 100))
        if g.rng.random() < 0.6
        else g.rng.randint(0, 100)
    )
    return g.word(pct_text(g.rng, n), "volume_level", volume_level=n)


def set_volume(g: Gen) -> Result:
    return _run(
        g,
        "HassSetVolume",
        (
            "set [the] volume to {v} {p}",
            "(volume|vol) {v} {p}",
            "set [the] {n} volume to {v}",
            "{n} volume {v}",
            "(turn|change|put) the volume (to|at) {v} {p}",
            "<pls> set the volume to {v} {p}",
            "volume to {v} <pls_end>",
            "turn (up|down) the volume to {v} {p}",
            "(increase|decrease|raise|lower) the volume to {v} {p}",
            "set [the] {a} volume to {v}",
            "make the volume {v} {p}",
            "set {n} to {v} volume",
            "change the {n} volume to {v}",
            "(adjust|set) the sound (level|volume) to {v} {p}",
            "i want the volume at {v} {p}",
            "{p} set the volume to {v}",
            "turn [the] {n} volume (up|down) to {v}",
            "turn [the] {n} (up|down) to {v}",
            "(bring|take) the volume (up|down) to {v} {p}",
            "{n} (to|at) {v} volume",
            "(put|set) the volume on {v} {p}",
            "volume at {v} {p}",
            "change [the] volume to {v} {p}",
        ),
        v=lambda: _volume_level(g),
        p=lambda: _player(g),
        n=lambda: g.named("media_player"),
        a=g.area,
    )


def volume_relative(g: Gen) -> Result:
    if g.rng.random() < 0.25:
        return _volume_plea(g)
    r = g.rng.random()
    up = g.rng.random() < 0.5
    p = lambda: _player(g)  # noqa: E731
    if r < 0.5:
        word = (
            g.choice(("turn up", "raise", "increase", "pump up", "crank up", "bump up"))
            if up
            else g.choice(("turn down", "lower", "decrease", "reduce", "bring down"))
        )
        s = lambda: g.word(word, "volume_step", volume_step="up" if up else "down")  # noqa: E731
        return _run(
            g,
            "HassSetVolumeRelative",
            (
                "{s} the (volume|sound|music) {p}",
                "{s} {n}",
                "<pls> {s} the volume {p}",
                "{s} the volume (a bit|a little|a notch) {p}",
                "{s} it {p}",
                "{s} the {n} volume",
                "can you {s} the volume ?",
            ),
            s=s,
            p=p,
            n=lambda: g.named("media_player"),
        )
    if r < 0.7:
        n = g.choice((5, 10, 10, 15, 20, 25, 30))
        verb = (
            g.choice(("turn up", "raise", "increase")) if up else g.choice(("turn down", "lower", "decrease"))
        )
        signed = n if up else -n
        return _run(
            g,
            "HassSetVolumeRelative",
            ("{v} the volume by {n} {p}", "{v} [the] {x} volume by {n}", "<pls> {v} the volume {n} {p}"),
            v=lambda: g.word(verb, "volume_step", volume_step=signed),
            n=lambda: g.word(pct_text(g.rng, n), "volume_step"),
            p=p,
            x=lambda: g.named("media_player"),
        )
    if r < 0.85:
        word = (
            g.choice(("louder", "volume up", "up the volume", "a bit louder", "turn it up"))
            if up
            else g.choice(("quieter", "softer", "volume down", "a bit quieter", "turn it down"))
        )
        s = lambda: g.word(word, "volume_step", volume_step="up" if up else "down")  # noqa: E731
        return _run(
            g,
            "HassSetVolumeRelative",
            ("{s} {p}", "{s} <pls_end>", "<pls> {s}", "make it {s} {p}", "{n} {s}", "make {n} {s}"),
            s=s,
            p=p,
            n=lambda: g.named("media_player"),
        )
    word = (
        g.choice(("can't hear", "cannot hear", "barely hear", "too quiet"))
        if up
        else g.choice(("too loud", "way too loud", "so loud", "deafening"))
    )
    s = lambda: g.word(word, "volume_step", volume_step="up" if up else "down")  # noqa: E731
    t = (
        ("i {s} (it|anything|the music|the tv)", "sorry, i {s} the (tv|music)")
        if "hear" in word and "too" not in word
        else ("it's {s} {p}", "the (music|tv|volume) is {s}", "that's {s}", "this is {s}")
    )
    if "hear" in word and "can't" not in word and "cannot" not in word:
        t = ("i can {s} the (tv|music|movie)", "i can {s} anything")
    return _run(g, "HassSetVolumeRelative", t, s=s, p=p)


def _volume_plea(g: Gen) -> Result:
    """How people ask for volume without the word: "speak up", "i can't hear you", "keep it down" """
    if g.rng.random() < 0.5:
        word, t = g.choice(
            (
                (
                    "speak up",
                    ("{s} <pls_end>", "<pls> {s}", "{s} a (bit|little) {p}", "(hey|sorry|pardon), {s}"),
                ),
                (
                    "can't hear",
                    ("i {s} you", "sorry, i {s} you", "i {s} (a thing|anything|what you're saying)"),
                ),
                ("cannot hear", ("i {s} you", "i {s} (the music|the tv|anything) {p}")),
                ("barely hear", ("i can {s} you", "i can {s} (it|the music|the tv|this) {p}")),
                ("too quiet", ("it's {s} {p}", "(this|that|the music|the tv|your voice) is {s}", "way {s}")),
                (
                    "turn it up",
                    ("{s} (a bit|a notch|some|a little) {p}", "(can|could) you {s} ?", "{s}, i can't hear"),
                ),
                ("crank it up", ("{s} {p}", "{s} <pls_end>", "let's {s}")),
                ("pump it up", ("{s} {p}", "{s} <pls_end>")),
                (
                    "louder",
                    ("{s}, i can't hear (you|it)", "a (bit|little) {s} <pls_end>", "{s} (please|pls)"),
                ),
            )
        )
        up = True
    else:
        word, t = g.choice(
            (
                ("too loud", ("it's {s} {p}", "(this|that|the music|the tv) is {s}", "(way|much) {s}")),
                ("way too loud", ("it's {s} {p}", "that's {s}", "(ouch|ugh), {s}")),
                ("keep it down", ("{s} <pls_end>", "(can|could) you {s} [a bit] ?", "<pls> {s}", "{s} {p}")),
                ("tone it down", ("{s} (a bit|a little|a notch) {p}", "<pls> {s}", "{s} <pls_end>")),
                (
                    "turn it down",
                    ("{s} (a bit|a notch|a little) {p}", "(can|could) you {s} ?", "my ears hurt, {s}"),
                ),
                ("so loud", ("it's {s} i can't think", "why is it {s} {p} ?", "it's {s} {p}")),
                (
                    "loud",
                    ("not so {s} <pls_end>", "(ugh|wow) that's {s}", "it's (a bit|kind of|really) {s} {p}"),
                ),
                ("quieter", ("a (bit|little) {s} <pls_end>", "{s}, the baby is sleeping", "(shh|hush), {s}")),
                ("less loud", ("{s} <pls_end>", "can it be {s} ?")),
            )
        )
        up = False
    return _run(
        g,
        "HassSetVolumeRelative",
        t,
        s=lambda: g.word(word, "volume_step", volume_step="up" if up else "down"),
        p=lambda: _player(g),
    )


def mute(g: Gen) -> Result:
    return _media(
        g,
        "HassMediaPlayerMute",
        (
            "mute {p}",
            "mute [the] {n}",
            "<pls> mute {p}",
            "{n} mute",
            "mute (it|the sound|the tv|the music) {p}",
            "silence [the] {n}",
            "(turn|switch) off the sound {p}",
            "(kill|cut) the (sound|audio) {p}",
            "mute the {a} (speaker|tv)",
            "sound off {p}",
            "(quiet|hush) please, mute {p}",
            "no sound {p}",
            "mute everything {p}",
            "mute the audio <pls_end>",
        ),
    )


def unmute(g: Gen) -> Result:
    return _media(
        g,
        "HassMediaPlayerUnmute",
        (
            "unmute {p}",
            "unmute [the] {n}",
            "<pls> unmute {p}",
            "{n} unmute",
            "unmute (it|the sound|the tv|the music) {p}",
            "(turn|switch) the sound back on {p}",
            "bring (back|the sound back) {p}",
            "sound (back on|on) {p}",
            "restore the (sound|audio) {p}",
            "unmute the {a} (speaker|tv)",
            "un mute {p}",
            "turn on the sound again {p}",
        ),
    )


def _query(g: Gen) -> str:
    r = g.rng.random()
    words = [g.choice(lx.TITLE_WORDS) for _ in range(g.rng.choice((1, 2, 2, 3, 3, 4)))]
    if r < 0.3:
        words = ["the", *words]
    elif r < 0.5:  # made-up proper nouns: titles, bands and films are mostly names
        names = [invented_name(g.rng) for _ in range(g.rng.choice((1, 1, 2)))]
        words = names + words[: g.rng.choice((0, 0, 1))]
    if 0.78 < r <= 0.85:  # titles that contain home words must not look like commands
        return g.choice(
            (
                "the night shift",
                "kitchen nightmares",
                "living room sessions",
                "light my fire",
                "the lamp",
                "bedroom pop",
                "the garage band",
                "blinded by the light",
                "open door policy",
                "the fan club",
                "turn it on again",
                "lights out",
                "the basement tapes",
                "house of cards",
                "the timer",
                "garden party",
                "cold as ice",
                "door to door",
                "turn off the news",
                "hot in herre",
                "the weather channel",
                "the shopping list",
                "the vacuum",
                "stairway to nowhere",
            )
        )
    if r > 0.85:
        return g.choice(
            (
                "music",
                "some music",
                "the radio",
                "my playlist",
                "something relaxing",
                "jazz",
                "classical music",
                "lofi beats",
                "rock",
                "some relaxing music",
                "country music",
                "white noise",
                "rain sounds",
                "80s hits",
                "hip hop",
                "christmas music",
                "the news",
                "something upbeat",
                "my liked songs",
                "my discover weekly",
                "chill music",
            )
        )
    if r <= 0.78 and g.rng.random() < 0.25:  # a fifth of all: titles that are whole clauses
        return clause_title(g)
    text = " ".join(words)
    return text if g.rng.random() < 0.5 else text.title()


def clause_title(g: Gen) -> str:
    """A title that is a whole clause: "i still owe you the summer", "don't stop the velvet
    harbor", "here comes the echo"; lower case or title case."""
    word = g.choice(lx.TITLE_WORDS)
    noun = g.choice(lx.TITLE_NOUNS).lower()
    r = g.rng.random()
    if r < 0.35:
        tail = g.choice((*lx.TITLE_OBJECTS, f"the {word} {noun}", f"the {noun}", f"my {noun}"))
        text = f"{g.choice(lx.TITLE_SUBJECTS)} {g.choice(lx.TITLE_VERBS)} {tail}"
    elif r < 0.6:
        text = f"{g.choice(lx.TITLE_OPENERS)} {g.choice(('the ' + noun, 'the ' + word + ' ' + noun, word))}"
    else:
        text = g.choice(lx.TITLE_FRAMES).format(w=word, n=noun)
    return text if g.rng.random() < 0.5 else text.title().replace("'S", "'s").replace("'T", "'t")


def search_play(g: Gen) -> Result:
    # films and shows take a third (a quarter until build 66, a tenth until build 18): the
    # crowd-written searches for cinema showtimes, labelled out of scope, outnumbered the requests
    # to watch something at home about seven to one with a tenth, and "let's watch a film" was
    # rejected with confidence 0.96
    r = g.rng.random()
    if r < 0.27:
        return _play_title(g)
    if r < 0.33:
        return _play_by_era(g)
    if r < 0.40:
        return _play_genre(g)
    if r < 0.47:
        return _play_by_artist(g)
    if r < 0.55:
        return _play_on_service(g)
    if r < 0.59:
        return _open_provider(g)
    if r < 0.94:
        return _watch(g)
    return _play_wish(g)


_ENSEMBLES = ("Quartet", "Trio", "Orchestra", "Collective", "Brothers", "Sisters", "Ensemble")


def _artist(g: Gen) -> str:
    """An invented performer: "Marla Quintavo", "The Neon Foxes", "DJ Velkor" ..."""
    inv = invented_name(g.rng)
    word = g.choice(lx.TITLE_WORDS).title()
    return g.choice(
        (
            f"{g.choice(lx.FIRST_NAMES)} {inv}",
            f"{g.choice(lx.FIRST_NAMES)} {inv}",
            f"The {word} {g.choice(lx.BAND_NOUNS)}",
            inv,
            f"{g.choice(('DJ', 'MC', 'Lil', 'Big', 'Young'))} {inv}",
            f"{g.choice(lx.FIRST_NAMES)} and the {g.choice(lx.BAND_NOUNS)}",
            f"{inv} {g.choice(_ENSEMBLES)}",
            f"{word} {g.choice(lx.TITLE_NOUNS)}",
            f"{inv} {invented_name(g.rng)}",
        )
    )


def _film(g: Gen) -> str:
    """An invented film or show title."""
    if g.rng.random() < 0.15:
        return clause_title(g)
    word = g.choice(lx.TITLE_WORDS).title()
    noun = g.choice(lx.TITLE_NOUNS)
    inv = invented_name(g.rng)
    return g.choice(
        (
            f"The {noun}",
            f"{word} {noun}",
            f"The {noun} of {inv}",
            f"Return to {inv}",
            f"{inv}'s {noun}",
            f"{word} {noun} {g.choice(('2', '3', 'II', 'Part Two'))}",
            f"Beyond the {noun}",
            f"A {noun} in {inv}",
            f"{noun}: {word} {g.choice(lx.TITLE_WORDS).title()}",
            f"The Last {noun}",
            inv,
            f"{word} {g.choice(lx.TITLE_WORDS).title()}",
        )
    )


def _song(g: Gen) -> str:
    if g.rng.random() < 0.25:
        return clause_title(g)
    words = [g.choice(lx.TITLE_WORDS) for _ in range(g.rng.choice((1, 2, 2, 3)))]
    if g.rng.random() < 0.3:
        words.append(g.choice(lx.TITLE_NOUNS).lower())
    text = " ".join(words)
    return text.title() if g.rng.random() < 0.5 else text


def _q(text: str) -> Callable[[], Fill]:
    return lambda: Fill([(text, "search_query")], {"search_query": text})


def _mc(g: Gen, *classes: str, singular: bool = False) -> tuple[str, Callable[[], Fill]]:
    """A media class word of one of ``classes`` and the article that goes before it."""
    cls = g.choice(classes)
    words = lx.MEDIA_CLASSES[cls]
    if singular:
        words = tuple(w for w in words if not w.endswith("s") or w.endswith("series"))
    word = g.choice(words)
    article = "some" if word.endswith("s") else ("an" if word[0] in "aeiou" else "a")
    return article, lambda: Fill([(word, "media_class")], {"media_class": cls})


def _untagged(text: str) -> Callable[[], Fill]:
    return lambda: Fill([(text, None)], {})


def _era(g: Gen) -> tuple[str, str]:
    """A year or decade: (noun form, adjective form): ("the nineties", "nineties"), ("2004", "2004")."""
    if g.rng.random() < 0.4:
        year = g.rng.randint(1955, 2023)
        text = str(year)
        if g.rng.random() < 0.3:
            head, tail = divmod(year, 100)
            text = (
                f"nineteen {number_words(tail)}"
                if head == 19
                else g.choice(
                    (f"two thousand {number_words(tail)}", f"two thousand and {number_words(tail)}")
                )
            )
            if tail < 10 and head == 19:
                text = f"nineteen oh {number_words(tail)}"
        return text, text
    d = g.rng.randint(5, 12)
    words = ("fifties", "sixties", "seventies", "eighties", "nineties")
    if d >= 10:
        adj = g.choice(("2000s", "2010s", "noughties")) if d < 12 else g.choice(("2010s", "twenty tens"))
    else:
        adj = g.choice((words[d - 5], f"{d}0s", f"'{d}0s", f"19{d}0s"))
    if g.rng.random() < 0.25:
        adj = f"{g.choice(('early', 'late', 'mid'))} {adj}"
    return f"the {adj}", adj


def _play_by_era(g: Gen) -> Result:
    """ "play something from 2004", "put on a record from the nineties" """
    noun, adj = _era(g)
    p = lambda: _player(g)  # noqa: E731
    if g.rng.random() < 0.4:
        article, c = _mc(g, "track", "album", "track", "playlist")
        return _run(
            g,
            "HassMediaSearchAndPlay",
            (
                "play " + article + " {c} from {q} {p}",
                "put on " + article + " {c} from {q} {p}",
                "(i want|i would like|i'd like) to hear " + article + " {c} from {q} {p}",
                "find " + article + " {c} from {q} and play it {p}",
                "(can|could) you play " + article + " {c} from {q} {p} ?",
                "give me " + article + " {c} from {q} <pls_end>",
                "play (the|some of the) (best|biggest|top) {c} (from|of) {q} {p}",
                "<pls> put on (an old|a classic) {c} from {q}",
            ),
            c=c,
            q=_q(noun),
            p=p,
        )
    query = g.choice(
        (
            f"something from {noun}",
            f"music from {noun}",
            f"hits from {noun}",
            f"{adj} music",
            f"{adj} hits",
            f"{adj} {g.choice(lx.GENRES)}",
            f"{g.choice(lx.GENRES)} from {noun}",
            f"anything from {noun}",
            f"stuff from {noun}",
            f"the best of {noun}",
        )
    )
    return _run(
        g,
        "HassMediaSearchAndPlay",
        (
            "play {q} {p}",
            "<pls> play {q} {p}",
            "put on {q} {p}",
            "i'm in the mood for {q}",
            "let's hear {q} {p}",
            "(throw|stick) on {q} {p}",
            "play me {q} <pls_end>",
            "(can|could) we (get|have) {q} (going|playing) {p} ?",
            "i want to (hear|listen to) {q} {p}",
        ),
        q=_q(query),
        p=p,
    )


def _genre_query(g: Gen) -> tuple[str, str]:
    """(article, query): ("some", "jazz"), ("a", "symphony"), ("", "something calm")."""
    r = g.rng.random()
    if r < 0.6:
        return g.choice(("some", "some", "")), g.choice(lx.GENRES)
    if r < 0.85:
        kind = g.choice(lx.PIECE_KINDS)
        head, _, rest = kind.partition(" ")
        return (head, rest) if head in ("a", "an") else ("some", kind)
    return "", g.choice(lx.MOODS)


def _play_genre(g: Gen) -> Result:
    """ "play some jazz", "put on a symphony", "play a reggae playlist" """
    article, query = _genre_query(g)
    p = lambda: _player(g)  # noqa: E731
    if g.rng.random() < 0.25 and query in lx.GENRES:
        art, c = _mc(g, "playlist", "channel", "album")
        return _run(
            g,
            "HassMediaSearchAndPlay",
            (
                "play " + art + " {q} {c} {p}",
                "put on " + art + " {q} {c} {p}",
                "(tune in to|find and play) " + art + " {q} {c} {p}",
                "i want " + art + " {q} {c} {p}",
            ),
            q=_q(query),
            c=c,
            p=p,
        )
    a = article + " " if article else ""
    return _run(
        g,
        "HassMediaSearchAndPlay",
        (
            "play " + a + "{q} {p}",
            "<pls> play " + a + "{q} {p}",
            "put on " + a + "{q} {p}",
            "(can|could|would) you play " + a + "{q} {p} ?",
            "how about " + a + "{q} {p} ?",
            "let's have " + a + "{q} {p}",
            a + "{q} <pls_end>",
            "(stream|queue up|throw on) " + a + "{q} {p}",
            "i'm in the mood for " + a + "{q}",
            "(could|can) we listen to " + a + "{q} {p} ?",
            "play me " + a + "{q} {p}",
            "start playing " + a + "{q} {p}",
        ),
        q=_q(query),
        p=p,
    )


def _play_by_artist(g: Gen) -> Result:
    """ "play something by The Copper Owls", "play Marla Quint's new album" """
    artist = _artist(g)
    p = lambda: _player(g)  # noqa: E731
    r = g.rng.random()
    if r < 0.35:
        article, c = _mc(g, "track", "album", "track")
        return _run(
            g,
            "HassMediaSearchAndPlay",
            (
                "play " + article + " {c} by {q} {p}",
                "play the (new|latest|newest|first|last) {c} (by|from) {q} {p}",
                "play {q}'s (new|latest|first|most recent|best) {c} {p}",
                "put on " + article + " {c} by {q} {p}",
                "i want to hear " + article + " {c} by {q}",
                "(any|some) {c} by {q} <pls_end>",
            ),
            c=c,
            q=_q(artist),
            p=p,
        )
    if r < 0.55:
        both = f"{_song(g)} by {artist}"
        return _run(
            g,
            "HassMediaSearchAndPlay",
            (
                "play {q} {p}",
                "put on {q} {p}",
                "<pls> play {q}",
                "i want to hear {q} {p}",
                "can you play {q} for me ?",
            ),
            q=_q(both),
            p=p,
        )
    return _run(
        g,
        "HassMediaSearchAndPlay",
        (
            "play (something|anything|a few songs|some music|some stuff) by {q} {p}",
            "play {q} {p}",
            "put on [some] {q} {p}",
            "shuffle {q} {p}",
            "play {q} on shuffle {p}",
            "play the best of {q} {p}",
            "play {q}'s greatest hits {p}",
            "(can|could) you put on [some] {q} {p} ?",
            "let's listen to [some] {q} {p}",
            "play music by {q} <pls_end>",
        ),
        q=_q(artist),
        p=p,
    )


def _service(g: Gen, video: bool) -> Callable[[], Fill]:
    """A streaming service: not a slot (the player decides where to search)."""
    name = g.choice(lx.VIDEO_SERVICES if video else lx.MUSIC_SERVICES)
    return _untagged(g.surface(name))


def _play_on_service(g: Gen) -> Result:
    """ "play Neon Harbor on spotify", "open deezer and play some jazz", "watch X on netflix" """
    video = g.rng.random() < 0.3
    if video:
        query = _film(g)
        t: tuple[str, ...] = (
            "(watch|stream) {q} on {s} {p}",
            "put {q} on from {s} {p}",
            "open {s} and (play|put on|start) {q} {p}",
            "i want to watch {q} on {s}",
            "(find|look up) {q} on {s} and play it {p}",
            "play {q} (on|from|through) {s} {p}",
            "on {s}, (play|start) {q}",
            "(launch|fire up) {s} and put on {q}",
        )
    else:
        r = g.rng.random()
        query = _song(g) if r < 0.35 else _artist(g) if r < 0.7 else g.choice(lx.GENRES)
        t = (
            "play {q} on {s} {p}",
            "play {q} (from|using|through|via|with) {s} {p}",
            "open {s} and play {q} {p}",
            "on {s}, play {q} {p}",
            "use {s} to play {q} {p}",
            "(go to|launch|open up|fire up) {s} and (play|put on|start) {q}",
            "{s}, play {q}",
            "play {q} from my {s} (account|library)",
            "(search|look on) {s} for {q} and play it {p}",
            "stream {q} (on|from) {s} {p}",
            "<pls> play {q} on {s}",
            "i want to (hear|listen to) {q} on {s}",
            "put on {q} (on|from) {s} {p}",
        )
    return _run(g, "HassMediaSearchAndPlay", t, q=_q(query), s=_service(g, video), p=lambda: _player(g))


def _open_provider(g: Gen) -> Result:
    """ "open spotify": a music or video service alone (no search words: no slots but the player)."""
    return _run(
        g,
        "HassMediaSearchAndPlay",
        (
            "open {s} {p}",
            "<pls> open {s} {p}",
            "open [up] [the] {s} app {p}",
            "(launch|fire up|bring up|pull up|load up) {s} {p}",
            "(go to|switch to|switch over to) {s} {p}",
            "let's (go to|use|try) {s} {p}",
            "(can|could) you open {s} {p} ?",
            "i want to use {s} {p}",
            "get {s} going {p}",
        ),
        s=_service(g, g.rng.random() < 0.4),
        p=lambda: _player(g),
    )


def _watch(g: Gen) -> Result:
    """Films and shows: "i want to watch X", "put on the movie X", "i'd like to see X",
    "let's watch a film" """
    p = lambda: _player(g)  # noqa: E731
    r = g.rng.random()
    if r < 0.2:
        return _watch_any(g)
    if r < 0.5:
        _, c = _mc(g, "movie", "tv_show", "movie", singular=True)
        return _run(
            g,
            "HassMediaSearchAndPlay",
            (
                "put on the {c} {q} {o} {p}",
                "(play|start) the {c} {q} {o} {p}",
                "i want to (watch|see) the {c} {q} {o} {p}",
                "i'd like to (watch|see) the {c} {q} {o} {p}",
                "let's watch the {c} {q} {o} {p}",
                "(can|could) you put on the {c} {q} {o} {p} ?",
                "play the (first|latest|newest) episode of the {c} {q} {p}",
            ),
            c=c,
            q=_q(_film(g)),
            o=_untagged(_film_option(g)),
            p=p,
        )
    if r < 0.65:
        kind = g.choice(
            ("horror", "comedy", "sci-fi", "action", "animated", "christmas", "scary", "kids", "western",
             "romantic", "crime", "nature", "cooking", "detective", "war", "superhero")
        )  # fmt: skip
        _, c = _mc(g, "movie", "tv_show", singular=True)
        return _run(
            g,
            "HassMediaSearchAndPlay",
            (
                "put on a {q} {c} {o} {p}",
                "(i want to watch|i'd like to watch|i feel like watching) a {q} {c} {o} {p}",
                "(i want to|i'd like to) see a {q} {c} {o} {p}",
                "play a {q} {c} {p}",
                "let's watch a {q} {c} [tonight] {p}",
                "pick a (good|) {q} {c} for us (to watch|) {p}",
            ),
            q=_q(kind),
            c=c,
            o=_untagged(_film_option(g)),
            p=p,
        )
    return _run(
        g,
        "HassMediaSearchAndPlay",
        (
            "i want to watch {q} {o} {p}",
            "i'd (like|love) to (see|watch) {q} {o} {p}",
            "let's watch {q} [tonight] {p}",
            "(can|could) we watch {q} {p} ?",
            "i feel like watching {q} {p}",
            "put on {q} {o} {p}",
            "(watch|stream) {q} {o} {p}",
            "time to watch {q} {p}",
            "the kids want to watch {q} {p}",
            "i'm in the mood to watch {q}",
            "<pls> put {q} on {p}",
        ),
        q=_q(_film(g)),
        o=_untagged(_film_option(g)),
        p=p,
    )


def _film_option(g: Gen) -> str:
    """How to play it, said after a film's title or kind, half the time: "with subtitles",
    "online", "from the beginning" (no slot: the player's settings). Not "in french": build 66
    had it, and an untagged "in <word>" at the end of a request is where a weather place goes."""
    if g.rng.random() < 0.5:
        return ""
    language = g.choice(("english", "spanish", "french", "german", "italian", "hindi", "japanese"))
    return g.choice(
        (
            "with subtitles",
            f"with {language} subtitles",
            "with the subtitles on",
            "with captions",
            "in the original language",
            "online",
            "in hd",
            "in 4k",
            "from the beginning",
            "from the start",
        )
    )


def _watch_any(g: Gen) -> Result:
    """A film or show with no title: "put on a movie", "i'd like to watch a film now" """
    article, c = _mc(g, "movie", "tv_show", "movie", singular=True)
    return _run(
        g,
        "HassMediaSearchAndPlay",
        (
            "put on {a} {c} {w} {p}",
            "(i want to|i'd like to|i'd love to) watch {a} {c} {o} {w} {p}",
            "let's watch {a} {c} {w} {p}",
            "(can|could|would) you (play|put on|start) {a} {c} [for me] {p} ?",
            "i feel like watching {a} {c} {o} {w} {p}",
            "i'm in the mood (for|to watch) {a} {c} {p}",
            "play {a} {c} {w} {p}",
            "(start|begin) {a} {c} {p}",
            "<pls> put {a} {c} on {p}",
            "we want to watch {a} {c} {w} {p}",
        ),
        a=_untagged(article),
        c=c,
        w=_untagged(g.choice(("", "", "now", "right now", "tonight", "please"))),
        o=_untagged(_film_option(g)),
        p=lambda: _player(g),
    )


def _play_wish(g: Gen) -> Result:
    """First-person wishes: "i want to hear X", "i feel like listening to some jazz" """
    r = g.rng.random()
    query = _artist(g) if r < 0.35 else _song(g) if r < 0.55 else g.choice(lx.GENRES + lx.MOODS)
    some = g.choice(("some", "")) if query not in lx.MOODS and not 0.35 <= r < 0.55 else ""
    return _run(
        g,
        "HassMediaSearchAndPlay",
        (
            "i want to hear {q} {p}",
            "i feel like listening to {q} {p}",
            "i'd (love|like) to hear {q} {p}",
            "i could (really|) go for {sm} {q} [right now]",
            "i'm in the mood for {sm} {q}",
            "let me hear {sm} {q} {p}",
            "i (wanna|want to) listen to {sm} {q} {p}",
            "can i hear {sm} {q} {p} ?",
            "we'd (like|love) to hear {sm} {q} {p}",
            "i need {sm} {q} (right now|in my life|to cheer me up)",
            "i'd really like to listen to {q} {p}",
            "my (kids|daughter|son|wife|husband) (want|wants) to hear {q}",
            "i'm craving {sm} {q}",
            "(i think|maybe) i'd like {sm} {q} {p}",
            "(how about|what about) {sm} {q} {p} ?",
        ),
        q=_q(query),
        sm=_untagged(some),
        p=lambda: _player(g),
    )


def _play_title(g: Gen) -> Result:
    """ "play the album Velvet Harbor in the den" """
    q = _query(g)
    if g.rng.random() < 0.15:
        q = f"{q} by {g.choice(lx.TITLE_WORDS)} {g.choice(lx.TITLE_WORDS)}"
    qf = lambda: g.word(q, "search_query", search_query=q)  # noqa: E731
    mc = g.choice(list(lx.MEDIA_CLASSES))
    cf = lambda: g.word(g.choice(lx.MEDIA_CLASSES[mc]), "media_class", media_class=mc)  # noqa: E731
    if g.rng.random() < 0.45:
        t: tuple[str, ...] = (
            "play the {c} {q} {p}",
            "play {c} {q} {p}",
            "play the {c} (called|named|titled) {q} {p}",
            "(put on|find) the {c} (called|named) {q} {p}",
            "play the {q} {c} {p}",
            "play {q} {c} {p}",
            "put on the {c} {q} {p}",
            "<pls> play the {c} {q} {p}",
            "i want to (hear|watch|listen to) the {c} {q} {p}",
            "start the {c} {q} {p}",
            "(listen to|watch) the {c} {q} {p}",
            "queue up the {c} {q} {p}",
            "find the {c} {q} and play it {p}",
        )
        return _run(g, "HassMediaSearchAndPlay", t, q=qf, c=cf, p=lambda: _player(g))
    t = (
        "play {q} {p}",
        "<pls> play {q} {p}",
        "put on {q} {p}",
        "i want to (hear|listen to) {q} {p}",
        "(listen to|stream) {q} {p}",
        "play some {q} {p}",
        "{p} play {q}",
        "can you play {q} {p} ?",
        "play me {q} {p}",
        "start playing {q} {p}",
        "throw on {q} {p}",
        "find {q} and play it {p}",
        "let's hear {q} {p}",
        "(search for|look up) {q} and play it {p}",
        "play {q} <pls_end>",
    )
    return _run(g, "HassMediaSearchAndPlay", t, q=qf, p=lambda: _player(g))


# ------------------------------------------------------------------------------ timers
def _duration_parts(g: Gen) -> dict[str, int]:
    r = g.rng.random()
    if r < 0.45:
        return {
            "minutes": g.choice((1, 2, 3, 5, 5, 10, 10, 15, 20, 25, 30, 45))
            if g.rng.random() < 0.6
            else g.rng.randint(1, 90)
        }
    if r < 0.6:
        return {
            "seconds": g.choice((10, 15, 20, 30, 45, 90)) if g.rng.random() < 0.6 else g.rng.randint(1, 59)
        }
    if r < 0.72:
        return {"hours": g.choice((1, 1, 2, 3, 4))}
    if r < 0.86:
        return {"hours": g.choice((1, 1, 2)), "minutes": g.choice((5, 10, 15, 20, 30, 45))}
    if r < 0.96:
        return {"minutes": g.rng.randint(1, 20), "seconds": g.choice((10, 15, 20, 30, 45))}
    return {"hours": 1, "minutes": g.rng.randint(1, 59), "seconds": g.choice((10, 30))}


_UNITS = {
    "hours": ("hour", "hours", "hr", "hrs"),
    "minutes": ("minute", "minutes", "min", "mins"),
    "seconds": ("second", "seconds", "sec", "secs"),
}


def _duration_text(g: Gen, parts: dict[str, int], adjective: bool) -> str:
    special = _special_duration(g, parts, adjective)
    if special is not None:
        return special
    chunks = []
    for unit in ("hours", "minutes", "seconds"):
        if unit not in parts:
            continue
        n = parts[unit]
        names = _UNITS[unit]
        if adjective:
            name = names[0] if g.rng.random() < 0.8 else names[2]
        else:
            name = names[0] if n == 1 else names[1]
            if g.rng.random() < 0.12:
                name = names[3] if n != 1 else names[2]
        num = spoken_number(g.rng, n, 0.35)
        if n == 1 and not adjective and g.rng.random() < 0.3:
            num = "an" if unit == "hours" else "a"
        chunks.append(f"{num}{'-' if adjective and g.rng.random() < 0.15 else ' '}{name}")
    if len(chunks) == 1:
        return chunks[0]
    sep = g.choice((" and ", " ", ", "))
    return sep.join(chunks[:-1]) + (g.choice((" and ", " ")) if sep == ", " else sep) + chunks[-1]


def _special_duration(g: Gen, parts: dict[str, int], adjective: bool) -> str | None:
    if adjective or g.rng.random() > 0.35:
        return None
    if parts == {"minutes": 30}:
        return g.choice(("half an hour", "half hour", "30 minutes", "thirty minutes", "1/2 an hour"))
    if parts == {"seconds": 30}:
        return g.choice(("half a minute", "30 seconds", "thirty seconds"))
    if parts == {"hours": 1, "minutes": 30}:
        return g.choice(
            ("an hour and a half", "one and a half hours", "1 and a half hours", "1.5 hours", "90 minutes")
        )
    if parts == {"minutes": 15}:
        return g.choice(("a quarter of an hour", "quarter of an hour", "15 minutes", "fifteen minutes"))
    if parts == {"minutes": 45}:
        return g.choice(("three quarters of an hour", "45 minutes", "forty five minutes"))
    if len(parts) == 2 and parts.get("seconds") == 30 and "minutes" in parts:
        n = parts["minutes"]
        return g.choice((f"{n} and a half minutes", f"{number_words(n)} and a half minutes"))
    if len(parts) == 2 and parts.get("minutes") == 30 and "hours" in parts:
        n = parts["hours"]
        return g.choice((f"{n} and a half hours", f"{number_words(n)} and a half hours"))
    return None


def _dur_fill(g: Gen, slot: str, adjective: bool) -> Fill:
    parts = _duration_parts(g)
    text = _duration_text(g, parts, adjective)
    if text == "90 minutes":
        parts = {"minutes": 90}
    prefix = "" if slot == "duration" else "start_"
    return g.word(text, slot, **{prefix + k: v for k, v in parts.items()})


def _tname(g: Gen) -> Fill:
    rooms = {a.lower() for a in g.home.areas}  # a timer called like a room would read as the room
    name = g.choice([t for t in lx.TIMER_NAMES if t not in rooms])
    return g.word(name, "timer_name", name=name)


def start_timer(g: Gen) -> Result:
    if g.rng.random() < 0.15:
        return _timer_goes_off(g)
    r = g.rng.random()
    d = lambda: _dur_fill(g, "duration", False)  # noqa: E731
    da = lambda: _dur_fill(g, "duration", True)  # noqa: E731
    if r < 0.08:
        cmd = g.choice(lx.COMMAND_TAILS)
        return _run(
            g,
            "HassStartTimer",
            ("in {d}, {c}", "in {d} {c}", "{c} in {d}", "after {d}, {c}"),
            d=d,
            c=lambda: g.word(cmd, "conversation_command", conversation_command=cmd),
        )
    if r < 0.3:
        return _run(
            g,
            "HassStartTimer",
            (
                "set a {n} timer for {d}",
                "{n} timer (for|of) {d}",
                "start a {da} {n} timer",
                "set a timer for {d} (called|named|for) {n}",
                "timer for {d} (called|named) {n}",
                "set a {da} timer (called|named|for) {n}",
                "start a timer (called|named) {n} for {d}",
                "{da} timer for (the|my) {n}",
                "{da} {n} timer",
                "{n} timer {d}",
            ),
            d=d,
            da=da,
            n=lambda: _tname(g),
        )
    return _run(
        g,
        "HassStartTimer",
        (
            "set a timer for {d}",
            "<pls> set a timer for {d}",
            "start a timer for {d}",
            "timer for {d}",
            "{da} timer",
            "set a {da} timer",
            "start a {da} timer",
            "<pls> start a {da} timer",
            "timer {d}",
            "set timer {d}",
            "(create|make) a timer for {d}",
            "count down [from] {d}",
            "countdown {d}",
            "(start|begin) a countdown (for|of) {d}",
            "set the timer for {d}",
            "i need a timer for {d}",
            "time {d} <pls_end>",
            "can you time {d} for me",
            "put a timer on for {d}",
            "{d} timer <pls_end>",
            "give me a {da} timer",
            "let me know when {d} (is up|have passed|has passed)",
            "alert me in {d}",
            "start counting down {d}",
            "timer {d} <pls_end>",
            "set a timer (for|of) {d} <pls_end>",
            "{da} timer (please|now|starting now)",
        ),
        d=d,
        da=da,
    )


def _timer_goes_off(g: Gen) -> Result:
    """ "set a timer to go off in ten minutes": starting a timer, not shortening one."""
    return _run(
        g,
        "HassStartTimer",
        (
            "set a timer to go off in {d}",
            "set a timer that goes off in {d}",
            "<pls> set a timer to (ring|beep|go off|buzz) in {d}",
            "i need a timer (that goes off|to go off|to ring) in {d}",
            "(make|have) (a|the) timer (go off|ring) in {d}",
            "timer to go off in {d} <pls_end>",
            "(can|could) you set a timer (to go off|that rings) (in|after) {d} ?",
            "start a timer that (ends|finishes|runs out) in {d}",
            "(buzz|ping|beep at) me in {d}",
            "give me a (shout|buzz|beep) in {d}",
            "let me know (in|after) {d} <pls_end>",
            "set something to go off in {d}",
            "i want (an alert|a beep|a buzzer) in {d}",
            "in {d}, (ring|beep|buzz) (please|for me|)",
            "(ring|beep) when {d} (are|is) up",
        ),
        d=lambda: _dur_fill(g, "duration", False),
    )


def _which_timer(g: Gen) -> Fill:
    r = g.rng.random()
    if r < 0.3:
        return g.sub(g.choice(("(the|my) timer", "timer", "the current timer", "this timer")))
    if r < 0.5:
        return g.sub(
            g.choice(
                ("(the|my) {n} timer", "{n} timer", "the timer (for|called|named) {n}", "timer for {n}")
            ),
            n=lambda: _tname(g),
        )
    if r < 0.75:
        return g.sub(
            g.choice(("(the|my) {s} timer", "{s} timer", "the timer for {s}", "timer for {s}")),
            s=lambda: _dur_fill(g, "start_duration", g.rng.random() < 0.5),
        )
    return g.sub(
        g.choice(("(the|my) {a} timer", "{a} timer", "the timer in the {a}", "timer in {a}")), a=g.area
    )


def cancel_timer(g: Gen) -> Result:
    return _run(
        g,
        "HassCancelTimer",
        (
            "cancel {w}",
            "stop {w}",
            "<pls> cancel {w}",
            "(delete|remove|kill|end|clear) {w}",
            "turn off {w}",
            "{w} cancel",
            "(forget|scrap|drop) {w}",
            "cancel {w} <pls_end>",
            "i don't need {w} anymore",
            "get rid of {w}",
            "{w} off",
            "(abort|dismiss) {w}",
            "never mind {w}",
            "switch off {w}",
        ),
        w=lambda: _which_timer(g),
    )


def cancel_all_timers(g: Gen) -> Result:
    return _run(
        g,
        "HassCancelAllTimers",
        (
            "cancel all [my|the] timers",
            "stop all [of] [my|the] timers",
            "(delete|clear|remove|kill) all [the] timers",
            "cancel every timer",
            "<pls> cancel all timers",
            "(turn off|stop) every timer",
            "cancel all [the] timers in the {a}",
            "cancel all [the] {a} timers",
            "stop all [the] timers (in|for) [the] {a}",
            "clear every timer [i have]",
            "get rid of all [my] timers",
            "cancel (both|all) timers",
            "no more timers, cancel them all",
            "reset all [the] timers",
        ),
        a=g.area,
    )


def pause_timer(g: Gen) -> Result:
    return _run(
        g,
        "HassPauseTimer",
        (
            "pause {w}",
            "<pls> pause {w}",
            "hold {w}",
            "(freeze|suspend) {w}",
            "put {w} on hold",
            "{w} pause",
            "pause {w} <pls_end>",
            "stop {w} for a moment",
            "halt {w} for now",
            "pause {w} for a (sec|second|minute)",
        ),
        w=lambda: _which_timer(g),
    )


def unpause_timer(g: Gen) -> Result:
    return _run(
        g,
        "HassUnpauseTimer",
        (
            "(resume|unpause|continue) {w}",
            "<pls> resume {w}",
            "restart {w}",
            "start {w} again",
            "{w} (resume|continue)",
            "keep going with {w}",
            "(resume|continue) {w} <pls_end>",
            "let {w} (run|continue|keep running)",
            "unfreeze {w}",
            "take {w} off hold",
        ),
        w=lambda: _which_timer(g),
    )


def timer_status(g: Gen) -> Result:
    return _run(
        g,
        "HassTimerStatus",
        (
            "how much time is left on {w} ?",
            "how (long|much time) (is )?left on {w} ?".replace("(is )?", "[is]"),
            "{w} status",
            "status of {w}",
            "what's the status of {w} ?",
            "how long until {w} (is done|goes off|rings) ?",
            "check {w}",
            "how much longer on {w} ?",
            "time left on {w} ?",
            "when will {w} (go off|finish|be done) ?",
            "how are my timers (doing|going) ?",
            "how much time do i have left ?",
            "what's left on {w} ?",
            "timer status",
            "is {w} (almost done|done yet|finished) ?",
            "how many minutes are left on {w} ?",
            "(any|what) timers (running|going) ?",
            "tell me how much time is left on {w}",
            "remaining time on {w} ?",
            "where is {w} at ?",
        ),
        w=lambda: _which_timer(g),
    )


def _amount(g: Gen) -> Fill:
    return _dur_fill(g, "duration", False)


def increase_timer(g: Gen) -> Result:
    return _run(
        g,
        "HassIncreaseTimer",
        (
            "add {d} to {w}",
            "<pls> add {d} to {w}",
            "(increase|extend|lengthen) {w} by {d}",
            "give {w} {d} more",
            "add {d} [more] to {w}",
            "put {d} more on {w}",
            "(add|tack on) (another|an extra) {d} to {w}",
            "{w} plus {d}",
            "(extend|increase) {w} {d}",
            "add {d} to it",
            "add {d} <pls_end>",
            "(bump|push) {w} (up|back) by {d}",
            "make {w} {d} longer",
            "i need {d} more on {w}",
        ),
        d=lambda: _amount(g),
        w=lambda: _which_timer(g),
    )


def decrease_timer(g: Gen) -> Result:
    return _run(
        g,
        "HassDecreaseTimer",
        (
            "(take|knock) {d} off {w}",
            "(remove|subtract) {d} from {w}",
            "(decrease|reduce|shorten|cut) {w} by {d}",
            "<pls> take {d} off {w}",
            "take {d} from {w}",
            "{w} minus {d}",
            "make {w} {d} shorter",
            "(cut|shave) {d} off {w}",
            "(decrease|lower) {w} {d}",
            "take away {d} from {w}",
            "(remove|take off) {d} <pls_end>",
            "reduce it by {d}",
        ),
        d=lambda: _amount(g),
        w=lambda: _which_timer(g),
    )


# ------------------------------------------------------------------------------ lists
_CHORE_ITEMS = frozenset(lx.CHORES) | frozenset(i for i in lx.ITEMS if i.split()[0] in lx.CHORE_VERBS)
_GOODS = tuple(i for i in lx.ITEMS if i not in _CHORE_ITEMS)  # what a shopping list holds


def _item(g: Gen, shopping: bool = False) -> Fill:
    """One item, or several in one span ("eggs, milk and bread"): HA's list intents read the
    whole wildcard as one item, and so does build_slots. The shopping list gets goods, not chores."""
    pool = _GOODS if shopping else lx.ITEMS
    if g.rng.random() < 0.15:
        items = g.rng.sample(pool, g.rng.choice((2, 2, 3)))
        head = ", ".join(items[:-1])
        text = f"{head}{g.choice((' and ', ', and ', ' and ', ', '))}{items[-1]}"
        return g.word(text, "item", item=text)
    item = g.choice(pool)
    return g.word(item, "item", item=item)


def _list_name(g: Gen) -> Fill:
    name = g.choice(g.home.lists or list(lx.LIST_NAMES))
    return g.word(g.surface(name), "list_name", name=name)


def shopping_add(g: Gen) -> Result:
    if g.rng.random() < 0.4:
        return _shopping_indirect(g)
    return _shopping_direct(g)


def _is_plural(item: str) -> bool:
    """ "eggs", "milk and bread" are plural, "milk", "a dozen eggs" are not (for "is"/"are", "it"/"them")."""
    words = item.split()
    if " and " in item or "," in item or words[0] in ("two", "three", "six") or words[0].isdigit():
        return True
    if words[0] in ("a", "an", "one"):
        return False
    return words[-1].endswith("s") and not words[-1].endswith(("ss", "us"))


def _shopping_indirect(g: Gen) -> Result:
    """Indirect and passive: "i need eggs added to my shopping list", "milk should go on the list" """
    item = _item(g, shopping=True)
    many = _is_plural(item.pieces[0][0])
    it, be, needs = ("them", "are", "need") if many else ("it", "is", "needs")
    return _run(
        g,
        "HassShoppingListAddItem",
        (
            "i need {i} added to (my|the|our) shopping list",
            "i'd like {i} (added to|put on) (my|the) shopping list",
            "(my|the|our) shopping list should (also|) (have|include) {i}",
            "(throw|toss|chuck|pop|stick|slap) {i} (on|onto) (my|the) (shopping list|list)",
            "{i} " + needs + " to go on the (shopping list|list)",
            "{i} should (go|be) on (my|the) shopping list",
            "don't let me forget {i} (on the shopping list|when i go shopping|for the shopping)",
            "make a note (that we need|to buy|to get) {i} on the shopping list",
            "(could|can) you make sure {i} " + be + " on the shopping list ?",
            "we're (all out of|running low on|nearly out of|down to the last of the) {i}, (put|stick) "
            + it
            + " on the (shopping list|list)",
            "(oh and|also|and) {i} for the shopping list",
            "shopping list: {i}",
            "one more thing for the shopping list: {i}",
            "next time i go shopping i need {i}, (add|put) " + it + " (on|to) the list",
            "let's (add|put) {i} (to|on) the shopping list",
            "to the shopping list add {i}",
            "(the|our) shopping list needs {i}",
            "(we|i) (should|need to|have to) (buy|get|pick up) {i}, (put|add) "
            + it
            + " (on|to) (my|the|our) "
            "shopping list",
            "can {i} go on the shopping list ?",
            "i'm going to need {i}, (add|put) " + it + " (on|to) my shopping list <pls_end>",
            "(please|) (note|jot) down {i} for the shopping list",
            "{i} (too|as well), on the shopping list <pls_end>",
        ),
        i=lambda: item,
    )


def _shopping_direct(g: Gen) -> Result:
    """ "add eggs to my shopping list" """
    return _run(
        g,
        "HassShoppingListAddItem",
        (
            "add {i} to [my|the] shopping list",
            "put {i} on [my|the] shopping list",
            "<pls> add {i} to the shopping list",
            "shopping list add {i}",
            "add {i} to the list",
            "put {i} on the list",
            "(we need|i need) {i}, add (it|them) to the shopping list",
            "(remember|don't let me forget) to buy {i}",
            "{i} on the shopping list",
            "(stick|write|jot) {i} on the shopping list",
            "(note down|write down) {i} for shopping",
            "we're (out of|low on) {i}, add (it|them) to the (shopping list|list)",
            "can you add {i} to my shopping list ?",
            "i want to buy {i}, put (it|them) on the list",
            "include {i} in the shopping list",
            "add {i} <pls_end> to the shopping list",
        ),
        i=lambda: _item(g, shopping=True),
    )


def shopping_complete(g: Gen) -> Result:
    return _run(
        g,
        "HassShoppingListCompleteItem",
        (
            "check off {i} (from|on) [my|the] shopping list",
            "check {i} off [my|the] (shopping list|list)",
            "cross {i} off [my|the] shopping list",
            "mark {i} as (done|bought|complete|purchased) [on the shopping list]",
            "complete {i} on [my|the] shopping list",
            "remove {i} from [my|the] shopping list",
            "(delete|take) {i} off the shopping list",
            "i (got|bought|picked up) {i}, check (it|them) off",
            "<pls> check off {i} from the list",
            "tick off {i} on the shopping list",
            "{i} (is|are) done on the shopping list",
            "(scratch|strike) {i} off the shopping list",
            "(delete|remove|erase) {i} (in|from|on) [my|the] (shopping list|list)",
            "check {i} off my list",
            "{i} can come off the (shopping list|list)",
            "(got|bought) {i}, (remove|cross) (it|them) off the list",
        ),
        i=lambda: _item(g, shopping=True),
    )


def list_add(g: Gen) -> Result:
    r = g.rng.random()
    if r < 0.25:
        return _todo_chore(g)
    if r < 0.45:
        return _list_indirect(g)
    return _list_direct(g)


_TODO_WORDS = (
    "to-do",
    "to do",
    "todo",
    "chore",
    "tasks",
    "jobs",
    "honey do",
    "housework",
    "errands",
)


def _todo_list(g: Gen) -> Fill:
    """The list chores go on: the home's to-do-like list, or the words people use for one."""
    own = [n for n in g.home.lists if n.lower() in ("to do", "todo", "housework", "honey do", "errands")]
    spoken = g.surface(g.choice(own)) if own and g.rng.random() < 0.6 else g.choice(_TODO_WORDS)
    resolved = g.home.resolve_list(spoken)
    return g.word(spoken, "list_name", name=resolved if resolved is not None else spoken)


def _todo_chore(g: Gen) -> Result:
    """Chores go on a to-do list (HassListAddItem), not the shopping list."""
    chore = g.choice(lx.CHORES)
    return _run(
        g,
        "HassListAddItem",
        (
            "(put {c} on|add {c} to) (my|the|our) {l} list",
            "<pls> add {c} to my {l} list",
            "i (need|have|still have) to {c}, (add|put) (it|that) (to|on) (my|the) {l} list",
            "{l} list: {c}",
            "(stick|jot|write) {c} (down|) on the {l} list",
            "the {l} list should (also|) have {c} (on it|)",
            "{c} needs to go on the {l} list",
            "(throw|toss|pop) {c} on my {l} list",
            "don't let me forget to {c}, (add|put) it (to|on) the {l} list",
            "(new|one more) (task|job|chore|item) for the {l} list: {c}",
            "(can|could) you add {c} to (my|our) {l} list ?",
            "(i need|i'd like) {c} added to (my|the) {l} list",
            "{c}, (add|put) that on the {l} list",
            "add a (task|reminder|note) to {c} (to|on) my {l} list",
            "on the {l} list (put|add) {c}",
            "(someone needs|we need) to {c}, (put|add) it on the {l} list",
        ),
        c=lambda: g.word(chore, "item", item=chore),
        l=lambda: _todo_list(g),
    )


def _list_indirect(g: Gen) -> Result:
    """Passive and indirect requests to a named list: "the camping list should also have a tent" """
    item = _item(g)
    many = _is_plural(item.pieces[0][0])
    be, needs = ("are", "need") if many else ("is", "needs")
    return _run(
        g,
        "HassListAddItem",
        (
            "i need {i} added to (my|the|our) {l} list",
            "the {l} list should (also|) (have|include) {i}",
            "{i} " + needs + " to go on the {l} list",
            "(throw|toss|pop|stick) {i} (on|onto) (my|the) {l} list",
            "can {i} go on the {l} list ?",
            "(please|) make sure {i} " + be + " on the {l} list",
            "{l} list: {i}",
            "don't let me forget {i}, put " + ("them" if many else "it") + " on the {l} list",
            "(oh and|also) {i} for the {l} list",
            "i'd like {i} on (my|the) {l} list",
            "the {l} list needs {i}",
        ),
        i=lambda: item,
        l=lambda: _list_name(g),
    )


def _list_direct(g: Gen) -> Result:
    """ "add eggs to my groceries list" """
    return _run(
        g,
        "HassListAddItem",
        (
            "add {i} to [my|the] {l} list",
            "put {i} on [my|the] {l} list",
            "<pls> add {i} to my {l} list",
            "{l} list add {i}",
            "(stick|write|jot) {i} on the {l} list",
            "add {i} to {l}",
            "on my {l} list put {i}",
            "can you add {i} to the {l} list ?",
            "i need {i}, put it on the {l} list",
            "include {i} on the {l} list",
            "add {i} to the {l} list <pls_end>",
            "(new|add an) item on the {l} list: {i}",
        ),
        i=lambda: _item(g),
        l=lambda: _list_name(g),
    )


def list_complete(g: Gen) -> Result:
    return _run(
        g,
        "HassListCompleteItem",
        (
            "check off {i} (from|on) [my|the] {l} list",
            "check {i} off [my|the] {l} list",
            "cross {i} off [my|the] {l} list",
            "mark {i} as (done|complete|finished) on [my|the] {l} list",
            "complete {i} on [my|the] {l} list",
            "remove {i} from [my|the] {l} list",
            "(remove|delete|erase) {i} (on|in|off) [my|the] {l} list",
            "check {i} off from [my|the] {l} list",
            "(delete|take) {i} off the {l} list",
            "<pls> check off {i} on my {l} list",
            "tick off {i} on the {l} list",
            "(scratch|strike) {i} off the {l} list",
            "{i} is done on my {l} list",
            "i finished {i}, check it off my {l} list",
        ),
        i=lambda: _item(g),
        l=lambda: _list_name(g),
    )


# ------------------------------------------------------------------------------ info
_FORECAST_DAYS = (
    "today",
    "tonight",
    "tomorrow",
    "this afternoon",
    "this evening",
    "this week",
    "this weekend",
    "next week",
    "on saturday",
    "on sunday",
    "on friday",
    "saturday",
    "on monday",
    "tomorrow morning",
    "each night this week",
    "over the next few days",
    "later",
)


def weather(g: Gen) -> Result:
    r = g.rng.random()
    if r < 0.4:
        return _weather_common(g)
    if r < 0.58:
        return _weather_condition_at(g)
    if r < 0.7:
        return _weather_forecast_for(g)
    if r < 0.86:
        return _weather_element(g)
    return _weather_comparative(g)


def _place(g: Gen) -> Fill:
    """A place the forecast is for: a known city, somewhere far or unusual, or an invented town."""
    r = g.rng.random()
    if r < 0.45:
        place = g.choice(lx.WEATHER_PLACES)
    elif r < 0.85:
        place = g.choice(lx.FAR_PLACES)
    else:
        place = invented_name(g.rng) + g.choice(lx.TOWN_ENDINGS)
    return g.word(g.surface(place), "name", name=place)


def _clock(g: Gen) -> str:
    """ "7 pm", "half past three", "10:30", "noon" """
    h = g.rng.randint(1, 12)
    return g.choice(
        (
            f"{h} (am|pm)",
            f"{h} o'clock",
            f"{h}:{g.choice(('00', '15', '30', '45'))}",
            f"half past {number_words(h)}",
            f"{number_words(h)} (am|pm|in the morning|in the afternoon|in the evening)",
            "(noon|midday|midnight|lunchtime|dawn|sunrise|dinner time)",
        )
    )


def _when(g: Gen) -> Fill:
    """A later time the question is about (never a slot): "3 hours from now", "on may 4th" ..."""
    n = g.rng.randint(2, 9)
    day = g.rng.randint(1, 28)
    nth = f"{day}{'st' if day in (1, 21) else 'nd' if day in (2, 22) else 'rd' if day in (3, 23) else 'th'}"
    options = (
        f"{spoken_number(g.rng, n, 0.5)} hours from now",
        f"in {spoken_number(g.rng, n, 0.5)} hours",
        "in a couple of hours",
        f"in {spoken_number(g.rng, n, 0.5)} days",
        f"{spoken_number(g.rng, n, 0.5)} days from now",
        f"on {g.choice(lx.MONTHS)} {g.choice((nth, str(day)))}",
        f"on the {nth} of {g.choice(lx.MONTHS)}",
        f"on the {nth}",
        "at " + _clock(g),
        "tomorrow at " + _clock(g),
        "around " + _clock(g),
        f"(on|this|next|this coming) {g.choice(lx.WEEKDAYS)} [morning|afternoon|evening|night]",
        f"{g.choice(lx.WEEKDAYS)} (morning|afternoon|evening|night)",
        "(this|next|over the) weekend",
        "(at|around) midday",
        "the day after tomorrow",
        "later (today|tonight|this week)",
        "(by|in the) (morning|evening|afternoon)",
        "early tomorrow [morning]",
        "over the next (few|couple of|three|five) days",
        "for the rest of the week",
        "by the end of the week",
        f"in {g.choice(lx.MONTHS)}",
        "tonight",
        "tomorrow",
    )
    return g.sub(g.choice(options))


def _weather_condition_at(g: Gen) -> Result:
    """ "will it be foggy in Bergen two hours from now?" """
    cond = g.choice(lx.WEATHER_CONDITIONS)
    return _run(
        g,
        "HassGetWeather",
        (
            "will it be " + cond + " in {p} {d} ?",
            "will it be " + cond + " {d} in {p} ?",
            "is it (going to|gonna|supposed to|meant to|likely to) be " + cond + " in {p} {d} ?",
            "(do you think|do you know if) it'll be " + cond + " in {p} {d} ?",
            "(should i|can i) expect it to be " + cond + " in {p} {d} ?",
            "what are the chances it's " + cond + " in {p} {d} ?",
            "{d}, will it be " + cond + " in {p} ?",
            "in {p} {d}, is it going to be " + cond + " ?",
            "is {p} going to be " + cond + " {d} ?",
            "will {p} be " + cond + " {d} ?",
            "is there a chance it'll be " + cond + " {d} ?",
            "how likely is it to be " + cond + " in {p} {d} ?",
            "tell me if it's going to be " + cond + " {d} [in {p}]",
            "<pls> check whether it will be " + cond + " in {p} {d}",
            "i'm (heading|going|flying|driving) to {p} {d}, will it be " + cond + " [there] ?",
        ),
        p=lambda: _place(g),
        d=lambda: _when(g),
    )


def _weather_forecast_for(g: Gen) -> Result:
    """ "what's the forecast for Zermatt during the holidays?" """
    return _run(
        g,
        "HassGetWeather",
        (
            "what's the (forecast|weather forecast|outlook) for {p} {e} ?",
            "what (is|will) the weather (be|look) like in {p} {e} ?",
            "(give me|read me|get me|pull up) the forecast for {p} {e}",
            "how's the weather (looking|shaping up) (in|for) {p} {e} ?",
            "what kind of weather (should we expect|are we looking at|can i expect) in {p} {e} ?",
            "(forecast|weather) for {p} {e} <pls_end>",
            "i'd like (to know|to see) the forecast for {p} {e}",
            "any idea what the weather will do in {p} {e} ?",
            "what weather is (expected|predicted|forecast) (for|in) {p} {e} ?",
            "what should i pack for {p} {e}, weather wise ?",
            "<pls> look up the (weather|forecast) in {p} {d}",
            "what's the weather going to be in {p} {d} ?",
            "(weather|forecast) {p} {d}",
            "what will it be like (in|at) {p} {d} ?",
            "how's the weather in {p} {d} looking ?",
        ),
        p=lambda: _place(g),
        e=lambda: g.sub(g.choice(lx.WEATHER_EVENTS)),
        d=lambda: _when(g),
    )


def _weather_element(g: Gen) -> Result:
    """Humidity, wind, sun, rain, snow ... at a place and a time."""
    return _run(
        g,
        "HassGetWeather",
        (
            "how (humid|windy|sunny|wet|foggy|stormy) (is it|will it be|is it going to be) [in {p}] {d} ?",
            "what's the humidity [going to be] [like] (in|at) {p} {d} ?",
            "(what will the humidity be|what's the humidity going to be) {d} ?",
            "how strong (will the wind be|is the wind going to be) [in {p}] {d} ?",
            "what's the wind (speed|forecast|chill) (in|for) {p} {d} ?",
            "will the sun (come out|be out|shine) [in {p}] {d} ?",
            "will there be (sunshine|any sun|blue skies|clear skies) (in {p}|) {d} ?",
            "what's the chance of (rain|snow|showers|thunderstorms|hail) [in {p}] {d} ?",
            "how much (rain|snow) (is expected|are they forecasting|will fall|will there be) [in {p}] {d} ?",
            "how many (inches|centimeters) of snow will {p} get {d} ?",
            "is there (snow|rain|hail|frost|fog|a storm) in the forecast (for {p}|) {d} ?",
            "(will|is) it (going to|gonna) (hail|drizzle|pour|sleet|thunder|be foggy) [in {p}] {d} ?",
            "is there any (frost|fog|black ice|wind) expected [in {p}] {d} ?",
            "what's the uv index [in {p}] {d} ?",
            "(do i|will i) need (sunscreen|sunglasses|a raincoat|snow boots|gloves) [in {p}] {d} ?",
            "is a (heat wave|cold snap|storm|blizzard) (coming|on the way|expected) [to {p}] {d} ?",
            "(any|is there) rain (coming|on the way|due) [in {p}] {d} ?",
            "when is the rain (supposed to|going to) (stop|start) [in {p}] ?",
            "will it stay dry [in {p}] {d} ?",
            "how (cloudy|breezy|misty) will it be [in {p}] {d} ?",
        ),
        p=lambda: _place(g),
        d=lambda: _when(g),
    )


def _weather_comparative(g: Gen) -> Result:
    """ "will it be colder tomorrow?": the weather outside later, not the room (that is
    EdgeClimateSetRelative: "it's cold in here")."""
    return _run(
        g,
        "HassGetWeather",
        (
            "will it be (colder|warmer|hotter|cooler|chillier|wetter|windier|sunnier) {d} [in {p}] ?",
            "is it (going to|gonna|supposed to) (be|get) (colder|warmer|hotter|chilly|cold|hot|cooler) {d} "
            "[in {p}] ?",
            "is {d} going to be (colder|warmer|hotter|nicer|wetter) than today ?",
            "will it (cool down|warm up|heat up|get cold|get chilly) [in {p}] {d} ?",
            "is the temperature (going to|supposed to) (drop|rise|climb|fall) {d} [in {p}] ?",
            "how (cold|hot|warm|chilly) (will it be|is it going to get) (in {p}|outside) {d} ?",
            "will it be (chilly|cold|warm|hot|freezing) outside {d} ?",
            "(does|will) it get (cold|chilly|hot) (in {p}|out) at night [{d}] ?",
            "is it going to be (colder|warmer) in {p} than here {d} ?",
            "will the weekend be (hotter|colder|warmer|cooler) than this week ?",
            "(should i|do i need to) dress (warmer|warm|lighter) {d} ?",
            "how much (colder|warmer) will it be {d} [in {p}] ?",
            "will it freeze (tonight|overnight) [in {p}] ?",
            "is it going to be (cold|hot|chilly) (out|outside) (today|tonight|later) ?",
        ),
        p=lambda: _place(g),
        d=lambda: _when(g),
    )


def _weather_common(g: Gen) -> Result:
    """ "what's the weather like in Oslo?", "will it rain today?" """
    return _run(
        g,
        "HassGetWeather",
        (
            "what's the weather [like] [today|right now|outside] ?",
            "how's the weather [today|outside] ?",
            "what is the weather [like] ?",
            "weather <pls_end>",
            "tell me the weather",
            "what's the weather (like )?in {p} ?".replace("(like )?", "[like] "),
            "how is the weather in {p} ?",
            "what's it like outside ?",
            "weather in {p}",
            "what's the weather doing ?",
            "<pls> tell me the weather in {p}",
            "is it (raining|sunny|cloudy|snowing) [outside] ?",
            "what are the conditions outside ?",
            "(current|today's) weather",
            "what's the {p} weather [like] ?",
            "how's it looking outside ?",
            "is it nice out ?",
            "(give me|check) the weather [for {p}]",
            "what's the weather in {p} right now ?",
            "is it (cold|warm|hot) outside ?",
            # the outlook and the forecast of a later day are the weather too
            "is it going to (rain|snow) [today|tonight|this afternoon] ?",
            "will it (rain|snow) today ?",
            "do i need (an umbrella|a jacket|a coat) [today] ?",
            "should i (take|bring) an umbrella [today] ?",
            "will it (rain|snow|be sunny|be windy) {d} ?",
            "is it (going to|gonna) (rain|snow|be hot|be cold|freeze) {d} [in {p}] ?",
            "what's the weather (going to|gonna) be like [{d}] ?",
            "what is the forecast (for|in) {p} ?",
            "what's the forecast [for] {d} ?",
            "(what's|what is|give me) the (forecast|weather forecast|weather) for {d} [in {p}]",
            "how (cold|hot|warm) will it get {d} ?",
            "(are|is) (storms|thunderstorms|snow|rain|frost) (likely|expected|coming) {d} ?",
            "what will the weather be like {d} [in {p}] ?",
            "how's the weather looking {d} ?",
            "what's the high (for|on) {d} ?",
        ),
        d=lambda: Fill([(g.choice(_FORECAST_DAYS), None)], {}),
        p=lambda: _place(g),
    )


def current_time(g: Gen) -> Result:
    if g.rng.random() < 0.3:
        return _time_yet(g)
    return _run(
        g,
        "HassGetCurrentTime",
        (
            "do you have the time [please] ?",
            "have you got the time [please] ?",
            "what time (have you got|do you make it) ?",
            "what time is it at the moment ?",
            "i need the time <pls_end>",
            "tell me what time it is <pls_end>",
            "(can|could|may) i (get|have) the time ?",
            "how late is it [now|getting] ?",
            "what does the clock say ?",
            "(sorry|excuse me), what time is it ?",
            "what's the time right now <pls_end>",
            "what time is it [now|right now] ?",
            "what's the time ?",
            "tell me the time",
            "<pls> tell me the time",
            "do you know what time it is ?",
            "time please",
            "what's the current time ?",
            "(got|have you got) the time ?",
            "what time (do we have|have we got) ?",
            "current time",
            "what hour is it ?",
            "how late is it ?",
            "time check",
            "(could|can) you tell me the time ?",
            "the time <pls_end>",
            "what time is it (here|at home) ?",
            "what's the time now ?",
        ),
    )


def _time_yet(g: Gen) -> Result:
    """ "is it five o'clock yet?": the answer is the time."""
    h = g.rng.randint(1, 12)
    hour = spoken_number(g.rng, h, 0.5)
    at = g.choice((f"{hour} o'clock", f"{hour}", f"{hour} (am|pm)", f"half past {hour}", f"{hour} thirty",
                   "(noon|midnight|lunchtime|midday)"))  # fmt: skip
    return _run(
        g,
        "HassGetCurrentTime",
        (
            "is it " + at + " yet ?",
            "is it (already|nearly|almost) " + at + " ?",
            "is it past " + at + " (yet|already|) ?",
            "has it gone " + at + " yet ?",
            "is it after " + at + " ?",
            "are we past " + at + " yet ?",
            "what time is it, is it " + at + " yet ?",
            "it's not " + at + " yet, is it ?",
        ),
    )


def current_date(g: Gen) -> Result:
    return _run(
        g,
        "HassGetCurrentDate",
        (
            "what's the name of the day today ?",
            "what's today called ?",
            "what day of the week is it [today] ?",
            "which day of the week is (today|it) ?",
            "today is what day ?",
            "what's the day today ?",
            "(can|could) you tell me what day it is ?",
            "what date is it today <pls_end>",
            "is today the (first|fifth|tenth|twelfth|twentieth|thirty first) ?",
            "what month (is it|are we in) ?",
            "i lost track of the days, what day is it ?",
            "what's the (full|exact) date [today] ?",
            "what's today's date <pls_end>",
            "what day are we on ?",
            "what's the date [today] ?",
            "what is today's date ?",
            "what day is it [today] ?",
            "tell me the date",
            "<pls> tell me today's date",
            "what's today ?",
            "what date is it [today] ?",
            "which day is it today ?",
            "(today's|current) date",
            "what day of the (week|month) is it ?",
            "do you know the date ?",
            "date please",
            "what's the date today <pls_end>",
            "is it (monday|tuesday|friday) today ?",
            "(what|which) day are we ?",
        ),
    )


def broadcast(g: Gen) -> Result:
    msg = g.choice(lx.BROADCAST_MESSAGES)
    m = lambda: g.word(msg, "message", message=msg)  # noqa: E731
    return _run(
        g,
        "HassBroadcast",
        (
            "broadcast [that] {m}",
            "announce [that] {m}",
            "<pls> announce {m}",
            "tell (everyone|the whole house|the house) [that] {m}",
            "make an announcement {m}",
            "(shout|say) to (everyone|the house) [that] {m}",
            "broadcast {m} <pls_end>",
            "let everyone know [that] {m}",
            "announce to the house {m}",
            "send a broadcast: {m}",
            "intercom {m}",
            "announce on all speakers {m}",
        ),
        m=m,
    )


def nevermind(g: Gen) -> Result:
    return _run(
        g,
        "HassNevermind",
        (
            "never mind",
            "nevermind",
            "forget it",
            "forget about it",
            "nothing",
            "never mind <pls_end>",
            "oops never mind",
            "sorry, never mind",
            "ignore that",
            "ignore me",
            "scratch that",
            "that's all",
            "no thanks",
            "nah forget it",
            "cancel that",
            "oh nothing",
            "disregard that",
            "my mistake, never mind",
            "stop listening",
            "wrong button",
            "oh never mind then",
            "i changed my mind",
            "cancel the last (input|command|request)",
            "ignore (the|my) (previous|last) (command|request|instruction)",
            "disregard (my|the) last (request|command|thing i said)",
            "forget (what i just said|what i said|my last request|that last one)",
            "never mind (what i said|my last request|the last thing)",
            "don't (do|worry about) (that|it)",
            "(stop|wait), i didn't mean (that|it)",
            "that was a mistake, ignore it",
            "false alarm",
            "cancel (my|the|that) request",
            "scratch that last (one|command|bit)",
            "please ignore (that|me|the last command)",
            "i didn't mean to (ask|say that|wake you)",
            "no, never mind",
            "actually, forget it",
            "(oh|uh|um) nothing, (forget|ignore) it",
            "cancel, cancel",
            "never mind, i'll do it myself",
            "(oops|whoops), wrong (command|thing)",
            "nothing, sorry",
            "leave it",
        ),
    )


MAKERS: dict[str, Callable[[Gen], Result]] = {
    "HassTurnOn": turn_on,
    "HassTurnOff": turn_off,
    "HassToggle": toggle,
    "HassGetState": get_state,
    "HassLightSet": light_set,
    "HassSetPosition": set_position,
    "HassStopMoving": stop_moving,
    "HassClimateSetTemperature": climate_set,
    "HassClimateGetTemperature": climate_get,
    "HassFanSetSpeed": fan_speed,
    "HassVacuumStart": vacuum_start,
    "HassVacuumReturnToBase": vacuum_dock,
    "HassLawnMowerStartMowing": mower_start,
    "HassLawnMowerDock": mower_dock,
    "HassMediaPause": media_pause,
    "HassMediaUnpause": media_unpause,
    "HassMediaNext": media_next,
    "HassMediaPrevious": media_previous,
    "HassSetVolume": set_volume,
    "HassSetVolumeRelative": volume_relative,
    "HassMediaPlayerMute": mute,
    "HassMediaPlayerUnmute": unmute,
    "HassMediaSearchAndPlay": search_play,
    "HassStartTimer": start_timer,
    "HassCancelTimer": cancel_timer,
    "HassCancelAllTimers": cancel_all_timers,
    "HassPauseTimer": pause_timer,
    "HassUnpauseTimer": unpause_timer,
    "HassTimerStatus": timer_status,
    "HassIncreaseTimer": increase_timer,
    "HassDecreaseTimer": decrease_timer,
    "HassListAddItem": list_add,
    "HassListCompleteItem": list_complete,
    "HassShoppingListAddItem": shopping_add,
    "HassShoppingListCompleteItem": shopping_complete,
    "HassGetWeather": weather,
    "HassGetCurrentTime": current_time,
    "HassGetCurrentDate": current_date,
    "HassBroadcast": broadcast,
    "HassNevermind": nevermind,
    "EdgeLightSetRelative": light_relative,
    "EdgeClimateSetRelative": climate_relative,
}

# relative sampling weights: the broad, slot-heavy intents get more examples
WEIGHTS: dict[str, float] = {
    "HassTurnOn": 4.0,
    "HassTurnOff": 4.0,
    "HassGetState": 5.0,
    "HassLightSet": 3.0,
    "HassToggle": 0.8,
    "HassSetPosition": 1.3,
    "HassStartTimer": 2.0,
    # titles, eras, genres, artists, services, films, wishes: 5 since build 66 (3 before; the
    # frozen-encoder probe in docs/model.md, "Build 66", chose it)
    "HassMediaSearchAndPlay": 5.0,
    "HassGetWeather": 1.4,  # now, later at a place, an element, warmer/colder outside
    "HassListAddItem": 1.2,
    "HassClimateSetTemperature": 1.3,
    "HassClimateGetTemperature": 1.2,
    "EdgeLightSetRelative": 1.5,
    "EdgeClimateSetRelative": 1.5,
    "HassSetVolume": 1.2,
    "HassSetVolumeRelative": 1.3,
    "HassIncreaseTimer": 1.2,
    "HassDecreaseTimer": 1.2,
    "HassTimerStatus": 1.2,
    "HassCancelTimer": 1.2,
    "HassNevermind": 0.6,
    "HassGetCurrentTime": 0.7,
    "HassGetCurrentDate": 0.7,
    "HassBroadcast": 0.8,
}
