"""The teachers' own figures on SGD's test split, beside the student's (issue 31: "report the
teacher's own cross-source figure").

Usage::

    .venv/bin/python bench/teacher_figures.py --work W [--data-dir ../shared/data]
        [--log-dir ../shared/eval/logs] [--mpnet-dir build/all-mpnet-base-v2] [--seed 8]
        [--bundle B] [--categories] [--folds clinc,snips]

``W`` is a finished build's work directory (``scripts/build_model.sh ... --work W --seed N``, the
same data and seed): the script reads its stages, trains nothing, and runs SGD's test split (741
in-scope and 4,501 out-of-scope user turns; ``firmware_tools.data.sgd``) through

- the fine-tuned teacher (all-MiniLM-L6-v2, its top layers and heads; ``teacher.weights.h5``);
- with ``--mpnet-dir``, the second teacher: the softmax head on frozen all-mpnet-base-v2
  embeddings, fitted again on the labelled transfer rows as the build fits it;
- their mixture, the intent soft labels the student learns from (``BuildPlan.mpnet_weight``);
- with ``--bundle``, the bundle's float student's figure from its manifest
  (``metrics.cross_source``, the same split and decision).

SGD's labels train no intent head and its texts only the student's sentence embedding, so for
the teachers too this split is a source they never learnt intents from: a cross-source figure.
CLINC150 and Snips trained both teachers, so for them ``--folds clinc,snips`` fine-tunes the
teacher again without each (``cross_source.teacher_folds``: the build's plan, seed and frozen
features; about 15-25 minutes a fold on 2 cores, its weights kept in ``W``) and scores it on that
source's held-out split, then prints the mean and the worst over the folds and SGD, beside the
bundle's float student's folds from its manifest when it has them. ``--categories``: the
teacher's log category head, and the bundle's student's, on the hand-labelled log sample.
Every intent figure is at the argmax of temperature-1 probabilities (``cross_source.fold_metrics``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from firmware_tools.model.cross_source import FoldResult, eval_split, fold_metrics, softmax  # noqa: E402
from firmware_tools.model.dataset import INTENT_LABELS, encode_intents  # noqa: E402


def _line(name: str, m: dict[str, float]) -> str:
    return (
        f"  {name:34s} in scope {100 * m['in_scope_accuracy']:6.2f}%  falsely rejected "
        f"{100 * m['false_rejection']:6.2f}%  out of scope rejected {100 * m['oos_rejection']:6.2f}%"
        f"  ECE {m['ece']:.4f}"
    )


def _score(name: str, logits: np.ndarray, gold: np.ndarray) -> None:
    print(_line(name, fold_metrics(FoldResult("sgd", softmax(logits), logits, gold))))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, required=True, help="a finished build's --work directory")
    ap.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--log-dir", type=Path, default=ROOT.parent / "shared" / "eval" / "logs")
    ap.add_argument("--mpnet-dir", type=Path, help="the build's unpacked all-mpnet-base-v2 folder")
    ap.add_argument("--seed", type=int, default=8, help="the build's --seed")
    ap.add_argument(
        "--tiny",
        action="store_true",
        help="the work directory is a --tiny build's (built without --data-dir; SGD still read from it)",
    )
    ap.add_argument("--bundle", type=Path, help="the build's bundle: its student's figure beside")
    ap.add_argument(
        "--categories",
        action="store_true",
        help="also the log category head on bench/data/log_categories.tsv, line by line",
    )
    ap.add_argument(
        "--folds",
        help="comma-separated sources (clinc, snips) to fine-tune the teacher without and score on",
    )
    args = ap.parse_args(argv)

    import tempfile

    from firmware_tools.model import build as b
    from firmware_tools.model.pretrained import default_zip, load_checkpoint

    plan = b.plan_for(tiny=args.tiny)
    cache = b._StageCache(args.work, (), print)
    tmp = Path(tempfile.mkdtemp(prefix="edge-teacher-"))
    built_from = None if args.tiny else args.data_dir
    data = b._load_data(tmp, plan, args.seed, (built_from, args.log_dir), print, cache, None)
    ckpt = load_checkpoint(default_zip())
    try:
        teacher = b.teacher_from_work(ckpt, plan, cache)
    except FileNotFoundError:
        raise SystemExit(
            f"{args.work}: no teacher weights for this plan and seed (run the build first)"
        ) from None

    examples = eval_split(args.data_dir, "sgd")
    texts = [e.text for e in examples]
    gold = encode_intents(data.tok, examples).intent.copy()
    t_logits = b.teacher_text_logits(ckpt, teacher, plan, texts)["intent"]
    print(f"== SGD test ({int((gold != len(INTENT_LABELS) - 1).sum())} in scope, {len(gold)} rows)")
    _score("fine-tuned teacher (MiniLM)", t_logits, gold)
    if args.mpnet_dir is not None:
        from firmware_tools.model.mpnet import MPNetEmbedder

        second = b.SecondTeacher(b._mpnet_embeddings(args.mpnet_dir, data, cache, print), plan.mpnet_weight)
        # the build's own head (fitted on the labelled transfer rows) on SGD's texts
        m_logits = second.logits_of(np.asarray(MPNetEmbedder(args.mpnet_dir)(texts), np.float32), data)
        _score("second teacher (mpnet, linear)", m_logits, gold)
        mixed = t_logits.copy()
        b.mix_intent_logits(mixed, m_logits, plan.mpnet_weight)
        _score(f"their mixture ({plan.mpnet_weight:g} mpnet)", mixed, gold)
    if args.bundle is not None:
        manifest = json.loads((args.bundle / "manifest.json").read_text(encoding="utf-8"))
        sgd = manifest.get("metrics", {}).get("cross_source", {}).get("argmax", {}).get("sgd")
        if sgd is None:
            print(f"  {args.bundle}: its manifest records no cross-source figures")
        else:
            print(_line("the bundle's float student", sgd))
    if args.folds:
        _folds(args, fold_metrics(FoldResult("sgd", softmax(t_logits), t_logits, gold)))
    if args.categories:
        _categories(args, ckpt, plan, teacher)
    return 0


def _folds(args: argparse.Namespace, sgd: dict[str, float]) -> None:
    """The teacher's folds (``cross_source.teacher_folds``) with SGD's figure above: each left-out
    source, the mean and the worst, as issue 31 counts them."""
    from firmware_tools.model.cross_source import teacher_folds

    sources = [s.strip() for s in args.folds.split(",") if s.strip()]
    results = teacher_folds(
        args.work, args.data_dir, args.log_dir, sources=sources, seed=args.seed, tiny=args.tiny
    )
    figures = {r.source: fold_metrics(r) for r in results}
    figures["sgd"] = sgd
    print("== the fine-tuned teacher, each source left out (SGD: the build's teacher, as above)")
    for source, m in figures.items():
        print(_line(f"left out {source}", m))
    ins = [m["in_scope_accuracy"] for m in figures.values()]
    print(
        f"  mean in scope {100 * float(np.mean(ins)):.2f}%, worst {100 * min(ins):.2f}%, worst false "
        f"rejection {100 * max(m['false_rejection'] for m in figures.values()):.2f}%, worst ECE "
        f"{max(m['ece'] for m in figures.values()):.4f}"
    )


def _categories(args: argparse.Namespace, ckpt: Any, plan: Any, teacher: Any) -> None:
    """The category head of the teacher and of the bundle's student on the hand-labelled sample,
    each line on its own (``bench/logs_categories.py`` labels by template through the service)."""
    from edge_agent.logs.classifier import CATEGORY_MIN_P, pick_label
    from edge_agent.logs.labels import CATEGORIES
    from firmware_tools.model.build import teacher_text_logits

    sys.path.insert(0, str(ROOT / "bench"))
    from logs_categories import DEFAULT_LABELS, read_labels

    rows = read_labels(DEFAULT_LABELS, args.log_dir)
    lines, truth = [r[2] for r in rows], [r[1] for r in rows]
    heads = {"fine-tuned teacher": teacher_text_logits(ckpt, teacher, plan, lines)["category"]}
    if args.bundle is not None:
        from edge_agent.runtime.bundle import load_bundle
        from edge_agent.runtime.model import Model

        model = Model(load_bundle(args.bundle), tasks=("logs",))
        ids = np.stack([model.log_tokenizer.encode(x).ids for x in lines]).astype(np.int32)
        heads["the bundle's student (int8)"] = np.asarray(model.run_logs(ids)[1])
    print(f"== log categories, {len(rows)} hand-labelled lines, each line alone")
    for name, logits in heads.items():
        for min_p, label in ((0.0, "argmax"), (CATEGORY_MIN_P, f"'other' below p {CATEGORY_MIN_P}")):
            got = [pick_label(list(CATEGORIES), z, "other", min_p) for z in logits]
            agree = np.mean([g == t for g, t in zip(got, truth, strict=True)])
            print(f"  {name:34s} {label:22s} agreement {100 * agree:6.2f}%")


if __name__ == "__main__":
    raise SystemExit(main())
