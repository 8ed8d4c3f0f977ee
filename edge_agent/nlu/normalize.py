"""Turn spoken slot text into values: numbers, percentages, durations, colors, steps.

Pure functions; each returns ``None`` when the text holds nothing it understands, so the
caller can fall back to the raw text.

>>> parse_number("twenty two and a half")
22.5
>>> parse_percentage("fifty percent")
50
>>> parse_duration("an hour and a half")
{'hours': 1, 'minutes': 30}
>>> parse_step("turn it down by ten")
-10
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = [
    "VALUE_PARSERS",
    "find_number",
    "parse_brightness",
    "parse_color",
    "parse_duration",
    "parse_number",
    "parse_percentage",
    "parse_step",
    "parse_temperature",
    "tokens",
]

Number = int | float

_ONE_WORDS = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
]  # fmt: skip
_ONES: dict[str, int] = {w: i for i, w in enumerate(_ONE_WORDS)}
_ONES.update({"oh": 0, "nought": 0})
# Words a speech recognizer writes for "two" and "four". They are never part of a number ("set a
# timer for five minutes" is 5, "twenty for" is 20); find_number reads one only when it is the whole
# text, as a slot span of one word can be.
_HOMOPHONE_VALUE = {"to": 2, "too": 2, "for": 4}
_TENS: dict[str, int] = {
    w: 10 * i
    for i, w in enumerate(
        ["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
    )
    if w != "_"
}
_SCALES = {"hundred": 100, "thousand": 1000}
_FRACTIONS = {"half": 0.5, "halves": 0.5, "quarter": 0.25, "quarters": 0.25, "third": 1 / 3, "thirds": 1 / 3}
_TOKEN = re.compile(r"\d+(?:[.,]\d+)?(?:/\d+)?|[a-z]+(?:'[a-z]+)?|%|°")


def tokens(text: str) -> list[str]:
    """Lower-case word/number tokens; hyphens split ("twenty-two" -> twenty, two)."""
    return _TOKEN.findall(text.lower().replace("-", " "))


def _digits(tok: str) -> Number | None:
    if "/" in tok:
        num, den = tok.split("/", 1)
        try:
            return int(num) / int(den) if int(den) else None
        except ValueError:
            return None
    if tok[0].isdigit():
        tok = tok.replace(",", ".")
        value = float(tok)
        return int(value) if value.is_integer() and "." not in tok else value
    return None


def _is_word_number(tok: str) -> bool:
    return tok in _TENS or tok in _SCALES or tok in _ONES


def _parse_at(toks: list[str], i: int) -> tuple[Number, int] | None:
    """Parse one number starting at ``toks[i]``; return (value, next index)."""
    n = len(toks)
    if i >= n:
        return None
    tok = toks[i]
    value: Number
    digit = _digits(tok) if tok[0].isdigit() else None
    if digit is not None:
        value, j = digit, i + 1
    elif tok in ("a", "an", "one") and i + 1 < n and toks[i + 1] in _FRACTIONS:
        return _FRACTIONS[toks[i + 1]], i + 2
    elif tok in _FRACTIONS:
        return _FRACTIONS[tok], i + 1
    elif tok in ("couple", "pair", "dozen") and (i == 0 or toks[i - 1] in ("a", "the", "by")):
        return (12 if tok == "dozen" else 2), i + (2 if i + 1 < n and toks[i + 1] == "of" else 1)
    elif tok in ("a", "an") and i + 1 < n and toks[i + 1] in _SCALES:
        value, j = _words_value(toks, i + 1, start=1)
    elif _is_word_number(tok):
        value, j = _words_value(toks, i, start=0)
    else:
        return None
    return _fraction_tail(toks, j, value)


def _words_value(toks: list[str], i: int, start: int) -> tuple[int, int]:
    total, current, j = 0, start, i
    seen = start > 0
    while j < len(toks):
        tok = toks[j]
        if tok in _ONES:
            current += _ONES[tok]
        elif tok in _TENS:
            current += _TENS[tok]
        elif tok == "hundred":
            current = (current or 1) * 100
        elif tok == "thousand":
            total += (current or 1) * 1000
            current = 0
        elif (
            tok == "and"
            and seen
            and j + 1 < len(toks)
            and (toks[j + 1] in _TENS or (toks[j + 1] in _ONES and _ONES[toks[j + 1]] > 0))
            and ((current % 100 == 0 and current > 0) or total > 0)
        ):
            j += 1
            continue
        else:
            break
        seen = True
        j += 1
    return total + current, j


def _fraction_tail(toks: list[str], j: int, value: Number) -> tuple[Number, int]:
    n = len(toks)
    # "and a half", "and a quarter"
    if j + 2 < n and toks[j] == "and" and toks[j + 1] in ("a", "an", "one"):
        if toks[j + 2] in _FRACTIONS:
            return value + _FRACTIONS[toks[j + 2]], j + 3
        frac = _digits(toks[j + 2]) if "/" in toks[j + 2] else None
        if frac is not None and 0 < frac < 1:
            return value + frac, j + 3
    # "three quarters"
    if (
        j < n
        and toks[j] in ("quarters", "quarter", "halves", "thirds")
        and isinstance(value, int)
        and value > 0
    ):
        return value * _FRACTIONS[toks[j]], j + 1
    # "twenty point five"
    if j + 1 < n and toks[j] == "point":
        digits = ""
        k = j + 1
        while k < n and ((toks[k] in _ONES and _ONES[toks[k]] <= 9) or toks[k].isdigit()):
            digits += str(_ONES[toks[k]]) if toks[k] in _ONES else toks[k]
            k += 1
        if digits:
            return float(f"{int(value)}.{digits}"), k
    return value, j


def _clean(value: Number) -> Number:
    if isinstance(value, float):
        rounded = round(value, 3)
        return int(rounded) if rounded.is_integer() else rounded
    return value


def find_number(text: str) -> Number | None:
    """The first number in ``text`` (digits or words); ``None`` if there is none."""
    toks = tokens(text)
    for i in range(len(toks)):
        parsed = _parse_at(toks, i)
        if parsed is not None:
            return _clean(parsed[0])
    # the whole text is one homophone of a digit ("for"): the last resort
    if len(toks) == 1 and toks[0] in _HOMOPHONE_VALUE:
        return _HOMOPHONE_VALUE[toks[0]]
    return None


def parse_number(text: str) -> Number | None:
    """Like ``find_number`` but the text must be essentially just a number."""
    toks = tokens(text)
    if not toks:
        return None
    parsed = _parse_at(toks, 0)
    if parsed is None:
        return None
    rest = [t for t in toks[parsed[1] :] if t not in ("%", "°", "percent", "degrees", "degree")]
    return _clean(parsed[0]) if not rest else None


_MAX_WORDS = ("max", "maximum", "full", "highest", "brightest", "hundred percent", "all the way up", "top")
_MIN_WORDS = ("min", "minimum", "lowest", "dimmest", "least", "all the way down", "bottom")
_FAN_WORDS = {"low": 33, "medium": 66, "mid": 66, "middle": 66, "high": 100}


def _has(text: str, phrase: str) -> bool:
    return re.search(rf"\b{re.escape(phrase)}\b", text) is not None


def parse_percentage(text: str, words: bool = True) -> int | None:
    """ "50%", "fifty percent", "one hundred" -> int 0..100 (clamped); "max"/"min"/"half" too."""
    low = text.lower()
    if _has(low, "halfway") or _has(low, "half way"):
        return 50
    number = find_number(low)
    if number is not None:
        if isinstance(number, float) and number < 1 and not _has(low, "percent") and "%" not in low:
            number = number * 100  # "half" -> 50
        return max(0, min(100, round(number)))
    if words:
        if any(_has(low, w) for w in _MAX_WORDS):
            return 100
        if any(_has(low, w) for w in _MIN_WORDS):
            return 1
        for word, value in _FAN_WORDS.items():
            if _has(low, word):
                return value
    return None


def parse_brightness(text: str) -> int | None:
    """Brightness 0..100: numbers and percentages, "max"/"full" -> 100, "min"/"lowest" -> 1."""
    low = text.lower()
    if any(_has(low, w) for w in _MAX_WORDS):
        return 100
    if any(_has(low, w) for w in _MIN_WORDS):
        return 1
    if _has(low, "half"):
        return 50
    return parse_percentage(low, words=False)


def parse_temperature(text: str) -> Number | None:
    """ "twenty two and a half degrees" -> 22.5; units are ignored (the thermostat's own unit)."""
    return find_number(text)


_UNIT_NAMES: dict[str, str] = {}
for _unit, _names in {
    "hours": ("hour", "hours", "hr", "hrs", "h"),
    "minutes": ("minute", "minutes", "min", "mins", "m"),
    "seconds": ("second", "seconds", "sec", "secs", "s"),
}.items():
    for _name in _names:
        _UNIT_NAMES[_name] = _unit
_LOWER = {"hours": "minutes", "minutes": "seconds"}


def parse_duration(text: str) -> dict[str, int] | None:
    """ "1 hour and 30 seconds" -> {"hours": 1, "seconds": 30}; fractions carry down a unit
    ("an hour and a half" -> {"hours": 1, "minutes": 30}, "half a minute" -> {"seconds": 30})."""
    toks = tokens(re.sub(r"(\d)([hms])\b", r"\1 \2", text.lower()))
    amounts: dict[str, float] = {}
    pending: float | None = None
    last_unit: str | None = None
    i = 0
    while i < len(toks):
        tok = toks[i]
        unit = _UNIT_NAMES.get(tok)
        if unit is not None and (len(tok) > 1 or pending is not None):
            amounts[unit] = amounts.get(unit, 0.0) + (1.0 if pending is None else pending)
            pending, last_unit = None, unit
            i += 1
            continue
        if (
            tok == "and"
            and last_unit
            and i + 2 < len(toks) + 1
            and toks[i + 1 : i + 3] in (["a", "half"], ["one", "half"])
        ):
            amounts[last_unit] += 0.5
            i += 3
            continue
        if tok in ("a", "an") and pending is None and i + 1 < len(toks) and toks[i + 1] in _UNIT_NAMES:
            pending = 1.0
            i += 1
            continue
        parsed = _parse_at(toks, i)
        if parsed is not None:
            value, nxt = parsed
            pending = float(value) if pending is None else pending * float(value)
            i = nxt
            continue
        i += 1
    if not amounts:
        return None
    return _carry(amounts)


def _carry(amounts: dict[str, float]) -> dict[str, int]:
    out: dict[str, float] = dict(amounts)
    for unit in ("hours", "minutes"):
        value = out.get(unit)
        if value is None:
            continue
        whole = int(value)
        frac = value - whole
        if frac > 1e-9:
            lower = _LOWER[unit]
            out[lower] = out.get(lower, 0.0) + frac * 60
        if whole:
            out[unit] = whole
        else:
            del out[unit]
    result = {u: round(v) for u, v in out.items() if round(v) > 0}
    order = ("hours", "minutes", "seconds")
    return {u: result[u] for u in order if u in result}


_COLOR_ALIASES = {
    "colour": "",
    "color": "",
    "the": "",
    "light": "",
    "lights": "",
    "shade": "",
    "of": "",
    "a": "",
    "nice": "",
    "bright": "",
    "some": "",
}
_COLOR_MAP = {
    "grey": "gray",
    "violet": "violet",
    "warm": "warm white",
    "cool": "cool white",
    "daylight": "cool white",
}


def parse_color(text: str) -> str | None:
    """Spoken color -> lower-case color name ("the colour Blue" -> "blue", "grey" -> "gray")."""
    words = [w for w in re.findall(r"[a-z]+", text.lower()) if _COLOR_ALIASES.get(w, "x") != ""]
    if not words:
        return None
    name = " ".join(words)
    return _COLOR_MAP.get(name, name)


# direction phrases, longest first wins when they overlap
_UP = (
    "up",
    "raise",
    "increase",
    "higher",
    "more",
    "brighter",
    "brighten",
    "lighter",
    "louder",
    "warmer",
    "hotter",
    "warm up",
    "heat up",
    "bump up",
    "crank up",
    "pump up",
    "boost",
    "too dark",
    "so dark",
    "dark",
    "not bright enough",
    "too dim",
    "can't hear",
    "cannot hear",
    "barely hear",
    "too quiet",
    "cold",
    "freezing",
    "chilly",
    "too cold",
    "so cold",
    "toastier",
    "more light",
    "less dim",
    "plus",
    "brr",
)
_DOWN = (
    "down",
    "lower",
    "decrease",
    "reduce",
    "less",
    "dim",
    "dimmer",
    "darker",
    "quieter",
    "softer",
    "cooler",
    "colder",
    "cool down",
    "too bright",
    "so bright",
    "blinding",
    "too harsh",
    "too loud",
    "so loud",
    "deafening",
    "hot",
    "too hot",
    "too warm",
    "boiling",
    "sweating",
    "roasting",
    "so hot",
    "stuffy",
    "less hot",
    "less bright",
    "drop",
    "minus",
    "bright",
    "loud",
    "warm",
)


def _direction(text: str) -> str | None:
    best: tuple[int, str] | None = None
    for phrase, direction in [(p, "up") for p in _UP] + [(p, "down") for p in _DOWN]:
        if _has(text, phrase) and (best is None or len(phrase) > best[0]):
            best = (len(phrase), direction)
    if best is None:
        return None
    # "warmer"/"louder" beat the bare state words they contain only by length; that is intended
    return best[1]


def parse_step(text: str) -> str | int | None:
    """A relative change: "up"/"down" without an amount, a signed int with one
    ("turn it down by 10 percent" -> -10, "two degrees warmer" -> 2)."""
    low = text.lower()
    direction = _direction(low)
    amount = find_number(low)
    if amount is None:
        return direction
    magnitude = round(abs(amount))
    return -magnitude if direction == "down" else magnitude


# slot -> the parser of its spoken value (the value slots read from one span)
VALUE_PARSERS: dict[str, Callable[[str], object]] = {
    "brightness": parse_brightness,
    "position": parse_percentage,
    "percentage": parse_percentage,
    "volume_level": parse_percentage,
    "temperature": parse_temperature,
    "color": parse_color,
}
