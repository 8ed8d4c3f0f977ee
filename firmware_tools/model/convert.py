"""Int8 TFLite conversion of a trained :class:`Network`, one .tflite per segment.

Each segment is traced as a ``tf.function`` with a fixed batch-1 signature and quantized with
the converter's full-integer path (per-channel weights for Dense layers, activations
calibrated on representative hidden states of real generated text). The default variant
keeps float32 inputs/outputs (the quantize/dequantize happens inside each segment); the
EdgeTPU variant is int8 end to end and may only contain int8 builtins.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import tensorflow as tf

from firmware_tools.model.network import Network

__all__ = ["SegmentExport", "convert_segments", "segment_plan"]


@dataclass
class SegmentExport:
    name: str
    file: str
    inputs: list[dict[str, Any]]
    outputs: list[dict[str, Any]]


@dataclass
class _Plan:
    name: str
    fn: Callable[..., dict[str, Any]]
    in_names: list[str]
    in_specs: list[tf.TensorSpec]
    calib: Callable[[int], list[np.ndarray]]


def segment_plan(net: Network, calib_ids: np.ndarray) -> list[_Plan]:
    """The segments in graph order, each with its calibration inputs (batch-1 rows)."""
    cfg = net.cfg
    L, D = cfg.max_len, cfg.width  # members side by side: their states are one tensor
    hidden = [np.asarray(h) for h in net.hidden(calib_ids)]
    ids_spec = tf.TensorSpec((1, L), tf.int32, name="ids")
    plans = [
        _Plan(
            "embed",
            lambda ids: {"h0": net.embed(ids, training=False)},
            ["ids"],
            [ids_spec],
            lambda i: [calib_ids[i : i + 1]],
        ),
    ]
    for b, block in enumerate(net.blocks):
        plans.append(
            _Plan(
                f"block{b}",
                _block_fn(block, b),
                [f"h{b}"],
                [tf.TensorSpec((1, L, D), tf.float32, name=f"h{b}")],
                _row(hidden[b]),
            )
        )
    last = f"h{cfg.n_blocks}"
    hspec = tf.TensorSpec((1, L, D), tf.float32, name=last)

    def intent_out(intent: Any, slots: Any, *sentence: Any) -> dict[str, Any]:
        out = {"intent_logits": intent, "slot_logits": slots}
        if sentence:
            out["sentence_embedding"] = sentence[0]
        return out

    def intent_fn(h: Any, ids: Any) -> dict[str, Any]:
        return intent_out(*net.intent_head(h, ids))

    def intent_own_fn(h: Any, h0: Any, ids: Any) -> dict[str, Any]:
        return intent_out(*net.intent_head(h, ids, h0))

    def logs_fn(h: Any, ids: Any) -> dict[str, Any]:
        sev, cat, anom = net.logs_head(h, ids)
        return {"severity_logits": sev, "category_logits": cat, "anomaly_logit": anom}

    last_h = hidden[-1]
    if cfg.sentence_dim and cfg.sentence_source == "embed":  # the sentence path reads h0 too
        h0, h0_spec = hidden[0], tf.TensorSpec((1, L, D), tf.float32, name="h0")
        plans.append(
            _Plan(
                "intent_head",
                intent_own_fn,
                [last, "h0", "ids"],
                [hspec, h0_spec, ids_spec],
                lambda i: [last_h[i : i + 1], h0[i : i + 1], calib_ids[i : i + 1]],
            )
        )
    else:
        plans.append(
            _Plan(
                "intent_head",
                intent_fn,
                [last, "ids"],
                [hspec, ids_spec],
                lambda i: [last_h[i : i + 1], calib_ids[i : i + 1]],
            )
        )
    plans.append(
        _Plan(
            "logs_head",
            logs_fn,
            [last, "ids"],
            [hspec, ids_spec],
            lambda i: [last_h[i : i + 1], calib_ids[i : i + 1]],
        )
    )
    return plans


def _block_fn(block: Any, b: int) -> Callable[[Any], dict[str, Any]]:
    return lambda h: {f"h{b + 1}": block(h, training=False)}


def _row(arr: np.ndarray) -> Callable[[int], list[np.ndarray]]:
    return lambda i: [arr[i : i + 1]]


def convert_segments(
    net: Network,
    calib_ids: np.ndarray,
    out_dir: Path,
    *,
    edgetpu: bool = False,
    progress: Any = None,
    prefix: str = "",
) -> tuple[list[SegmentExport], dict[str, str]]:
    """Convert every segment; returns the exports and, per segment, why it could not be made
    (only for ``edgetpu``: ops outside the int8 builtin set)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    exports: list[SegmentExport] = []
    blocked: dict[str, str] = {}
    n_calib = len(calib_ids)
    for plan in segment_plan(net, calib_ids):
        fname = f"{prefix}{plan.name}{'.edgetpu' if edgetpu else ''}.tflite"
        try:
            blob = _convert(plan, n_calib, edgetpu)
        except Exception as exc:
            if not edgetpu:
                raise
            blocked[plan.name] = str(exc).strip().splitlines()[-1][:300]
            continue
        (out_dir / fname).write_bytes(blob)
        exports.append(_describe(plan, fname, blob))
        if progress is not None:
            progress.update(1)
    return exports, blocked


def _convert(plan: _Plan, n_calib: int, edgetpu: bool) -> bytes:
    fn = tf.function(plan.fn, input_signature=plan.in_specs, autograph=False)
    concrete = fn.get_concrete_function()
    conv = tf.lite.TFLiteConverter.from_concrete_functions([concrete], fn)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]

    def rep() -> Iterator[list[np.ndarray]]:
        for i in range(n_calib):
            yield plan.calib(i)

    conv.representative_dataset = rep
    if edgetpu:
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        conv.inference_input_type = tf.int8
        conv.inference_output_type = tf.int8
    else:
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8, tf.lite.OpsSet.TFLITE_BUILTINS]
    conv._experimental_disable_per_channel = False  # per-channel weights (the default, made explicit)
    return bytes(conv.convert())


def _describe(plan: _Plan, fname: str, blob: bytes) -> SegmentExport:
    interp = tf.lite.Interpreter(model_content=blob)
    ins = interp.get_input_details()
    outs = interp.get_output_details()
    inputs = [_port(n, _match(ins, n)) for n in plan.in_names]
    # a traced dict output is flattened in sorted key order into Identity, Identity_1, ...
    keys = sorted(plan.fn(*[tf.constant(x) for x in plan.calib(0)]).keys())
    ordered = sorted(outs, key=lambda d: _identity_index(d["name"]))
    if len(ordered) != len(keys):
        raise RuntimeError(f"{plan.name}: {len(ordered)} outputs for {len(keys)} names")
    outputs = [_port(k, d) for k, d in zip(keys, ordered, strict=True)]
    return SegmentExport(plan.name, fname, inputs, outputs)


def _match(details: list[dict[str, Any]], name: str) -> dict[str, Any]:
    for d in details:
        if d["name"] == name or d["name"].endswith(f"_{name}:0") or d["name"] == f"serving_default_{name}:0":
            return d
    for d in details:
        if name in d["name"]:
            return d
    raise KeyError(f"no tensor for input {name!r} among {[d['name'] for d in details]}")


def _identity_index(tensor: str) -> int:
    base = tensor.split(":")[0]
    if base == "Identity":
        return 0
    if base.startswith("Identity_") and base[9:].isdigit():
        return int(base[9:])
    raise RuntimeError(f"unexpected output tensor name {tensor!r}")


def _port(name: str, detail: dict[str, Any]) -> dict[str, Any]:
    scale, zero = detail.get("quantization", (0.0, 0))
    port: dict[str, Any] = {
        "name": name,
        "tensor": detail["name"],
        "dtype": np.dtype(detail["dtype"]).name,
        "shape": [int(x) for x in detail["shape"]],
    }
    if scale:
        port["quant"] = {"scale": float(scale), "zero_point": int(zero)}
    return port
