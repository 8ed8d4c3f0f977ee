"""Schema-Guided Dialogue (SGD) user turns mapped onto our intents, for measuring and for the
sentence embedding.

The build reads ``sgd/{train,dev,test}.jsonl`` from the data directory given on the command line
(one object a line: ``text``, ``service``, ``intent``, ``spans``); the files are never part of
the project. What each split is for:

- ``train``: texts only, unlabelled, for the student's sentence embedding (the pretrained
  encoder's embedding of every text is the target). The intent head never learns SGD's labels:
  measured with a linear probe before this module existed, SGD's many out-of-scope rows near our
  media and weather requests pushed real requests toward rejection.
- ``test``: a development source the intent head has never learnt from, scored by
  ``bench/intents_cross_source.py`` with CLINC150 and Snips left out in turn.

Services map onto ours by what the user asks for: ``Weather_*`` ``GetWeather`` is a weather
request, ``Music_*`` ``PlaySong``/``PlayMedia`` and ``Media_*`` ``PlayMovie`` ask to play media.
Searches (``LookupMusic``, ``LookupSong``, ``FindMovies`` of ``Media_*`` and of the film
finders ``Movies_2`` and ``Movies_3``) and alarms (``Alarm_1``; we have timers, not alarms at a
clock time) are neither ours nor clearly out of scope for a home agent ("find me songs by Adele"
or "I want to watch a movie" could start playback), so they are left out of scoring. ``Movies_1``
finds films showing at a cinema and sells tickets: out of scope, as Snips' screening searches
are. (Until 3 December 2026 the two film finders' searches were scored as out of scope, although
the same words in ``Media_*`` were not scored.) Every other
service (banks, buses, flights, hotels, restaurants, ride sharing...) is out of scope.

The rows were written from dialogue outlines, so an in-scope row may lean on an earlier turn
that the file does not hold: an answer to the agent's question ("4th of march in marshall",
"yes that is good") or a request whose object is only a back-reference and no span of its own
("yes, please play it", "i want to listen to that song"). A single-utterance agent cannot serve
those, and real commands to a speaker seldom look like them, so the benches report the in-scope
figures of the rows that stand on their own (``refers_back`` false) beside those of every row.
``refers_back`` reads only the row's own words and spans; it was written from SGD's dev split.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from firmware_tools.data.intents import IntentExample

__all__ = ["SgdError", "SgdRow", "load_sgd", "mapped_sgd", "refers_back", "sgd_texts"]

SgdSplit = Literal["train", "dev", "test"]

# (service family, SGD intent) -> our intent
_OURS: dict[tuple[str, str], str] = {
    ("Weather", "GetWeather"): "HassGetWeather",
    ("Music", "PlaySong"): "HassMediaSearchAndPlay",
    ("Music", "PlayMedia"): "HassMediaSearchAndPlay",
    ("Media", "PlayMovie"): "HassMediaSearchAndPlay",
}
# neither ours nor out of scope (see the module docstring)
_UNSCORED_FAMILIES = {"Alarm"}
_UNSCORED_INTENTS = {("Music", "LookupMusic"), ("Music", "LookupSong"), ("Media", "FindMovies")}
_UNSCORED_SERVICES = {("Movies_2", "FindMovies"), ("Movies_3", "FindMovies")}


# words that name what a weather or media request asks for
_REQUEST_WORDS = re.compile(
    r"weather|forecast|\brain|\bsnow|sunny|temperature|humid|\bwind|degrees|umbrella|"
    r"\bplay|\blisten|\bhear|\bsong|music|\btrack|\balbum|\bmovie|\bfilm|\bwatch|\bcast\b|"
    r"\bstream|\bput\b(?:\s+\w+)?\s+on\b",
    re.I,
)
# a request whose object points back at something named earlier
_BACK_REFERENCE = re.compile(
    r"\b(?:play|hear|listen(?:ing)?\s+to|watch|cast|put|stream|start|see)\s+(?:it|that|this|them)\b|"
    r"\b(?:that|this|the\s+same)\s+(?:one|song|track|tune|movie|film|album|show)\b|\bthe\s+one\b",
    re.I,
)


def refers_back(row: SgdRow) -> bool:
    """Whether the row leans on an earlier turn: it names no weather or media request, or what it
    asks for is only a back-reference ("play it", "that song") and it has no span of its own."""
    if not _REQUEST_WORDS.search(row.text):
        return True
    return row.spans == 0 and _BACK_REFERENCE.search(row.text) is not None


class SgdError(ValueError):
    """The SGD files are missing or malformed."""


@dataclass(frozen=True)
class SgdRow:
    text: str
    service: str
    intent: str
    spans: int = 0  # how many slot spans the row carries
    values: tuple[tuple[str, str], ...] = ()  # (slot, value) of each span, in the row's order

    @property
    def family(self) -> str:
        return self.service.split("_")[0]


def _rows(data_dir: Path, split: SgdSplit) -> list[SgdRow]:
    path = data_dir / "sgd" / f"{split}.jsonl"
    if not path.is_file():
        raise SgdError(f"{path} not found (the SGD user turns, see ../shared/data/README.md)")
    rows = []
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                spans = obj.get("spans") or []
                if not isinstance(spans, list):
                    raise TypeError("spans is not a list")
                marked = [sp for sp in spans if isinstance(sp, dict)]
                values = tuple((str(sp.get("slot", "")), str(sp.get("value", ""))) for sp in marked)
                text, service, intent = str(obj["text"]).strip(), str(obj["service"]), str(obj["intent"])
                rows.append(SgdRow(text, service, intent, len(spans), values))
            except (ValueError, KeyError, TypeError) as exc:
                raise SgdError(f"{path}:{n}: not an SGD row ({exc})") from exc
    return rows


def _label(row: SgdRow) -> str | bool | None:
    """Our intent, None for out of scope, False when the row is not scored."""
    ours = _OURS.get((row.family, row.intent))
    if ours is not None:
        return ours
    if (
        row.family in _UNSCORED_FAMILIES
        or (row.family, row.intent) in _UNSCORED_INTENTS
        or (row.service, row.intent) in _UNSCORED_SERVICES
    ):
        return False
    return None


def mapped_sgd(data_dir: Path, split: SgdSplit) -> list[tuple[SgdRow, IntentExample]]:
    """Scored rows of ``split`` with their example (intent None: out of scope; no slot spans)."""
    out = []
    for row in _rows(data_dir, split):
        label = _label(row)
        if label is False:
            continue
        intent = label if isinstance(label, str) else None
        ex = IntentExample(text=row.text, intent=intent, spans=[], slots={}, spans_known=False, origin="sgd")
        out.append((row, ex))
    return out


def load_sgd(data_dir: Path, split: SgdSplit) -> list[IntentExample]:
    """The scored examples of ``split``."""
    return [ex for _, ex in mapped_sgd(data_dir, split)]


def sgd_texts(data_dir: Path, split: SgdSplit = "train") -> list[str]:
    """Every text of ``split`` (unlabelled), or none when the data directory has no SGD."""
    if not (data_dir / "sgd" / f"{split}.jsonl").is_file():
        return []
    return [r.text for r in _rows(data_dir, split)]
