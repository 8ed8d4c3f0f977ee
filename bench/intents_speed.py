"""Speed and memory of ``edge-agent intents`` against hassil's template matcher.

Usage::

    python bench/intents_speed.py [--bundle DIR] [--backend auto|litert|tflite-runtime] [--repeat N]

Same texts for both (the dev set's sentences, home from its fixtures). Prints:
- per-utterance wall time of ``edge-agent intents`` (whole process: batch wall / lines), and the
  same in-process without start-up;
- per-utterance time of hassil ``recognize`` with home-assistant-intents (bench-only dependency:
  ``pip install -e .[bench]``), and the ratio (target <= 0.25);
- model invoke median at batch 1, one thread (the intent graph: all segments; target <= 0.2 ms);
- peak RSS of the ``edge-agent intents`` process (target <= 60 MB).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from intents_dev import DEV, FIXTURES, fixtures_to_home  # noqa: E402


def load_texts() -> list[str]:
    return [json.loads(line)["text"] for line in DEV.read_text(encoding="utf-8").splitlines() if line.strip()]


def bench_cli(texts: list[str], home: Path, bundle: str | None, backend: str) -> tuple[float, float]:
    """(seconds per line for the whole process, peak RSS in MB)."""
    cmd = [sys.executable, "-m", "edge_agent", "intents", "--home", str(home), "--backend", backend]
    if bundle:
        cmd += ["--bundle", bundle]
    data = ("\n".join(texts) + "\n").encode()
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT
    )
    out, _ = proc.communicate(data)
    wall = time.perf_counter() - t0
    n_out = len(out.splitlines())
    if n_out != len(texts):
        raise SystemExit(f"edge-agent intents gave {n_out} lines for {len(texts)} inputs")
    rss_kb = _children_maxrss()  # the only child this script has started so far
    return wall / len(texts), rss_kb / 1024.0


def _children_maxrss() -> float:
    import resource

    return float(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)


def bench_inprocess(
    texts: list[str], home: Path, bundle: str | None, backend: str, repeat: int
) -> dict[str, float]:
    from edge_agent.nlu.home import Home
    from edge_agent.nlu.recognizer import IntentRecognizer
    from edge_agent.runtime.bundle import default_bundle_path, load_bundle
    from edge_agent.runtime.model import Model

    model = Model(load_bundle(bundle or default_bundle_path()), backend=backend, threads=1)
    rec = IntentRecognizer(model, Home.load(home))
    ids = [model.tokenizer.encode(t).ids[None] for t in texts]
    invoke = []
    for _ in range(repeat):
        for row in ids:
            t0 = time.perf_counter()
            model.run_intents(row)
            invoke.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    for _ in range(repeat):
        for text in texts:
            rec.recognize([text])
    per_utt = (time.perf_counter() - t0) / (repeat * len(texts))
    return {
        "invoke_median_ms": 1000 * statistics.median(invoke),
        "invoke_p95_ms": 1000 * _pct(invoke, 95),
        "recognize_ms": 1000 * per_utt,
        "backend": model.backend.name,
    }  # type: ignore[dict-item]


def _pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(len(s) * p / 100))]


def bench_hassil(texts: list[str], fixtures: dict[str, Any], repeat: int) -> float:
    from hassil import Intents, TextSlotList, recognize
    from home_assistant_intents import get_intents

    intents = Intents.from_dict(get_intents("en"))  # type: ignore[arg-type]
    home = fixtures_to_home(fixtures)
    names = [e["name"] for e in home["entities"]] + [
        a for e in home["entities"] for a in e.get("aliases", [])
    ]
    slot_lists = {
        "name": TextSlotList.from_strings(names, name="name"),
        "area": TextSlotList.from_strings(home["areas"], name="area"),
        "floor": TextSlotList.from_strings(home["floors"] or ["Ground Floor"], name="floor"),
    }
    recognize(texts[0], intents, slot_lists=slot_lists)  # warm caches
    t0 = time.perf_counter()
    for _ in range(repeat):
        for text in texts:
            recognize(text, intents, slot_lists=slot_lists)
    return (time.perf_counter() - t0) / (repeat * len(texts))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundle")
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-hassil", action="store_true")
    args = ap.parse_args()
    texts = load_texts()
    fixtures = yaml.safe_load(FIXTURES.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home.yaml"
        home.write_text(yaml.safe_dump(fixtures_to_home(fixtures)), encoding="utf-8")
        cli_s, rss = bench_cli(texts, home, args.bundle, args.backend)
        inproc = bench_inprocess(texts, home, args.bundle, args.backend, args.repeat)
    print(f"texts: {len(texts)} (dev set sentences), backend {inproc['backend']}, 1 thread")
    print(f"edge-agent intents, whole process: {1000 * cli_s:.3f} ms/utterance (batch wall / lines)")
    print(f"edge-agent recognizer in-process:  {inproc['recognize_ms']:.3f} ms/utterance")
    print(
        f"model invoke (intent graph, batch 1): median {inproc['invoke_median_ms']:.3f} ms, "
        f"p95 {inproc['invoke_p95_ms']:.3f} ms   (target <= 0.2 ms)"
    )
    print(f"edge-agent intents peak RSS: {rss:.1f} MB   (target <= 60 MB)")
    if not args.skip_hassil:
        hassil_s = bench_hassil(texts, fixtures, max(1, args.repeat // 3))
        print(f"hassil recognize: {1000 * hassil_s:.3f} ms/utterance")
        print(f"ratio edge-agent (whole process) / hassil: {cli_s / hassil_s:.3f}   (target <= 0.25)")
        print(f"ratio edge-agent (in-process) / hassil:    {inproc['recognize_ms'] / 1000 / hassil_s:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
