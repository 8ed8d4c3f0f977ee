"""Refit a bundle's log heads on today's log data with its encoder frozen (``edge-fw refit-logs``).

A change to the log data (``firmware_tools/data/logs.py`` and its sibling modules, the loghub
lines) used to reach users only through a whole model build, which also trains the intents
again from another start: an intent figure then moves by as much as the log change is worth.
This trains only what follows the log graph's last encoder segment, on the hidden states the
bundle's own int8 encoder writes for each training line, and replaces that one segment (and
the fused log graph). The intent graph's files are not touched, so every intent answer stays
the same bit for bit.

The new head keeps the old one's severity and anomaly answers and learns categories anew:

- severity and anomaly: a pooled branch like the build's ``LogsHead``, trained to give the old
  head's own logits (a squared-error match on every training line), so the levels and flags the
  old head gave, and the anomaly threshold chosen for them, carry over;
- category: a branch of its own (the same pooling, a wider hidden layer) trained on the lines'
  category labels. The old head shared one pooled vector among the three heads; a branch of its
  own lets categories learn from new kinds of lines without moving the other two.

Each variant that has a log graph (the default, ``small``) is refit on its own encoder; the
EdgeTPU variant's head is converted from the default's new head. The manifest's int8 log figures
are measured again on the build's held-out generated lines, and ``build.log_refit`` records what
was done.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from edge_agent.logs.classifier import _MAX_MODEL_CHARS  # what the agent feeds the model of a line
from edge_agent.logs.labels import CATEGORIES, SEVERITIES
from edge_agent.runtime.bundle import Bundle, file_entry, load_bundle

__all__ = ["RefitPlan", "refit_log_heads", "training_lines"]

Array = npt.NDArray[Any]
HEAD = "logs_head"


@dataclass(frozen=True)
class RefitPlan:
    """What the refit trains on and how long. ``seed`` draws the generated lines as the build
    does (the build's seed by default); ``n_generated`` is the build's count; ``head_seed``
    starts the new head's weights and the order of its batches."""

    seed: int = 8
    head_seed: int = 0
    n_generated: int = 20000
    n_heldout: int = 4000
    epochs: int = 12
    batch: int = 128
    cat_hidden: int = 128
    n_calib: int = 300


@dataclass
class _Lines:
    ids: Array  # (N, L) int32
    category: Array  # (N,) int32
    severity: Array  # (N,) int32
    anomaly: Array  # (N,) float32


def _encode(bundle: Bundle, examples: Sequence[Any]) -> _Lines:
    from edge_agent.runtime.model import open_tokenizer

    max_len = int(bundle.tokenizer_entry("logs")["max_len"])
    tok = open_tokenizer(bundle, max_len, "logs")
    ids = np.stack([tok.encode(e.line[:_MAX_MODEL_CHARS]).ids for e in examples]).astype(np.int32)
    cat = np.array([CATEGORIES.index(e.category) for e in examples], np.int32)
    sev = np.array(
        [SEVERITIES.index(e.severity) if e.severity in SEVERITIES else 1 for e in examples], np.int32
    )
    anom = np.array([1.0 if e.anomaly else 0.0 for e in examples], np.float32)
    return _Lines(ids, cat, sev, anom)


def _interpreter(path: Path) -> Any:
    from ai_edge_litert.interpreter import Interpreter

    interp = Interpreter(model_path=str(path), num_threads=2)
    interp.allocate_tensors()
    return interp


def _run_segment(interp: Any, spec: dict[str, Any], feeds: dict[str, Array]) -> dict[str, Array]:
    """One batch-1 invoke of a segment, its ports named as the manifest names them."""
    details = {d["name"]: d for d in interp.get_input_details()}
    for port in spec["inputs"]:
        interp.set_tensor(details[port["tensor"]]["index"], feeds[port["name"]])
    interp.invoke()
    outs = {d["name"]: d for d in interp.get_output_details()}
    return {port["name"]: interp.get_tensor(outs[port["tensor"]]["index"]).copy() for port in spec["outputs"]}


def _chain(root: Path, specs: list[dict[str, Any]]) -> Callable[[Array], dict[str, Array]]:
    """The segments ``specs`` run in order on one row of ids; every port any of them writes."""
    interps = [_interpreter(root / s["file"]) for s in specs]

    def run(ids: Array) -> dict[str, Array]:
        state: dict[str, Array] = {"ids": ids[None, :]}
        for interp, spec in zip(interps, specs, strict=True):
            state.update(_run_segment(interp, spec, state))
        return state

    return run


def _variant_specs(manifest: dict[str, Any], variant: str) -> list[dict[str, Any]]:
    """The log graph's segments of ``variant``, in order."""
    if variant == "default":
        segments, graph = manifest["segments"], manifest["graphs"]["logs"]
    else:
        entry = manifest["variants"][variant]
        segments, graph = entry["segments"], entry.get("graphs", manifest["graphs"])["logs"]
    by_name = {s["name"]: s for s in segments}
    specs = [by_name[name] for name in graph]
    if specs[-1]["name"] != HEAD:
        raise ValueError(f"variant {variant}: the log graph ends in {specs[-1]['name']}, not {HEAD}")
    return specs


def _head_inputs(root: Path, specs: list[dict[str, Any]], lines: _Lines) -> dict[str, Array]:
    """For every line, the inputs the head segment reads (its hidden state(s) and the ids), and
    the old head's outputs under their port names (``old:severity_logits``...)."""
    run = _chain(root, specs)
    head = specs[-1]
    names = [p["name"] for p in head["inputs"]] + [f"old:{p['name']}" for p in head["outputs"]]
    cols: dict[str, list[Array]] = {n: [] for n in names}
    for row in lines.ids:
        state = run(row)
        for port in head["inputs"]:
            cols[port["name"]].append(state[port["name"]][0])
        for port in head["outputs"]:
            cols[f"old:{port['name']}"].append(state[port["name"]][0])
    return {n: np.stack(v).astype(np.int32 if n == "ids" else np.float32) for n, v in cols.items()}


def _head_model(hidden_name: str, max_len: int, width: int, plan: RefitPlan) -> Any:
    """Keras model (hidden, ids) -> {severity_logits, category_logits, anomaly_logit}."""
    import keras
    from keras import layers

    from firmware_tools.model.network import Norm, _masked_pool

    keras.utils.set_random_seed(plan.head_seed)  # the weights' start and the batches' order
    h = keras.Input((max_len, width), name=hidden_name)
    ids = keras.Input((max_len,), dtype="int32", name="ids")
    pooled = layers.Lambda(lambda t: _masked_pool(t[0], t[1]), name="masked_pool")([h, ids])
    shared = layers.Dense(width, activation="tanh", name="pool")(Norm(name="pool_norm")(pooled))
    sev = layers.Dense(len(SEVERITIES), name="severity")(shared)
    anom = layers.Dense(1, name="anomaly")(shared)
    own = layers.Dense(plan.cat_hidden, activation="tanh", name="cat_hidden")(Norm(name="cat_norm")(pooled))
    cat = layers.Dense(len(CATEGORIES), name="category")(own)
    outputs = {
        "severity_logits": layers.Identity(name="severity_logits")(sev),
        "category_logits": layers.Identity(name="category_logits")(cat),
        "anomaly_logit": layers.Identity(name="anomaly_logit")(anom),
    }
    return keras.Model([h, ids], outputs, name="logs_head_refit")


def _train(model: Any, x: dict[str, Array], hidden_name: str, y_cat: Array, plan: RefitPlan) -> None:
    import keras

    model.compile(
        optimizer=keras.optimizers.Adam(2e-3),
        loss={
            "severity_logits": "mse",
            "anomaly_logit": "mse",
            "category_logits": keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        },
        loss_weights={"severity_logits": 0.5, "anomaly_logit": 0.5, "category_logits": 1.0},
    )
    model.fit(
        {hidden_name: x[hidden_name], "ids": x["ids"]},
        {
            "severity_logits": x["old:severity_logits"],
            "anomaly_logit": x["old:anomaly_logit"],
            "category_logits": y_cat,
        },
        batch_size=plan.batch,
        epochs=plan.epochs,
        shuffle=True,
        verbose=0,
    )


def _convert_head(
    model: Any,
    spec: dict[str, Any],
    x: dict[str, Array],
    n_calib: int,
    edgetpu: bool,
    fname: str,
    out: Path,
) -> dict[str, Any]:
    """The head as an int8 segment written to ``out/fname``; its manifest entry."""
    import tensorflow as tf

    from firmware_tools.model.convert import _convert, _describe, _Plan

    in_names = [p["name"] for p in spec["inputs"]]
    # float ports whatever the variant's (the EdgeTPU converter quantizes them itself)
    in_specs = [tf.TensorSpec((1, *x[n].shape[1:]), x[n].dtype, name=n) for n in in_names]

    def fn(*args: Any) -> dict[str, Any]:
        return dict(model(dict(zip(in_names, args, strict=True)), training=False))

    plan = _Plan(HEAD, fn, in_names, in_specs, lambda i: [x[n][i : i + 1] for n in in_names])
    blob = _convert(plan, min(n_calib, len(x["ids"])), edgetpu)
    (out / fname).write_bytes(blob)
    return {**spec, **_describe(plan, fname, blob).__dict__}


def _figures(root: Path, specs: list[dict[str, Any]], lines: _Lines) -> dict[str, float]:
    """Int8 log figures of the graph ``specs`` on ``lines`` (the build's ``log_metrics``)."""
    from firmware_tools.model.metrics import log_metrics

    x = _head_inputs(root, specs, lines)
    return log_metrics(
        x["old:severity_logits"],
        x["old:category_logits"],
        x["old:anomaly_logit"],
        lines.severity,
        lines.category,
        lines.anomaly,
    )


def training_lines(plan: RefitPlan, log_dir: Path | None) -> tuple[list[Any], list[Any]]:
    """The build's log lines for ``plan.seed``: (training lines, held-out generated lines)."""
    from firmware_tools.model.build import log_lines

    return log_lines(plan.seed, plan.n_generated, plan.n_heldout, log_dir)


def refit_log_heads(
    bundle_dir: Path,
    out: Path,
    examples: Sequence[Any],
    heldout: Sequence[Any],
    plan: RefitPlan,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Write to ``out`` a copy of the bundle at ``bundle_dir`` whose log heads are refit on
    ``examples`` (objects with ``line``, ``severity``, ``category``, ``anomaly``; module
    docstring); the manifest's int8 log figures are measured on ``heldout``. ``out`` is replaced
    only once the new bundle is whole and loads. Returns the new manifest."""
    import shutil
    import tempfile

    from firmware_tools.model.build import _replace_dir

    source = load_bundle(bundle_dir)
    if "logs" in source.manifest.get("task_tokenizers", {}):
        raise ValueError(f"{bundle_dir}: its log graph comes from another bundle; refit that one")
    with tempfile.TemporaryDirectory(prefix="edge-fw-refit-") as tmp:
        stage = Path(tmp) / "bundle"
        shutil.copytree(bundle_dir, stage)
        manifest = _refit_in(source, stage, examples, heldout, plan, log)
        _replace_dir(stage, out)
    return manifest


def _refit_in(
    source: Bundle,
    out: Path,
    examples: Sequence[Any],
    heldout: Sequence[Any],
    plan: RefitPlan,
    log: Callable[[str], None],
) -> dict[str, Any]:
    """``refit_log_heads`` on ``out``, a copy of ``source`` that it changes in place."""
    from firmware_tools.model.fuse import fuse_bundle
    from firmware_tools.staging import rewrite_manifest

    started = time.monotonic()
    bundle_dir = source.path
    train, held = _encode(source, examples), _encode(source, heldout)
    log(f"refit-logs: {len(train.ids)} training lines, {len(held.ids)} held out")
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    record: dict[str, Any] = {
        "seed": plan.seed,
        "head_seed": plan.head_seed,
        "lines": len(train.ids),
        "epochs": plan.epochs,
        "variants": {},
    }
    for variant in _log_variants(manifest):
        specs = _variant_specs(manifest, variant)
        before = _figures(bundle_dir, specs, held)
        x = _head_inputs(bundle_dir, specs, train)
        hidden = next(p["name"] for p in specs[-1]["inputs"] if p["name"] != "ids")
        max_len, width = x[hidden].shape[1:]
        model = _head_model(hidden, int(max_len), int(width), plan)
        _train(model, x, hidden, train.category, plan)
        changed = [_convert_head(model, specs[-1], x, plan.n_calib, False, specs[-1]["file"], out)]
        _replace_spec(manifest, variant, changed[0])
        if variant == "default" and "edgetpu" in manifest.get("variants", {}):
            tpu = next(s for s in manifest["variants"]["edgetpu"]["segments"] if s["name"] == HEAD)
            changed.append(_convert_head(model, tpu, x, plan.n_calib, True, tpu["file"], out))
            _replace_spec(manifest, "edgetpu", changed[-1])
        for spec in changed:
            manifest["files"][spec["file"]] = file_entry(out / spec["file"])
        rewrite_manifest(out, manifest)
        after = _figures(out, _variant_specs(manifest, variant), held)
        _set_figures(manifest, variant, after)
        record["variants"][variant] = {"held_out_before": before, "held_out_after": after}
        log(f"refit-logs: {variant}: held-out int8 {json.dumps(before)} -> {json.dumps(after)}")
    record["seconds"] = round(time.monotonic() - started, 1)
    manifest.setdefault("build", {})["log_refit"] = record
    rewrite_manifest(out, manifest)
    return fuse_bundle(out)


def _log_variants(manifest: dict[str, Any]) -> list[str]:
    """The variants with a log graph of their own encoder: the default and any with ``graphs``."""
    return ["default"] + [name for name, v in manifest.get("variants", {}).items() if "graphs" in v]


def _replace_spec(manifest: dict[str, Any], variant: str, spec: dict[str, Any]) -> None:
    segments = manifest["segments"] if variant == "default" else manifest["variants"][variant]["segments"]
    index = next(i for i, s in enumerate(segments) if s["name"] == spec["name"])
    segments[index] = spec


def _set_figures(manifest: dict[str, Any], variant: str, figures: dict[str, float]) -> None:
    """The manifest's int8 log figures (the agent trusts a head by them) for ``variant``."""
    where = manifest if variant == "default" else manifest["variants"][variant]
    where.setdefault("metrics", {}).setdefault("student_int8", {}).update(figures)
