"""``edge-agent demo``: the whole agent end to end on this machine, nothing set up by hand.

Starts a private mosquitto on a free loopback port, runs the agent (default bundle) in-process,
replays the sample transcripts and log lines of ``edge_agent/demo/``, prints every result as it
arrives, shuts the agent down cleanly and exits 0 when every transcript got its intent.
"""

from __future__ import annotations

import argparse
import base64
import json
import logging
import tempfile
import threading
import time
from importlib import resources
from typing import Any

import paho.mqtt.client as paho
import yaml
from paho.mqtt.enums import CallbackAPIVersion

from edge_agent.app import Agent
from edge_agent.config import Config, parse
from edge_agent.demo.broker import BrokerError, Mosquitto
from edge_agent.engines import Engines, build_engines
from edge_agent.errors import EdgeAgentError
from edge_agent.logsetup import add_log_format, configure_logging

__all__ = ["register"]

SITE = "demo"
_BROKER_CONFIG = (
    "allow_anonymous true",
    "persistence false",
    "set_tcp_nodelay true",  # no Nagle delays on loopback
    "max_queued_messages 100000",  # never drop queued inputs (mosquitto's default is 1000)
)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("demo", help="run the agent end to end with a private broker and samples")
    parser.add_argument("--bundle", metavar="DIR", help="model bundle (default: the shipped one)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for the results")
    add_log_format(parser)
    parser.set_defaults(func=_demo)


def _sample(name: str) -> list[str]:
    text = resources.files("edge_agent").joinpath("demo", name).read_text("utf-8")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def _home() -> dict[str, Any]:
    text = resources.files("edge_agent").joinpath("demo", "home.yaml").read_text("utf-8")
    data: dict[str, Any] = yaml.safe_load(text)
    return data


class _Printer:
    """Prints results as they arrive and counts intents by transcript id."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.intents: dict[str, dict[str, Any]] = {}
        self.dead_ids: set[str] = set()  # transcripts that went to the DLQ instead
        self.dlq = 0
        self.summaries = 0
        self.alerts = 0
        self.changed = threading.Condition()

    def on_message(self, _c: Any, _u: Any, msg: Any) -> None:
        kind = msg.topic[len(self.prefix) :]
        payload = bytes(msg.payload)
        line = self._line(kind, payload)
        if line:
            print(line, flush=True)
        with self.changed:
            self.changed.notify_all()

    def _line(self, kind: str, payload: bytes) -> str | None:
        if kind == "intent":
            data = json.loads(payload)
            self.intents[data["id"]] = data
            slots = {k: v["value"] for k, v in data["slots"].items()}
            intent = data["intent"] or "(not recognized)"
            shown = f"{intent} {slots}" if slots else intent
            return f"  intent   {data['text']!r:52} -> {shown}  [{data['latency_ms']:.1f} ms]"
        if kind.startswith("summary/"):
            self.summaries += 1
            return f"  summary  {kind[8:]:10} {json.loads(payload).get('headline', '')}"
        if kind.startswith("alert/"):
            self.alerts += 1
            data = json.loads(payload)
            return f"  ALERT    {kind[6:]:10} {data.get('headline') or data.get('line') or data}"
        if kind == "dlq":
            self.dlq += 1
            record = json.loads(payload)
            ident = _input_id(record)
            if ident is not None:
                self.dead_ids.add(ident)
            return f"  dlq      {record['reason']}"
        if kind == "status":
            return f"  status   {payload.decode()}"
        return None

    def wait(self, ids: set[str], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self.changed:
            while not ids <= set(self.intents) | self.dead_ids:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.changed.wait(left)
        return ids <= set(self.intents)


def _input_id(record: dict[str, Any]) -> str | None:
    """The transcript id inside a DLQ record, when the kept payload is a JSON transcript."""
    try:
        data = json.loads(base64.b64decode(record["payload_b64"]))
    except (ValueError, KeyError):
        return None
    ident = data.get("id") if isinstance(data, dict) else None
    return ident if isinstance(ident, str) else None


def _demo(args: argparse.Namespace) -> int:
    configure_logging(level=logging.WARNING, log_format=args.log_format)
    try:
        broker = Mosquitto(_BROKER_CONFIG).start()
    except BrokerError as exc:
        print(f"edge-agent demo: {exc}")
        return 1
    state = tempfile.TemporaryDirectory(prefix="edge-agent-demo-")
    try:
        config = parse(
            {
                "site_id": SITE,
                # a fresh state dir each run: the sample inputs have fixed ids, and a kept dedup
                # window would (rightly) answer a second run's replays as duplicates
                "reliability": {"state_dir": state.name},
                "mqtt": {"port": broker.port},
                "home": _home(),
                "model": {"bundle": args.bundle},
                "pipeline": {"stats_interval_s": 0, "tick_interval_s": 0.5},
                "logs": {"window_s": 5.0},
            }
        )
        print(f"broker   mosquitto on 127.0.0.1:{broker.port} (private, temporary)")
        try:
            engines = build_engines(config)
        except EdgeAgentError as exc:
            print(f"edge-agent demo: cannot load the model: {exc}")
            return 1
        print(f"model    {engines.model_id}")
        return _replay(config, engines, broker.port, args.timeout)
    finally:
        broker.close()
        state.cleanup()


def _replay(config: Config, engines: Engines, port: int, timeout: float) -> int:
    prefix = f"{config.topics.prefix}/{SITE}/"
    printer = _Printer(prefix)
    watcher = paho.Client(CallbackAPIVersion.VERSION2, client_id="edge-agent-demo-watcher")
    watcher.on_message = printer.on_message
    watcher.connect("127.0.0.1", port)
    watcher.subscribe(prefix + "#", qos=1)
    watcher.loop_start()
    agent = Agent(config, engines)
    agent.start()
    if not agent.wait_connected(15):
        print("edge-agent demo: the agent could not connect to the demo broker")
        agent.shutdown()
        return 1
    transcripts = _sample("transcripts.txt")
    print(f"replay   {len(transcripts)} transcripts, {len(_sample('logs.txt'))} log lines, 1 bad input\n")
    ids = set()
    for i, text in enumerate(transcripts):
        ident = f"demo-{i:02d}"
        ids.add(ident)
        watcher.publish(prefix + "transcript", json.dumps({"text": text, "id": ident}), qos=1)
    for source, lines in _log_batches().items():
        watcher.publish(prefix + f"logs/{source}", "\n".join(lines), qos=1)
    watcher.publish(prefix + "transcript", b"\xff\xfe\x00 not text", qos=1)
    complete = printer.wait(ids, timeout)
    time.sleep(0.5)
    agent.shutdown()  # closes the open log windows: their summaries are published now
    time.sleep(0.5)
    watcher.disconnect()
    watcher.loop_stop()
    recognized = sum(1 for i in ids if printer.intents.get(i, {}).get("intent"))
    print(
        f"\ndone     {len(printer.intents)}/{len(ids)} transcripts answered ({recognized} recognized), "
        f"{printer.summaries} summaries, {printer.alerts} alerts, {printer.dlq} dead letters"
    )
    if not complete:
        print("edge-agent demo: some transcripts got no intent (see the dead letters above)")
    return 0 if complete else 1


def _log_batches() -> dict[str, list[str]]:
    batches: dict[str, list[str]] = {}
    for line in _sample("logs.txt"):
        source, _, text = line.partition(" ")
        batches.setdefault(source, []).append(text)
    return batches
