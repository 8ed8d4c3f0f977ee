"""CPU quota and transcript latency of the real agent under a flood of log lines.

    nice .venv/bin/python bench/quota_flood.py [--modes single bulk] [--repeat 3] [--quota 0.5]
        [--rate 8000] [--seconds 30] [--lines-per-message 20] [--transcripts-per-s 10]

For each run: a private mosquitto on a free loopback port (``max_queued_messages 100000``,
``set_tcp_nodelay true``) and ``edge-agent run`` with ``runtime.cpu.quota`` on the shipped bundle
and a fresh state directory. Mode ``single`` runs the agent with ``mqtt.bulk_session: false`` (log
lines and transcripts share one MQTT session), ``bulk`` with ``mqtt.bulk_session: true`` (log
topics on a second session), ``baseline`` runs the agent of another source tree
(``--baseline-tree``, e.g. a checkout of the commit before a change) with that tree's defaults.
The modes alternate within one invocation (``--repeat`` runs of each) so they see the same
machine; medians per mode close the report.

While ``--publishers`` processes flood ``{prefix}/{site}/logs/<source>`` with ``--rate`` lines per
second (QoS 1, ``--lines-per-message`` lines per message as a forwarder batching a source's lines
would send them, spread over ``--sources`` sources so the per-source rate limit is not what is
measured), a separate client publishes transcripts (QoS 1, unique ids) and times publish -> intent
arrival. Printed per run: the agent's CPU (user + system from /proc/PID/stat) in each 10 s window
against the quota (target: within +-10%), transcript latency p50/p95/p99 seen by the client and
inside the agent (target: client p99 <= 50 ms), what happened to the log lines (sent, summarized,
DLQ records, never processed: dropped by the broker's queue limit or still queued when the bench
gave up after ``--drain-s``), how often the agent's queue pushed back on a network thread, and how
late a 1 ms sleep woke on this machine meanwhile (scheduler noise from other jobs).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
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

from _probe import cpu_seconds, jitter_result, subscribed_client, wakeup_jitter  # noqa: E402  (bench/)

from edge_agent.config import MqttConfig  # noqa: E402
from edge_agent.demo.broker import Mosquitto  # noqa: E402
from edge_agent.pipeline.stats import percentiles  # noqa: E402

SITE = "flood"
WINDOW_S = 10.0  # CPU is reported per window of this many seconds
LOG_WINDOW_S = 5.0  # the agent's log summary window
TEXTS = [
    "turn on the kitchen light",
    "set the bedroom blinds to forty percent",
    "what is the temperature in the hallway",
    "start the vacuum",
    "add coffee to the shopping list",
    "turn off the hallway light",
]
# what a gateway's daemons say all day long: mostly routine, some warnings, no critical lines
# (an alert per line would measure the alert path instead)
LOG_TEMPLATES = [
    "kernel: [{a}.{b:03d}] usb 1-1: new high-speed USB device number {c} using xhci_hcd",
    "systemd[1]: Started Session {c} of user pi.",
    "zigbee2mqtt: MQTT publish: topic 'zigbee2mqtt/sensor_{c}', payload '{{\"temperature\":21.{b}}}'",
    "wpa_supplicant[812]: wlan0: CTRL-EVENT-SIGNAL-CHANGE above=1 signal=-{c} noise=-92 txrate=65000",
    "dnsmasq-dhcp[733]: DHCPACK(wlan0) 192.168.4.{c} aa:bb:cc:dd:ee:{b:02x} sensor-{c}",
    "mosquitto[611]: New client connected from 192.168.4.{c}:{a} as sensor-{c} (p2, c1, k60).",
    "zigbee2mqtt: warning: device 0x00124b00{a:04x} did not answer ping, retry {b}",
    "kernel: [{a}.{b:03d}] eth0: link is up, 100Mbps, full duplex, lpa 0x{a:04x}",
]


# -- flood worker (a separate process, so its GIL does not disturb the transcript client) ------
def flood_worker(port: int, rate: float, seconds: float, sources: list[str], per_msg: int, seed: int) -> None:
    client = paho.Client(CallbackAPIVersion.VERSION2, client_id=f"flood-{seed}", protocol=paho.MQTTv5)
    client.max_inflight_messages_set(100)
    client.max_queued_messages_set(0)
    client.connect("127.0.0.1", port)
    client.loop_start()
    msg_rate = rate / per_msg
    start = time.monotonic()
    sent_msgs = 0
    n = seed * 7919
    while (elapsed := time.monotonic() - start) < seconds:
        due = int(elapsed * msg_rate)
        while sent_msgs < due:
            lines = []
            for _ in range(per_msg):
                n += 1
                template = LOG_TEMPLATES[n % len(LOG_TEMPLATES)]
                lines.append(template.format(a=n % 9973, b=n % 251, c=n % 97))
            topic = f"edge/{SITE}/logs/{sources[sent_msgs % len(sources)]}"
            client.publish(topic, "\n".join(lines), qos=1)
            sent_msgs += 1
        time.sleep(0.002)
    took = time.monotonic() - start
    time.sleep(1.0)  # the last PUBACKs
    client.disconnect()
    client.loop_stop()
    print(json.dumps({"messages": sent_msgs, "lines": sent_msgs * per_msg, "seconds": took}), flush=True)


# -- measuring side ----------------------------------------------------------------------------
class Probe:
    """Publishes transcripts; records latencies, summaries, DLQ records and the last stats."""

    def __init__(self, port: int) -> None:
        self.lock = threading.Lock()
        self.sent: dict[str, float] = {}
        self.latency_ms: dict[str, float] = {}
        self.agent_ms: dict[str, float] = {}
        self.summary_lines = 0
        self.summary_copies = 0
        self.windows: set[tuple[Any, float, float]] = set()
        self.dlq = 0
        self.alerts = 0
        self.stats: dict[str, Any] = {}
        self.online = threading.Event()
        base = f"edge/{SITE}"
        topics = [f"{base}/intent", f"{base}/summary/+", f"{base}/alert/+", f"{base}/dlq",
                  f"{base}/stats", f"{base}/status"]
        self.client = subscribed_client(port, "flood-probe", self._on_message, topics)

    def _on_message(self, _c: Any, _u: Any, msg: paho.MQTTMessage) -> None:
        now = time.perf_counter()
        kind = msg.topic.split("/")[2]
        with self.lock:
            if kind == "intent":
                data = json.loads(msg.payload)
                ident = str(data["id"])
                started = self.sent.get(ident)
                if started is not None and ident not in self.latency_ms:
                    self.latency_ms[ident] = (now - started) * 1000.0
                    self.agent_ms[ident] = float(data["latency_ms"])
            elif kind == "summary":
                data = json.loads(msg.payload)
                window = (data.get("source"), data["window"]["start"], data["window"]["end"])
                if window in self.windows:  # the same summary again (a result re-sent from the outbox)
                    self.summary_copies += 1
                else:
                    self.windows.add(window)
                    self.summary_lines += int(data["window"]["lines"])
            elif kind == "alert":
                self.alerts += 1
            elif kind == "dlq":
                self.dlq += 1
            elif kind == "stats":
                self.stats = json.loads(msg.payload)
            elif kind == "status" and msg.payload == b"online":
                self.online.set()

    def send(self, ident: str, text: str) -> None:
        with self.lock:
            self.sent[ident] = time.perf_counter()
        self.client.publish(f"edge/{SITE}/transcript", json.dumps({"text": text, "id": ident}), qos=1)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def agent_config(port: int, work: Path, args: argparse.Namespace, mode: str) -> Path:
    mqtt: dict[str, Any] = {"port": port}
    if mode != "baseline" and "bulk_session" in MqttConfig.model_fields:
        mqtt["bulk_session"] = mode == "bulk"
    elif mode == "bulk":
        raise SystemExit("bench: this tree has no mqtt.bulk_session; run --modes single")
    config = {
        "site_id": SITE,
        "mqtt": mqtt,
        "runtime": {"cpu": {"quota": args.quota}},
        "pipeline": {"stats_interval_s": 5},
        "logs": {"window_s": LOG_WINDOW_S},
        "reliability": {"state_dir": str(work / "state")},  # fresh: no dedup ids or outbox rows
        "home": {"areas": ["Kitchen", "Bedroom", "Hallway"],
                 "entities": [{"name": "Kitchen Light", "domain": "light", "area": "Kitchen"},
                              {"name": "Hallway Light", "domain": "light", "area": "Hallway"},
                              {"name": "Blinds", "domain": "cover", "area": "Bedroom"},
                              {"name": "Vacuum", "domain": "vacuum"}],
                 "lists": ["Shopping List"]},
    }
    path = work / "agent.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def start_floods(port: int, args: argparse.Namespace) -> list[subprocess.Popen[str]]:
    sources = [f"gw-{i:02d}" for i in range(args.sources)]
    procs = []
    for k in range(args.publishers):
        mine = sources[k :: args.publishers] or sources
        command = [sys.executable, __file__, "--flood-worker", str(port), str(args.rate / args.publishers),
                   str(args.seconds), ",".join(mine), str(args.lines_per_message), str(k + 1)]
        procs.append(subprocess.Popen(command, stdout=subprocess.PIPE, text=True))
    return procs


def run_mode(mode: str, tag: str, args: argparse.Namespace) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix=f"edge-flood-{mode}-"))
    broker = Mosquitto(["allow_anonymous true", "persistence false", "max_queued_messages 100000",
                        "max_inflight_messages 0", "set_tcp_nodelay true"], workdir=work).start()
    tree = args.baseline_tree if mode == "baseline" else REPO  # the agent's code
    env = dict(os.environ, PYTHONPATH=str(tree))
    config = agent_config(broker.port, work, args, mode)
    with (work / "agent.log").open("wb") as log:
        agent = subprocess.Popen(
            [sys.executable, "-m", "edge_agent", "run", "--config", str(config)],
            stdout=log, stderr=subprocess.STDOUT, env=env, cwd=tree,
        )
    probe = Probe(broker.port)
    try:
        if not probe.online.wait(120):
            raise SystemExit(f"bench: the agent did not come online; see {work / 'agent.log'}")
        for i in range(10):  # warm-up (first model calls, allocator)
            probe.send(f"warm-{i}", TEXTS[i % len(TEXTS)])
            time.sleep(0.05)
        time.sleep(1.0)
        return measure(mode, tag, args, probe, agent, broker.port)
    finally:
        probe.close()
        if agent.poll() is None:
            agent.send_signal(signal.SIGTERM)
            try:
                agent.wait(60)
            except subprocess.TimeoutExpired:
                agent.kill()
        broker.close()


def measure(
    mode: str, tag: str, args: argparse.Namespace, probe: Probe, agent: subprocess.Popen[bytes], port: int
) -> dict[str, Any]:
    floods = start_floods(port, args)
    jitter = wakeup_jitter(args.seconds)  # at the bench's niceness: what the scheduler alone adds
    start = time.monotonic()
    cpu_marks = [cpu_seconds(agent.pid)]
    wall_marks = [start]
    ids: list[str] = []
    period = 1.0 / args.transcripts_per_s
    i = 0
    while (now := time.monotonic()) - start < args.seconds:
        if now - wall_marks[-1] >= WINDOW_S - 0.05:
            cpu_marks.append(cpu_seconds(agent.pid))
            wall_marks.append(time.monotonic())
        ident = f"{tag}-{i}"
        ids.append(ident)
        probe.send(ident, TEXTS[i % len(TEXTS)])
        i += 1
        delay = start + i * period - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    if time.monotonic() - wall_marks[-1] >= WINDOW_S - 0.05:
        cpu_marks.append(cpu_seconds(agent.pid))
        wall_marks.append(time.monotonic())
    windows = [(cpu_marks[k + 1] - cpu_marks[k]) / (wall_marks[k + 1] - wall_marks[k])
               for k in range(len(cpu_marks) - 1)]
    late = jitter_result(jitter, timeout=60)
    with probe.lock:
        summarized_in_flood = probe.summary_lines
    sent_lines = 0
    flood_rate = 0.0
    for proc in floods:
        out, _ = proc.communicate(timeout=120)
        report = json.loads(out.strip().splitlines()[-1])
        sent_lines += int(report["lines"])
        flood_rate += report["lines"] / report["seconds"]
    # let the agent work off what is queued (at the quota), then stop it: open windows are flushed
    deadline = time.monotonic() + args.drain_s
    last = -1
    while time.monotonic() < deadline:
        time.sleep(LOG_WINDOW_S + 1.0)  # summaries come once per window: wait a whole one
        with probe.lock:
            done = probe.summary_lines + probe.dlq * args.lines_per_message
        if done >= sent_lines or done == last:
            break
        last = done
    wait_results = time.monotonic() + 5
    while time.monotonic() < wait_results and not all(x in probe.latency_ms for x in ids):
        time.sleep(0.1)
    with probe.lock:
        stats_end = dict(probe.stats)
    agent.send_signal(signal.SIGTERM)
    agent.wait(60)
    time.sleep(1.0)  # the flushed summaries reach the probe
    with probe.lock:
        latencies = [probe.latency_ms[x] for x in ids if x in probe.latency_ms]
        inside = [probe.agent_ms[x] for x in ids if x in probe.agent_ms]
        summarized, dlq, alerts = probe.summary_lines, probe.dlq, probe.alerts
        copies = probe.summary_copies
    queue = stats_end.get("queue", {})
    return {
        "mode": mode,
        "cpu_windows": [round(w, 3) for w in windows],
        "transcripts_sent": len(ids),
        "transcripts_answered": len(latencies),
        "client_ms": {**percentiles(latencies), "max": round(max(latencies), 3) if latencies else 0.0},
        "agent_ms": percentiles(inside),
        "lines_sent": sent_lines,
        "flood_lines_per_s": round(flood_rate),
        "lines_summarized": summarized,
        "dlq_records": dlq,
        "alerts": alerts,
        "summary_copies": copies,
        "outbox": {k: int(v) for k, v in (stats_end.get("counters") or {}).items()
                   if k in ("outbox_timeouts", "outbox_stored", "outbox_flushed")},
        "lines_not_processed": max(0, sent_lines - summarized - dlq * args.lines_per_message),
        "backpressure_waits": int(queue.get("backpressure_waits", 0)),
        "queue_high_water": int(queue.get("high_water", 0)),
        "summarized_by_flood_end": summarized_in_flood,
        "governor": (stats_end.get("runtime") or {}).get("cpu"),
        "wakeup_late_ms": {"p50": round(late[0], 3), "p99": round(late[1], 3), "max": round(late[2], 3)},
        "loadavg": round(os.getloadavg()[0], 2),
    }


def print_report(results: list[dict[str, Any]], args: argparse.Namespace) -> None:
    print(f"\nquota {args.quota} cores; flood {args.rate:g} lines/s for {args.seconds:g} s "
          f"({args.lines_per_message} line(s) per message, {args.sources} sources, {args.publishers} "
          f"publisher processes, QoS 1); transcripts {args.transcripts_per_s:g}/s (QoS 1)")
    lo, hi = args.quota * 0.9, args.quota * 1.1
    for r in results:
        tag = f"[{r['mode']} #{r['run']}]"
        cpu = ", ".join(f"{w:.3f}" for w in r["cpu_windows"])
        ok = all(lo <= w <= hi for w in r["cpu_windows"])
        c, a, j = r["client_ms"], r["agent_ms"], r["wakeup_late_ms"]
        print(f"\n{tag} agent CPU per {WINDOW_S:g} s window: {cpu} cores "
              f"(quota {args.quota} +-10%: {'met' if ok else 'NOT met'})")
        print(f"{tag} transcripts {r['transcripts_answered']}/{r['transcripts_sent']} answered; "
              f"client p50/p95/p99/max {c['p50']:.1f}/{c['p95']:.1f}/{c['p99']:.1f}/{c['max']:.1f} ms "
              f"(p99 <= 50 ms: {'met' if c['p99'] <= 50 else 'NOT met'}); inside the agent "
              f"p50/p95/p99 {a['p50']:.1f}/{a['p95']:.1f}/{a['p99']:.1f} ms")
        print(f"{tag} log lines sent {r['lines_sent']} ({r['flood_lines_per_s']}/s reached), "
              f"summarized {r['lines_summarized']} ({r['summarized_by_flood_end']} by the end of the "
              f"flood), DLQ records {r['dlq_records']}, alerts {r['alerts']}, summaries received twice "
              f"{r['summary_copies']} (outbox {r['outbox']}), "
              f"not processed {r['lines_not_processed']}; queue backpressure waits "
              f"{r['backpressure_waits']}, high water {r['queue_high_water']}")
        print(f"{tag} machine: load average {r['loadavg']}, a 1 ms sleep at the bench's niceness woke "
              f"late by p50/p99/max {j['p50']:.2f}/{j['p99']:.2f}/{j['max']:.1f} ms")
    modes = sorted({r["mode"] for r in results}, key=[r["mode"] for r in results].index)
    print(f"\nmedians over the runs of each mode ({args.repeat} each, modes alternating):")
    for mode in modes:
        runs = [r for r in results if r["mode"] == mode]
        cpu = median([w for r in runs for w in r["cpu_windows"]])
        cpu_lo = min(w for r in runs for w in r["cpu_windows"])
        cpu_hi = max(w for r in runs for w in r["cpu_windows"])
        p = {q: median([r["client_ms"][q] for r in runs]) for q in ("p50", "p95", "p99")}
        inside = median([r["agent_ms"]["p99"] for r in runs])
        print(f"  {mode:>6}: CPU per window median {cpu:.3f} (min {cpu_lo:.3f}, max {cpu_hi:.3f}) cores; "
              f"client p50/p95/p99 {p['p50']:.1f}/{p['p95']:.1f}/{p['p99']:.1f} ms; "
              f"agent p99 {inside:.1f} ms; lines not processed "
              f"{median([float(r['lines_not_processed']) for r in runs]):.0f}")


def median(values: list[float]) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--flood-worker":
        port, rate, seconds, sources, per_msg, seed = sys.argv[2:8]
        flood_worker(int(port), float(rate), float(seconds), sources.split(","), int(per_msg), int(seed))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modes", nargs="+", choices=["baseline", "single", "bulk"],
                        default=["single", "bulk"])
    parser.add_argument("--baseline-tree", type=Path, default=None,
                        help="mode baseline: run the agent from this source tree (e.g. a checkout of "
                        "the commit before a change), with its own defaults")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each mode (alternating)")
    parser.add_argument("--quota", type=float, default=0.5, help="runtime.cpu.quota of the agent")
    parser.add_argument("--rate", type=float, default=8000, help="log lines per second, all publishers")
    parser.add_argument("--seconds", type=float, default=30, help="flood duration")
    parser.add_argument("--lines-per-message", type=int, default=20,
                        help="log lines per MQTT message (a forwarder batching a source's lines)")
    parser.add_argument("--sources", type=int, default=32, help="log sources (topic levels)")
    parser.add_argument("--publishers", type=int, default=2, help="flood publisher processes")
    parser.add_argument("--transcripts-per-s", type=float, default=10)
    parser.add_argument("--drain-s", type=float, default=90, help="how long to wait for queued lines")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "quota_flood.json")
    args = parser.parse_args()
    if args.seconds < WINDOW_S:
        parser.error(f"--seconds must be at least {WINDOW_S:g}: CPU is reported per {WINDOW_S:g} s window")
    if "baseline" in args.modes and args.baseline_tree is None:
        parser.error("--modes baseline needs --baseline-tree")
    print(f"load average at the start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs", flush=True)
    results = []
    for run in range(1, args.repeat + 1):
        for mode in args.modes:
            result = run_mode(mode, f"{mode}{run}", args)
            result["run"] = run
            results.append(result)
            c = result["client_ms"]
            print(f"{mode} #{run}: client p99 {c['p99']:.1f} ms, CPU {result['cpu_windows']}", flush=True)
    print_report(results, args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "results": results},
                                   indent=2), encoding="utf-8")
    return 0 if all(r["transcripts_answered"] == r["transcripts_sent"] for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
