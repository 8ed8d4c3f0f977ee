"""``edge-fw export-teacher`` on the tiny build's stages: the teacher becomes a bundle with the
encoder's word-piece tokenizer, and the agent runs it as it runs the student's
(firmware_tools/model/teacher_bundle.py, edge_agent/runtime/wordpiece.py); with ``--logs-from``
its logs are the student bundle's, log graph and tokenizer both."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from tiny_build import TinyBuild, edge_fw, on_the_tiny_build

from edge_agent.runtime.bundle import load_bundle
from edge_agent.runtime.model import Model
from edge_agent.runtime.tokenizer import Tokenizer
from edge_agent.runtime.wordpiece import WordPieceTokenizer

ROOT = Path(__file__).resolve().parents[1]
LINES = ["turn on the kitchen lights", "what's the weather like tomorrow", "set a timer for five minutes"]
LOG_LINES = [
    "kernel: oops",
    "sshd[812]: Failed password for root from 10.0.0.7 port 2201",
    "systemd[1]: Started Session 4.",
]


@on_the_tiny_build
def test_the_teacher_exports_as_a_bundle_the_agent_runs(tiny_build: TinyBuild, tmp_path: Path) -> None:
    assert tiny_build.proc.returncode == 0, tiny_build.proc.stderr[-3000:]
    log_dir = tiny_build.args[tiny_build.args.index("--log-dir") + 1]
    out = tmp_path / "teacher"
    proc = edge_fw(
        "export-teacher", "--tiny", "--seed", "3", "--work", str(tiny_build.work), "--log-dir", log_dir,
        "--out", str(out), "--logs-from", str(tiny_build.out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "intent thresholds raised" in proc.stdout
    bundle = load_bundle(out)
    manifest = bundle.manifest
    assert manifest["tokenizer"]["type"] == "wordpiece"
    graph = manifest["graphs"]["intents"]
    assert graph[0] == "t_embed" and "t_heads" in graph and graph[-1].startswith("t_sent")
    assert manifest["fused"]["intents"]["file"] == "teacher.tflite"
    assert manifest["calibration"]["temperature"] > 0
    # int8 weights do not change what the teacher decides
    assert manifest["metrics"]["float_argmax_agreement"] >= 0.9
    model = Model(bundle)
    assert isinstance(model.tokenizer, WordPieceTokenizer) and model.has_sentence_embedding
    intent, slots = model.run_intents(model.tokenizer.encode(LINES[0]).ids[None])
    # the encoder's own sentence embedding (custom intents): unit rows, paraphrases nearer
    ids = np.stack([model.tokenizer.encode(t).ids for t in (*LINES, "switch the kitchen lights on")])
    emb = model.run_intent_outputs(ids).embedding
    assert emb is not None and np.allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-4)
    assert emb[3] @ emb[0] > max(emb[3] @ emb[1], emb[3] @ emb[2])
    assert intent.shape == (1, len(manifest["labels"]["intents"]))
    assert slots.shape == (1, manifest["tokenizer"]["max_len"], len(manifest["labels"]["slot_tags"]))
    # the logs are the student's: its graph, its sentencepiece pieces, its answers exactly
    student = load_bundle(tiny_build.out)
    assert manifest["graphs"]["logs"] == student.graph("logs")
    assert manifest["fused"]["logs"]["file"] == student.manifest["fused"]["logs"]["file"]
    assert manifest["task_tokenizers"]["logs"] == student.manifest["tokenizer"]
    assert manifest["build"]["logs_from"]["model"] == student.model_id
    # the heads the agent trusts are judged by the student's own figures
    for key in ("severity_accuracy", "category_accuracy", "anomaly_f1"):
        assert manifest["metrics"]["student_int8"][key] == student.manifest["metrics"]["student_int8"][key]
    assert isinstance(model.log_tokenizer, Tokenizer)
    log_ids = np.stack([model.log_tokenizer.encode(x).ids for x in LOG_LINES])
    own = Model(student, tasks=("logs",))
    assert all((a == b).all() for a, b in zip(model.run_logs(log_ids), own.run_logs(log_ids), strict=True))
    own.close()
    # streamed from its segments, one at a time under a small budget: the same answers up to the
    # int8 rounding at the segments' boundaries
    streamed = Model(bundle, residency="stream", weight_budget_mb=4)
    a, b = model.run_intent_outputs(ids), streamed.run_intent_outputs(ids)
    gap = np.abs(a.intent_logits - b.intent_logits).max()
    assert gap < 1.0
    # the int8 segments round at their own boundaries, so the two may differ by that rounding
    # only: small beside how far apart each line's intent logits lie (an argmax comparison would
    # add nothing: a near-tie may flip inside any gap, a clear lead cannot)
    spread = np.ptp(a.intent_logits, axis=1).min()
    assert gap < 0.2 * spread, (gap, spread)
    assert a.embedding is not None and b.embedding is not None
    assert np.abs(a.embedding - b.embedding).max() < 0.05
    assert (model.run_logs(log_ids)[0].argmax(1) == streamed.run_logs(log_ids)[0].argmax(1)).all()
    streamed.close()
    model.close()
    # the command a user runs, on this bundle: one JSON answer per line, spans inside the text
    run = subprocess.run(
        [sys.executable, "-m", "edge_agent", "intents", "--bundle", str(out)],
        input="\n".join(LINES) + "\n", capture_output=True, text=True, cwd=ROOT, timeout=300, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    answers = [json.loads(x) for x in run.stdout.splitlines()]
    assert [a["text"] for a in answers] == LINES
    for a in answers:
        assert a["intent"] is None or a["intent"] in manifest["labels"]["intents"]
        for slot in (a.get("slots") or {}).values():
            assert 0 <= slot["start"] < slot["end"] <= len(a["text"])
    # and the log command, whose labels are the student bundle's own
    logs = [_classify(b) for b in (out, tiny_build.out)]
    assert logs[0].returncode == 0, logs[0].stderr[-2000:]
    assert logs[0].stdout == logs[1].stdout and len(logs[0].stdout.splitlines()) == len(LOG_LINES)


def _classify(bundle: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "edge_agent", "logs", "classify", "--bundle", str(bundle), "-"],
        input="\n".join(LOG_LINES) + "\n", capture_output=True, text=True, cwd=ROOT, timeout=300, check=False,
    )  # fmt: skip
