"""What the fine-tuned teacher would cost as an on-device bundle variant (issue 31, item 3).

Usage::

    .venv/bin/python bench/teacher_variant.py --work W [--seed 8] [--data-dir ../shared/data]
        [--log-dir ../shared/eval/logs] [--out DIR] [--rounds 300]

``W`` is a finished build's work directory (as for ``bench/teacher_figures.py``). The script
exports the build's fine-tuned teacher whole (all-MiniLM-L6-v2's embeddings and six layers, the
top ones fine-tuned, and its intent head) as one TFLite graph of a fixed window
(``TeacherPlan.max_len`` word pieces), weights quantized to int8 (dynamic range: activations stay
float; the word-piece table is kept as int8 rows with a scale each and dequantized after the
lookup, so the 30,522 x 384 table stays 11.7 MB in memory, not 47 MB), and prints:

- the graph's size on flash;
- one invoke at batch 1 on one thread (ai-edge-litert, as the agent runs its own graphs), median
  and p90 over ``--rounds`` runs of a typical request, and the peak RSS of a fresh process that
  loads the graph and runs it once, beside the same for the shipped student's intent graph (the
  agent's whole process is about 45-50 MB with the default bundle: docs/benchmarks.md);
- SGD's test split (a source whose labels the teacher never learnt) through this int8 graph at
  the argmax, beside the same teacher in float (``bench/teacher_figures.py``'s figure): what the
  quantization costs.

What is not measured here: the word-piece tokenizer in the agent (the build's comes from the
``tokenizers`` package), slots on word pieces and the log heads, and streaming the layers from
flash under ``runtime.weight_budget_mb``: the pieces a variant would still need.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

REQUEST = "could you put on some quiet music in the living room please"


def export(ckpt: Any, teacher: Any, max_len: int, trainable: int) -> bytes:
    """The whole teacher's intent path as a dynamic-range int8 TFLite graph: inputs ``ids`` (1, L)
    int32 and ``mask`` (1, L) float32, output the intent logits."""
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

    def norm(x: Any) -> Any:
        mean = tf.reduce_mean(x, -1, keepdims=True)
        var = tf.reduce_mean(tf.square(x - mean), -1, keepdims=True)
        return (x - mean) * tf.math.rsqrt(var + cfg.eps) * emb["ln_g"] + emb["ln_b"]

    @tf.function(
        input_signature=[tf.TensorSpec([1, max_len], tf.int32), tf.TensorSpec([1, max_len], tf.float32)]
    )
    def run(ids: Any, mask: Any) -> Any:
        rows = tf.cast(tf.gather(q_table, ids), tf.float32) * tf.gather(q_scale, ids)[..., None]
        h = norm(rows + pos[None] + typ)
        for layer in frozen:
            h = layer(h, mask)
        out = teacher.model([h, mask], training=False)
        return {"intent": out["intent"]}

    converter = tf.lite.TFLiteConverter.from_concrete_functions([run.get_concrete_function()], run)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    return bytes(converter.convert())


def _interpreter(path: Path) -> Any:
    from ai_edge_litert.interpreter import Interpreter

    interp = Interpreter(model_path=str(path), num_threads=1)
    interp.allocate_tensors()
    return interp


def _invoke(interp: Any, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    inputs = {d["name"]: d["index"] for d in interp.get_input_details()}
    for name, value in (("ids", ids), ("mask", mask)):
        index = next(i for n, i in inputs.items() if name in n)
        interp.set_tensor(index, value)
    interp.invoke()
    return np.asarray(interp.get_tensor(interp.get_output_details()[0]["index"]))


_CHILD = """
import sys, numpy as np
from ai_edge_litert.interpreter import Interpreter
i = Interpreter(model_path=sys.argv[1], num_threads=1)
i.allocate_tensors()
for d in i.get_input_details():
    i.set_tensor(d["index"], np.ones(d["shape"], d["dtype"]))
i.invoke()
print(next(l for l in open("/proc/self/status") if l.startswith("VmHWM")).split()[1])
"""


def _peak_rss_mb(graph: Path) -> float:
    child = subprocess.run(
        [sys.executable, "-c", _CHILD, str(graph)], capture_output=True, text=True, check=True
    )
    return int(child.stdout.split()[-1]) / 1024


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, required=True, help="a finished build's --work directory")
    ap.add_argument("--seed", type=int, default=8, help="the build's --seed")
    ap.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--log-dir", type=Path, default=ROOT.parent / "shared" / "eval" / "logs")
    ap.add_argument("--out", type=Path, help="keep the graph here (default: a temporary directory)")
    ap.add_argument("--rounds", type=int, default=300, help="timed invokes (default 300)")
    args = ap.parse_args(argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

    from firmware_tools.model import build as b
    from firmware_tools.model.cross_source import FoldResult, eval_split, fold_metrics, softmax
    from firmware_tools.model.dataset import encode_intents
    from firmware_tools.model.pretrained import default_zip, load_checkpoint

    plan = b.plan_for(tiny=False)
    cache = b._StageCache(args.work, (), print)
    tmp = Path(tempfile.mkdtemp(prefix="edge-teacher-variant-"))
    data = b._load_data(tmp, plan, args.seed, (args.data_dir, args.log_dir), print, cache, None)
    ckpt = load_checkpoint(default_zip())
    teacher = b.teacher_from_work(ckpt, plan, cache)
    max_len = plan.teacher.max_len
    start = time.perf_counter()
    blob = export(ckpt, teacher, max_len, plan.teacher.trainable_layers)
    out = (args.out or tmp) / "teacher_intent.tflite"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(blob)
    print(
        f"== the teacher as one graph: {len(blob) / 1e6:.1f} MB (int8 weights), exported in "
        f"{time.perf_counter() - start:.0f} s -> {out}"
    )

    interp = _interpreter(out)
    wp = ckpt.tokenize([REQUEST], max_len)
    student = ROOT / "edge_agent" / "models" / "default" / "intents.fused.tflite"
    from edge_agent.runtime.tokenizer import Tokenizer

    s_interp = _interpreter(student)
    s_ids = Tokenizer(student.parent / "tokenizer.model", 32).encode(REQUEST).ids[None].astype(np.int32)
    s_index = s_interp.get_input_details()[0]["index"]

    def run_student() -> None:
        s_interp.set_tensor(s_index, s_ids)
        s_interp.invoke()

    times: dict[str, list[float]] = {"teacher": [], "shipped student": []}
    for _ in range(args.rounds):  # the two in turn: a shared host's load falls on both
        for name, call in (
            ("teacher", lambda: _invoke(interp, wp.ids, wp.mask)),
            ("shipped student", run_student),
        ):
            t0 = time.perf_counter()
            call()
            times[name].append((time.perf_counter() - t0) * 1000)
    median = {k: statistics.median(v) for k, v in times.items()}
    p90 = {k: sorted(v)[int(0.9 * len(v))] for k, v in times.items()}
    print(
        f"  invoke, batch 1, one thread ({args.rounds} runs each, in turn; {int(wp.mask.sum())} word pieces "
        f"in a window of {max_len}): teacher median {median['teacher']:.3f} ms, p90 {p90['teacher']:.3f} ms; "
        f"the shipped student's intent graph median {median['shipped student']:.3f} ms, p90 "
        f"{p90['shipped student']:.3f} ms ({median['teacher'] / median['shipped student']:.0f}x)"
    )
    rss = {name: _peak_rss_mb(path) for name, path in (("teacher", out), ("shipped student", student))}
    print(
        f"  peak RSS of a process that loads one graph and runs it once: {rss['teacher']:.1f} MB "
        f"(the shipped student's intent graph: {rss['shipped student']:.1f} MB)"
    )

    examples = eval_split(args.data_dir, "sgd")
    texts = [e.text for e in examples]
    gold = encode_intents(data.tok, examples).intent.copy()
    wps = ckpt.tokenize(texts, max_len)
    q_logits = np.stack(
        [_invoke(interp, wps.ids[i : i + 1], wps.mask[i : i + 1])[0] for i in range(len(texts))]
    )
    f_logits = b.teacher_text_logits(ckpt, teacher, plan, texts)["intent"]
    for name, logits in (("float teacher", f_logits), ("int8 graph", q_logits)):
        m = fold_metrics(FoldResult("sgd", softmax(logits), logits, gold))
        print(
            f"  SGD test, {name:13s} in scope {100 * m['in_scope_accuracy']:6.2f}%  falsely rejected "
            f"{100 * m['false_rejection']:6.2f}%  out of scope rejected {100 * m['oos_rejection']:6.2f}%  "
            f"ECE {m['ece']:.4f}"
        )
    agree = float((q_logits.argmax(1) == f_logits.argmax(1)).mean())
    print(f"  the int8 graph's argmax is the float teacher's on {100 * agree:.2f}% of {len(texts)} rows")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
