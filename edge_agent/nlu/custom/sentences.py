"""Home Assistant custom-sentences files -> the example sentences of the user's own intents.

The files are the YAML users keep in ``config/custom_sentences/<language>/*.yaml``::

    language: en
    intents:
      FeedCat:
        data:
          - sentences:
              - "(feed|give food to) [the] cat"
              - "the cat is hungry"
      SetAlarm:
        data:
          - sentences: ["wake me up at {time}"]
            slots: {source: voice}          # fixed slots of every match of this block
    lists:
      time: {wildcard: true}
      color: {values: [red, {in: "dark red", out: darkred}]}
      speed: {range: {from: 1, to: 5}}
    expansion_rules:
      cat: "[the] (cat|kitty)"

Templates are parsed by hassil (Home Assistant's own parser): alternatives ``(a|b)``, optional
``[words]``, permutations ``(a;b)``, list references ``{list}`` or ``{list:slot}`` and rules
``<rule>``. Each template is expanded into example sentences: every alternative and optional
word, at most ``LIST_SAMPLE`` values of a list (evenly spread, deterministic), a few numbers of a
range, and a placeholder for a wildcard (the list's name, "wake me up at time") and for the
home's ``{name}``, ``{area}`` and ``{floor}`` when no file defines them. At most
``MAX_PER_TEMPLATE`` sentences per template are kept (evenly spread over the expansions).

Every problem raises ``CustomSentencesError`` naming the file, the intent and what is wrong.
``requires_context``, ``excludes_context``, ``response``, ``metadata`` and the other keys of HA's
format that do not change which words mean an intent are read and ignored.

hassil is imported only when files are loaded (``_parser``), and only its template parser: the
rest of the package (its matcher, number words, sampling) costs about 5 MB of RSS that the
recognizer does not need.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from edge_agent.errors import EdgeAgentError

if TYPE_CHECKING:
    from hassil.expression import Expression, Sentence

__all__ = [
    "HOME_LISTS",
    "MAX_PER_TEMPLATE",
    "CustomSentences",
    "CustomSentencesError",
    "Example",
    "ListValue",
    "Piece",
    "SlotList",
    "load_custom_sentences",
    "parse_custom_sentences",
    "sentence_files",
]

MAX_PER_TEMPLATE = 12  # example sentences kept per template
LIST_SAMPLE = 6  # values of a list used per list reference
RANGE_SAMPLE = 2  # numbers of a range used per range reference
_LIMIT = 256  # expansions kept while expanding one template, before the final spread
_MAX_DEPTH = 24  # expansion rules referring to each other
# the home's lists (resolved against the home when a file does not define them) and the word a
# template's reference to them is expanded to for its example sentences
HOME_LISTS: dict[str, str] = {"name": "lamp", "area": "kitchen", "floor": "upstairs"}
LANGUAGES = ("en",)
_INTENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_TOP_KEYS = {"language", "intents", "lists", "expansion_rules", "skip_words", "settings", "responses"}
_DATA_KEYS = {
    "sentences",
    "slots",
    "lists",
    "expansion_rules",
    "requires_context",
    "excludes_context",
    "response",
    "metadata",
    "required_keywords",
    "inferred_domain",
    "name_domains",
    "settings",
}
_LIST_KINDS = ("values", "range", "wildcard")
_T = TypeVar("_T")


class CustomSentencesError(EdgeAgentError):
    """A custom-sentences file cannot be used; the message names the file, the intent and why."""


@dataclass(frozen=True)
class ListValue:
    """One value of a list: the words that say it and the slot value it gives (HA's in/out;
    ``out`` None: the words that were said)."""

    texts: tuple[str, ...]
    out: Any


@dataclass(frozen=True)
class SlotList:
    """A list a template refers to: ``values``, a number ``range``, a ``wildcard`` (any words) or
    ``home`` (the home's entity names, areas or floors)."""

    name: str
    kind: Literal["values", "range", "wildcard", "home"]
    values: tuple[ListValue, ...] = ()
    start: int = 0
    stop: int = 0
    step: int = 1
    multiplier: float | None = None

    def numbers(self) -> list[int]:
        return list(range(self.start, self.stop + 1, self.step))


@dataclass(frozen=True)
class Piece:
    """Part of an expanded sentence: literal words (``slot`` None) or the words a list reference
    was expanded to (a value's words, a number, or a wildcard's placeholder)."""

    text: str
    slot: str | None = None
    list_name: str | None = None
    value: Any = None


@dataclass(frozen=True)
class Example:
    """One expanded sentence of an intent, with the pieces it was made of (for slot alignment)."""

    intent: str
    text: str
    pieces: tuple[Piece, ...]
    slots: Mapping[str, Any] = field(default_factory=dict)
    source: str = ""
    context_slots: tuple[str, ...] = ()  # filled from the request's context (requires_context)
    template: int = 0  # which template of the set it was expanded from (numbered in file order)

    @property
    def slot_names(self) -> tuple[str, ...]:
        return tuple(p.slot for p in self.pieces if p.slot is not None)


@dataclass(frozen=True)
class CustomSentences:
    """What the files say: the intents in file order, their example sentences, the lists, and per
    intent the (slot, list) pairs its templates refer to."""

    intents: tuple[str, ...]
    examples: tuple[Example, ...]
    lists: Mapping[str, SlotList]
    refs: Mapping[str, tuple[tuple[str, str], ...]]
    files: tuple[str, ...] = ()

    def summary(self) -> dict[str, Any]:
        return {"intents": len(self.intents), "examples": len(self.examples), "files": list(self.files)}


# -- files -----------------------------------------------------------------------------------
def sentence_files(paths: Sequence[str | Path]) -> list[Path]:
    """The YAML files of ``paths``: a file as given, a directory's ``*.yaml`` / ``*.yml`` sorted."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())
            if not found:
                raise CustomSentencesError(f"{path}: no *.yaml custom-sentences files in this directory")
            out.extend(found)
        elif path.is_file():
            out.append(path)
        else:
            raise CustomSentencesError(f"{path}: no such custom-sentences file or directory")
    return out


def load_custom_sentences(paths: Sequence[str | Path]) -> CustomSentences:
    """Read, check and expand the custom-sentences files (or directories of them) in ``paths``."""
    import yaml

    docs: list[tuple[str, Any]] = []
    for path in sentence_files(paths):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CustomSentencesError(f"{path}: cannot read: {exc}") from None
        try:
            docs.append((str(path), yaml.safe_load(text)))
        except yaml.YAMLError as exc:
            raise CustomSentencesError(f"{path}: not valid YAML: {exc}") from None
    return parse_custom_sentences(docs)


def parse_custom_sentences(docs: Sequence[tuple[str, Any]]) -> CustomSentences:
    """Check and expand already-parsed documents ``(source name, YAML data)``; lists and expansion
    rules are shared by all of them (a later file's definition wins), as in Home Assistant."""
    parse = _parser()
    lists: dict[str, SlotList] = {}
    rules: dict[str, Sentence] = {}
    blocks: list[_Block] = []
    for source, raw in docs:
        data = {} if raw is None else raw  # an empty file
        _check_top(source, data)
        for name, body in (data.get("lists") or {}).items():
            lists[str(name)] = _slot_list(f"{source}: lists.{name}", str(name), body, parse)
        for name, body in (data.get("expansion_rules") or {}).items():
            rules[str(name)] = _rule(f"{source}: expansion_rules.{name}", body, parse)
        blocks.extend(_blocks(source, data.get("intents")))
    if not blocks:
        raise CustomSentencesError(f"{', '.join(s for s, _ in docs) or 'custom sentences'}: no intents")
    return _expand_blocks(blocks, lists, rules, parse, tuple(s for s, _ in docs))


@dataclass(frozen=True)
class _Block:
    """One ``data`` item of one intent of one file."""

    source: str
    intent: str
    sentences: tuple[str, ...]
    slots: Mapping[str, Any]
    lists: Mapping[str, Any]
    rules: Mapping[str, Any]
    context_slots: tuple[str, ...]


def _check_top(source: str, data: Any) -> None:
    if not isinstance(data, dict):
        raise CustomSentencesError(f"{source}: the top level must be a mapping with 'language' and 'intents'")
    unknown = sorted(set(map(str, data)) - _TOP_KEYS)
    if unknown:
        raise CustomSentencesError(f"{source}: unknown keys {unknown}; allowed: {sorted(_TOP_KEYS)}")
    language = data.get("language", "en")
    if language not in LANGUAGES:
        raise CustomSentencesError(
            f"{source}: language {language!r}: the model understands English only (language: en)"
        )
    for key in ("lists", "expansion_rules"):
        if data.get(key) is not None and not isinstance(data[key], dict):
            raise CustomSentencesError(f"{source}: '{key}' must be a mapping of names")


def _blocks(source: str, intents: Any) -> list[_Block]:
    if intents is None:
        return []
    if not isinstance(intents, dict):
        raise CustomSentencesError(f"{source}: 'intents' must be a mapping {{IntentName: {{data: [...]}}}}")
    out: list[_Block] = []
    for name, body in intents.items():
        where = f"{source}: intent {name}"
        if not isinstance(name, str) or not _INTENT_NAME.match(name):
            raise CustomSentencesError(
                f"{where}: an intent name is 1-64 letters, digits, '_', '.', '-', starting with a letter "
                "or digit (it is an MQTT topic level)"
            )
        if not isinstance(body, dict) or not isinstance(body.get("data"), list) or not body["data"]:
            raise CustomSentencesError(f"{where}: needs 'data', a non-empty list of {{sentences: [...]}}")
        for i, item in enumerate(body["data"]):
            out.append(_block(f"{where}: data[{i}]", source, name, item))
    return out


def _block(where: str, source: str, intent: str, item: Any) -> _Block:
    if not isinstance(item, dict):
        raise CustomSentencesError(f"{where}: must be a mapping with 'sentences'")
    unknown = sorted(set(map(str, item)) - _DATA_KEYS)
    if unknown:
        raise CustomSentencesError(f"{where}: unknown keys {unknown}; allowed: {sorted(_DATA_KEYS)}")
    sentences = item.get("sentences")
    if not isinstance(sentences, list) or not sentences:
        raise CustomSentencesError(f"{where}: 'sentences' must be a non-empty list of templates")
    for s in sentences:
        if not isinstance(s, str) or not s.strip():
            raise CustomSentencesError(f"{where}: sentence {s!r} is not a non-empty string")
    mappings = {}
    for key in ("slots", "lists", "expansion_rules", "requires_context"):
        value = item.get(key) or {}
        if not isinstance(value, dict):
            raise CustomSentencesError(f"{where}: '{key}' must be a mapping")
        mappings[key] = value
    # HA's requires_context: {area: {slot: true}} fills the area slot from the satellite's area
    context_slots = tuple(
        str(k)
        for k, v in mappings["requires_context"].items()
        if isinstance(v, dict) and v.get("slot") is True
    )
    return _Block(
        source,
        intent,
        tuple(sentences),
        mappings["slots"],
        mappings["lists"],
        mappings["expansion_rules"],
        context_slots,
    )


# -- lists and rules ---------------------------------------------------------------------------
def _slot_list(where: str, name: str, body: Any, parse: _Parse) -> SlotList:
    if not isinstance(body, dict) or sum(k in body for k in _LIST_KINDS) != 1:
        raise CustomSentencesError(f"{where}: a list has exactly one of {', '.join(_LIST_KINDS)}")
    if "wildcard" in body:
        if body["wildcard"] is not True:
            raise CustomSentencesError(f"{where}: 'wildcard' must be true")
        return SlotList(name, "wildcard")
    if "range" in body:
        return _range_list(where, name, body["range"])
    values = body["values"]
    if not isinstance(values, list) or not values:
        raise CustomSentencesError(f"{where}: 'values' must be a non-empty list")
    parsed = tuple(_list_value(f"{where}.values[{i}]", v, parse) for i, v in enumerate(values))
    return SlotList(name, "values", parsed)


def _range_list(where: str, name: str, body: Any) -> SlotList:
    if not isinstance(body, dict):
        raise CustomSentencesError(f"{where}: 'range' must be a mapping with 'from' and 'to'")
    try:
        start, stop, step = int(body["from"]), int(body["to"]), int(body.get("step", 1))
        multiplier = float(body["multiplier"]) if body.get("multiplier") is not None else None
    except KeyError as exc:
        raise CustomSentencesError(f"{where}: 'range' needs {exc.args[0]!r}") from None
    except (TypeError, ValueError) as exc:
        raise CustomSentencesError(f"{where}: range values must be numbers: {exc}") from None
    if start > stop or step <= 0:
        raise CustomSentencesError(f"{where}: range needs from <= to and a positive step")
    return SlotList(name, "range", start=start, stop=stop, step=step, multiplier=multiplier)


def _list_value(where: str, value: Any, parse: _Parse) -> ListValue:
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        text_in, out = str(value), (None if _is_template(str(value)) else value)
    elif isinstance(value, dict) and isinstance(value.get("in"), (str, int, float)):
        text_in, out = str(value["in"]), value.get("out")  # no out: the words said (as HA does)
    else:
        raise CustomSentencesError(f"{where}: a value is a string or {{in: words, out: value}}")
    if not text_in.strip():
        raise CustomSentencesError(f"{where}: empty value")
    if not _is_template(text_in):
        return ListValue((_norm(text_in),), out)
    expr = _parse_template(where, text_in, parse).expression
    texts = [_join(p) for p in _expand(expr, _Context(where, {}, {}, parse))]
    if any("{" in t or not t for t in texts):
        raise CustomSentencesError(f"{where}: a value's template may use (a|b) and [words] only")
    return ListValue(tuple(dict.fromkeys(texts)), out)


def _rule(where: str, body: Any, parse: _Parse) -> Sentence:
    if not isinstance(body, str) or not body.strip():
        raise CustomSentencesError(f"{where}: an expansion rule is a non-empty template string")
    return _parse_template(where, body, parse)


# -- expansion --------------------------------------------------------------------------------
@dataclass
class _Context:
    where: str
    lists: Mapping[str, SlotList]
    rules: Mapping[str, Sentence]
    parse: _Parse
    depth: int = 0
    inline: dict[str, SlotList] = field(default_factory=dict)  # inline ranges {1..10:slot}, by list name


def _expand_blocks(
    blocks: list[_Block],
    lists: dict[str, SlotList],
    rules: dict[str, Sentence],
    parse: _Parse,
    files: tuple[str, ...],
) -> CustomSentences:
    examples: list[Example] = []
    refs: dict[str, dict[tuple[str, str], None]] = {}
    inline: dict[str, SlotList] = {}
    block_lists: dict[str, SlotList] = {}  # lists of a data block (same name in two blocks: the later)
    number = 0
    for block in blocks:
        where = f"{block.source}: intent {block.intent}"
        local_lists = dict(lists)
        for name, body in block.lists.items():
            local_lists[str(name)] = _slot_list(f"{where}: lists.{name}", str(name), body, parse)
            block_lists[str(name)] = local_lists[str(name)]
        local_rules = dict(rules)
        for name, body in block.rules.items():
            local_rules[str(name)] = _rule(f"{where}: expansion_rules.{name}", body, parse)
        intent_refs = refs.setdefault(block.intent, {})
        for template in block.sentences:
            number += 1
            ctx = _Context(f"{where}: sentence {template!r}", local_lists, local_rules, parse, inline=inline)
            sentence = _parse_template(ctx.where, template, parse)
            expanded = _spread(_expand(sentence.expression, ctx), MAX_PER_TEMPLATE)
            seen: set[str] = set()
            for pieces in expanded:
                text = _join(pieces)
                if not text or text in seen:
                    continue
                seen.add(text)
                example = Example(
                    block.intent, text, _merge(pieces), dict(block.slots), where, block.context_slots, number
                )
                examples.append(example)
                intent_refs.update({(p.slot, p.list_name): None for p in pieces if p.slot and p.list_name})
    used = {name for pairs in refs.values() for _, name in pairs}
    every = {**lists, **block_lists, **inline, **_home_lists(used, lists)}
    return CustomSentences(
        intents=tuple(refs),
        examples=tuple(examples),
        lists={k: v for k, v in every.items() if k in used},
        refs={intent: tuple(pairs) for intent, pairs in refs.items()},
        files=files,
    )


def _home_lists(used: Iterable[str], defined: Mapping[str, SlotList]) -> dict[str, SlotList]:
    return {name: SlotList(name, "home") for name in used if name in HOME_LISTS and name not in defined}


def _expand(expr: Expression, ctx: _Context) -> list[tuple[Piece, ...]]:
    """Every way ``expr`` can be said (at most ``_LIMIT``, evenly spread), as piece tuples."""
    from hassil.expression import (
        Alternative,
        ListReference,
        Permutation,
        RuleReference,
        TextChunk,
    )
    from hassil.expression import Sequence as Seq

    if isinstance(expr, TextChunk):
        return [(Piece(expr.original_text),)] if expr.original_text else [()]
    if isinstance(expr, Alternative):
        options = [o for item in expr.items for o in _expand(item, ctx)]
        return _spread(list(dict.fromkeys(options)), _LIMIT)
    if isinstance(expr, Permutation):
        return _permutations([_expand(item, ctx) for item in expr.items])
    if isinstance(expr, Seq):
        return _product([_expand(item, ctx) for item in expr.items])
    if isinstance(expr, ListReference):
        return _list_ref(expr, ctx)
    if isinstance(expr, RuleReference):
        rule = ctx.rules.get(expr.rule_name)
        if rule is None:
            raise CustomSentencesError(f"{ctx.where}: no expansion rule <{expr.rule_name}> is defined")
        if ctx.depth >= _MAX_DEPTH:
            raise CustomSentencesError(f"{ctx.where}: expansion rule <{expr.rule_name}> refers to itself")
        inner = _Context(ctx.where, ctx.lists, ctx.rules, ctx.parse, ctx.depth + 1, ctx.inline)
        return _expand(rule.expression, inner)
    raise CustomSentencesError(f"{ctx.where}: unsupported template element {type(expr).__name__}")


def _list_ref(ref: Any, ctx: _Context) -> list[tuple[Piece, ...]]:
    name, slot = str(ref.list_name), str(ref.slot_name)
    inline = ref.get_inline_range() if ref.is_inline_range else None
    if not name or not slot:
        raise CustomSentencesError(f"{ctx.where}: a list reference needs a name: {{list}} or {{list:slot}}")
    list_name = name if inline is None else f"{slot}:range"
    slot_list: SlotList | None = ctx.lists.get(name)
    if inline is not None:
        start, stop, step = inline
        slot_list = ctx.inline[list_name] = SlotList(list_name, "range", start=start, stop=stop, step=step)
    if slot_list is None and name in HOME_LISTS:
        slot_list = SlotList(name, "home")
    if slot_list is None:
        known = ", ".join(sorted(ctx.lists)) or "none"
        raise CustomSentencesError(f"{ctx.where}: list {{{name}}} is not defined (lists: {known})")
    if slot_list.kind == "values":
        return [
            (Piece(text, slot, list_name, text if value.out is None else value.out),)
            for value in _spread(list(slot_list.values), LIST_SAMPLE)
            for text in value.texts[:1]
        ]
    if slot_list.kind == "range":
        return [(Piece(str(n), slot, list_name, n),) for n in _spread(slot_list.numbers(), RANGE_SAMPLE)]
    placeholder = HOME_LISTS.get(name) if slot_list.kind == "home" else name.replace("_", " ")
    return [(Piece(placeholder or name, slot, name),)]


def _product(parts: list[list[tuple[Piece, ...]]]) -> list[tuple[Piece, ...]]:
    acc: list[tuple[Piece, ...]] = [()]
    for options in parts:
        if not options:
            return []
        total = len(acc) * len(options)
        picks = _spread(list(range(total)), _LIMIT)
        acc = [acc[i // len(options)] + options[i % len(options)] for i in picks]
    return acc


def _permutations(parts: list[list[tuple[Piece, ...]]]) -> list[tuple[Piece, ...]]:
    import itertools

    out: list[tuple[Piece, ...]] = []
    space: list[tuple[Piece, ...]] = [(Piece(" "),)]
    for order in itertools.islice(itertools.permutations(parts), _LIMIT):
        spaced = [part for items in order for part in (items, space)]
        out.extend(_product(spaced))
        if len(out) >= _LIMIT:
            break
    return _spread(out, _LIMIT)


def _spread(items: list[_T], n: int) -> list[_T]:
    """At most ``n`` of ``items``, evenly spaced, the first always kept (deterministic)."""
    if len(items) <= n:
        return items
    step = len(items) / n
    return [items[int(i * step)] for i in range(n)]


def _merge(pieces: tuple[Piece, ...]) -> tuple[Piece, ...]:
    """Adjacent literal pieces joined; whitespace of the joined text normalized."""
    out: list[Piece] = []
    for piece in pieces:
        if piece.slot is None and out and out[-1].slot is None:
            out[-1] = Piece(out[-1].text + piece.text)
        else:
            out.append(piece)
    return tuple(p for p in out if p.slot is not None or p.text.strip())


def _join(pieces: Iterable[Piece]) -> str:
    return _norm("".join(p.text if p.slot is None else f" {p.text} " for p in pieces))


def _is_template(text: str) -> bool:
    return any(ch in text for ch in "([{<")


def _norm(text: str) -> str:
    return " ".join(text.split())


# -- hassil ------------------------------------------------------------------------------------
_Parse = Callable[[str], "Sentence"]


def _parse_template(where: str, text: str, parse: _Parse) -> Sentence:
    try:
        return parse(text)
    except _TemplateError as exc:
        raise CustomSentencesError(f"{where}: not a valid template: {exc}") from None


def _parser() -> _Parse:
    """hassil's ``parse_sentence``, imported without running ``hassil/__init__`` (which imports
    the matcher, number words and more). A later ``import hassil`` still gets the whole package:
    the placeholder package is removed again, and the real one reuses the loaded submodules."""
    if "hassil" not in sys.modules:
        spec = importlib.util.find_spec("hassil")
        if spec is None or not spec.submodule_search_locations:
            raise CustomSentencesError("custom sentences need the 'hassil' package (pip install hassil)")
        stub = types.ModuleType("hassil")
        stub.__path__ = list(spec.submodule_search_locations)
        sys.modules["hassil"] = stub
        try:
            importlib.import_module("hassil.parse_expression")
        finally:
            if sys.modules.get("hassil") is stub:
                del sys.modules["hassil"]
    from hassil.parse_expression import parse_sentence
    from hassil.parser import ParseError

    def parse(text: str) -> Sentence:
        try:
            return parse_sentence(text, keep_text=True)
        except (ParseError, AssertionError, ValueError, IndexError) as exc:  # what its parser raises
            raise _TemplateError(str(exc) or type(exc).__name__) from None

    return parse


class _TemplateError(Exception):
    """hassil could not parse a template (the caller adds where it was)."""
