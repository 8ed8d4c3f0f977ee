"""bench/intents_blind_dev.py: its data file is well formed, and its figures count what they say."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchload import load_bench

from edge_agent.runtime.bundle import default_bundle_path

bench = load_bench("intents_blind_dev")


def test_the_blind_set_labels_only_the_models_intents_and_holds_no_duplicate() -> None:
    rows = bench.read_rows()
    intents = json.loads((default_bundle_path() / "manifest.json").read_text())["labels"]["intents"][:-1]
    assert len(rows) >= 800
    assert {intent for _, intent, _ in rows} <= {*intents, None}
    assert {style for style, _, _ in rows} == {
        "terse",
        "indirect",
        "speech",
        "learner",
        "polite-casual",
        "mostly-oos",
    }
    texts = [text.lower() for _, _, text in rows]
    assert len(set(texts)) == len(texts)
    assert sum(intent is None for _, intent, _ in rows) >= 150  # out-of-scope requests are scored too


def test_a_malformed_line_names_the_file_and_line(tmp_path: Path) -> None:
    data = tmp_path / "d.tsv"
    data.write_text("# comment\nterse\tHassTurnOn\tlights on\nterse\tHassTurnOff\n", encoding="utf-8")
    with pytest.raises(SystemExit, match=r"d.tsv:3: expected style<TAB>intent<TAB>text"):
        bench.read_rows(data)


def test_figures_split_right_rejected_and_out_of_scope() -> None:
    rows = [("s", "HassTurnOn", "a"), ("s", "HassTurnOn", "b"), ("s", "HassTurnOff", "c"), ("s", None, "d")]
    results = [
        {"intent": "HassTurnOn", "confidence": 0.9},
        {"intent": None, "confidence": 0.8},
        {"intent": "HassTurnOn", "confidence": 0.6},
        {"intent": None, "confidence": 0.7},
    ]
    f = bench.figures(rows, results)
    assert f["in_scope"] == pytest.approx(100 / 3) and f["rejected_in_scope"] == pytest.approx(100 / 3)
    assert f["oos_rejected"] == 100.0 and f["n_in"] == 3 and f["n_out"] == 1
    # right: 0.9 yes, 0.8 no, 0.6 no, 0.7 yes -> every bin off by its own gap
    assert f["ece"] == pytest.approx((0.1 + 0.8 + 0.6 + 0.3) / 4)
