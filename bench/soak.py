"""Soak test: a steady mixed load through a real mosquitto for a configurable time.

    .venv/bin/python bench/soak.py --rate 100 --seconds 60          # CI-sized
    .venv/bin/python bench/soak.py --rate 200 --seconds 3600        # by hand

Starts a private mosquitto on a free loopback port and ``edge-agent run`` (default bundle) as a
subprocess. Publishes transcripts (QoS 1, unique ids) at ``--rate`` per second, log lines at
``--log-rate`` per second, and every ``--bad-every``-th transcript as invalid UTF-8 (which must
become a DLQ record). Samples the agent's RSS every second. At the end it waits for stragglers
and prints: sent / results / losses (must be 0) / duplicates, publish-to-intent p50/p95/p99,
DLQ records against bad inputs sent, log lines summarized against sent, RSS at start, end and
its growth. Writes ``<out>.json`` and ``<out>.png`` (latency percentiles, throughput and RSS over
time). Exit status 1 when anything was lost.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import paho.mqtt.client as paho
import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from _probe import subscribed_client  # noqa: E402  (bench/)

from edge_agent.demo.broker import Mosquitto  # noqa: E402

SITE = "soak"
TEXTS = [
    "turn on the kitchen light",
    "set the bedroom blinds to forty percent",
    "what is the temperature in the hallway",
    "start the vacuum",
    "add coffee to the shopping list",
    "set a timer for five minutes",
    "who won the match yesterday",
]
LOG_LINES = [
    "kernel: eth0: link up, 100Mbps, full duplex",
    "zigbee2mqtt: device 0x00124b0012 left the network",
    "systemd[1]: Started Daily apt download activities.",
    "wpa_supplicant: wlan0: CTRL-EVENT-DISCONNECTED reason=3",
]


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[k]


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


class Probe:
    """Publisher and collector of one soak run."""

    def __init__(self, port: int) -> None:
        self.t0 = time.monotonic()
        self.sent_at: dict[str, float] = {}
        self.latency: dict[str, tuple[float, float]] = {}  # id -> (arrival offset s, latency ms)
        self.copies: Counter[str] = Counter()
        self.dlq = 0
        self.summary_lines = 0
        self.lock = threading.Lock()
        # a stock client (no TCP_NODELAY), subscribed at QoS 1 before the first publish
        self.client = subscribed_client(
            port, "soak-probe", self._on_message, [f"edge/{SITE}/#"], no_delay=False
        )

    def _on_message(self, _c: Any, _u: Any, msg: paho.MQTTMessage) -> None:
        now = time.monotonic()
        suffix = msg.topic.removeprefix(f"edge/{SITE}/")
        with self.lock:
            if suffix == "intent":
                ident = str(json.loads(msg.payload)["id"])
                self.copies[ident] += 1
                sent = self.sent_at.get(ident)
                if sent is not None and ident not in self.latency:
                    self.latency[ident] = (now - self.t0, (now - sent) * 1000.0)
            elif suffix == "dlq":
                self.dlq += 1
            elif suffix.startswith("summary/"):
                self.summary_lines += int(json.loads(msg.payload)["window"]["lines"])

    def send_transcript(self, ident: str, text: str) -> None:
        with self.lock:
            self.sent_at[ident] = time.monotonic()
        self.client.publish(f"edge/{SITE}/transcript", json.dumps({"id": ident, "text": text}), qos=1)

    def send_raw(self, suffix: str, payload: bytes) -> None:
        self.client.publish(f"edge/{SITE}/{suffix}", payload, qos=1)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def start_agent(port: int, work: Path, window_s: float) -> Any:
    import os
    import subprocess

    config = {
        "site_id": SITE,
        "mqtt": {"host": "127.0.0.1", "port": port, "reconnect_min_s": 0.1, "reconnect_max_s": 1.0},
        "pipeline": {"stats_interval_s": 5, "queue_size": 1024},
        "logs": {"window_s": window_s},
    }
    cfg = work / "agent.yaml"
    cfg.write_text(yaml.safe_dump(config), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO), "STATE_DIRECTORY": str(work / "state")}
    log = (work / "agent.log").open("wb")
    return subprocess.Popen(
        [sys.executable, "-m", "edge_agent", "run", "--config", str(cfg)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        cwd=REPO,
    )


def drive(
    probe: Probe, args: argparse.Namespace, pid: int
) -> tuple[list[tuple[float, float]], int, int, int]:
    """Publish for ``args.seconds``; returns RSS samples, transcripts sent, bad sent, log lines sent."""
    rss: list[tuple[float, float]] = []
    sent = bad = lines = 0
    start = time.monotonic()
    next_sample = start
    period = 1.0 / args.rate
    log_every = max(1, round(args.rate / args.log_rate)) if args.log_rate > 0 else 0
    i = 0
    while (now := time.monotonic()) - start < args.seconds:
        if now >= next_sample:
            rss.append((now - probe.t0, rss_mb(pid)))
            next_sample += 1.0
        if args.bad_every and i % args.bad_every == args.bad_every - 1:
            probe.send_raw("transcript", b"\xff\xfe not utf-8 " + str(i).encode())
            bad += 1
        else:
            probe.send_transcript(f"k{i}", TEXTS[i % len(TEXTS)])
            sent += 1
        if log_every and i % log_every == 0:
            probe.send_raw("logs/soak-gw", LOG_LINES[i % len(LOG_LINES)].encode())
            lines += 1
        i += 1
        delay = start + i * period - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    return rss, sent, bad, lines


def plot(out: Path, probe: Probe, rss: list[tuple[float, float]], title: str) -> str:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib not installed: PNG skipped"
    buckets: dict[int, list[float]] = {}
    for at, ms in probe.latency.values():
        buckets.setdefault(int(at), []).append(ms)
    secs = sorted(buckets)
    fig, axes = plt.subplots(3, 1, figsize=(9, 9), sharex=True)
    for q, style in ((50, "-"), (95, "--"), (99, ":")):
        axes[0].plot(secs, [percentile(buckets[s], q) for s in secs], style, label=f"p{q}")
    axes[0].set_ylabel("publish -> intent (ms)")
    axes[0].set_yscale("log")
    axes[0].legend()
    axes[1].plot(secs, [len(buckets[s]) for s in secs])
    axes[1].set_ylabel("intents / s")
    axes[2].plot([t for t, _ in rss], [m for _, m in rss])
    axes[2].set_ylabel("agent RSS (MB)")
    axes[2].set_xlabel("time since start (s)")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
    return str(out)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rate", type=float, default=100.0, help="transcripts per second")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long to publish")
    parser.add_argument("--log-rate", type=float, default=20.0, help="log lines per second (0: none)")
    parser.add_argument("--bad-every", type=int, default=50, help="every Nth transcript is invalid (0: none)")
    parser.add_argument("--window-s", type=float, default=5.0, help="log summary window of the agent")
    parser.add_argument("--out", default=str(REPO / "bench" / "out" / "soak"), help="output path stem")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="edge-soak-"))
    broker = Mosquitto(
        ["allow_anonymous true", "persistence false", "max_queued_messages 1000000"], workdir=work
    ).start()
    agent = start_agent(broker.port, work, args.window_s)
    probe = Probe(broker.port)
    try:
        deadline = time.monotonic() + 120
        while not (work / "agent.log").read_text(errors="replace").count("mqtt.connected"):
            if time.monotonic() > deadline or agent.poll() is not None:
                print((work / "agent.log").read_text(errors="replace")[-3000:])
                return 2
            time.sleep(0.2)
        rss, sent, bad, lines = drive(probe, args, agent.pid)
        end = time.monotonic() + 60
        while time.monotonic() < end:
            with probe.lock:
                settled = len(probe.latency) >= sent and probe.dlq >= bad and probe.summary_lines >= lines
            if settled:
                break
            time.sleep(0.2)
        time.sleep(args.window_s + 1.0)  # the last log window closes
        rss.append((time.monotonic() - probe.t0, rss_mb(agent.pid)))
        alive = agent.poll() is None
    finally:
        probe.close()
        agent.terminate()
        agent.wait(60)
        broker.close()
    with probe.lock:
        lat = [ms for _, ms in probe.latency.values()]
        report = {
            "rate": args.rate,
            "seconds": args.seconds,
            "transcripts_sent": sent,
            "results": len(probe.latency),
            "losses": sent - len(probe.latency),
            "duplicate_results": sum(c - 1 for c in probe.copies.values() if c > 1),
            "latency_ms": {
                "p50": percentile(lat, 50),
                "p95": percentile(lat, 95),
                "p99": percentile(lat, 99),
                "max": max(lat) if lat else float("nan"),
            },
            "bad_sent": bad,
            "dlq_records": probe.dlq,
            "log_lines_sent": lines,
            "log_lines_summarized": probe.summary_lines,
            "log_losses": lines - probe.summary_lines,
            "rss_mb": {
                "start": rss[0][1],
                "end": rss[-1][1],
                "max": max(m for _, m in rss),
                "growth": rss[-1][1] - rss[0][1],
            },
            "agent_alive_at_end": alive,
        }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(report, indent=2))
    title = f"soak: {args.rate:g} transcripts/s for {args.seconds:g} s"
    report["png"] = plot(out.with_suffix(".png"), probe, rss, title)
    print(json.dumps(report, indent=2))
    lost = report["losses"] or report["log_losses"] or report["dlq_records"] != bad or not alive
    return 1 if lost else 0


if __name__ == "__main__":
    raise SystemExit(main())
