"""Where the shipped recognizer loses SGD's in-scope requests: per intent and per kind of request.

Usage::

    python bench/intents_sgd_kinds.py [--bundle DIR] [--data-dir ../shared/data] [--show N]
        [--against DIR] [--split test|dev|train]

Runs ``edge-agent intents`` as a user gets it (int8, the bundle's temperature and out-of-scope
rule), in the example home (tests/data/home_example.yaml), on the scored rows of SGD's test split
(``--split dev``: its dev split; ``--split train``: its training split, whose texts train the
sentence embedding and whose labels train nothing by default, so that it can choose among
students; ``firmware_tools.data.sgd.mapped_sgd``: weather, songs and films in scope, other
services out).
The in-scope rows are grouped by what they ask for, from their words: ``film`` (watch, movie,
film, subtitles), ``music`` (song, music, play, listen, hear, cast), ``weather`` (weather,
rain, forecast...), ``other``. The grouping only sorts the errors for reading; it is not a rule
of the agent. Prints, per (intent, kind): rows, recognized, rejected as out of scope, given
another intent; then every in-scope row's totals and the out-of-scope rows rejected.
Then the same totals for the in-scope rows that stand on their own and for those that lean on an
earlier turn (``firmware_tools.data.sgd.refers_back``: "yes, please play it", "4th of march in
marshall"), which a single-utterance agent cannot serve.
Then the place slot: of the in-scope weather rows with one ``city`` span, the share whose
``name`` slot equals the city (case and punctuation aside, as ``bench/intents_real_dev.py``
compares), over all of them and over those given ``HassGetWeather``; and the title slot: of the
in-scope film rows with one ``title`` span, the share whose ``search_query`` equals the title
(added 6 December 2026, its first figure taken before the span repairs written that day). No slot
of SGD trained the model or shaped a rule, so this is a cross-source slot figure (issue 31, item 6).
``--show N`` prints up to N rejected rows per group. ``--against DIR`` runs the same rows through a
second bundle and pairs the two per request (in scope and out of scope apart).

The figure that tracks issue 31 is ``bench/intents_cross_source.py`` (float student, argmax);
this one is the recognizer a user runs, so its in-scope share can differ by a point or two.
"""

from __future__ import annotations

import argparse
import collections
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._cli import print_paired, run_lines  # noqa: E402
from bench.intents_real_dev import slot_equal  # noqa: E402
from firmware_tools.data.intents import IntentExample  # noqa: E402
from firmware_tools.data.sgd import SgdRow, mapped_sgd, refers_back  # noqa: E402

HOME = ROOT / "tests" / "data" / "home_example.yaml"
KINDS = (
    ("film", re.compile(r"\bwatch|movie|film|subtitle", re.I)),
    ("music", re.compile(r"song|music|\bplay|listen|\bhear|\bcast\b", re.I)),
    ("weather", re.compile(r"weather|rain|temperature|forecast|sunny|humid|wind|climate", re.I)),
)


def kind_of(text: str) -> str:
    return next((name for name, words in KINDS if words.search(text)), "other")


def _print_totals(title: str, c: collections.Counter[str]) -> None:
    n = max(1, c["rows"])
    print(
        f"{title}: {c['rows']} rows, {100 * c['right'] / n:.2f}% recognized, "
        f"{100 * c['rejected'] / n:.2f}% rejected, {100 * c['other'] / n:.2f}% another intent"
    )


def _one_value(row: SgdRow, slot: str) -> str | None:
    values = [value for name, value in row.values if name == slot]
    return values[0] if len(values) == 1 else None


def place_of(row: SgdRow, ex: IntentExample) -> str | None:
    """The city a weather row names, when it names exactly one (None otherwise)."""
    return _one_value(row, "city") if ex.intent == "HassGetWeather" else None


def title_of(row: SgdRow, ex: IntentExample) -> str | None:
    """The film a request to play one names, when it names exactly one (None otherwise)."""
    return _one_value(row, "title") if ex.intent == "HassMediaSearchAndPlay" else None


# what each cross-source slot figure scores: (label, the row's value, our slot that should hold it)
SLOT_FIGURES = (
    ("place slot (weather rows naming one city)", place_of, "name"),
    ("title slot (film rows naming one title)", title_of, "search_query"),
)


def _print_slot(
    label: str,
    value_of: Any,
    slot: str,
    sgd_rows: list[SgdRow],
    rows: list[IntentExample],
    out: list[dict[str, Any]],
) -> None:
    right = right_of_recognized = recognized = total = 0
    for row, ex, got in zip(sgd_rows, rows, out, strict=True):
        value = value_of(row, ex)
        if value is None:
            continue
        held = (got.get("slots") or {}).get(slot)
        ok = isinstance(held, dict) and slot_equal(value, held.get("value"))
        total += 1
        right += ok
        if got.get("intent") == ex.intent:
            recognized += 1
            right_of_recognized += ok
    if not total:
        return  # the split names none (SGD's dev split has no film titles)
    print(
        f"{label}: {100 * right / max(1, total):.2f}% ({right}/{total}); "
        f"of those recognized: {100 * right_of_recognized / max(1, recognized):.2f}% "
        f"({right_of_recognized}/{recognized})"
    )


def _print_places(sgd_rows: list[SgdRow], rows: list[IntentExample], out: list[dict[str, Any]]) -> None:
    _print_slot(*SLOT_FIGURES[0], sgd_rows, rows, out)


def _print_slots(sgd_rows: list[SgdRow], rows: list[IntentExample], out: list[dict[str, Any]]) -> None:
    for figure in SLOT_FIGURES:
        _print_slot(*figure, sgd_rows, rows, out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundle", default=None)
    ap.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--show", type=int, default=0)
    ap.add_argument("--against", default=None, help="a second bundle, paired per request")
    ap.add_argument(
        "--split", choices=("test", "dev", "train"), default="test", help="which SGD split (default test)"
    )
    args = ap.parse_args(argv)
    mapped = mapped_sgd(args.data_dir, args.split)
    rows = [ex for _, ex in mapped]
    leaning = [refers_back(row) for row, _ in mapped]
    if not rows:
        raise SystemExit(f"no SGD {args.split} rows under {args.data_dir}")
    out = run_lines(["intents", "--home", str(HOME)], [ex.text for ex in rows], args.bundle)
    groups: dict[tuple[str, str], collections.Counter[str]] = collections.defaultdict(collections.Counter)
    shown: dict[tuple[str, str], list[str]] = collections.defaultdict(list)
    standing: dict[bool, collections.Counter[str]] = {b: collections.Counter() for b in (False, True)}
    oos = oos_rejected = 0
    for ex, got, back in zip(rows, out, leaning, strict=True):
        predicted = got.get("intent")
        if ex.intent is None:
            oos += 1
            oos_rejected += predicted is None
            continue
        key = (ex.intent, kind_of(ex.text))
        outcome = "right" if predicted == ex.intent else "rejected" if predicted is None else "other"
        groups[key]["rows"] += 1
        groups[key][outcome] += 1
        standing[back]["rows"] += 1
        standing[back][outcome] += 1
        if outcome == "rejected" and len(shown[key]) < args.show:
            shown[key].append(f"    {float(got.get('confidence', 0.0)):.2f}  {ex.text}")
    print(f"{'intent':24} {'kind':8} {'rows':>5} {'right':>7} {'rejected':>9} {'other':>7}")
    total: collections.Counter[str] = collections.Counter()
    for key in sorted(groups):
        c = groups[key]
        total.update(c)
        n = c["rows"]
        print(
            f"{key[0]:24} {key[1]:8} {n:5d} {100 * c['right'] / n:6.2f}% "
            f"{100 * c['rejected'] / n:8.2f}% {100 * c['other'] / n:6.2f}%"
        )
        for line in shown[key]:
            print(line)
    _print_totals("in scope", total)
    _print_totals("in scope, standing on their own", standing[False])
    _print_totals("in scope, leaning on an earlier turn", standing[True])
    print(f"out of scope: {oos} rows, {100 * oos_rejected / max(1, oos):.2f}% rejected")
    _print_slots([row for row, _ in mapped], rows, out)
    if args.against:
        other = run_lines(["intents", "--home", str(HOME)], [ex.text for ex in rows], args.against)
        print(f"== paired, per request: a = {args.bundle or 'shipped'}, b = {args.against}")
        print_paired(f"SGD {args.split}", [ex.intent for ex in rows], out, other)
    return 0


if __name__ == "__main__":
    sys.exit(main())
