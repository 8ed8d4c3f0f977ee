"""``edge-fw synth-bundle``: a bundle of a chosen parameter count with random weights.

It has the shipped bundle's interface (same manifest format, the same heads and labels, int8
segments chained by tensor name) so the runtime's residency modes, streaming and delegates can be
measured at sizes the trained model does not have. Its outputs mean nothing.

Layout (values flow by name, as in edge_agent/runtime/model.py): ``embed`` (ids -> h0),
``block_00`` .. ``block_NN`` (h{i} -> h{i+1}, a residual MLP each), ``intent_head``
(h{N} -> intent_logits, slot_logits) and ``log_head`` (h{N} -> severity_logits, category_logits,
anomaly_logit). Each port names its interpreter tensor in ``tensor``. The batch dimension is
dynamic (-1), so the runtime can push a batch of requests through one segment load.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from edge_agent.logs.labels import CATEGORIES, SEVERITIES
from edge_agent.nlu.schema import INTENTS, OUT_OF_SCOPE, SLOTS
from edge_agent.runtime.bundle import FORMAT_NAME, FORMAT_VERSION, MANIFEST, file_entry
from firmware_tools.staging import staged_dir

__all__ = ["SynthSpec", "parse_params", "register", "synth_bundle"]

_SUFFIX = {"": 1, "K": 1_000, "M": 1_000_000, "G": 1_000_000_000}
_CALIBRATION_SAMPLES = 8


@dataclass(frozen=True)
class SynthSpec:
    """Shape of the synthetic model, derived from the wanted parameter count."""

    params: int
    dim: int
    ffn: int
    blocks: int
    vocab: int
    max_len: int


def parse_params(text: str) -> int:
    """``100M`` -> 100_000_000; accepts K, M, G suffixes and plain integers."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgG]?)\s*", text)
    if not match:
        raise argparse.ArgumentTypeError(f"--params must look like 100M, 2.5M, 300K or 1000000, got {text!r}")
    value = int(float(match.group(1)) * _SUFFIX[match.group(2).upper()])
    if value < 50_000:
        raise argparse.ArgumentTypeError(f"--params must be at least 50K, got {text!r}")
    return value


def plan(params: int, *, vocab: int, max_len: int) -> SynthSpec:
    """Pick width and depth so the weights add up to about ``params``."""
    dim = 64 if params < 2_000_000 else 256 if params < 20_000_000 else 768
    ffn = 4 * dim
    per_block = 2 * dim * ffn + ffn + 3 * dim
    heads = dim * (len(INTENTS) + 1 + 2 * len(SLOTS) + 1 + len(SEVERITIES) + len(CATEGORIES) + 1)
    blocks = max(2, round((params - vocab * dim - heads) / per_block))
    return SynthSpec(params, dim, ffn, blocks, vocab, max_len)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("synth-bundle", help="make a random-weight bundle of a given size (for measuring)")
    p.add_argument("--params", type=parse_params, required=True, help="parameter count, e.g. 100M")
    p.add_argument("--out", type=Path, required=True, help="output directory (created; must be empty)")
    p.add_argument("--max-len", type=int, default=32, help="token window (default 32)")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=_cmd)


def _cmd(args: argparse.Namespace) -> int:
    out: Path = args.out
    if out.exists() and any(out.iterdir()):
        print(f"edge-fw synth-bundle: {out} exists and is not empty", file=sys.stderr)
        return 2
    manifest = synth_bundle(out, args.params, max_len=args.max_len, seed=args.seed, progress=True)
    total = sum(int(e["size"]) for e in manifest["files"].values())
    print(f"wrote {out} ({len(manifest['segments'])} segments, {total / 1e6:.1f} MB)")
    return 0


def synth_bundle(
    out: Path, params: int, *, max_len: int = 32, seed: int = 0, progress: bool = False
) -> dict[str, Any]:
    """Write the bundle to ``out`` (missing or empty) and return its manifest. It is written into
    a sibling directory that becomes ``out`` when complete: a failure leaves no ``out`` behind."""
    with staged_dir(out) as stage:
        tok_file, vocab = _write_tokenizer(stage, seed)
        spec = plan(params, vocab=vocab, max_len=max_len)
        rng = np.random.default_rng(seed)
        segments = [
            _convert_segment(stage, name, kind, spec, rng, ports) for name, kind, ports in _segment_plan(spec)
        ]
        if progress:
            done = f"converted {len(segments)} segments (dim {spec.dim}, {spec.blocks} blocks)"
            print(done, file=sys.stderr)
        manifest = _manifest(stage, spec, tok_file, segments)
        (stage / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def _segment_plan(spec: SynthSpec) -> list[tuple[str, str, tuple[str, list[str]]]]:
    """(segment name, kind, (input value name, output value names))."""
    last = f"h{spec.blocks}"
    blocks = [(f"block_{i:02d}", "block", (f"h{i}", [f"h{i + 1}"])) for i in range(spec.blocks)]
    return [
        ("embed", "embed", ("ids", ["h0"])),
        *blocks,
        ("intent_head", "intent_head", (last, ["intent_logits", "slot_logits"])),
        ("log_head", "log_head", (last, ["severity_logits", "category_logits", "anomaly_logit"])),
    ]


def _write_tokenizer(out: Path, seed: int) -> tuple[str, int]:
    import sentencepiece as spm

    words = [w.lower() for w in re.findall(r"[A-Z][a-z]+", " ".join(INTENTS))] + list(SLOTS)
    rng = np.random.default_rng(seed)
    syll = ["ka", "lo", "mi", "ne", "tu", "ra", "si", "po", "de", "gu", "ve", "zo"]
    words += ["".join(rng.choice(syll, size=rng.integers(2, 5))) for _ in range(400)]
    lines = [" ".join(rng.choice(words, size=8)) for _ in range(2000)]
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines),
        model_writer=model,
        vocab_size=256,
        model_type="unigram",
        normalization_rule_name="nmt_nfkc_cf",
        pad_id=0,
        unk_id=1,
        bos_id=-1,
        eos_id=-1,
        minloglevel=2,
    )
    (out / "tokenizer.model").write_bytes(model.getvalue())
    return "tokenizer.model", 256


def _keras_segment(kind: str, spec: SynthSpec, rng: np.random.Generator) -> Any:
    import tensorflow as tf

    keras = tf.keras
    init = keras.initializers.RandomNormal(stddev=1.0 / np.sqrt(spec.dim), seed=int(rng.integers(1 << 30)))
    if kind == "embed":
        ids = keras.Input((spec.max_len,), dtype="int32", name="ids")
        emb = keras.layers.Embedding(spec.vocab, spec.dim, embeddings_initializer="uniform")(ids)
        return keras.Model(ids, emb)
    hidden = keras.Input((spec.max_len, spec.dim), name="hidden")
    if kind == "block":
        x = keras.layers.LayerNormalization()(hidden)
        x = keras.layers.Dense(spec.ffn, activation="relu", kernel_initializer=init)(x)
        x = keras.layers.Dense(spec.dim, kernel_initializer=init)(x)
        return keras.Model(hidden, keras.layers.Add()([hidden, x]))
    pooled = keras.layers.GlobalAveragePooling1D()(hidden)
    if kind == "intent_head":
        intent = keras.layers.Dense(len(INTENTS) + 1, kernel_initializer=init)(pooled)
        slots = keras.layers.Dense(1 + 2 * len(SLOTS), kernel_initializer=init)(hidden)
        return keras.Model(hidden, [intent, slots])
    sev = keras.layers.Dense(len(SEVERITIES), kernel_initializer=init)(pooled)
    cat = keras.layers.Dense(len(CATEGORIES), kernel_initializer=init)(pooled)
    anomaly = keras.layers.Reshape(())(keras.layers.Dense(1, kernel_initializer=init)(pooled))
    return keras.Model(hidden, [sev, cat, anomaly])


def _convert_segment(
    out: Path, name: str, kind: str, spec: SynthSpec, rng: np.random.Generator, ports: tuple[str, list[str]]
) -> dict[str, Any]:
    import tensorflow as tf

    model = _keras_segment(kind, spec, rng)
    samples = [_sample_input(kind, spec, rng) for _ in range(_CALIBRATION_SAMPLES)]
    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = lambda: ([s] for s in samples)
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    flat = converter.convert()
    path = out / f"{name}.tflite"
    path.write_bytes(flat)
    in_tensor, outputs = _port_specs(flat, model, samples[0], ports[1])
    in_dtype = "int32" if kind == "embed" else "float32"
    in_shape = [-1, spec.max_len] if kind == "embed" else [-1, spec.max_len, spec.dim]
    return {
        "name": name,
        "file": path.name,
        "inputs": [{"name": ports[0], "tensor": in_tensor, "dtype": in_dtype, "shape": in_shape}],
        "outputs": outputs,
    }


def _sample_input(kind: str, spec: SynthSpec, rng: np.random.Generator) -> np.ndarray[Any, Any]:
    if kind == "embed":
        return rng.integers(0, spec.vocab, size=(1, spec.max_len), dtype=np.int32)
    return rng.standard_normal((1, spec.max_len, spec.dim)).astype(np.float32)


def _port_specs(
    flat: bytes, model: Any, sample: np.ndarray[Any, Any], names: list[str]
) -> tuple[str, list[dict[str, Any]]]:
    """The input tensor's name and the output ports, named by matching them to the Keras outputs."""
    import tensorflow as tf

    interp = tf.lite.Interpreter(model_content=flat)
    interp.allocate_tensors()
    interp.set_tensor(interp.get_input_details()[0]["index"], sample)
    interp.invoke()
    ref = model(sample)
    ref = [np.asarray(r) for r in (ref if isinstance(ref, list) else [ref])]
    specs = []
    for det in interp.get_output_details():
        got = interp.get_tensor(det["index"])
        match = [i for i, r in enumerate(ref) if r.shape == got.shape]
        best = min(match, key=lambda i: float(np.abs(ref[i] - got).mean()))
        shape = [-1, *[int(d) for d in got.shape[1:]]]
        specs.append({"name": names[best], "tensor": det["name"], "dtype": "float32", "shape": shape})
    return str(interp.get_input_details()[0]["name"]), specs


def _manifest(out: Path, spec: SynthSpec, tok_file: str, segments: list[dict[str, Any]]) -> dict[str, Any]:
    import tensorflow as tf

    files = {tok_file: file_entry(out / tok_file)}
    files.update({s["file"]: file_entry(out / s["file"]) for s in segments})
    body = [s["name"] for s in segments if s["name"].startswith(("embed", "block_"))]
    slot_tags = ["O"] + [f"{p}-{s}" for s in SLOTS for p in ("B", "I")]
    return {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "model": {"id": f"synthetic-{spec.params}", "version": "0"},
        "converter": {"tensorflow": tf.__version__, "quantization": "int8 per-channel, float I/O"},
        "tokenizer": {"file": tok_file, "max_len": spec.max_len, "vocab_size": spec.vocab},
        "files": files,
        "segments": segments,
        "graphs": {"intents": [*body, "intent_head"], "logs": [*body, "log_head"]},
        "labels": {
            "intents": [*INTENTS, OUT_OF_SCOPE],
            "slot_tags": slot_tags,
            "severity": list(SEVERITIES),
            "category": list(CATEGORIES),
        },
        "calibration": {"temperature": 1.0, "intent_thresholds": {}},
        "metrics": {"synthetic": True, "params_requested": spec.params},
        "synthetic": {"dim": spec.dim, "ffn": spec.ffn, "blocks": spec.blocks},
    }
