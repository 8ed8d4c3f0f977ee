"""A bundle of the build's fine-tuned teacher: the larger model, for gateways that can afford it.

The student is distilled from this teacher and loses it 7 points on a source neither learnt
intents from (SGD: 79.89% against 86.10% in scope, docs/benchmarks.md). This writes the teacher
itself as an agent bundle (``edge-fw export-teacher``):

- one graph, ``teacher.tflite``: all-MiniLM-L6-v2's word-piece embeddings and six layers (the
  build fine-tuned the top ones) with every head (intent, slot tags on word pieces, severity,
  category, anomaly), and beside the fine-tuned top layers the encoder's own (as pretrained),
  whose mean over the word pieces is its sentence embedding (what custom intents compare); input
  ``ids`` (1, L) word pieces with ``[CLS]`` and ``[SEP]``, the attention mask computed from them
  (padding is id 0); weights int8 with float activations (dynamic range), the word-piece table as
  int8 rows with a scale each, dequantized after the lookup;
- ``tokenizer.json``: the encoder's own tokenizer file (``tokenizer.type`` ``wordpiece``), read on
  the device by ``edge_agent/runtime/wordpiece.py``;
- the calibration: the temperature and per-intent thresholds chosen as the student's build chooses
  them (``metrics.calibrate``) on half of the generated held-out split plus CLINC150's validation
  split, run through this graph with the agent's runtime; with SGD's development split, the
  custom-intent settings as ``edge-fw calibrate-custom`` chooses them.

The bundle has no EdgeTPU or ``small`` variant; it is loaded whole (about 26 MB).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from edge_agent.logs.labels import CATEGORIES, SEVERITIES
from edge_agent.runtime.bundle import FORMAT_NAME, FORMAT_VERSION, MANIFEST, file_entry
from firmware_tools.model.dataset import INTENT_LABELS, SLOT_TAGS

__all__ = ["export_teacher_graph", "write_teacher_bundle"]

GRAPH = "teacher.tflite"
SENTENCE = "sentence_embedding"  # edge_agent.runtime.model.SENTENCE_OUTPUT
TOKENIZER = "tokenizer.json"
# the graph's outputs, named as the agent's runtime reads them (edge_agent/runtime/model.py)
_OUTPUTS = {
    "intent": "intent_logits",
    "slots": "slot_logits",
    "severity": "severity_logits",
    "category": "category_logits",
    "anomaly": "anomaly_logit",
}


def export_teacher_graph(ckpt: Any, teacher: Any, max_len: int, trainable: int) -> bytes:
    """The whole teacher as one dynamic-range int8 TFLite graph (see the module docstring)."""
    import tensorflow as tf

    from firmware_tools.model.teacher import BertLayer

    cfg = ckpt.config
    emb = ckpt.embeddings()
    table = emb["word"].astype(np.float32)
    scale = np.maximum(np.abs(table).max(axis=1), 1e-8) / 127.0
    q_table = tf.constant(np.round(table / scale[:, None]).astype(np.int8))
    q_scale = tf.constant(scale.astype(np.float32))
    pos = tf.constant(emb["position"][:max_len].astype(np.float32))
    typ = tf.constant(emb["type"][0].astype(np.float32))
    frozen = [
        BertLayer(ckpt.layer(i), cfg.heads, cfg.eps, 0.0, name=f"frozen{i}")
        for i in range(cfg.layers - trainable)
    ]
    # the encoder's own top layers, as pretrained: its sentence embedding (custom intents)
    pretrained = [
        BertLayer(ckpt.layer(i), cfg.heads, cfg.eps, 0.0, name=f"pretrained{i}")
        for i in range(cfg.layers - trainable, cfg.layers)
    ]

    def norm(x: Any) -> Any:
        mean = tf.reduce_mean(x, -1, keepdims=True)
        var = tf.reduce_mean(tf.square(x - mean), -1, keepdims=True)
        return (x - mean) * tf.math.rsqrt(var + cfg.eps) * emb["ln_g"] + emb["ln_b"]

    @tf.function(input_signature=[tf.TensorSpec([1, max_len], tf.int32, name="ids")])
    def run(ids: Any) -> Any:
        mask = tf.cast(tf.not_equal(ids, 0), tf.float32)
        rows = tf.cast(tf.gather(q_table, ids), tf.float32) * tf.gather(q_scale, ids)[..., None]
        h = norm(rows + pos[None] + typ)
        for layer in frozen:
            h = layer(h, mask)
        out = teacher.model([h, mask], training=False)
        s = h
        for layer in pretrained:
            s = layer(s, mask)
        m = mask[..., None]
        pooled = tf.reduce_sum(s * m, axis=1) / tf.maximum(tf.reduce_sum(m, axis=1), 1.0)
        sentence = pooled / tf.maximum(tf.norm(pooled, axis=-1, keepdims=True), 1e-12)
        return {**{name: out[head] for head, name in _OUTPUTS.items()}, SENTENCE: sentence}

    converter = tf.lite.TFLiteConverter.from_concrete_functions([run.get_concrete_function()], run)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    return bytes(converter.convert())


def _ports(blob: bytes) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The graph's input and output ports as a manifest segment lists them: the value name the
    agent reads and the tensor that holds it (a traced dict's outputs come out in sorted key
    order as Identity, Identity_1, ..., as for the student's segments: ``convert.py``)."""
    import tensorflow as tf

    from firmware_tools.model.convert import _identity_index, _port

    interp = tf.lite.Interpreter(model_content=blob)
    (ids,) = interp.get_input_details()
    outs = sorted(interp.get_output_details(), key=lambda d: _identity_index(d["name"]))
    names = sorted([*_OUTPUTS.values(), SENTENCE])
    if len(outs) != len(names):
        raise RuntimeError(f"teacher graph: {len(outs)} outputs for {len(names)} names")
    return [_port("ids", ids)], [_port(n, d) for n, d in zip(names, outs, strict=True)]


def write_teacher_bundle(
    out: Path,
    blob: bytes,
    tokenizer_json: str,
    max_len: int,
    calibration: dict[str, Any],
    metrics: dict[str, Any],
    build: dict[str, Any],
) -> dict[str, Any]:
    """Write the bundle directory ``out`` (replaced); returns its manifest."""
    from firmware_tools.model.build import _replace_dir

    inputs, outputs = _ports(blob)
    vocab = json.loads(tokenizer_json)["model"]["vocab"]
    segment = {"name": "teacher", "file": GRAPH, "inputs": inputs, "outputs": outputs}
    manifest: dict[str, Any] = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "model": {"id": "edge-intents-logs-teacher", "version": "1.0.0"},
        "converter": {"quantization": "int8 weights, float activations (dynamic range)", "io": "float32"},
        "tokenizer": {"file": TOKENIZER, "type": "wordpiece", "max_len": max_len, "vocab_size": len(vocab)},
        "architecture": {"teacher": {"encoder": "all-MiniLM-L6-v2", "window": max_len}},
        "segments": [segment],
        "graphs": {"intents": ["teacher"], "logs": ["teacher"]},
        "labels": {
            "intents": list(INTENT_LABELS),
            "slot_tags": list(SLOT_TAGS),
            "severity": list(SEVERITIES),
            "category": list(CATEGORIES),
        },
        "calibration": calibration,
        "metrics": metrics,
        "variants": {},
        "build": build,
        "files": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        stage = Path(tmp) / "bundle"
        stage.mkdir()
        (stage / GRAPH).write_bytes(blob)
        (stage / TOKENIZER).write_text(tokenizer_json, encoding="utf-8")
        manifest["files"] = {name: file_entry(stage / name) for name in (GRAPH, TOKENIZER)}
        (stage / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
        _replace_dir(stage, out)
    return manifest
