"""A bundle of the build's fine-tuned teacher: the larger model, for gateways that can afford it.

The student is distilled from this teacher and loses it 7 points on a source neither learnt
intents from (SGD: 79.89% against 86.10% in scope, docs/benchmarks.md). This writes the teacher
itself as an agent bundle (``edge-fw export-teacher``):

- one graph, ``teacher.tflite`` (resident: one invoke a request), and the same computation as
  segments, ``t_embed``, ``t_layer0`` to ``t_layer5``, ``t_heads`` and ``t_sent4``/``t_sent5``
  (streamed from flash one at a time under ``runtime.weight_budget_mb``):
  all-MiniLM-L6-v2's word-piece embeddings and six layers (the
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

With ``logs_from`` (a student bundle, ``--logs-from``), the logs are that student's: its log graph
(the fused file and the segments it chains), its sentencepiece tokenizer as the log task's own
(``task_tokenizers.logs``, docs/bundle.md) and its anomaly threshold replace the teacher's log
heads, which label routine lines of some logs as errors more often than the student does
(docs/model.md). Intents stay the teacher's.

The bundle has no EdgeTPU or ``small`` variant; its files take about 53 MB (the one graph and the
segments, 26.6 MB each, the word-piece table 11.8 MB of it), and about 1.6 MB more with a
student's log graph.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from edge_agent.runtime.bundle import FORMAT_NAME, FORMAT_VERSION, MANIFEST, file_entry
from firmware_tools.model.dataset import bundle_labels

__all__ = ["Graph", "attach_student_logs", "export_teacher", "write_teacher_bundle"]

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


@dataclass
class Graph:
    """One TFLite file of the bundle with its ports as the manifest lists them."""

    name: str
    file: str
    blob: bytes
    inputs: list[dict[str, Any]]
    outputs: list[dict[str, Any]]

    def entry(self) -> dict[str, Any]:
        return {"name": self.name, "file": self.file, "inputs": self.inputs, "outputs": self.outputs}


class _Parts:
    """The teacher's computation in pieces (TensorFlow): each takes and gives named values."""

    def __init__(self, ckpt: Any, teacher: Any, max_len: int, trainable: int) -> None:
        import tensorflow as tf

        from firmware_tools.model.teacher import BertLayer

        cfg = ckpt.config
        self.cfg, self.max_len, self.first = cfg, max_len, cfg.layers - trainable
        emb = ckpt.embeddings()
        self.emb = emb
        table = emb["word"].astype(np.float32)
        scale = np.maximum(np.abs(table).max(axis=1), 1e-8) / 127.0
        self.q_table = tf.constant(np.round(table / scale[:, None]).astype(np.int8))
        self.q_scale = tf.constant(scale.astype(np.float32))
        self.pos = tf.constant(emb["position"][:max_len].astype(np.float32))
        self.typ = tf.constant(emb["type"][0].astype(np.float32))
        # layers 0..first-1 as pretrained (frozen in training), first.. as the build fine-tuned them
        self.layers = [
            BertLayer(ckpt.layer(i), cfg.heads, cfg.eps, 0.0, name=f"frozen{i}")
            if i < self.first
            else teacher.model.get_layer(f"layer{i}")
            for i in range(cfg.layers)
        ]
        # the encoder's own top layers, as pretrained: its sentence embedding (custom intents)
        self.pretrained = {
            i: BertLayer(ckpt.layer(i), cfg.heads, cfg.eps, 0.0, name=f"pretrained{i}")
            for i in range(self.first, cfg.layers)
        }
        self.heads = {head: teacher.model.get_layer(head) for head in _OUTPUTS}

    @staticmethod
    def mask(ids: Any) -> Any:
        import tensorflow as tf

        return tf.cast(tf.not_equal(ids, 0), tf.float32)

    def embed(self, ids: Any) -> Any:
        import tensorflow as tf

        rows = tf.cast(tf.gather(self.q_table, ids), tf.float32) * tf.gather(self.q_scale, ids)[..., None]
        x = rows + self.pos[None] + self.typ
        mean = tf.reduce_mean(x, -1, keepdims=True)
        var = tf.reduce_mean(tf.square(x - mean), -1, keepdims=True)
        return (x - mean) * tf.math.rsqrt(var + self.cfg.eps) * self.emb["ln_g"] + self.emb["ln_b"]

    def pooled(self, h: Any, ids: Any) -> Any:
        """The mean of ``h`` over the real word pieces (as ``teacher.build_teacher`` pools)."""
        import tensorflow as tf

        m = self.mask(ids)[..., None]
        return tf.reduce_sum(h * m, axis=1) / tf.maximum(tf.reduce_sum(m, axis=1), 1.0)

    def outputs(self, h: Any, ids: Any) -> dict[str, Any]:
        """Every head's logits from the last hidden state."""
        pooled = self.pooled(h, ids)
        return {name: self.heads[head](h if head == "slots" else pooled) for head, name in _OUTPUTS.items()}

    def sentence(self, s: Any, ids: Any) -> Any:
        """The pretrained branch's pooled state at unit length: the encoder's sentence embedding."""
        import tensorflow as tf

        pooled = self.pooled(s, ids)
        return pooled / tf.maximum(tf.norm(pooled, axis=-1, keepdims=True), 1e-12)


def export_teacher(ckpt: Any, teacher: Any, max_len: int, trainable: int) -> tuple[Graph, list[Graph]]:
    """The whole teacher as one graph (``teacher.tflite``, one invoke a request when resident),
    and the same computation as segments that exchange named values (``t_embed`` writes ``h0``,
    ``t_layer{i}`` reads ``h{i}`` and writes ``h{i+1}``, ``t_heads`` the logits, ``t_sent{i}``
    the pretrained branch from ``h{first}`` to the sentence embedding), which the runtime can
    stream from flash one at a time under ``runtime.weight_budget_mb``. Weights int8, activations
    float (dynamic range)."""
    import tensorflow as tf

    parts = _Parts(ckpt, teacher, max_len, trainable)
    n, first = ckpt.config.layers, parts.first
    hidden = tf.TensorSpec([1, max_len, ckpt.config.width], tf.float32)
    ids_spec = tf.TensorSpec([1, max_len], tf.int32, name="ids")

    def whole(ids: Any) -> Any:
        mask = parts.mask(ids)
        h = parts.embed(ids)
        s = None
        for i, layer in enumerate(parts.layers):
            if i == first:
                s = h
            h = layer(h, mask)
        for i in range(first, n):
            s = parts.pretrained[i](s, mask)
        return {**parts.outputs(h, ids), SENTENCE: parts.sentence(s, ids)}

    fused = _convert("teacher", GRAPH, whole, [("ids", ids_spec)])
    segments = [
        _convert("t_embed", "t_embed.tflite", lambda ids: {"h0": parts.embed(ids)}, [("ids", ids_spec)])
    ]
    for i, layer in enumerate(parts.layers):
        segments.append(
            _convert(
                f"t_layer{i}",
                f"t_layer{i}.tflite",
                lambda h, ids, layer=layer, i=i: {f"h{i + 1}": layer(h, parts.mask(ids))},
                [(f"h{i}", hidden), ("ids", ids_spec)],
            )
        )
    segments.append(
        _convert("t_heads", "t_heads.tflite", parts.outputs, [(f"h{n}", hidden), ("ids", ids_spec)])
    )
    for i in range(first, n):
        source = f"h{first}" if i == first else f"s{i}"

        def step(s: Any, ids: Any, i: int = i) -> Any:
            out = parts.pretrained[i](s, parts.mask(ids))
            return {SENTENCE: parts.sentence(out, ids)} if i == n - 1 else {f"s{i + 1}": out}

        segments.append(
            _convert(f"t_sent{i}", f"t_sent{i}.tflite", step, [(source, hidden), ("ids", ids_spec)])
        )
    return fused, segments


def _convert(name: str, file: str, fn: Any, inputs: list[tuple[str, Any]]) -> Graph:
    """``fn`` (named values in, a dict of named values out) as a dynamic-range int8 graph."""
    import tensorflow as tf

    from firmware_tools.model.convert import _identity_index, _match, _port

    specs = [tf.TensorSpec(spec.shape, spec.dtype, name=value) for value, spec in inputs]
    traced = tf.function(fn, input_signature=specs)
    concrete = traced.get_concrete_function()
    converter = tf.lite.TFLiteConverter.from_concrete_functions([concrete], traced)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    blob = bytes(converter.convert())
    interp = tf.lite.Interpreter(model_content=blob)
    ins = interp.get_input_details()
    outs = sorted(interp.get_output_details(), key=lambda d: _identity_index(d["name"]))
    names = sorted(concrete.structured_outputs)
    if len(outs) != len(names):
        raise RuntimeError(f"{name}: {len(outs)} outputs for {len(names)} names")
    return Graph(
        name,
        file,
        blob,
        [_port(value, _match(ins, value)) for value, _ in inputs],
        [_port(k, d) for k, d in zip(names, outs, strict=True)],
    )


def write_teacher_bundle(
    out: Path,
    fused: Graph,
    segments: list[Graph],
    tokenizer_json: str,
    max_len: int,
    build: dict[str, Any],
    logs_from: Path | None = None,
) -> dict[str, Any]:
    """Write the bundle directory ``out`` (replaced), uncalibrated (temperature 1, no thresholds,
    no figures: ``edge-fw export-teacher`` chooses them through it); returns its manifest.
    ``logs_from``: a student bundle whose log graph the bundle carries (``attach_student_logs``)."""
    from firmware_tools.model.build import _replace_dir

    vocab = json.loads(tokenizer_json)["model"]["vocab"]
    names = [g.name for g in segments]
    logs = [n for n in names if not n.startswith("t_sent")]
    graphs = {"intents": names, "logs": logs}
    manifest: dict[str, Any] = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "model": {"id": "edge-intents-logs-teacher", "version": "1.0.0"},
        "converter": {"quantization": "int8 weights, float activations (dynamic range)", "io": "float32"},
        "tokenizer": {"file": TOKENIZER, "type": "wordpiece", "max_len": max_len, "vocab_size": len(vocab)},
        "architecture": {"teacher": {"encoder": "all-MiniLM-L6-v2", "window": max_len}},
        "segments": [g.entry() for g in segments],
        "graphs": graphs,
        # one file computes both tasks (the logs graph's outputs are among its own)
        "fused": {task: {**fused.entry(), "segments": graph} for task, graph in graphs.items()},
        "labels": bundle_labels(),
        "calibration": {"temperature": 1.0, "intent_thresholds": {}, "anomaly_threshold": 0.5},
        "metrics": {},
        "variants": {},
        "build": build,
        "files": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        stage = Path(tmp) / "bundle"
        stage.mkdir()
        for g in (fused, *segments):
            (stage / g.file).write_bytes(g.blob)
        (stage / TOKENIZER).write_text(tokenizer_json, encoding="utf-8")
        if logs_from is not None:
            attach_student_logs(manifest, stage, logs_from)
        manifest["files"] = {p.name: file_entry(p) for p in sorted(stage.iterdir())}
        (stage / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
        _replace_dir(stage, out)
    return manifest


def attach_student_logs(manifest: dict[str, Any], stage: Path, student: Path) -> None:
    """Make the logs of the bundle being written in ``stage`` (``manifest``, changed in place)
    those of the student bundle at ``student``: its log graph's segments and fused file, its
    tokenizer as the log task's (``task_tokenizers.logs``) and its anomaly threshold. ``ValueError``
    when the two bundles' log labels differ or a file or segment name of the student's is taken."""
    import shutil

    from edge_agent.runtime.bundle import load_bundle

    source = load_bundle(student)
    theirs = source.manifest
    for head in ("severity", "category"):
        if list(theirs["labels"][head]) != list(manifest["labels"][head]):
            raise ValueError(f"{student}: its {head} labels differ from the teacher's; rebuild them together")
    graph = source.graph("logs")
    entries = [s for s in theirs["segments"] if s["name"] in graph]
    fused = theirs.get("fused", {}).get("logs")
    tok = source.tokenizer_entry("logs")
    files = [e["file"] for e in entries] + ([fused["file"]] if fused else []) + [tok["file"]]
    taken_names = {s["name"] for s in manifest["segments"]} & set(graph)
    taken_files = {p.name for p in stage.iterdir()} & set(files)
    if taken_names or taken_files:
        clash = sorted(taken_names | taken_files)
        raise ValueError(f"{student}: its log graph's names clash with the teacher's: {clash}")
    for name in files:
        shutil.copyfile(source.path / name, stage / name)
    # every teacher segment stays (the intent graph chains them all; its heads segment computes
    # the teacher's log heads too, which nothing reads any more)
    manifest["segments"] = [*manifest["segments"], *entries]
    manifest["graphs"]["logs"] = graph
    if fused:
        manifest["fused"]["logs"] = fused
    else:
        manifest["fused"].pop("logs", None)
    manifest["task_tokenizers"] = {"logs": tok}
    # the agent trusts a log head by its int8 figures (edge_agent.logs.classifier.trusted_heads):
    # the student's, where its heads now answer
    from edge_agent.logs.classifier import HEAD_FLOORS

    int8 = theirs.get("metrics", {}).get("student_int8", {})
    kept = {key: int8[key] for key, _ in HEAD_FLOORS.values() if key in int8}
    if kept:
        manifest["metrics"]["student_int8"] = kept
    cal = theirs.get("calibration", {})
    if "anomaly_threshold" in cal:
        manifest["calibration"]["anomaly_threshold"] = cal["anomaly_threshold"]
    manifest["build"]["logs_from"] = {"model": source.model_id, "path": str(source.path)}
