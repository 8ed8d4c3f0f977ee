"""``edge-fw eval``: the bundle's build metrics (teacher, float student, int8 student side by
side) and a fresh measurement of the int8 segments on newly generated held-out data."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from edge_agent.runtime.bundle import default_bundle_path, load_bundle

__all__ = ["format_table", "register"]


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser("eval", help="print the bundle's metrics and re-measure its int8 model")
    p.add_argument("--bundle", type=Path, default=default_bundle_path(), help="bundle directory")
    p.add_argument("--backend", default="auto", choices=("auto", "tflite-runtime", "litert"))
    p.add_argument("-n", type=int, default=2000, help="fresh held-out examples per task (0: skip)")
    p.add_argument("--seed", type=int, default=424242, help="seed of the fresh held-out data")
    p.set_defaults(func=_run)


def format_table(metrics: dict[str, dict[str, float]]) -> str:
    columns = list(metrics)
    keys: list[str] = []
    for col in columns:
        keys.extend(k for k in metrics[col] if k not in keys)
    width = max(len(k) for k in keys) if keys else 10
    lines = [f"{'metric':{width}s}  " + "  ".join(f"{c:>14s}" for c in columns)]
    for k in keys:
        cells = [f"{metrics[c][k]:14.4f}" if k in metrics[c] else f"{'-':>14s}" for c in columns]
        lines.append(f"{k:{width}s}  " + "  ".join(cells))
    return "\n".join(lines)


def _fresh(bundle_dir: Path, n: int, seed: int, backend: str, manifest: dict[str, Any]) -> dict[str, float]:
    from edge_agent.runtime.model import open_tokenizer
    from firmware_tools.data import intents as intent_data
    from firmware_tools.data import logs as log_data
    from firmware_tools.model.build import runtime_logits
    from firmware_tools.model.dataset import encode_intents, encode_logs
    from firmware_tools.model.metrics import intent_metrics, log_metrics

    bundle = load_bundle(bundle_dir, verify_hashes=False)
    tok = open_tokenizer(bundle, int(bundle.tokenizer_entry("intents")["max_len"]))
    log_tok = open_tokenizer(bundle, int(bundle.tokenizer_entry("logs")["max_len"]), "logs")
    it = encode_intents(tok, intent_data.generate(seed, n))
    lg = encode_logs(log_tok, log_data.generate(seed, n))
    out = runtime_logits(bundle_dir, it.ids, lg.ids, backend)
    cal = manifest.get("calibration", {})
    return {
        **intent_metrics(
            out["intent"],
            out["slots"],
            it.intent,
            it.tags,
            it.ids,
            float(cal.get("temperature", 1.0)),
            cal.get("intent_thresholds") or None,
        ),
        **log_metrics(out["severity"], out["category"], out["anomaly"], lg.severity, lg.category, lg.anomaly),
    }


def format_paired(paired: dict[str, dict[str, float]]) -> str:
    """The build's paired test of teacher against float student, one line per head."""
    if not paired:
        return "teacher vs float student: not recorded by this build"
    lines = ["teacher vs float student, same held-out examples (exact McNemar test):"]
    for head, v in paired.items():
        lines.append(
            f"  {head:18s} only teacher right {int(v['a_only']):4d}, "
            f"only student right {int(v['b_only']):4d}, p={v['p']:.4f}"
        )
    return "\n".join(lines)


def _run(args: argparse.Namespace) -> int:
    bundle = load_bundle(args.bundle)
    manifest = bundle.manifest
    metrics: dict[str, dict[str, float]] = dict(manifest.get("metrics", {}))
    print(
        f"bundle {bundle.path} ({bundle.model_id}), "
        f"converter {manifest.get('converter', {}).get('tensorflow')}"
    )
    if args.n > 0:
        metrics["int8_fresh"] = _fresh(bundle.path, args.n, args.seed, args.backend, manifest)
    print(format_table(metrics))
    print(format_paired(manifest.get("teacher_vs_student", {})))
    build = manifest.get("build", {})
    if build:
        cpu = f" ({build['cpu_seconds']} s cpu)" if "cpu_seconds" in build else ""
        print(f"build: {build.get('seconds')} s{cpu}, seed {build.get('seed')}, tiny={build.get('tiny')}")
        for name, st in build.get("stages", {}).items():
            print(f"  {name}: {st.get('wall_s')} s wall, {st.get('cpu_s')} s cpu")
    return 0
