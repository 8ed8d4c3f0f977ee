"""Generated training data for the intent + slot model (deterministic from a seed).

``generate(seed, n)`` returns ``IntentExample``s: a text, its intent (``None`` when out of
scope), character spans of the span slots listed in ``edge_agent.nlu.schema.SLOTS``, and the
normalized HA-style slot values ``edge_agent.nlu.slots.build_slots`` should produce from those
spans (see docs/intents.md for every intent and slot).

Every sentence comes from the project's own grammar (``intent_grammar``) and word lists
(``intent_lexicon``) over random homes from ``sample_home``: invented device names and areas
make the model learn where a name sits, not which names exist. About 25% of the examples are
out of scope (``intent_oos``).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from edge_agent.nlu.home import Home
from edge_agent.nlu.schema import INTENTS, SLOTS
from edge_agent.nlu.slots import CONTEXT_INTENTS, is_global_request, mentions_here
from firmware_tools.data import intent_makers, intent_oos
from firmware_tools.data.intent_context import GLOBAL, HERE, Gen, sample_home
from firmware_tools.data.intent_grammar import Piece, join_pieces
from firmware_tools.data.intent_noise import add_noise

__all__ = ["OOS_FRACTION", "IntentExample", "generate", "generate_intent", "sample_home"]

OOS_FRACTION = 0.25


@dataclass
class IntentExample:
    text: str
    intent: str | None
    spans: list[tuple[int, int, str]]
    slots: dict[str, object]
    context_area: str | None = None  # the satellite's area the expected slots assume
    home: Home | None = field(default=None, repr=False, compare=False)  # the home it was drawn from
    # False when the text's slots were not annotated (crowd data mapped by intent only,
    # firmware_tools/data/real.py): training learns its intent and skips its slot loss
    spans_known: bool = True
    # where the row comes from: "gen" (this generator), "clinc", "snips" or "sgd"; restyled and
    # augmented copies keep their source's (bench/intents_cross_source.py leaves one out)
    origin: str = "gen"


# ------------------------------------------------------------------------------ example assembly


_WAKE_WORDS = (
    "hey google",
    "ok google",
    "alexa",
    "hey alexa",
    "hey siri",
    "ok nabu",
    "hey nabu",
    "hey jarvis",
    "hey mycroft",
    "hey assistant",
    "hey home assistant",
    "okay nabu",
)
WAKE_WORD_SHARE = 0.05


def _wake_word(g: Gen, pieces: list[Piece]) -> list[Piece]:
    """A wake word the satellite left in the transcript ("hey google, ..."), never tagged."""
    if g.rng.random() >= WAKE_WORD_SHARE:
        return pieces
    wake: list[Piece] = [(g.choice(_WAKE_WORDS), None)]
    if g.rng.random() < 0.5:
        wake.append((",", None))
    return wake + pieces


def _finish(g: Gen, intent: str | None, pieces: list[Piece], slots: dict[str, object]) -> IntentExample:
    pieces = add_noise(_wake_word(g, pieces), g.rng, lowercase=g.lower)
    text, spans = join_pieces(pieces)
    slots = dict(slots)
    slots.pop(GLOBAL, None)
    is_here = bool(slots.pop(HERE, False)) or mentions_here(text)
    context_area = None
    if g.home.areas and (is_here or g.rng.random() < 0.6):
        # the satellite's room: build_slots uses it only when no place or name was spoken,
        # and for state questions only when the text says "here"
        context_area = g.choice(g.home.areas)
    if (
        intent in CONTEXT_INTENTS
        and context_area is not None
        and not ({"area", "floor"} & set(slots))
        and ("name" not in slots or (slots["name"] == "all" and intent != "HassGetState"))
        and (is_here if intent == "HassGetState" else not is_global_request(text))
    ):
        slots["area"] = context_area
    return IntentExample(
        text=text, intent=intent, spans=spans, slots=slots, context_area=context_area, home=g.home
    )


IntentMaker = Callable[[Gen], tuple[str | None, list[Piece], dict[str, object]]]


def generate_intent(intent: str, seed: int, home: Home | None = None) -> IntentExample:
    """One example of ``intent`` (or out of scope when ``intent`` is "__none__")."""
    rng = random.Random(seed)
    g = Gen(rng, home if home is not None else sample_home(rng.randrange(10_000)))
    maker: IntentMaker = intent_oos.make_oos if intent == "__none__" else intent_makers.MAKERS[intent]
    label, pieces, slots = maker(g)
    return _finish(g, label, pieces, slots)


def _intent_weights() -> dict[str, float]:
    missing = [i for i in INTENTS if i not in intent_makers.MAKERS]
    if missing:
        raise RuntimeError(f"no generator for intents {missing}")
    return {i: intent_makers.WEIGHTS.get(i, 1.0) for i in INTENTS}


def generate(seed: int, n: int) -> list[IntentExample]:
    """``n`` examples (about 25% out of scope), deterministic from ``seed``."""
    rng = random.Random(seed)
    weights = _intent_weights()
    names = list(weights)
    cum: list[float] = []
    total = 0.0
    for name in names:
        total += weights[name]
        cum.append(total)
    homes = [sample_home(seed * 1000 + i) for i in range(max(8, min(400, n // 50 + 1)))]
    out: list[IntentExample] = []
    for _ in range(n):
        g = Gen(random.Random(rng.getrandbits(64)), homes[rng.randrange(len(homes))])
        if g.rng.random() < OOS_FRACTION:
            label, pieces, slots = intent_oos.make_oos(g)
        else:
            x = g.rng.random() * total
            lo = 0
            while cum[lo] < x:
                lo += 1
            label, pieces, slots = intent_makers.MAKERS[names[lo]](g)
        ex = _finish(g, label, pieces, slots)
        if ex.text:
            out.append(ex)
    return out


def check_example(ex: IntentExample) -> None:
    """Raise ValueError when an example breaks the data contract (used by tests)."""
    if ex.intent is not None and ex.intent not in INTENTS:
        raise ValueError(f"unknown intent {ex.intent}")
    last = 0
    for start, end, slot in ex.spans:
        if slot not in SLOTS:
            raise ValueError(f"unknown slot {slot}")
        if not (last <= start < end <= len(ex.text)):
            raise ValueError(f"bad span {(start, end, slot)} in {ex.text!r}")
        if ex.text[start:end] != ex.text[start:end].strip():
            raise ValueError(f"span with outer whitespace in {ex.text!r}")
        last = end
    if ex.intent is None and ex.spans:
        raise ValueError("out-of-scope example with spans")
