"""Layer streaming on a large synthetic bundle: peak RSS and latency against the weight budget.

    edge-fw synth-bundle --params 100M --out /tmp/edge-agent-bench/synth-100M   # once, ~100 MB
    nice .venv/bin/python bench/streaming.py --bundle /tmp/edge-agent-bench/synth-100M

Every configuration runs in its own child process (peak RSS is per process), which imports only
the runtime pieces a streamed model needs (bundle, backend, segment executor). Printed:

* peak RSS and warm latency (best of ``--runs``, median in brackets; batch 1 and batch 8 =
  eight queued requests pushed through each loaded segment, ``--invoke-rows`` rows per
  invoke) for ``resident`` and for ``stream``/``auto`` at each budget;
* the ratios the issue sets targets for: stream@16 MB RSS <= 64 MB, warm streamed latency
  <= 2.5x resident at batch 1 and <= 1.5x at batch 8;
* cold: one streamed forward of the intent graph with every weight file evicted from the page
  cache, against the time to ``read()`` from a cold cache the same bytes that forward reads
  (target <= 1.15x): the pages an untimed cold forward left in the page cache (``mincore``):
  the intent graph's segments, or with ``--weight-cache`` their cache files and the parts of
  the segments the runtime still reads. Each timed pair is checked: both must leave the same
  bytes of the same files in the page cache, all of them files of the intent graph (never the
  log head's) (:func:`unlike_bytes`), or no ratio is printed and the exit status is 1;
* a PNG of RSS and latency against the budget (``--png``).
"""

from __future__ import annotations

import json
import mmap
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT_BUNDLE = Path("/tmp/edge-agent-bench/synth-100M")
COLD_TASK = "intents"
Ranges = list[tuple[int, int]]  # byte ranges of a file, [start, end)


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _accelerator_libs_mb() -> float:
    """Resident MB of mapped accelerator plugin libraries: the wheel's Python ``CompiledModel``
    wrapper loaded LiteRT's WebGPU one for CPU work too; the C API path loads none (docs/runtime.md)."""
    total, current = 0, ""
    with open("/proc/self/smaps", encoding="utf-8") as fh:
        for line in fh:
            head = line.split(maxsplit=6)
            if "-" in head[0] and not head[0].endswith(":"):
                current = head[5].strip() if len(head) > 5 else ""
            elif head[0] == "Rss:" and "Accelerator." in Path(current).name:
                total += int(head[1])
    return total / 1024


def _weight_files(bundle: Any) -> list[Path]:
    return [bundle.path / s.file for s in bundle.segments().values()]


def graph_files(bundle: Any, task: str, cache: Any) -> set[Path]:
    """The files a forward of ``task`` may read: its graph's segments and, with a weight cache
    (``cache``, a ``WeightCache``), their cache files. Never another graph's head."""
    specs = bundle.segments()
    segments = [bundle.path / specs[name].file for name in bundle.graph(task)]
    return set(segments) | ({cache.file_for(f) for f in segments} if cache is not None else set())


def _candidate_files(bundle: Any, cache: Any) -> list[Path]:
    """Every file a forward of any graph might read: all segments and their cache files."""
    files = _weight_files(bundle)
    if cache is not None:
        files += [cache.file_for(f) for f in _weight_files(bundle)]
    return [f for f in files if f.exists()]


def cached_ranges(path: Path) -> Ranges:
    """Byte ranges of ``path`` in the page cache (``mincore`` over a mapping that touches no
    page). ctypes is imported here, not at the top: the warm children's peak RSS is a figure."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    libc.mmap.argtypes += [ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    size = path.stat().st_size
    if size == 0:
        return []
    fd = os.open(path, os.O_RDONLY)
    try:
        addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            raise OSError(ctypes.get_errno(), f"mmap {path}")
        try:
            vec = ctypes.create_string_buffer(-(-size // mmap.PAGESIZE))
            if libc.mincore(addr, size, vec) != 0:
                raise OSError(ctypes.get_errno(), f"mincore {path}")
            held = vec.raw
        finally:
            libc.munmap(addr, size)
    finally:
        os.close(fd)
    ranges: Ranges = []
    for page, flags in enumerate(held):
        lo, hi = page * mmap.PAGESIZE, min(size, (page + 1) * mmap.PAGESIZE)
        if not flags & 1:
            continue
        if ranges and ranges[-1][1] == lo:
            ranges[-1] = (ranges[-1][0], hi)
        else:
            ranges.append((lo, hi))
    return ranges


def page_cache(files: list[Path]) -> dict[Path, Ranges]:
    """What of ``files`` is in the page cache, for the files that have any."""
    held = {f: cached_ranges(f) for f in files}
    return {f: r for f, r in held.items() if r}


def _size(ranges: Ranges) -> int:
    return sum(b - a for a, b in ranges)


def unlike_bytes(forward: dict[Path, Ranges], baseline: dict[Path, Ranges], allowed: set[Path]) -> list[str]:
    """Why a cold forward and the ``read()`` it is compared with do not compare (both started
    from an evicted page cache; ``forward``/``baseline``: what each left there): a file one of
    them read outside ``allowed`` (the graph's files), or a file whose bytes differ between
    them. One line per file; empty when both read the same bytes of the graph's files."""
    lines = [f"{f.name}: read by the forward, not of the graph" for f in sorted(forward.keys() - allowed)]
    lines += [f"{f.name}: read by read(), not of the graph" for f in sorted(baseline.keys() - allowed)]
    for f in sorted(forward.keys() | baseline.keys()):
        got, want = forward.get(f, []), baseline.get(f, [])
        if got != want:
            lines.append(f"{f.name}: other bytes (the forward {_size(got)}, read() {_size(want)})")
    return lines


def _child(cfg: dict[str, Any]) -> dict[str, Any]:
    import numpy as np

    from edge_agent.runtime.backend import load_backend
    from edge_agent.runtime.bundle import load_bundle
    from edge_agent.runtime.segments import SegmentExecutor, evict_from_page_cache

    bundle = load_bundle(cfg["bundle"], verify_hashes=False)
    backend = load_backend(cfg["backend"])
    threads = int(cfg["threads"])
    xnnpack = bool(cfg["xnnpack"])
    cache = None
    if cfg.get("weight_cache"):
        from edge_agent.runtime.weight_cache import WeightCache

        cache = WeightCache(bundle, Path(cfg["weight_cache"]), backend.version)
    ex = SegmentExecutor(
        bundle,
        lambda p: backend.make_interpreter(p, threads, xnnpack=xnnpack, weight_cache=cache),
        weight_cache=cache,
        residency=cfg["residency"],
        weight_budget_mb=cfg["budget"],
        prefetch=cfg["prefetch"],
        invoke_rows=cfg.get("invoke_rows") if cfg["residency"] != "resident" else None,
        heap=cfg.get("heap", "return"),
    )
    max_len = int(bundle.manifest["tokenizer"]["max_len"])
    ids = np.random.default_rng(0).integers(1, 200, size=(8, max_len)).astype(np.int32)
    if cfg.get("cold"):
        return _cold(ex, bundle, ids, int(cfg["runs"]), evict_from_page_cache, cache)
    batch8 = [{"ids": ids[i : i + 1]} for i in range(8)]
    ex.run("intents", {"ids": ids[:1]})  # warm: pages cached, interpreters (resident) built
    b1, b8 = [], []
    for _ in range(int(cfg["runs"])):
        t0 = time.perf_counter()
        ex.run("intents", {"ids": ids[:1]})
        b1.append(time.perf_counter() - t0)
    ex.run_many("intents", batch8)  # warm at batch 8 (resident interpreters resize once)
    for _ in range(int(cfg["runs"])):
        t0 = time.perf_counter()
        ex.run_many("intents", batch8)
        b8.append(time.perf_counter() - t0)
    return {  # best of N: the machine is shared, the minimum is the configuration's own cost
        "b1_ms": 1000 * min(b1),
        "b8_ms": 1000 * min(b8),
        "b1_median_ms": 1000 * _median(b1),
        "b8_median_ms": 1000 * _median(b8),
        "peak_rss_mb": _rss_mb(),
        "accelerator_libs_mb": _accelerator_libs_mb(),
        "resident_mb": sum(ex.sizes[n] for n in ex.resident_names) / (1 << 20),
    }


def _median(xs: list[float]) -> float:
    s = sorted(xs)
    return (s[len(s) // 2] + s[(len(s) - 1) // 2]) / 2


def _read(reads: dict[Path, Ranges], evict: Any, everything: list[Path], buf: bytearray) -> float:
    """Seconds to ``read()`` ``reads`` once, after evicting ``everything`` from the page cache.
    A file read in part is read with the kernel's readahead off, so no other page comes in."""
    for f in everything:
        evict(f)
    view = memoryview(buf)
    t0 = time.perf_counter()
    for path, ranges in reads.items():
        with path.open("rb", buffering=0) as fh:
            if ranges != [(0, os.fstat(fh.fileno()).st_size)]:
                os.posix_fadvise(fh.fileno(), 0, 0, os.POSIX_FADV_RANDOM)
            for start, end in ranges:
                fh.seek(start)
                left = end - start
                while left > 0 and (n := fh.readinto(view[: min(len(buf), left)])):
                    left -= n
    return time.perf_counter() - t0


def _cold(ex: Any, bundle: Any, ids: Any, runs: int, evict: Any, cache: Any) -> dict[str, Any]:
    """Cold forwards of :data:`COLD_TASK` against ``read()`` of the bytes a cold forward reads
    (found by one untimed cold forward); ``cache``: the XNNPACK weight cache, whose files the
    forward reads instead of the segments' weights. ``unlike`` says where the two differed."""
    ex.run(COLD_TASK, {"ids": ids[:1]})  # a cold cache, not a first load (which writes the weight cache)
    os.sync()  # new cache files are dirty pages, which eviction leaves in the page cache
    everything = _candidate_files(bundle, cache)
    allowed = graph_files(bundle, COLD_TASK, cache)
    for f in everything:
        evict(f)
    ex.run(COLD_TASK, {"ids": ids[:1]})
    reads = page_cache(everything)
    unlike = unlike_bytes(reads, reads, allowed)
    reads_s, fwds = [], []
    buf = bytearray(1 << 20)
    for _ in range(runs):
        reads_s.append(_read(reads, evict, everything, buf))
        baseline = page_cache(everything)
        for f in everything:
            evict(f)
        t0 = time.perf_counter()
        ex.run(COLD_TASK, {"ids": ids[:1]})
        fwds.append(time.perf_counter() - t0)
        unlike = unlike or unlike_bytes(page_cache(everything), baseline, allowed)
    warm = []
    for _ in range(runs):
        t0 = time.perf_counter()
        ex.run(COLD_TASK, {"ids": ids[:1]})
        warm.append(time.perf_counter() - t0)
    return {
        "warm_forward_ms": 1000 * min(warm),
        "read_ms": 1000 * min(reads_s),
        "read_mb": sum(_size(r) for r in reads.values()) / (1 << 20),
        "read_files": sorted(f.name for f in reads),
        "cold_forward_ms": 1000 * min(fwds),
        "unlike": unlike,
        "peak_rss_mb": _rss_mb(),
    }


def _spawn(cfg: dict[str, Any]) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    import subprocess

    out = subprocess.run(
        [sys.executable, __file__, "--child", json.dumps(cfg)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if out.returncode != 0:
        raise SystemExit(f"child failed for {cfg}:\n{out.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def _plot(path: Path, rows: list[dict[str, Any]], resident: dict[str, Any], setup: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for mode, marker in (("stream", "o"), ("auto", "s")):
        pts = [r for r in rows if r["residency"] == mode]
        if not pts:
            continue
        xs = [r["budget"] for r in pts]
        ax1.plot(xs, [r["peak_rss_mb"] for r in pts], marker=marker, label=f"{mode} peak RSS")
        ax2.plot(xs, [r["b1_ms"] for r in pts], marker=marker, label=f"{mode} batch 1")
        ax2.plot(
            xs,
            [r["b8_ms"] / 8 for r in pts],
            marker=marker,
            linestyle="--",
            label=f"{mode} batch 8 (per request)",
        )
    ax1.axhline(resident["peak_rss_mb"], color="grey", linestyle=":", label="resident peak RSS")
    ax1.axhline(64, color="red", linestyle="--", linewidth=0.8, label="target 64 MB")
    ax2.axhline(resident["b1_ms"], color="grey", linestyle=":", label="resident batch 1")
    ax2.axhline(resident["b8_ms"] / 8, color="black", linestyle=":", label="resident batch 8 (per request)")
    for ax, ylabel in ((ax1, "peak RSS (MB)"), (ax2, "warm latency (ms)")):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("weight budget (MB)")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"100M-parameter synthetic bundle: memory and latency against weight budget ({setup})")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--child":  # before the parent's imports: RSS is measured here
        print(json.dumps(_child(json.loads(sys.argv[2]))))
        return 0
    import argparse

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundle", type=Path, default=DEFAULT_BUNDLE)
    ap.add_argument("--backend", default="tflite-runtime")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument(
        "--xnnpack",
        type=int,
        choices=(0, 1),
        default=1,
        help="1: default kernels (XNNPACK delegate where it takes the ops); 0: built-in kernels only",
    )
    ap.add_argument(
        "--heap",
        choices=("return", "reuse"),
        default="return",
        help="runtime.stream_heap: return released buffers to the OS, or reuse them (default return)",
    )
    ap.add_argument(
        "--weight-cache",
        type=Path,
        default=None,
        help="LiteRT: stream with XNNPACK's packed weights kept in this directory (resident runs "
        "without it, on the classic interpreter, which takes a whole batch in one invoke)",
    )
    ap.add_argument("--budgets", default="8,16,32,64,128")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--prefetch", type=int, default=2)
    ap.add_argument(
        "--invoke-rows",
        type=int,
        default=2,
        help="stream/auto: rows per invoke within a batch (0 = whole batch)",
    )
    ap.add_argument("--png", type=Path, default=REPO / "bench" / "streaming.png")
    args = ap.parse_args()
    if not (args.bundle / "manifest.json").exists():
        print(
            f"no bundle at {args.bundle}; make one with: "
            f"edge-fw synth-bundle --params 100M --out {args.bundle}"
        )
        return 2
    base = {
        "bundle": str(args.bundle),
        "backend": args.backend,
        "threads": args.threads,
        "runs": args.runs,
        "xnnpack": args.xnnpack,
        "heap": args.heap,
    }
    base["prefetch"] = args.prefetch
    base["invoke_rows"] = args.invoke_rows or None
    resident = _spawn({**base, "residency": "resident", "budget": None})
    base["weight_cache"] = str(args.weight_cache) if args.weight_cache else None
    print(
        f"resident: peak RSS {resident['peak_rss_mb']:.1f} MB, batch 1 {resident['b1_ms']:.1f} ms "
        f"[{resident['b1_median_ms']:.0f}], batch 8 {resident['b8_ms']:.1f} ms "
        f"[{resident['b8_median_ms']:.0f}]"
    )
    rows = []
    for mode in ("stream", "auto"):
        for budget in [float(b) for b in args.budgets.split(",")]:
            r = {**_spawn({**base, "residency": mode, "budget": budget}), "residency": mode, "budget": budget}
            rows.append(r)
            print(
                f"{mode:6s} budget {budget:6.0f} MB: peak RSS {r['peak_rss_mb']:6.1f} MB, "
                f"batch 1 {r['b1_ms']:7.1f} ms [{r['b1_median_ms']:.0f}] "
                f"({r['b1_ms'] / resident['b1_ms']:.2f}x), "
                f"batch 8 {r['b8_ms']:7.1f} ms [{r['b8_median_ms']:.0f}] "
                f"({r['b8_ms'] / resident['b8_ms']:.2f}x), "
                f"kept resident {r['resident_mb']:.1f} MB"
            )
    cold = _spawn({**base, "residency": "stream", "budget": 16.0, "cold": True, "runs": 3})
    s16 = next(r for r in rows if r["residency"] == "stream" and r["budget"] == 16.0)
    hidden = max(0.0, cold["cold_forward_ms"] - cold["warm_forward_ms"])
    print("\ntargets (stream, 16 MB budget):")
    print(
        f"  peak RSS {s16['peak_rss_mb']:.1f} MB (target <= 64; resident {resident['peak_rss_mb']:.1f} MB); "
        f"of it, accelerator plugin libraries: {s16['accelerator_libs_mb']:.1f} MB"
    )
    print(f"  warm batch 1 {s16['b1_ms'] / resident['b1_ms']:.2f}x resident (target <= 2.5)")
    print(f"  warm batch 8 {s16['b8_ms'] / resident['b8_ms']:.2f}x resident (target <= 1.5)")
    what = f"the same {cold['read_mb']:.1f} MB of {len(cold['read_files'])} files"
    if cold["unlike"]:
        print(f"  cold forward NOT COMPARED: it and read() of {what} left other bytes in the page cache:")
        for line in cold["unlike"]:
            print(f"    {line}")
    else:
        print(
            f"  cold forward {cold['cold_forward_ms']:.0f} ms vs read() of {what} "
            f"{cold['read_ms']:.0f} ms = {cold['cold_forward_ms'] / cold['read_ms']:.2f}x (target <= 1.15); "
            f"the same forward warm: {cold['warm_forward_ms']:.0f} ms, so {hidden:.0f} ms of reading "
            f"was not hidden behind compute"
        )
    setup = f"{args.backend}, " + ("XNNPACK weight cache" if args.weight_cache else f"heap {args.heap}")
    _plot(args.png, rows, resident, setup)
    print(f"plot: {args.png}")
    return 1 if cold["unlike"] else 0


if __name__ == "__main__":
    sys.exit(main())
