"""CPU quota under a flood of log lines, with transcripts arriving meanwhile.

    nice .venv/bin/python bench/cpu_quota.py [--quota 0.5] [--seconds 40] [--bundle DIR]

One thread floods the log classifier path (tokenize + the bundle's ``logs`` graph, batches of
``--batch`` lines, background work paced by the governor before every segment); another sends a
transcript every ``--interval-ms`` through the ``intents`` graph as interactive work (never
throttled; batch work yields while it runs). Each path has its own interpreters, as the agent's
workers would. Printed: the process's CPU use in each 10 s window against the quota (target:
within +-10%), log lines per second, and transcript latency p50/p99 (target: p99 <= 50 ms).
A first short run without the governor shows what the flood takes when nothing holds it back.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from edge_agent.runtime.backend import load_backend  # noqa: E402
from edge_agent.runtime.bundle import default_bundle_path, load_bundle  # noqa: E402
from edge_agent.runtime.model import open_tokenizer  # noqa: E402
from edge_agent.runtime.quota import CpuGovernor, governor_from_config  # noqa: E402
from edge_agent.runtime.segments import SegmentExecutor  # noqa: E402

LOG_LINES = [
    "kernel: [ 1234.567] usb 1-1: new high-speed USB device number {n} using xhci_hcd",
    "systemd[1]: Started Session {n} of user root.",
    "zigbee2mqtt: MQTT publish: topic 'zigbee2mqtt/sensor_{n}', payload '{{\"temperature\":21.{n}}}'",
    "wpa_supplicant[812]: wlan0: CTRL-EVENT-DISCONNECTED bssid=aa:bb:cc:dd:ee:{n:02x} reason=4",
    "thermal thermal_zone0: critical temperature reached ({n} C), shutting down",
]
TRANSCRIPTS = ["turn on the kitchen lights", "set the thermostat to 21 degrees", "what time is it", "stop"]


def _run(
    args: argparse.Namespace, governor: CpuGovernor | None, seconds: float, verbose: bool
) -> dict[str, float]:
    bundle = load_bundle(args.bundle)
    backend = load_backend(args.backend)
    tok = open_tokenizer(bundle, int(bundle.tokenizer_entry("intents")["max_len"]))
    log_tok = open_tokenizer(bundle, int(bundle.tokenizer_entry("logs")["max_len"]), "logs")
    pace = governor.throttle if governor is not None else None
    logs_ex = SegmentExecutor(bundle, lambda p: backend.make_interpreter(p, 1), pace=pace)
    intents_ex = SegmentExecutor(bundle, lambda p: backend.make_interpreter(p, 1))
    stop = threading.Event()
    lines_done = [0]
    latencies: list[float] = []

    def flood() -> None:
        n = 0
        while not stop.is_set():
            if governor is not None:
                governor.throttle()
            batch = [LOG_LINES[(n + i) % len(LOG_LINES)].format(n=(n + i) % 250) for i in range(args.batch)]
            feeds = [{"ids": log_tok.encode(line).ids[None, :]} for line in batch]
            logs_ex.run_many("logs", feeds, background=True)
            n += args.batch
            lines_done[0] += args.batch

    def transcripts() -> None:
        k = 0
        while not stop.is_set():
            t0 = time.perf_counter()
            text = TRANSCRIPTS[k % len(TRANSCRIPTS)]
            if governor is not None:
                with governor.interactive():
                    intents_ex.run("intents", {"ids": tok.encode(text).ids[None, :]})
            else:
                intents_ex.run("intents", {"ids": tok.encode(text).ids[None, :]})
            latencies.append(time.perf_counter() - t0)
            k += 1
            stop.wait(args.interval_ms / 1000)

    threads = [threading.Thread(target=flood), threading.Thread(target=transcripts)]
    start_wall, start_cpu = time.monotonic(), time.process_time()
    for t in threads:
        t.start()
    windows = []
    w_wall, w_cpu, w_lines = start_wall, start_cpu, 0
    while time.monotonic() - start_wall < seconds:
        time.sleep(min(args.window, seconds - (time.monotonic() - start_wall)))
        now_wall, now_cpu = time.monotonic(), time.process_time()
        used = (now_cpu - w_cpu) / (now_wall - w_wall)
        rate = (lines_done[0] - w_lines) / (now_wall - w_wall)
        windows.append(used)
        if verbose:
            print(f"  window {len(windows)}: CPU {used:.3f} cores, {rate:.0f} log lines/s")
        w_wall, w_cpu, w_lines = now_wall, now_cpu, lines_done[0]
    stop.set()
    for t in threads:
        t.join()
    lat = np.array(latencies) * 1000
    return {
        "cpu_mean": float(np.mean(windows)),
        "cpu_min": float(np.min(windows)),
        "cpu_max": float(np.max(windows)),
        "lines_per_s": lines_done[0] / (time.monotonic() - start_wall),
        "p50_ms": float(np.percentile(lat, 50)),
        "p99_ms": float(np.percentile(lat, 99)),
        "transcripts": float(len(lat)),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundle", type=Path, default=default_bundle_path())
    ap.add_argument("--backend", default="tflite-runtime")
    ap.add_argument("--quota", type=float, default=0.5)
    ap.add_argument("--seconds", type=float, default=40.0)
    ap.add_argument("--window", type=float, default=10.0)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--interval-ms", type=float, default=100.0)
    ap.add_argument("--baseline-seconds", type=float, default=10.0)
    args = ap.parse_args()

    if args.baseline_seconds > 0:
        base = _run(args, None, args.baseline_seconds, verbose=False)
        print(
            f"no governor ({args.baseline_seconds:.0f} s): CPU {base['cpu_mean']:.3f} cores, "
            f"{base['lines_per_s']:.0f} lines/s, "
            f"transcripts p50 {base['p50_ms']:.1f} ms p99 {base['p99_ms']:.1f} ms"
        )
    governor = governor_from_config(args.quota)
    assert governor is not None
    print(f"governor: quota {args.quota} cores (effective {governor.quota:.3f}, cgroup-capped if lower)")
    res = _run(args, governor, args.seconds, verbose=True)
    lo, hi = governor.quota * 0.9, governor.quota * 1.1
    ok_cpu = lo <= res["cpu_min"] and res["cpu_max"] <= hi
    print(
        f"CPU per {args.window:.0f} s window: mean {res['cpu_mean']:.3f}, min {res['cpu_min']:.3f}, "
        f"max {res['cpu_max']:.3f} cores (target {lo:.2f}..{hi:.2f}: {'met' if ok_cpu else 'NOT met'})"
    )
    print(f"log lines/s under quota: {res['lines_per_s']:.0f}")
    print(
        f"transcripts: {res['transcripts']:.0f}, p50 {res['p50_ms']:.1f} ms, p99 {res['p99_ms']:.1f} ms "
        f"(target p99 <= 50 ms: {'met' if res['p99_ms'] <= 50 else 'NOT met'})"
    )
    print(f"governor: throttled {governor.throttled_s:.1f} s over {governor.throttle_calls} calls")
    return 0


if __name__ == "__main__":
    sys.exit(main())
