"""Delegate fallback under load: the working delegate dies mid-run, no request is lost.

    nice .venv/bin/python bench/fallback.py [--backend litert] [--requests 400] [--fail-after 300]

A real external delegate (tests/delegates/test_delegate.c, compiled here with gcc) runs the
shipped bundle and starts failing every invoke after ``--fail-after`` invokes, as an unplugged
accelerator would. Requests come from several threads through the batching queue. Printed: how
many were answered, how many differ from the CPU reference, the chain's switches and stats, the
latency of requests before / around / after the switch, and the switch back once the "device"
returns (re-probe).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from edge_agent.runtime.bundle import default_bundle_path, load_bundle  # noqa: E402
from edge_agent.runtime.chain import build_chain, open_runtime  # noqa: E402
from edge_agent.runtime.config import RuntimeConfig  # noqa: E402


def _compile(out: Path) -> Path:
    lib = out / "libflaky_delegate.so"
    src = REPO / "tests" / "delegates" / "test_delegate.c"
    subprocess.run(
        ["gcc", "-O2", "-shared", "-fPIC", "-DFAIL_AT_INVOKE", "-o", str(lib), str(src)], check=True
    )
    return lib


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundle", type=Path, default=default_bundle_path())
    ap.add_argument("--backend", default="tflite-runtime")
    ap.add_argument("--requests", type=int, default=400)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--fail-after", type=int, default=300, help="delegate invokes before it 'unplugs'")
    ap.add_argument("--residency", default="resident")
    args = ap.parse_args()

    bundle = load_bundle(args.bundle)
    tmp = Path(tempfile.mkdtemp(prefix="edge-fallback-"))
    lib = _compile(tmp)
    flag = tmp / "unplugged"
    flaky = {
        "kind": "external",
        "name": "npu",
        "library": str(lib),
        "options": {"fail_after": args.fail_after, "fail_flag": str(flag)},
    }
    flag.touch()  # fail_flag present + fail_after reached = failing; removing the flag = "replugged"
    cfg = RuntimeConfig(backend=args.backend, residency=args.residency, delegates=[flaky, {"kind": "cpu"}])
    max_len = int(bundle.manifest["tokenizer"]["max_len"])
    ids = np.random.default_rng(0).integers(1, 300, size=(args.requests, max_len)).astype(np.int32)

    cpu_only = RuntimeConfig(backend=args.backend, residency=args.residency)
    ref_chain = build_chain(bundle, cpu_only, background_reprobe=False)
    reference = [
        ref_chain.run("intents", {"ids": ids[i : i + 1]})["intent_logits"] for i in range(args.requests)
    ]
    ref_chain.close()

    rt = open_runtime(bundle, cfg)
    print(f"start: active={rt.chain.active}")
    results: dict[int, np.ndarray] = {}
    latency: dict[int, float] = {}
    errors: list[str] = []

    def client(worker: int) -> None:
        for i in range(worker, args.requests, args.threads):
            t0 = time.perf_counter()
            try:
                out = rt.executors["intents"].run({"ids": ids[i : i + 1]})
            except Exception as exc:  # counted and printed: a lost request is what this measures
                errors.append(f"{i}: {exc}")
                continue
            latency[i] = time.perf_counter() - t0
            results[i] = out["intent_logits"]

    threads = [threading.Thread(target=client, args=(w,)) for w in range(args.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stats = rt.stats()
    wrong = sum(1 for i, r in results.items() if not np.allclose(r, reference[i], atol=1e-4))
    print(
        f"requests: {args.requests} sent, {len(results)} answered, {len(errors)} lost, "
        f"{wrong} differ from CPU"
    )
    for s in stats["switches"]:
        print(f"  switch {s['from']} -> {s['to']}: {s['reason'][:100]}")
    print(
        f"  failovers={stats['failovers']} retried_requests={stats['retried_requests']} "
        f"served={stats['served']}"
    )
    print(f"  batches={stats['batches']} for {stats['batched_requests']} requests")
    for b in stats["backends"]:
        print(f"  backend {b['name']}: {b['status']} ({b['reason']})")
    lat = np.array(sorted(latency.values())) * 1000
    print(
        f"latency ms: p50 {np.percentile(lat, 50):.2f}  p99 {np.percentile(lat, 99):.2f}  max {lat.max():.2f}"
    )

    flag.unlink()  # the device is back
    t0 = time.perf_counter()
    rt.chain.reprobe()
    print(f"re-probe after replug: active={rt.chain.active} ({(time.perf_counter() - t0) * 1000:.1f} ms)")
    rt.close()
    return 0 if not errors and wrong == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
