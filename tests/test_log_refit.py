"""``edge-fw refit-logs``: the log heads trained again on a frozen encoder, the intents untouched."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from tiny_build import edge_fw

from edge_agent.logs.labels import CATEGORIES
from edge_agent.runtime.bundle import load_bundle
from edge_agent.runtime.model import Model
from edge_agent.runtime.signing import SIGNATURE_FILE
from firmware_tools.data import logs as log_data
from firmware_tools.model.log_refit import RefitPlan, refit_log_heads

SHIPPED = Path(__file__).resolve().parent.parent / "edge_agent" / "models" / "default"
PLAN = RefitPlan(seed=3, n_generated=900, n_heldout=200, epochs=25, n_calib=50)


def _shifted(examples: list[log_data.LogExample]) -> list[log_data.LogExample]:
    """The same lines, each labelled with the next category in the list: labels no head has learnt."""
    return [
        dataclasses.replace(e, category=CATEGORIES[(CATEGORIES.index(e.category) + 1) % len(CATEGORIES)])
        for e in examples
    ]


def _log_outputs(bundle: Path, lines: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    model = Model(load_bundle(bundle), backend="litert")
    ids = np.stack([model.log_tokenizer.encode(line).ids for line in lines]).astype(np.int32)
    out = model.run_logs(ids)
    model.close()
    return out


def test_refit_learns_new_category_labels_and_keeps_everything_else(tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(SHIPPED, src)
    examples = _shifted(log_data.generate(3, PLAN.n_generated))
    out = tmp_path / "refit"
    manifest = refit_log_heads(
        src, out, examples, log_data.generate(1003, PLAN.n_heldout), PLAN, log=lambda _: None
    )
    before, after = load_bundle(src).manifest, load_bundle(out).manifest
    # the intent graph's files are the very same bytes; the log head's are not
    intent_files = {f for s in before["segments"] if s["name"] != "logs_head" for f in [s["file"]]}
    intent_files.add(before["fused"]["intents"]["file"])
    for name in intent_files:
        assert (src / name).read_bytes() == (out / name).read_bytes(), name
        assert after["files"][name] == before["files"][name]
    head = next(s["file"] for s in before["segments"] if s["name"] == "logs_head")
    assert (src / head).read_bytes() != (out / head).read_bytes()
    assert (src / before["fused"]["logs"]["file"]).read_bytes() != (
        out / after["fused"]["logs"]["file"]
    ).read_bytes()
    # the new head answers the new labels; severity and anomaly follow the old head
    lines = [e.line for e in examples[:300]]
    gold = np.array([CATEGORIES.index(e.category) for e in examples[:300]])
    sev0, cat0, anom0 = _log_outputs(src, lines)
    sev1, cat1, anom1 = _log_outputs(out, lines)
    assert (cat1.argmax(-1) == gold).mean() >= 0.8 > 0.1 > (cat0.argmax(-1) == gold).mean()
    assert (sev1.argmax(-1) == sev0.argmax(-1)).mean() >= 0.9
    assert ((anom1 > 0) == (anom0 > 0)).mean() >= 0.9
    # the record says what was done, and the figures the agent trusts the heads by are the new head's
    record = manifest["build"]["log_refit"]
    assert record["lines"] == PLAN.n_generated and record["epochs"] == PLAN.epochs
    refit = record["variants"]["default"]["held_out_after"]
    assert all(after["metrics"]["student_int8"][k] == v for k, v in refit.items())
    # the held-out lines keep their own labels: a head taught shifted ones agrees with them less
    assert refit["category_accuracy"] < record["variants"]["default"]["held_out_before"]["category_accuracy"]
    # every variant with a log head got a new one: the small student's and the EdgeTPU's
    assert set(record["variants"]) == {"default", "small"}
    for variant in ("small", "edgetpu"):
        spec = next(s for s in after["variants"][variant]["segments"] if s["name"] == "logs_head")
        assert (src / spec["file"]).read_bytes() != (out / spec["file"]).read_bytes()
        assert after["files"][spec["file"]] != before["files"][spec["file"]]


def test_refit_logs_refuses_a_signed_bundle_and_its_own_directory(tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(SHIPPED, src)
    same = edge_fw("refit-logs", str(src), "--out", str(src))
    assert same.returncode == 2 and "--out must be another directory" in same.stderr
    (src / SIGNATURE_FILE).write_text(json.dumps({}), encoding="utf-8")
    signed = edge_fw("refit-logs", str(src), "--out", str(tmp_path / "o"))
    assert signed.returncode == 2 and "is signed" in signed.stderr
    assert not (tmp_path / "o").exists()


def test_a_failed_refit_leaves_the_output_directory_as_it_was(tmp_path: Path) -> None:
    out = tmp_path / "refit"
    out.mkdir()
    (out / "kept.txt").write_text("the last good one", encoding="utf-8")
    bad = [dataclasses.replace(e, category="no such category") for e in log_data.generate(3, 5)]
    with pytest.raises(ValueError):
        refit_log_heads(SHIPPED, out, bad, log_data.generate(1003, 5), PLAN, log=lambda _: None)
    assert [p.name for p in out.iterdir()] == ["kept.txt"]
