"""Publish-to-intent latency through a real mosquitto, with the agent pinned to one core, against
a stock broker and stock clients and against TCP_NODELAY ones, in one run.

    .venv/bin/python bench/e2e_latency.py [--rates 50 200 1000] [--seconds 10] [--burst 5000]
                                          [--setups stock nodelay stock-shared]

For each setup it starts a private mosquitto on a free loopback port and ``edge-agent run``
(default bundle) as a subprocess under ``taskset -c <agent-cpu>``; this process (the load
generator) and the broker run on the other CPUs. The setups differ only in the broker and the
load generator, never in the agent (which turns Nagle's algorithm off on its own connections):

* ``stock``: mosquitto without ``set_tcp_nodelay``, a paho publisher and a paho subscriber (the
  measuring client) with no socket options;
* ``nodelay``: ``set_tcp_nodelay true`` in mosquitto, TCP_NODELAY on both clients;
* ``stock-shared``: as ``stock``, with one client that both publishes and subscribes. Its
  latency is the broker's and that client's, not the agent's: each QoS 1 publish leaves a small
  unacknowledged packet on the connection (the client's PUBACK of the last intent, the broker's
  PUBACK of the transcript), so Nagle's algorithm holds the next packet on that connection
  until the other side's delayed ACK; ``broker alone`` shows the same wait without an agent.

For each rate it publishes transcripts (QoS 1, unique ids) on a fixed schedule and records, per
id, the time from publish to the intent's arrival. Then it publishes a burst as fast as it can to
find the throughput ceiling. Prints a table per setup and a line comparing them at the first
rate, writes ``bench/out/e2e_latency.json`` and a latency CDF ``bench/out/e2e_latency_cdf.png``
(needs matplotlib: ``pip install matplotlib``; without it the PNG is skipped and says so).
Targets: at 50 msg/s with the stock setup p50 <= 2 ms, p99 <= 5 ms; at 200 msg/s with nodelay
p50 <= 3 ms, p99 <= 15 ms.

Latency on a shared machine is mostly scheduling: the table also prints the agent's own
receipt-to-result time, its CPU time per message (from /proc, independent of other load), the
broker-alone round trip and the load average, so a reader can tell the agent from the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import paho.mqtt.client as paho
import yaml
from paho.mqtt.enums import CallbackAPIVersion

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from _probe import cpu_seconds, jitter_result, nodelay, subscribed_client, wakeup_jitter  # noqa: E402  (bench/)

from edge_agent.demo.broker import Mosquitto  # noqa: E402
from edge_agent.pipeline.stats import percentiles  # noqa: E402

SITE = "bench"
TEXTS = [
    "turn on the kitchen light",
    "set the bedroom blinds to forty percent",
    "what is the temperature in the hallway",
    "start the vacuum",
    "add coffee to the shopping list",
    "set a timer for five minutes",
    "pause the music in the living room",
    "who won the match yesterday",
]


class Probe:
    """Publishes transcripts and records publish -> intent latencies by id: a publisher and a
    subscriber on connections of their own, or (``shared``) one client doing both."""

    def __init__(self, port: int, no_delay: bool, shared: bool = False) -> None:
        self.sent: dict[str, float] = {}
        self.latency_ms: dict[str, float] = {}
        self.agent_ms: dict[str, float] = {}  # the agent's own receipt -> result time
        self.lock = threading.Lock()
        self.done = threading.Condition(self.lock)
        self.client = subscribed_client(
            port, "bench-probe", self._on_intent, [f"edge/{SITE}/intent"], no_delay=no_delay
        )
        self.publisher = self.client if shared else _publisher(port, no_delay)

    def close(self) -> None:
        for client in {id(c): c for c in (self.client, self.publisher)}.values():
            client.disconnect()
            client.loop_stop()

    def _on_intent(self, _c: Any, _u: Any, msg: paho.MQTTMessage) -> None:
        now = time.perf_counter()
        data = json.loads(msg.payload)
        ident = data["id"]
        with self.lock:
            self.agent_ms[ident] = float(data["latency_ms"])
            started = self.sent.get(ident)
            if started is not None and ident not in self.latency_ms:
                self.latency_ms[ident] = (now - started) * 1000.0
                self.done.notify_all()

    def send(self, ident: str, text: str) -> None:
        payload = json.dumps({"text": text, "id": ident})
        with self.lock:
            self.sent[ident] = time.perf_counter()
        self.publisher.publish(f"edge/{SITE}/transcript", payload, qos=1)

    def wait_all(self, ids: list[str], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self.lock:
            while not all(i in self.latency_ms for i in ids):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.done.wait(left)
        return True


def _publisher(port: int, no_delay: bool) -> paho.Client:
    """A plain paho publisher (MQTT 5, 1000 in flight); TCP_NODELAY only when asked."""
    client_id = f"bench-publisher-{time.monotonic_ns()}"
    client = paho.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=paho.MQTTv5)
    client.max_inflight_messages_set(1000)
    client.connect("127.0.0.1", port)
    if no_delay:
        nodelay(client)
    client.loop_start()
    return client


def run_rate(probe: Probe, rate: float, seconds: float, tag: str, agent_pid: int) -> dict[str, Any]:
    count = int(rate * seconds)
    cpu_before = cpu_seconds(agent_pid)
    ids = [f"{tag}-{i}" for i in range(count)]
    start = time.perf_counter()
    for i, ident in enumerate(ids):
        due = start + i / rate
        delay = due - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        probe.send(ident, TEXTS[i % len(TEXTS)])
    complete = probe.wait_all(ids, timeout=60)
    cpu_ms = (cpu_seconds(agent_pid) - cpu_before) * 1000 / max(count, 1)
    values = [probe.latency_ms[i] for i in ids if i in probe.latency_ms]
    stats = percentiles(values)
    inside = percentiles([probe.agent_ms[i] for i in ids if i in probe.agent_ms])
    return {"rate": rate, "sent": count, "answered": len(values), "complete": complete, **stats,
            "agent_p50": inside["p50"], "agent_p99": inside["p99"], "agent_cpu_ms_per_msg": round(cpu_ms, 3),
            "max": round(max(values), 3) if values else 0.0, "values": values}


def broker_baseline(port: int, rate: float, count: int, no_delay: bool, shared: bool) -> dict[str, float]:
    """Publish -> receive through mosquitto alone (no agent), with the setup's clients: the floor
    under every figure above."""
    seen: dict[int, float] = {}
    sent: dict[int, float] = {}
    done = threading.Event()

    def on_message(_c: Any, _u: Any, msg: paho.MQTTMessage) -> None:
        seen[int(msg.payload)] = time.perf_counter()
        if len(seen) == count:
            done.set()

    client = subscribed_client(port, "bench-baseline", on_message, ["bench/echo"], no_delay=no_delay)
    publisher = client if shared else _publisher(port, no_delay)
    time.sleep(0.3)
    start = time.perf_counter()
    for i in range(count):
        delay = start + i / rate - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        sent[i] = time.perf_counter()
        publisher.publish("bench/echo", str(i), qos=1)
    done.wait(30)
    for c in {id(c): c for c in (client, publisher)}.values():
        c.disconnect()
        c.loop_stop()
    return percentiles([(seen[i] - sent[i]) * 1000 for i in seen])


def run_burst(probe: Probe, count: int) -> dict[str, Any]:
    ids = [f"burst-{i}" for i in range(count)]
    start = time.perf_counter()
    for i, ident in enumerate(ids):
        probe.send(ident, TEXTS[i % len(TEXTS)])
    complete = probe.wait_all(ids, timeout=120)
    with probe.lock:
        ends = [probe.sent[i] + probe.latency_ms[i] / 1000 for i in ids if i in probe.latency_ms]
    answered = len(ends)
    if not ends:  # --burst 0, or nothing answered
        return {"sent": count, "answered": 0, "complete": complete, "throughput_msg_s": 0.0}
    last = max(ends)
    return {"sent": count, "answered": answered, "complete": complete,
            "throughput_msg_s": round(answered / (last - start), 1)}


def start_agent(port: int, workdir: Path, cpu: int) -> subprocess.Popen[bytes]:
    config = {
        "site_id": SITE,
        "mqtt": {"port": port, "max_inflight": 1000},
        "pipeline": {"stats_interval_s": 0, "queue_size": 1024},
        # a fresh dedup/outbox state per run: the bench's ids repeat from run to run
        "reliability": {"state_dir": str(workdir / "state")},
        "home": {"areas": ["Kitchen", "Bedroom", "Hallway", "Living Room"],
                 "entities": [{"name": "Kitchen Light", "domain": "light", "area": "Kitchen"},
                              {"name": "Blinds", "domain": "cover", "area": "Bedroom"},
                              {"name": "Vacuum", "domain": "vacuum"}],
                 "lists": ["Shopping List"]},
    }
    path = workdir / "agent.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    command = [sys.executable, "-m", "edge_agent", "run", "--config", str(path)]
    if shutil.which("taskset"):
        command = ["taskset", "-c", str(cpu), *command]
    env = dict(os.environ, PYTHONPATH=str(REPO))
    log = (workdir / "agent.log").open("wb")
    return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=REPO)


def wait_online(port: int, timeout: float = 60) -> None:
    got = threading.Event()
    client = paho.Client(CallbackAPIVersion.VERSION2, client_id="bench-status", protocol=paho.MQTTv5)
    client.on_message = lambda _c, _u, m: got.set() if m.payload == b"online" else None
    client.connect("127.0.0.1", port)
    client.subscribe(f"edge/{SITE}/status", qos=1)
    client.loop_start()
    ok = got.wait(timeout)
    client.disconnect()
    client.loop_stop()
    if not ok:
        raise SystemExit("bench: the agent did not come online")


# setup name -> (mosquitto config lines, whether the bench's clients set TCP_NODELAY, whether one
# client both publishes and subscribes)
_BROKER_BASE = ["allow_anonymous true", "persistence false", "max_queued_messages 100000",
                "max_inflight_messages 0"]
SETUPS: dict[str, tuple[list[str], bool, bool]] = {
    "stock": (_BROKER_BASE, False, False),
    "nodelay": ([*_BROKER_BASE, "set_tcp_nodelay true"], True, False),
    "stock-shared": (_BROKER_BASE, False, True),
}


_SETUP_WORDS = {
    "stock": "stock mosquitto, stock paho publisher and subscriber (no socket options)",
    "nodelay": "mosquitto, publisher and subscriber with TCP_NODELAY",
    "stock-shared": "stock mosquitto, one stock paho client that publishes and subscribes",
}


def write_cdf(results: list[dict[str, Any]], out: Path) -> str:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib not installed: no PNG (pip install matplotlib)"
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for result in results:
        values = sorted(result["values"])
        if not values:
            continue
        ys = [(i + 1) / len(values) for i in range(len(values))]
        style = "-" if result["setup"] == "stock" else "--"
        label = f"{result['setup']} {result['rate']:g} msg/s (p99 {result['p99']:.2f} ms)"
        ax.plot(values, ys, style, label=label)
    ax.set_xscale("log")
    ax.set_xlabel("publish -> intent latency (ms, log scale)")
    ax.set_ylabel("fraction of transcripts")
    for x in (2, 5):
        ax.axvline(x, color="grey", linestyle=":", linewidth=1)
    ax.set_title("edge-agent end-to-end latency through mosquitto (agent on one core)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    return str(out)


def run_setup(setup: str, args: argparse.Namespace) -> dict[str, Any]:
    """One broker + agent: the rates, the burst and the broker-alone baseline."""
    lines, no_delay, shared = SETUPS[setup]
    workdir = Path(tempfile.mkdtemp(prefix=f"edge-bench-{setup}-"))
    broker = Mosquitto(lines, workdir=workdir).start()
    agent = start_agent(broker.port, workdir, args.agent_cpu)
    try:
        wait_online(broker.port)
        probe = Probe(broker.port, no_delay, shared)
        run_rate(probe, 50, 2, "warmup", agent.pid)
        jitter_probe = wakeup_jitter(args.seconds * len(args.rates), cpu=args.agent_cpu)
        results = [run_rate(probe, rate, args.seconds, f"r{rate:g}", agent.pid) for rate in args.rates]
        jitter = jitter_result(jitter_probe, timeout=120)
        burst = run_burst(probe, args.burst)
        baseline = broker_baseline(broker.port, 200, int(200 * min(args.seconds, 5)), no_delay, shared)
        probe.close()
    finally:
        agent.terminate()
        agent.wait(30)
        broker.close()
    for r in results:
        r["setup"] = setup
    return {"setup": setup, "results": results, "burst": burst, "broker_baseline_200": baseline,
            "loadavg": os.getloadavg()[0], "wakeup_late_ms": {"p50": jitter[0], "p99": jitter[1]}}


def print_setup(run: dict[str, Any]) -> None:
    results, burst = run["results"], run["burst"]
    baseline, jitter = run["broker_baseline_200"], run["wakeup_late_ms"]
    print(f"\n== {run['setup']}: {_SETUP_WORDS[run['setup']]}")
    print(f"{'rate msg/s':>10} {'sent':>6} {'answered':>9} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} "
          f"{'max ms':>8} {'agent p50':>10} {'agent p99':>10} {'agent CPU ms/msg':>17}")
    for r in results:
        print(f"{r['rate']:>10g} {r['sent']:>6} {r['answered']:>9} {r['p50']:>8.3f} {r['p95']:>8.3f} "
              f"{r['p99']:>8.3f} {r['max']:>8.3f} {r['agent_p50']:>10.3f} {r['agent_p99']:>10.3f} "
              f"{r['agent_cpu_ms_per_msg']:>17.3f}")
    print(f"broker alone (no agent), 200 msg/s: p50 {baseline['p50']:.3f} ms, p95 {baseline['p95']:.3f} ms, "
          f"p99 {baseline['p99']:.3f} ms")
    print(f"load average: {run['loadavg']:.2f} on {os.cpu_count()} CPUs; 1 ms sleep on the agent's CPU "
          f"woke late by p50 {jitter['p50']:.3f} ms, p99 {jitter['p99']:.3f} ms")
    print(f"throughput ceiling: {burst['throughput_msg_s']} msg/s measured "
          f"({burst['answered']}/{burst['sent']} answered in a burst); "
          f"CPU-bound ceiling of one core: {1000 / max(results[-1]['agent_cpu_ms_per_msg'], 1e-3):.0f} msg/s "
          f"(1000 / agent CPU ms per message at the highest rate)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rates", type=float, nargs="+", default=[50, 200, 1000])
    parser.add_argument("--seconds", type=float, default=10.0, help="duration of each rate")
    parser.add_argument("--burst", type=int, default=5000, help="messages of the throughput burst")
    parser.add_argument("--setups", nargs="+", choices=list(SETUPS), default=list(SETUPS))
    parser.add_argument("--agent-cpu", type=int, default=(os.cpu_count() or 1) - 1)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    others = set(os.sched_getaffinity(0)) - {args.agent_cpu}
    if others:
        os.sched_setaffinity(0, others)  # keep the load generator off the agent's core
    runs = [run_setup(setup, args) for setup in args.setups]
    print(f"agent pinned to CPU {args.agent_cpu}; {args.seconds:g} s per rate; QoS 1 both ways; "
          "the agent sets TCP_NODELAY on its own connections in every setup")
    for run in runs:
        print_setup(run)
    first = args.rates[0]
    print(f"\nat {first:g} msg/s: " + "; ".join(
        f"{run['setup']} p50 {run['results'][0]['p50']:.2f} ms, p99 {run['results'][0]['p99']:.2f} ms"
        for run in runs))
    all_results = [r for run in runs for r in run["results"]]
    print(f"CDF: {write_cdf(all_results, args.out / 'e2e_latency_cdf.png')}")
    summary = {
        run["setup"]: {
            **{k: v for k, v in run.items() if k != "results"},
            "results": [{k: v for k, v in r.items() if k != "values"} for r in run["results"]],
        }
        for run in runs
    }
    (args.out / "e2e_latency.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    complete = all(r["complete"] for r in all_results) and all(run["burst"]["complete"] for run in runs)
    return 0 if complete else 1


if __name__ == "__main__":
    raise SystemExit(main())
