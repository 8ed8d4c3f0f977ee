"""``edge-fw export-teacher --work W --out DIR``: the build's fine-tuned teacher as an agent bundle.

Reads a finished build's work directory (``edge-fw build-model --work W``, same ``--seed`` and
data), trains nothing, and writes a bundle of the teacher (``firmware_tools/model/teacher_bundle.py``:
one int8 graph, the same as segments for streaming, and the encoder's word-piece tokenizer) with
its calibration chosen as the student's build chooses it (custom intents' settings too, with SGD's
development split), and its figures in ``metrics``: SGD's test split (a source whose labels the
teacher never learnt) and the real development split, through the agent's runtime.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from edge_agent.errors import BundleError

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "export-teacher", help="write the build's fine-tuned teacher as a bundle (a larger model)"
    )
    p.add_argument("--work", type=Path, required=True, help="a finished build's --work directory")
    p.add_argument("--out", type=Path, required=True, help="bundle directory to write (replaced)")
    p.add_argument("--seed", type=int, default=8, help="the build's --seed (default 8, main's recipe)")
    p.add_argument(
        "--data-dir",
        type=Path,
        help="the build's --data-dir (also scores SGD's test split and the real dev split)",
    )
    p.add_argument("--log-dir", type=Path, help="the build's --log-dir")
    p.add_argument(
        "--logs-from",
        type=Path,
        help="a student bundle (the build's --out) whose log graph and tokenizer the bundle carries "
        "instead of the teacher's log heads",
    )
    p.add_argument("--tiny", action="store_true", help="the work directory is a --tiny build's")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    try:
        manifest = export(
            args.work,
            args.out,
            args.seed,
            args.data_dir,
            args.log_dir,
            tiny=args.tiny,
            logs_from=args.logs_from,
        )
    except (FileNotFoundError, ValueError, BundleError) as exc:
        print(f"edge-fw export-teacher: {exc}", file=sys.stderr)
        return 2
    cal = manifest["calibration"]
    from firmware_tools.model.metrics import MIN_THRESHOLD

    raised = sum(v > MIN_THRESHOLD for v in cal["intent_thresholds"].values())
    print(f"wrote {args.out}: temperature {cal['temperature']}, {raised} intent thresholds raised")
    for name, value in manifest["metrics"].items():
        print(f"  {name}: {value:.4f}" if isinstance(value, float) else f"  {name}: {value}")
    return 0


def export(
    work: Path,
    out: Path,
    seed: int,
    data_dir: Path | None,
    log_dir: Path | None,
    *,
    tiny: bool = False,
    logs_from: Path | None = None,
) -> dict[str, Any]:
    """Write the teacher bundle ``out`` from the build in ``work``; returns its manifest.
    ``logs_from``: a student bundle whose logs the bundle carries (``attach_student_logs``)."""
    from edge_agent.runtime.bundle import load_bundle
    from edge_agent.runtime.model import Model
    from firmware_tools.model import build as b
    from firmware_tools.model.cross_source import FoldResult, eval_split, fold_metrics, softmax
    from firmware_tools.model.dataset import encode_intents
    from firmware_tools.model.metrics import calibrate
    from firmware_tools.model.pretrained import default_zip, load_checkpoint
    from firmware_tools.model.teacher_bundle import export_teacher, write_teacher_bundle
    from firmware_tools.staging import rewrite_manifest

    t0 = time.time()
    plan = b.plan_for(tiny=tiny)
    cache = b._StageCache(work, (), print)
    tmp = Path(tempfile.mkdtemp(prefix="edge-fw-teacher-"))
    try:
        data = b._load_data(tmp, plan, seed, (data_dir, log_dir), print, cache, None)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    ckpt = load_checkpoint(default_zip())
    teacher = b.teacher_from_work(ckpt, plan, cache)
    max_len = plan.teacher.max_len
    fused, segments = export_teacher(ckpt, teacher, max_len, plan.teacher.trainable_layers)
    build = {"from_work": str(work), "seed": seed, "encoder": ckpt.source}
    # written once; the calibration and figures below, chosen through it, go into its manifest
    if logs_from is not None:
        load_bundle(logs_from)  # refused here, before the work, when it is not a bundle
    manifest = write_teacher_bundle(out, fused, segments, ckpt.tokenizer_json, max_len, build, logs_from)

    model = Model(load_bundle(out), threads=2, tasks=("intents",))

    def logits(texts: list[str]) -> np.ndarray:
        ids = np.stack([model.tokenizer.encode(t).ids for t in texts]).astype(np.int32)
        return model.run_intents(ids)[0]

    held = data.it_ho
    half = len(held.intent) // 2
    cal_texts = list(held.texts[:half])
    cal_gold = held.intent[:half]
    if data.calib_examples:
        val = encode_intents(data.tok, data.calib_examples)
        cal_texts += list(val.texts)
        cal_gold = np.concatenate([cal_gold, val.intent])
    temperature, thresholds = calibrate(logits(cal_texts), cal_gold)
    # the graph against the float teacher it was made from, on the other half of the held-out split
    rest = list(held.texts[half:])
    floats = b.teacher_text_logits(ckpt, teacher, plan, rest)["intent"]
    metrics: dict[str, float] = {
        "float_argmax_agreement": float((logits(rest).argmax(1) == floats.argmax(1)).mean())
    }
    if data_dir is not None and (data_dir / "sgd" / "test.jsonl").is_file():
        sgd_arrays = encode_intents(data.tok, eval_split(data_dir, "sgd"))
        z = logits(list(sgd_arrays.texts))
        m = fold_metrics(FoldResult("sgd", softmax(z), z, sgd_arrays.intent))
        metrics.update({f"sgd_{k}": float(v) for k, v in m.items() if k != "slot_f1"})
    if data.it_dev is not None:
        dev = data.it_dev
        z = logits(list(dev.texts))
        metrics.update({k: float(v) for k, v in b._dev_metrics(z, dev).items()})
    model.close()
    manifest["calibration"].update(temperature=temperature, intent_thresholds=thresholds)
    manifest["metrics"].update(metrics)  # beside the student's log-head figures, with --logs-from
    manifest["build"]["seconds"] = round(time.time() - t0, 1)
    rewrite_manifest(out, manifest)
    if data_dir is not None and (data_dir / "sgd" / "dev.jsonl").is_file():
        from firmware_tools.model.custom_calib import recalibrate_bundle

        manifest = recalibrate_bundle(out, data_dir, seed)  # custom intents, as calibrate-custom does
        # (it files its figures under the student's name; they are the teacher's: moved up, and
        # only the log heads' figures of a --logs-from student stay there)
        int8 = manifest["metrics"].pop("student_int8", {})
        manifest["metrics"].update({k: v for k, v in int8.items() if k.startswith("custom_")})
        if any(not k.startswith("custom_") for k in int8):
            manifest["metrics"]["student_int8"] = {
                k: v for k, v in int8.items() if not k.startswith("custom_")
            }
        rewrite_manifest(out, manifest)
    return manifest
