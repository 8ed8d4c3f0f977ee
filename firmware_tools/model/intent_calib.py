"""Choose an existing bundle's intent temperature and thresholds again, as ``build-model`` does,
for another out-of-scope target (``edge-fw calibrate-intents``): no retraining, the manifest
alone changes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from edge_agent.runtime.bundle import load_bundle
from firmware_tools.model.build import calibration_examples, plan_for
from firmware_tools.model.dataset import encode_intents
from firmware_tools.model.metrics import OOS_TARGET, calibrate, calibrated_figures

__all__ = ["recalibrate_intents"]


def recalibrate_intents(
    root: Path, data_dir: Path | None, oos_target: float = OOS_TARGET, seed: int | None = None
) -> dict[str, Any]:
    """Rewrite (atomically) the temperature and per-intent thresholds of the bundle at ``root``,
    its default variant and every variant calibrated alike, chosen on the calibration split of
    its build (``build.calibration_examples``: ``seed`` default the build's; the real validation
    split read from ``data_dir``) so that ``oos_target`` of its out-of-scope rows are rejected,
    and the ``calibrated_*`` figures the build reports with them. Returns the manifest. Raises
    ``ValueError`` where the build's decision cannot be chosen again so: it was chosen on
    cross-source folds, or it used real data and ``data_dir`` is None."""
    from edge_agent.runtime.model import Model
    from firmware_tools.staging import rewrite_manifest

    manifest = load_bundle(root).manifest
    built = manifest.get("build", {})
    if "oos_bar" in manifest.get("calibration", {}):
        raise ValueError(
            "its out-of-scope decision was chosen on cross-source folds (calibration.oos_bar): "
            "build it again with --oos-target instead"
        )
    if built.get("real_data") and data_dir is None:
        raise ValueError("it was calibrated with real validation data: pass --data-dir (../shared/data)")
    plan = plan_for(bool(built.get("tiny")))
    splits = calibration_examples(plan, int(built.get("seed", 7) if seed is None else seed), data_dir)
    entries = [("default", manifest)] + [
        (name, entry)
        for name, entry in manifest.get("variants", {}).items()
        if "intent_thresholds" in entry.get("calibration", {})
    ]
    for name, entry in entries:
        model = Model(load_bundle(root), threads=2, variant=name, tasks=("intents",))
        try:
            rows = [encode_intents(model.tokenizer, split) if split else None for split in splits]
            outs = [model.run_intents(r.ids) if r is not None else None for r in rows]
        finally:
            model.close()
        assert rows[0] is not None and outs[0] is not None
        temperature, thresholds = calibrate(outs[0][0], rows[0].intent, oos_target)
        entry["calibration"].update(temperature=temperature, intent_thresholds=thresholds)
        figures = entry.setdefault("metrics", {}).setdefault("student_int8", {})
        for prefix, r, out in zip(("calibrated_", "calibrated_dev_"), rows[1:], outs[1:], strict=True):
            if r is not None and out is not None:
                figures.update(calibrated_figures(prefix, out[0], r.intent, temperature, thresholds))
    record = manifest.setdefault("build", {})
    record.pop("oos_target", None)
    if oos_target != OOS_TARGET:
        record["oos_target"] = oos_target
    rewrite_manifest(root, manifest)
    return manifest
