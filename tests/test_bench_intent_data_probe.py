"""bench/intent_data_probe.py: the rows its linear head learns from, and how it prints a share."""

from __future__ import annotations

import numpy as np
from benchload import load_bench

from firmware_tools.data.intents import IntentExample

bench = load_bench("intent_data_probe")


def _real(origin: str, n: int) -> list[IntentExample]:
    return [
        IntentExample(text=f"{origin} {i}", intent=None, spans=[], slots={}, spans_known=False, origin=origin)
        for i in range(n)
    ]


def test_a_seed_draws_generated_rows_and_at_most_per_source_rows_of_each_corpus() -> None:
    real = _real("clinc", 30) + _real("snips", 5) + _real("sgd", 50)
    rows = bench.training_rows(7, 40, 10, real)
    origins = [r.origin for r in rows]
    assert origins.count("gen") == 40
    assert origins.count("clinc") == 10  # capped
    assert origins.count("snips") == 5  # all it has
    assert "sgd" not in origins  # SGD never trains the intent head
    again = bench.training_rows(7, 40, 10, real)
    assert [r.text for r in again] == [r.text for r in rows]
    other = bench.training_rows(8, 40, 10, real)
    assert [r.text for r in other] != [r.text for r in rows]


def test_a_share_is_a_percentage_and_an_empty_set_says_so() -> None:
    assert bench.share(np.array([True, False, True, True])) == "75.00%"
    assert bench.share(np.array([], dtype=bool)) == "-"
    assert bench.label_index(None) == bench.OOS
