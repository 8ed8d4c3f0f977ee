"""Speed and memory of ``edge-agent intents`` against hassil's template matcher.

Usage::

    python bench/intents_speed.py [--bundle DIR] [--backend auto|litert|tflite-runtime] [--repeat N]

Same texts for both (the dev set's sentences, home from its fixtures). ``--repeat`` rounds, each
one ``edge-agent intents`` process over all texts, one in-process pass and one hassil pass, so a
load change on a shared machine hits all three alike; medians are reported. Prints:
- per-utterance wall time of ``edge-agent intents`` (whole process: batch wall / lines), and the
  same in-process without start-up; each also in CPU time (the process's user + sys), which other
  jobs on a shared machine move much less than wall time;
- start-up + exit of ``edge-agent intents`` alone (empty input; best of 3 runs per round);
- per-utterance time of hassil ``recognize`` with home-assistant-intents (bench-only dependency:
  ``pip install -e .[bench]``), and the ratio (target <= 0.25);
- model invoke median at batch 1, one thread (the intent graph: all segments; target <= 0.2 ms);
- peak RSS of the ``edge-agent intents`` process, the highest of the rounds (target <= 60 MB),
  and whether its edge_agent modules ran from cached bytecode or were compiled at start.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from intents_dev import DEV, FIXTURES, fixtures_to_home  # noqa: E402


def load_texts() -> list[str]:
    return [json.loads(line)["text"] for line in DEV.read_text(encoding="utf-8").splitlines() if line.strip()]


def cli_once(texts: list[str], home: Path, bundle: str | None, backend: str) -> tuple[float, float, float]:
    """One ``edge-agent intents`` process over all texts through a pipe: (wall seconds per line,
    start-up and exit included; its CPU seconds (user + sys) per line; its peak RSS in MB).

    The peak is the process's VmHWM, read after its last answer while it waits for more input.
    (``ru_maxrss`` of a child is no good here: a child spawned by this already large process
    inherits this process's high-water mark through exec.)"""
    cmd = [sys.executable, "-m", "edge_agent", "intents", "--home", str(home), "--backend", backend]
    if bundle:
        cmd += ["--bundle", bundle]
    data = ("\n".join(texts) + "\n").encode()
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT
    )
    assert proc.stdin is not None and proc.stdout is not None
    feeder = threading.Thread(target=proc.stdin.write, args=(data,))
    feeder.start()
    answers = 0
    while answers < len(texts) and proc.stdout.readline():
        answers += 1
    peak_kb = _vm_hwm_kb(proc.pid) if answers == len(texts) else 0
    feeder.join()
    proc.stdin.close()
    answers += len(proc.stdout.read().splitlines())
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = returncode = os.waitstatus_to_exitcode(status)
    if returncode != 0 or answers != len(texts):
        raise SystemExit(f"edge-agent intents exited {returncode}: {answers} lines, {len(texts)} inputs")
    return wall / len(texts), (usage.ru_utime + usage.ru_stime) / len(texts), peak_kb / 1024.0


def startup_once(home: Path, bundle: str | None, backend: str) -> tuple[float, float]:
    """(wall, CPU) seconds of one ``edge-agent intents`` process given no input: start-up + exit."""
    cmd = [sys.executable, "-m", "edge_agent", "intents", "--home", str(home), "--backend", backend]
    if bundle:
        cmd += ["--bundle", bundle]
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"edge-agent intents exited {proc.returncode} on empty input")
    return wall, usage.ru_utime + usage.ru_stime


def _vm_hwm_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise SystemExit(f"no VmHWM in /proc/{pid}/status")


# The floor under the CLI's RSS: the libraries it cannot do without, loaded as the CLI loads
# them (numpy with its unused parts lazy, no OpenSSL: commands/_lean.py), with the intent graph
# (its fused file when the bundle has one) compiled as the runtime does (litert: LiteRT's C API,
# litert_c.compile_resident; tflite-runtime: its interpreter) and invoked once, and no other
# edge_agent code. argv: backend name, bundle dir.
_FLOOR = """
import json, sys
from pathlib import Path
from edge_agent.commands._lean import lean_start
lean_start(openssl=False)
import numpy as np
import sentencepiece
root = Path(sys.argv[2])
manifest = json.loads((root / "manifest.json").read_text())
if manifest["tokenizer"].get("type") == "wordpiece":  # a teacher bundle: its vocabulary file
    from edge_agent.runtime.wordpiece import WordPieceTokenizer
    tok = WordPieceTokenizer.from_file(root / manifest["tokenizer"]["file"], 8)
else:
    sp = sentencepiece.SentencePieceProcessor()
    sp.Load(str(root / manifest["tokenizer"]["file"]))
files = {s["name"]: s["file"] for s in manifest["segments"]}
fused = manifest.get("fused", {}).get("intents")
for file in [fused["file"]] if fused else [files[n] for n in manifest["graphs"]["intents"]]:
    it = None
    if sys.argv[1] == "litert":
        from edge_agent.runtime.litert_c import compile_resident
        it = compile_resident(root / file, 1)
    if it is None:
        module = {"litert": "ai_edge_litert.interpreter", "tflite-runtime": "tflite_runtime.interpreter"}
        interpreter = __import__(module[sys.argv[1]], fromlist=["Interpreter"])
        it = interpreter.Interpreter(model_path=str(root / file), num_threads=1)
        it.allocate_tensors()
    for d in it.get_input_details():
        it.set_tensor(d["index"], np.zeros(d["shape"], d["dtype"]))
    it.invoke()
    globals().setdefault("keep", []).append(it)
print([l for l in Path("/proc/self/status").read_text().splitlines() if l.startswith("VmHWM:")][0].split()[1])
"""


def floor_rss(bundle: str | None, backend: str) -> float:
    """Peak RSS (MB) of numpy + sentencepiece + the backend + the intent graph's interpreters."""
    from edge_agent.runtime.bundle import default_bundle_path

    root = str(Path(bundle) if bundle else default_bundle_path())
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, "-c", _FLOOR, backend, root],
        capture_output=True, check=True, cwd=tempfile.gettempdir(), env=env,
    ).stdout
    return int(out.split()[-1]) / 1024.0


def bytecode_cached() -> bool:
    """Whether every edge_agent module has its .pyc (as pip or the Yocto recipe install them)
    rather than being compiled from source at each start (a checkout run with
    PYTHONDONTWRITEBYTECODE=1)."""
    sources = (ROOT / "edge_agent").rglob("*.py")
    return all(Path(importlib.util.cache_from_source(str(p))).exists() for p in sources)


def inprocess(
    texts: list[str], home: Path, bundle: str | None, backend: str, repeat: int
) -> tuple[Callable[[], tuple[float, float]], dict[str, Any]]:
    """(one timed recognizer pass over ``texts`` -> (wall, CPU) seconds per text, invoke figures)."""
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

    def one_pass() -> tuple[float, float]:
        t0, c0 = time.perf_counter(), time.process_time()
        for text in texts:
            rec.recognize([text])
        return (time.perf_counter() - t0) / len(texts), (time.process_time() - c0) / len(texts)

    return one_pass, {
        "invoke_median_ms": 1000 * statistics.median(invoke),
        "invoke_p95_ms": 1000 * _pct(invoke, 95),
        "backend": model.backend.name,
    }


def _pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(len(s) * p / 100))]


def hassil_pass(texts: list[str], fixtures: dict[str, Any]) -> Callable[[], tuple[float, float]]:
    """One timed hassil ``recognize`` pass over ``texts`` -> (wall, CPU) seconds per text (caches warmed)."""
    from hassil import Intents, SlotList, TextSlotList, recognize
    from home_assistant_intents import get_intents

    intents = Intents.from_dict(get_intents("en"))  # type: ignore[arg-type]
    home = fixtures_to_home(fixtures)
    names = [e["name"] for e in home["entities"]] + [
        a for e in home["entities"] for a in e.get("aliases", [])
    ]
    slot_lists: dict[str, SlotList] = {
        "name": TextSlotList.from_strings(names, name="name"),
        "area": TextSlotList.from_strings(home["areas"], name="area"),
        "floor": TextSlotList.from_strings(home["floors"] or ["Ground Floor"], name="floor"),
    }
    recognize(texts[0], intents, slot_lists=slot_lists)  # warm caches

    def one_pass() -> tuple[float, float]:
        t0, c0 = time.perf_counter(), time.process_time()
        for text in texts:
            recognize(text, intents, slot_lists=slot_lists)
        return (time.perf_counter() - t0) / len(texts), (time.process_time() - c0) / len(texts)

    return one_pass


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundle")
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--repeat", type=int, default=3, help="rounds (CLI process, in-process, hassil)")
    ap.add_argument("--skip-hassil", action="store_true")
    args = ap.parse_args()
    texts = load_texts()
    fixtures = yaml.safe_load(FIXTURES.read_text(encoding="utf-8"))
    rounds = max(1, args.repeat)
    cli: list[tuple[float, float]] = []  # (wall, CPU) seconds per line
    startup: list[tuple[float, float]] = []  # (wall, CPU) seconds, empty input
    rss: list[float] = []
    ours: list[tuple[float, float]] = []
    theirs: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home.yaml"
        home.write_text(yaml.safe_dump(fixtures_to_home(fixtures)), encoding="utf-8")
        ours_pass, info = inprocess(texts, home, args.bundle, args.backend, rounds)
        theirs_pass = None if args.skip_hassil else hassil_pass(texts, fixtures)
        for _ in range(rounds):
            wall, cpu, peak = cli_once(texts, home, args.bundle, args.backend)
            cli.append((wall, cpu))
            rss.append(peak)
            ours.append(ours_pass())
            if theirs_pass is not None:
                theirs.append(theirs_pass())
            startup.extend(startup_once(home, args.bundle, args.backend) for _ in range(3))
    cli_wall, cli_cpu = _medians(cli)
    in_wall, in_cpu = _medians(ours)
    source = "cached bytecode" if bytecode_cached() else "compiled from source at start (no bytecode cache)"
    print(f"texts: {len(texts)} (dev set sentences), backend {info['backend']}, 1 thread, {rounds} rounds")
    print(
        f"edge-agent intents, whole process: {1000 * cli_wall:.3f} ms/utterance (batch wall / lines, median);"
        f" CPU {1000 * cli_cpu:.3f} ms"
    )
    print(f"edge-agent recognizer in-process:  {1000 * in_wall:.3f} ms/utterance; CPU {1000 * in_cpu:.3f} ms")
    print(
        f"edge-agent intents start-up + exit (empty input, same home), best of {len(startup)}: "
        f"wall {min(w for w, _ in startup):.3f} s, CPU {min(c for _, c in startup):.3f} s"
    )
    print(
        f"model invoke (intent graph, batch 1): median {info['invoke_median_ms']:.3f} ms, "
        f"p95 {info['invoke_p95_ms']:.3f} ms   (target <= 0.2 ms)"
    )
    print(
        f"edge-agent intents peak RSS: {max(rss):.1f} MB (VmHWM kB / 1024), highest of {rounds} runs"
        "   (target <= 60 MB)"
    )
    print(f"edge_agent modules of that process: {source}")
    print(
        f"the same libraries alone (numpy, sentencepiece, {info['backend']}, the intent graph compiled "
        f"as the runtime does, no other edge_agent code): {floor_rss(args.bundle, info['backend']):.1f} MB"
    )
    if theirs:
        h_wall, h_cpu = _medians(theirs)
        print(f"hassil recognize: {1000 * h_wall:.3f} ms/utterance; CPU {1000 * h_cpu:.3f} ms")
        print(f"ratio edge-agent (whole process) / hassil: {cli_wall / h_wall:.3f}   (target <= 0.25)")
        print(f"ratio edge-agent (in-process) / hassil:    {in_wall / h_wall:.3f}")
        print(
            f"same ratios in CPU time (less moved by other jobs on the machine): whole process "
            f"{cli_cpu / h_cpu:.3f}, in-process {in_cpu / h_cpu:.3f}"
        )
    return 0


def _medians(pairs: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)


if __name__ == "__main__":
    sys.exit(main())
