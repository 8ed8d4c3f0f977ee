"""bench/intents_cross_source.py's SGD row without the turns that lean on an earlier turn."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from benchload import load_bench

from firmware_tools.model.cross_source import OOS, FoldResult
from firmware_tools.model.dataset import INTENT_LABELS

bench = load_bench("intents_cross_source")

ROWS = [  # text, service, intent, spans
    ("what's the weather in Paris", "Weather_1", "GetWeather", 1),
    ("yes, please play it", "Music_3", "PlayMedia", 0),
    ("book a table for two", "Restaurants_1", "ReserveRestaurant", 0),
    ("play some jazz", "Music_3", "PlayMedia", 0),
]


def _sgd(tmp_path: Path) -> Path:
    (tmp_path / "sgd").mkdir()
    lines = [
        json.dumps({"text": t, "service": s, "intent": i, "spans": [{"slot": "x"}] * n})
        for t, s, i, n in ROWS
    ]
    (tmp_path / "sgd" / "test.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path


def _fold(texts: list[str]) -> FoldResult:
    weather, media = INTENT_LABELS.index("HassGetWeather"), INTENT_LABELS.index("HassMediaSearchAndPlay")
    gold = np.array([weather, media, OOS, media])
    logits = np.zeros((4, len(INTENT_LABELS)), np.float32)
    logits[np.arange(4), [weather, OOS, OOS, media]] = 5.0  # the back-referring turn is rejected
    return FoldResult("sgd", logits, logits, gold, texts)


def test_the_own_row_drops_only_in_scope_turns_that_lean_on_an_earlier_one(tmp_path: Path) -> None:
    own = bench.standing_alone([_fold([r[0] for r in ROWS])], _sgd(tmp_path))
    assert own.source == "sgd, own"
    assert own.texts == ["what's the weather in Paris", "book a table for two", "play some jazz"]
    m = bench.fold_metrics(own)
    assert (m["n_in_scope"], m["n_oos"], m["false_rejection"]) == (2, 1, 0.0)
    assert bench.fold_metrics(_fold([r[0] for r in ROWS]))["false_rejection"] == pytest.approx(1 / 3)


def test_a_fold_of_other_data_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="line up"):
        bench.standing_alone([_fold(["a", "b", "c", "d"])], _sgd(tmp_path))
    assert bench.standing_alone([], tmp_path) is None


def test_saved_predictions_are_read_back_and_each_rule_is_scored_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = np.random.default_rng(3)
    saved: dict[str, np.ndarray] = {}
    for source in ("clinc", "snips"):
        gold = np.where(rng.uniform(size=300) < 0.2, OOS, rng.integers(0, 5, 300))
        logits = rng.normal(size=(300, len(INTENT_LABELS))).astype(np.float32)
        logits[np.arange(300), gold] += rng.uniform(0.0, 6.0, 300)
        saved |= {f"{source}_logits": logits, f"{source}_gold": gold, f"{source}_slot_f1": np.float64(0.5)}
    np.savez(tmp_path / "folds.npz", **saved)
    folds = bench.loaded(tmp_path / "folds.npz")
    assert [f.source for f in folds] == ["clinc", "snips"]
    assert folds[1].slot_f1 == 0.5
    assert np.allclose(folds[0].probs.sum(axis=1), 1.0)
    assert bench.report(folds, tmp_path) == 0
    out = capsys.readouterr().out
    left = {line.split()[0]: line for line in out.splitlines() if " left out: " in line}
    assert set(left) == {"nll", "worst_ece"}
    for rule in ("nll", "worst_ece"):
        t, bar = bench.left_out_calibration(folds, rule=rule)["clinc"]
        ece = bench.fold_metrics(folds[0], t, bar)["ece"]
        assert f"clinc {t:g}, {bar:g}: {ece:.4f}" in left[rule]
    # the pooled table is the build's choice (the worst-source rule)
    t, bar = bench.choose_calibration(folds, rule="worst_ece")
    assert f"temperature {t}, out of scope only when its probability >= {bar}" in out
