"""The evaluation set's vocabulary stays out of the training-data generator and the slot rules.

Home Assistant's English intent tests (``../shared/eval/intents/``, outside the repository) are
what the intent figures are measured on. Their fixtures name a home (floors, areas, entities,
timers, media) and their sentences name slot values; none of those names may be written into
``firmware_tools/data/`` (the generator) or ``edge_agent/nlu/`` (the rules), neither as a word
list entry nor as a phrase in code, comment or docstring, or the model and the rules would have
seen the answers. The test skips, saying so, when the evaluation set is not on this machine.

Matching, over every string literal and comment of those files (case-insensitive):

- a name of two or more words is found anywhere as whole words ("... the zorb lamp ...");
- a one-word name is found as a whole literal (``"Quuxle"`` in a word list) or as a quoted word in
  a comment or docstring; a one-word name inside a sentence is ordinary English;
- ``GENERIC`` lists the few fixture names that any English home vocabulary, or Home Assistant's
  own schema, must contain; they are allowed, and nothing else is.
"""

from __future__ import annotations

import io
import json
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from edge_agent.nlu.home import DOMAINS

ROOT = Path(__file__).resolve().parents[1]
EVAL = ROOT.parent / "shared" / "eval" / "intents"
FIXTURES = EVAL / "ha_tests_en_fixtures.yaml"
SENTENCES = EVAL / "ha_tests_en.jsonl"
SCANNED = (ROOT / "firmware_tools" / "data", ROOT / "edge_agent" / "nlu")
# the log-line generators: their text never reaches the intent model, and log words such as
# "log file" or "serial" are the log domain's own
NOT_SCANNED = frozenset({"logs.py", "loghub.py", "log_chatter.py"})

# Fixture names that are plain words of every home or of HA's schema, so the generator and the
# rules cannot do without them: the common rooms and floors, the words for a light, a TV, a
# thermostat and a phone, the device classes people say by name (gas, CO, occupancy, motion
# sensor), and "all", HA's value for "every entity". Distinctive names stay forbidden.
GENERIC = frozenset(
    {
        "kitchen",
        "bedroom",
        "living room",
        "garage",
        "office",
        "basement",
        "upstairs",
        "outside",
        "ground floor",
        "first floor",
        "second floor",
        "light",
        "tv",
        "thermostat",
        "phone",
        "gas",
        "co",
        "occupancy",
        "motion sensor",
        "all",
    }
)
# slot values the test sentences name (the other slots hold numbers, states and schema values)
_NAMED_SLOTS = ("name", "area", "floor", "search_query", "item", "message", "conversation_command")


def _spellings(name: str) -> set[str]:
    """A fixture name as it may be written: HA's optional parts (``Trader Joe[']s``) with and
    without them, lower-case, spaces collapsed."""
    with_opt = re.sub(r"\[([^\]]*)\]", r"\1", name)
    without = re.sub(r"\[[^\]]*\]", "", name)
    return {" ".join(s.lower().split()) for s in (with_opt, without) if s.strip()}


def _fixture_names(fixtures: dict[str, Any]) -> set[str]:
    names: set[str] = set()
    for key in ("floors", "areas", "entities", "timers"):
        for item in fixtures.get(key) or []:
            if item.get("name"):
                names |= _spellings(str(item["name"]))
            for alias in item.get("aliases") or []:
                names |= _spellings(str(alias))
    for item in fixtures.get("media") or []:
        names |= _spellings(str(item["title"]))
    return names


def _sentence_names(path: Path) -> set[str]:
    names: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        slots = json.loads(line).get("slots") or {}
        for slot in _NAMED_SLOTS:
            if isinstance(slots.get(slot), str):
                names |= _spellings(slots[slot])
    return names


def evaluation_names() -> set[str]:
    """Every name of the evaluation set that is not a generic home word (empty when absent)."""
    if not FIXTURES.is_file():
        return set()
    names = _fixture_names(yaml.safe_load(FIXTURES.read_text(encoding="utf-8")))
    if SENTENCES.is_file():
        names |= _sentence_names(SENTENCES)
    return names - GENERIC


def _texts(path: Path) -> Iterator[tuple[int, str, bool]]:
    """(line, text, is_comment) of every string literal and comment of a Python file."""
    source = path.read_text(encoding="utf-8")
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string, True
        elif tok.type == tokenize.STRING:
            yield tok.start[0], tok.string, False


def _literal_body(token: str) -> str | None:
    """The text of a plain string literal token, None for f-strings and the like."""
    m = re.fullmatch(r"[rRbBuU]{0,2}(\"\"\"|'''|\"|')(.*)\1", token, re.DOTALL)
    return m.group(2) if m else None


def _squash(text: str) -> str:
    return " ".join(text.lower().split())


def find_names(path: Path, names: set[str]) -> list[str]:
    """'file:line: name' for every evaluation name written in ``path``."""
    multi = [(n, re.compile(r"(?<![a-z0-9])" + re.escape(n) + r"(?![a-z0-9])")) for n in names if " " in n]
    single = {n for n in names if " " not in n}
    quoted = [(n, re.compile(r"[\"'`]" + re.escape(n) + r"[\"'`]")) for n in single]
    found: list[str] = []
    for line, text, is_comment in _texts(path):
        squashed = _squash(text)
        hits = {n for n, pattern in multi if pattern.search(squashed)}
        body = None if is_comment else _literal_body(text)
        whole = _squash(body) if body is not None else None
        if whole in single and body not in DOMAINS:  # a domain id ("siren") is HA's schema
            hits.add(whole)
        if is_comment or body is None or "\n" in body:  # a comment or a docstring: a quoted word
            hits |= {n for n, pattern in quoted if pattern.search(squashed)}
        shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
        found += [f"{shown}:{line}: {name!r}" for name in sorted(hits)]
    return found


def _sources() -> list[Path]:
    return sorted(p for d in SCANNED for p in d.rglob("*.py") if p.name not in NOT_SCANNED)


def test_no_evaluation_name_in_the_generator_or_the_rules() -> None:
    names = evaluation_names()
    if not names:
        pytest.skip(f"the evaluation set is not on this machine ({FIXTURES} is missing)")
    found = [hit for path in _sources() for hit in find_names(path, names)]
    assert found == [], "names of the evaluation set written into the sources:\n" + "\n".join(found)


def test_the_check_finds_a_name_in_a_word_list_and_a_comment(tmp_path: Path) -> None:
    """The matcher itself, on a file written here: a list entry, a phrase in a comment and a quoted
    word are found; the same words in other senses, and generic words, are not."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        'NAMES = ("Zorb Lamp", "Quuxle", "Kitchen")\n'
        "# asks whether the zorb lamp is on, or the 'quuxle'\n"
        'TEXT = "a quuxle in a sentence, the zorb lamps"\n',
        encoding="utf-8",
    )
    assert sorted(find_names(sample, {"zorb lamp", "quuxle"})) == [
        "sample.py:1: 'quuxle'",
        "sample.py:1: 'zorb lamp'",
        "sample.py:2: 'quuxle'",
        "sample.py:2: 'zorb lamp'",
    ]
