"""Peak resident memory of ``edge-agent run`` with the default config, and what each part costs.

    nice .venv/bin/python bench/service_rss.py [--transcripts 1000] [--log-lines 1000] [--rate 200]
    nice .venv/bin/python bench/service_rss.py --parts      # also the per-part table
    nice .venv/bin/python bench/service_rss.py --bundle DIR # another model bundle (model.bundle)

Starts a private mosquitto (stock settings, anonymous, on a free loopback port) and
``edge-agent run --config C`` as a subprocess, where C is ``configs/default.yaml`` with only the
broker port and the state directory (a fresh temporary one) changed, and ``model.bundle`` set to
``--bundle`` when given. Once the agent is online it
publishes ``--transcripts`` transcripts and ``--log-lines`` log lines (one line per message, four
sources), both at ``--rate`` messages per second, QoS 1, and waits for every intent. It reads the
agent's ``VmRSS`` and ``VmHWM`` from ``/proc/<pid>/status`` when online, and after the last
intent; then it stops the agent with SIGTERM, which closes the open log windows, waits for the
summaries to account for every log line, and takes the whole life's peak from ``wait4``
(``ru_maxrss``). Target: peak <= 72 MB (stretch 64 MB).

``--parts`` runs, in a fresh interpreter per row, the agent's start-up one step at a time in the
order ``edge-agent run`` takes them and prints the resident memory each step adds (the
``docs/runtime.md`` table). A step is charged with everything it imports first, so the order
matters: numpy is charged to the step that brings it in, and not again.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import paho.mqtt.client as paho
import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from _probe import subscribed_client  # noqa: E402  (bench/)

from edge_agent.demo.broker import Mosquitto  # noqa: E402

TARGET_MB = 72.0
STRETCH_MB = 64.0
SOURCES = ("gateway", "zigbee", "kernel", "wifi")
TEXTS = (
    "turn on the kitchen light",
    "set the bedroom lamp to forty percent",
    "what is the temperature in the hallway",
    "start the vacuum",
    "add coffee to the shopping list",
    "set a timer for five minutes",
    "who won the match yesterday",
)
LOG_LINES = (
    "kernel: eth0: link up, 100Mbps, full duplex",
    "zigbee2mqtt: device 0x00124b0012 left the network",
    "systemd[1]: Started Daily apt download activities.",
    "wpa_supplicant: wlan0: CTRL-EVENT-DISCONNECTED reason=3",
    "sshd[812]: Failed password for invalid user admin from 10.0.0.7 port 51234 ssh2",
    "dockerd: container 4f2a health check failed: exit status 1",
)


def proc_status(pid: int) -> dict[str, float]:
    """``VmRSS`` and ``VmHWM`` of a live process, in MB."""
    out: dict[str, float] = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0]) / 1024
    return out


class Probe:
    """Publishes the inputs and counts what comes back (intents by id, summarized log lines)."""

    def __init__(self, port: int, site: str) -> None:
        self.base = f"edge/{site}"
        self.intents: set[str] = set()
        self.summary_lines = 0
        self.online = threading.Event()
        self.cond = threading.Condition()
        # a stock client (no TCP_NODELAY), subscribed at QoS 1 before the first publish
        self.client = subscribed_client(
            port, "rss-probe", self._on_message, [f"{self.base}/#"], no_delay=False
        )

    def _on_message(self, _c: Any, _u: Any, msg: paho.MQTTMessage) -> None:
        suffix = msg.topic.removeprefix(self.base + "/")
        with self.cond:
            if suffix == "status" and msg.payload == b"online":
                self.online.set()
            elif suffix == "intent":
                self.intents.add(str(json.loads(msg.payload)["id"]))
            elif suffix.startswith("summary/"):
                self.summary_lines += int(json.loads(msg.payload)["window"]["lines"])
            self.cond.notify_all()

    def publish(self, transcripts: int, lines: int, rate: float) -> None:
        """Transcripts and log lines interleaved, each stream at ``rate`` per second."""
        start = time.monotonic()
        for i in range(max(transcripts, lines)):
            if i < transcripts:
                body = json.dumps({"id": f"t{i}", "text": TEXTS[i % len(TEXTS)]})
                self.client.publish(f"{self.base}/transcript", body, qos=1)
            if i < lines:
                source = SOURCES[i % len(SOURCES)]
                self.client.publish(f"{self.base}/logs/{source}", LOG_LINES[i % len(LOG_LINES)], qos=1)
            delay = start + (i + 1) / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)

    def wait(self, done: Any, timeout: float) -> bool:
        with self.cond:
            return bool(self.cond.wait_for(done, timeout))

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def cpu_ticks(pid: int) -> int:
    """User + system CPU ticks of process ``pid`` so far (``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def wait_quiet(pid: int, quiet_s: float = 1.0, timeout: float = 30.0) -> bool:
    """Wait until process ``pid`` used no CPU for ``quiet_s`` (its inputs are all taken in).

    The intents arrive on the main MQTT session; the log lines go over the agent's bulk session,
    so all intents answered does not mean all log lines received, and a line still at the
    broker when the agent is stopped is left there for its next session (not summarized here)."""
    deadline = time.monotonic() + timeout
    last, since = cpu_ticks(pid), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.1)
        now = cpu_ticks(pid)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            return True
    return False


def agent_config(port: int, state_dir: Path, bundle: Path | None = None) -> dict[str, Any]:
    """``configs/default.yaml`` with this bench's broker port and a fresh state directory (and the
    bundle, when one is given)."""
    config: dict[str, Any] = yaml.safe_load((REPO / "configs" / "default.yaml").read_text(encoding="utf-8"))
    config["mqtt"]["port"] = port
    config["reliability"]["state_dir"] = str(state_dir)
    if bundle is not None:
        config["model"]["bundle"] = str(bundle.resolve())
    return config


def run_service(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="edge-rss-"))
    broker = Mosquitto(
        ["allow_anonymous true", "persistence false", "max_queued_messages 100000"], workdir=work
    ).start()
    config = agent_config(broker.port, work / "state", args.bundle)
    path = work / "agent.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("CREDENTIALS_DIRECTORY", "STATE_DIRECTORY")}
    env["PYTHONPATH"] = str(REPO)
    log = (work / "agent.log").open("wb")
    agent = subprocess.Popen(
        [sys.executable, "-m", "edge_agent", "run", "--config", str(path)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        cwd=REPO,
    )
    probe = Probe(broker.port, config["site_id"])
    result: dict[str, Any] = {"transcripts": args.transcripts, "log_lines": args.log_lines}
    try:
        if not probe.online.wait(120):
            raise SystemExit(
                "bench: the agent did not come online; log:\n"
                + (work / "agent.log").read_text(errors="replace")[-3000:]
            )
        time.sleep(1.0)  # settled: start-up threads done
        result["online"] = proc_status(agent.pid)
        probe.publish(args.transcripts, args.log_lines, args.rate)
        result["all_intents"] = probe.wait(lambda: len(probe.intents) >= args.transcripts, 120)
        wait_quiet(agent.pid)  # the log lines of the bulk session taken in too
        result["after_traffic"] = proc_status(agent.pid)
    finally:
        agent.terminate()  # SIGTERM: drain, close the log windows (summaries), exit
        _, status, usage = os.wait4(agent.pid, 0)
        agent.returncode = os.waitstatus_to_exitcode(status)
        log.close()
    # the summaries were published before the agent's offline status; they are here or lost
    result["all_log_lines_summarized"] = probe.wait(lambda: probe.summary_lines >= args.log_lines, 10)
    result["summarized_lines"] = probe.summary_lines
    result["answered"] = len(probe.intents)
    result["peak_mb"] = usage.ru_maxrss / 1024
    result["exit_code"] = agent.returncode
    probe.close()
    broker.close()
    return result


# -- the parts -------------------------------------------------------------------------------
# Each step runs after the ones above it, in one interpreter, in the order `edge-agent run` loads
# them (a library two parts share is charged to the first); the row is the RSS the step adds.
_STEPS: tuple[tuple[str, str], ...] = (
    ("Python interpreter, site, the cli module", "import edge_agent.commands.run"),
    (
        "numpy (its random, ma, polynomial and fft deferred)",
        "from edge_agent.commands._lean import lean_start; lean_start(openssl=False, malloc_arenas=2)",
    ),
    ("paho-mqtt, with socket (ssl and urllib.request deferred)", "import paho.mqtt.client"),
    ("structlog (asyncio deferred)", "import structlog"),
    (
        "pydantic, with its first model built (importlib.metadata for plugins)",
        "from pydantic import BaseModel\nclass _First(BaseModel):\n    x: int = 0",
    ),
    ("PyYAML", "import yaml"),
    (
        "config: edge_agent's config models, the file loaded",
        "from edge_agent.config import load; config = load(sys.argv[1])",
    ),
    (
        "sqlite3, sentencepiece, drain3 (outbox and dedup, tokenizer, log templates)",
        "import sqlite3, sentencepiece, drain3.drain",
    ),
    (
        "edge_agent's service modules (app, pipeline, transport, store, runtime, nlu, logs)",
        "import edge_agent.app, edge_agent.engines, edge_agent.runtime.chain, edge_agent.nlu.recognizer, "
        "edge_agent.logs.service, edge_agent.runtime.install",
    ),
    (
        "LiteRT's C library and its CPU environment",
        "from edge_agent.runtime import litert_c; litert_c._api()",
    ),
    (
        "engines: bundle check, the compiled graphs, tokenizer model, log service",
        "from edge_agent.engines import build_engines; engines = build_engines(config)",
    ),
    (
        "Agent: MQTT sessions, outbox and dedup databases, pipeline",
        "agent = edge_agent.app.Agent(config, engines)",
    ),
)

_PARTS_SCRIPT = """
import gc, sys
def rss():
    with open('/proc/self/status') as fh:
        for line in fh:
            if line.startswith('VmRSS:'):
                return int(line.split()[1]) / 1024
steps = {steps!r}
rows = []
for code in steps:
    exec(code)
    gc.collect()
    rows.append(rss())
print(rows)
"""


def run_parts(config_path: Path) -> list[tuple[str, float]]:
    """Resident MB added by each start-up step, in a fresh interpreter."""
    import ast

    env = {k: v for k, v in os.environ.items() if k not in ("CREDENTIALS_DIRECTORY", "STATE_DIRECTORY")}
    env["PYTHONPATH"] = str(REPO)
    script = _PARTS_SCRIPT.format(steps=[code for _, code in _STEPS])
    out = subprocess.run(
        [sys.executable, "-c", script, str(config_path)],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows: list[float] = ast.literal_eval(out.strip().splitlines()[-1])
    return [(name, rows[i] - (rows[i - 1] if i else 0.0)) for i, (name, _) in enumerate(_STEPS)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transcripts", type=int, default=1000)
    parser.add_argument("--log-lines", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=200.0, help="messages per second of each kind")
    parser.add_argument("--parts", action="store_true", help="also print what each start-up step costs")
    parser.add_argument(
        "--bundle", type=Path, metavar="DIR", help="model bundle to serve (default: the shipped one)"
    )
    args = parser.parse_args()
    result = run_service(args)
    bundle = f", bundle {args.bundle}" if args.bundle is not None else ""
    print(
        f"edge-agent run, configs/default.yaml (broker port and state dir changed{bundle}), "
        f"{args.transcripts} transcripts + {args.log_lines} log lines at {args.rate:g}/s each"
    )
    print(f"  online, idle:     VmRSS {result['online']['VmRSS']:.1f} MB")
    print(
        f"  after the inputs: VmRSS {result['after_traffic']['VmRSS']:.1f} MB, "
        f"VmHWM {result['after_traffic']['VmHWM']:.1f} MB"
    )
    print(
        f"  peak over its life (wait4 ru_maxrss, incl. shutdown): {result['peak_mb']:.1f} MB "
        f"(target <= {TARGET_MB:g}, stretch <= {STRETCH_MB:g})"
    )
    print(
        f"  intents {result['answered']}/{args.transcripts}, log lines summarized "
        f"{result['summarized_lines']}/{args.log_lines}, exit code {result['exit_code']}"
    )
    if args.parts:
        with tempfile.TemporaryDirectory(prefix="edge-rss-parts-") as tmp:
            path = Path(tmp) / "agent.yaml"
            config = agent_config(1883, Path(tmp) / "state", args.bundle)
            path.write_text(yaml.safe_dump(config), encoding="utf-8")
            parts = run_parts(path)
        built = sum(mb for _, mb in parts)
        online = result["online"]["VmRSS"]
        parts += [
            ("running: threads, both MQTT connections (online, idle)", online - built),
            (
                f"after {args.transcripts} transcripts and {args.log_lines} log lines",
                result["after_traffic"]["VmHWM"] - online,
            ),
        ]
        print("\npart (each step in a fresh interpreter after the ones above it) -> resident MB:")
        for name, mb in parts:
            print(f"  {mb:6.1f}  {name}")
        print(
            f"  {sum(mb for _, mb in parts):6.1f}  total (the service's VmHWM after the inputs: "
            f"{result['after_traffic']['VmHWM']:.1f})"
        )
    ok = result["all_intents"] and result["all_log_lines_summarized"] and result["exit_code"] == 0
    return 0 if ok and result["peak_mb"] <= TARGET_MB else 1


if __name__ == "__main__":
    raise SystemExit(main())
