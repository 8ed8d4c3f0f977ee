"""Composition root: config -> engines -> pipeline -> transport; lifecycle and signals.

``Agent`` wires the parts; ``run_agent`` is what ``edge-agent run`` calls. The engines (intent
recognizer, log service) can be injected, which is how tests and the demo run the agent in-process.
``build_engines`` runs the model through the runtime (docs/runtime.md): the delegate preference
chain with fallback, the residency of the weights and the CPU quota of ``config.runtime``.
"""

from __future__ import annotations

import gc
import importlib
import logging
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, Protocol, TextIO

import structlog

from edge_agent.bridges.wyoming import wyoming_service
from edge_agent.config import Config
from edge_agent.ecosystem import Ecosystem
from edge_agent.errors import EdgeAgentError, TransportError
from edge_agent.messages import status as status_msg
from edge_agent.messages.topics import SiteTopics
from edge_agent.pipeline.bundle_command import BundleCommandHandler, bundle_route
from edge_agent.pipeline.core import Envelope, Outcome, Registry
from edge_agent.pipeline.dedup import Deduplicator, RateLimiter
from edge_agent.pipeline.handlers import (
    DeadLetters,
    IntentHandler,
    LogHandler,
    LogServiceLike,
    RecognizerLike,
    logs_route,
    transcript_route,
)
from edge_agent.pipeline.pacing import CpuPacer, GovernorLike
from edge_agent.pipeline.service import Pipeline
from edge_agent.security import redact_event
from edge_agent.store.config import resolve_state_dir
from edge_agent.store.outbox import DurablePublisher, Outbox
from edge_agent.transport.base import Publisher, PublishOutcome
from edge_agent.transport.links import SessionLinks
from edge_agent.transport.mqtt import MqttTransport

__all__ = ["Agent", "Engines", "RuntimeLike", "build_engines", "configure_logging", "open_model", "run_agent"]

_log = structlog.get_logger("edge_agent.app")

EXIT_OK = 0
EXIT_TRANSPORT = 3
EXIT_STARTUP = 4
# input kinds that arrive on the bulk MQTT session when ``mqtt.bulk_session`` is on
BULK_KINDS = frozenset({"logs"})


class RuntimeLike(Protocol):
    """The model runtime behind the engines (``edge_agent.runtime.chain.ChainRuntime``)."""

    def stats(self) -> dict[str, Any]: ...
    def close(self) -> None: ...


@dataclass
class Engines:
    """What the handlers run: the intent recognizer, the log service (None: logs go to the DLQ),
    the model runtime whose state goes into stats (None: injected engines without one) and the
    CPU governor of ``runtime.cpu.quota`` (None: no quota)."""

    recognizer: RecognizerLike
    model_id: str
    log_service: LogServiceLike | None = None
    runtime: RuntimeLike | None = None
    governor: GovernorLike | None = None


def configure_logging(stream: TextIO | None = None, level: int = logging.INFO) -> None:
    """structlog JSON lines on stderr (journald keeps one record per line)."""
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            redact_event,  # credentials never reach the log
            structlog.processors.JSONRenderer(),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=stream or sys.stderr),
        cache_logger_on_first_use=False,
    )


def build_engines(config: Config) -> Engines:
    """Load the bundle, the model (through the runtime chain, under the CPU quota), the recognizer
    and the log service named by ``config``."""
    from edge_agent.nlu.home import Home
    from edge_agent.nlu.recognizer import IntentRecognizer
    from edge_agent.runtime.bundle import default_bundle_path, load_bundle

    governor = cpu_governor(config)
    bundle = startup_bundle(config, lambda: load_bundle(config.model.bundle or default_bundle_path()))
    runtime, model = open_model(bundle, config, governor)
    home = Home.from_dict(config.home.model_dump(exclude_none=True), source="config home")
    recognizer = IntentRecognizer(model, home)
    return Engines(
        recognizer=recognizer, model_id=bundle.model_id, log_service=_log_service(config, model),
        runtime=runtime, governor=governor,
    )


def cpu_governor(config: Config) -> GovernorLike | None:
    """Affinity and the duty-cycle governor of ``runtime.cpu`` (None without a quota)."""
    from edge_agent.runtime.quota import governor_from_config

    cpu = config.runtime.cpu
    return governor_from_config(cpu.quota, cpu.affinity, burst_s=cpu.burst_ms / 1000)


def open_model(bundle: Any, config: Config, governor: GovernorLike | None) -> tuple[RuntimeLike, Any]:
    """The bundle's ``Model`` on the runtime chain of ``config.runtime``: every delegate of the
    preference list probed against the CPU golden outputs, fallback at run time, transcripts as
    interactive and log lines as background requests of the batching queue."""
    from edge_agent.runtime.chain import open_runtime
    from edge_agent.runtime.model import Model

    rt_cfg = config.runtime
    runtime = open_runtime(bundle, rt_cfg, governor=governor)
    try:
        model = Model(bundle, backend=rt_cfg.backend, threads=rt_cfg.effective_threads,
                      executors=runtime.executors)
    except BaseException:
        runtime.close()
        raise
    _log.info("app.runtime_open", model=bundle.model_id, **_runtime_summary(runtime.stats()))
    return runtime, model


def _runtime_summary(stats: dict[str, Any]) -> dict[str, Any]:
    unavailable = {b["name"]: b["reason"] for b in stats.get("backends", []) if b.get("reason")}
    return {"active": stats.get("active"), "unavailable": unavailable}


def bundle_installer(config: Config, warm_up: Callable[[Any], Any] | None = None) -> Any:
    """The A/B installer under the state directory, with the trust store when one is configured;
    ``warm_up(bundle) -> model`` replaces the installer's plain CPU warm-up."""
    from edge_agent.runtime.install import BundleInstaller
    from edge_agent.runtime.signing import TrustStore

    rel = config.reliability
    trust = TrustStore.load(rel.bundles.trust_store) if rel.bundles.trust_store is not None else None
    state_dir = resolve_state_dir(rel.state_dir, config.site_id)
    if warm_up is None:
        return BundleInstaller(state_dir, trust)
    return BundleInstaller(state_dir, trust, warm_up=warm_up)


def startup_bundle(config: Config, configured: Callable[[], Any]) -> Any:
    """The installed (A/B) bundle when there is one, else ``model.bundle``; both verified, and signed
    when a trust store is configured. A corrupt active slot falls back to the previous one."""
    from edge_agent.errors import BundleError
    from edge_agent.runtime.bundle import default_bundle_path
    from edge_agent.runtime.signing import load_signed_bundle

    installer = bundle_installer(config)
    try:
        active = installer.load_active()
    except BundleError as exc:
        _log.error("app.active_bundle_invalid", error=str(exc), action="rolling back")
        active = installer.rollback().bundle
    if active is not None:
        return active
    if installer.trust is None:
        return configured()
    return load_signed_bundle(config.model.bundle or default_bundle_path(), installer.trust)


def _log_service(config: Config, model: Any) -> LogServiceLike | None:
    try:
        logs_service = importlib.import_module("edge_agent.logs.service")
    except ModuleNotFoundError as exc:
        if exc.name != "edge_agent.logs.service":
            raise
        _log.warning("app.logs_unavailable", reason="edge_agent.logs.service is not part of this build")
        return None
    factory: Callable[..., LogServiceLike] = logs_service.LogService
    return factory(model=model, config=config.logs)


class _NoLogService:
    """Stands in when the build has no log service: every log input goes to the DLQ, with the reason."""

    kind = "logs"
    priority = 10
    batch_max = 64
    batch_wait_s = 0.0

    def __init__(self, dead: DeadLetters) -> None:
        self.dead = dead

    def handle(self, batch: list[Envelope]) -> list[Outcome]:
        return [self.dead.outcome(env, "log summaries are not available in this build") for env in batch]


class Agent:
    """One running agent: transport + pipeline + handlers for one site."""

    def __init__(self, config: Config, engines: Engines, stopping: threading.Event | None = None) -> None:
        self.config = config
        self.topics = SiteTopics(config.topics.prefix, config.site_id)
        self.stopping = stopping or threading.Event()
        self.registry = Registry()
        self._pipeline: Pipeline | None = None
        rel = config.reliability
        self.state_dir = resolve_state_dir(rel.state_dir, config.site_id)
        self.durable: DurablePublisher | None = None
        self.runtime = engines.runtime
        self.governor = engines.governor
        self.pacer = CpuPacer(engines.governor)
        self._staged: dict[int, RuntimeLike] = {}  # id(model) -> its runtime, warmed up, not yet active
        self._staged_lock = threading.Lock()
        dead = DeadLetters(self.topics, config.pipeline.dlq_payload_max_bytes)
        self._register(engines, dead)
        bulk_kinds = BULK_KINDS if config.mqtt.bulk_session else frozenset()
        self.transport, self.bulk = self._transports(bulk_kinds)
        self.links = SessionLinks(self.transport, self.bulk)
        self.pipeline = Pipeline(
            self.registry, self._publisher(), self.links, self.topics, config.pipeline,
            extra_counters=self._mqtt_counters,
            dedup=self._deduplicator(), limiter=self._limiter(),
            limited_kinds=frozenset(rel.rate_limit.kinds),
            # a worker of its own for transcripts whenever log work could hold them up: a batch
            # stretched by the CPU quota, or a flood the bulk session lets in beside them
            interactive_worker=engines.governor is not None or bool(bulk_kinds),
            bulk_kinds=bulk_kinds, pacer=self.pacer,
        )
        if self.durable is not None:
            self.pipeline.more_stats = self._durable_counters
        self.pipeline.runtime_stats = self._runtime_stats
        self._pipeline = self.pipeline
        self.wyoming = wyoming_service(config, _Serving(self._intents), self._intents._lock,
                                       lambda: self._intents.model_id, self.ecosystem.intents, self.pipeline)

    def _transports(self, bulk_kinds: frozenset[str]) -> tuple[MqttTransport, MqttTransport | None]:
        """The main session (status, Will, transcripts and commands) and, with
        ``mqtt.bulk_session``, the bulk one (log lines only, no status of its own)."""
        config = self.config
        routes = self.registry.routes
        bulk_filters = [r.filter for r in routes if r.kind in bulk_kinds]
        main = MqttTransport(
            config.mqtt,
            client_id=config.client_id,
            status_topic=status_msg.topic(self.topics),
            subscriptions=[r.filter for r in routes if r.kind not in bulk_kinds],
            on_message=self._on_message,
            on_connected=self._on_connected,
            online=status_msg.ONLINE,
            offline=status_msg.OFFLINE,
            receive_maximum=config.pipeline.queue_size,
            stale_filters=bulk_filters,  # held by a session resumed from a single-session run
        )
        if not bulk_kinds:
            return main, None
        bulk = MqttTransport(
            config.mqtt,
            client_id=f"{config.client_id}-bulk",
            status_topic=None,
            subscriptions=bulk_filters,
            on_message=self._on_message,
            receive_maximum=config.pipeline.queue_size,
            link="bulk",
        )
        main.online_after(bulk)  # "online" means every input is subscribed
        return main, bulk

    def _mqtt_counters(self) -> dict[str, int]:
        """``mqtt_*`` counters of the main session, ``mqtt_bulk_*`` of the bulk one."""
        out = self.transport.counters.as_dict()
        if self.bulk is not None:
            out.update({f"bulk_{k}": v for k, v in self.bulk.counters.as_dict().items()})
        return out

    def wait_connected(self, timeout: float) -> bool:
        """Wait until every session is connected and subscribed."""
        deadline = time.monotonic() + timeout
        return all(t.wait_connected(max(0.0, deadline - time.monotonic())) for t in self.links.transports)

    def _fatal(self) -> TransportError | None:
        """Why a session stopped for good (a refused CONNACK that retrying cannot fix), if one did."""
        for transport in self.links.transports:
            if transport.fatal is not None:
                return transport.fatal
        return None

    def _publisher(self) -> Publisher:
        """Results go through the durable outbox (unless it is switched off)."""
        box = self.config.reliability.outbox
        if not box.enabled:
            return self.links
        outbox = Outbox(
            self.state_dir / "outbox.db", max_bytes=int(box.max_mb * (1 << 20)), max_rows=box.max_rows,
            ttl_s=box.ttl_h * 3600.0, synchronous=box.sync.upper(),
        )
        self.durable = DurablePublisher(self.links, outbox, PublishOutcome, ack_timeout_s=box.ack_timeout_s)
        return self.durable

    def _deduplicator(self) -> Deduplicator | None:
        dd = self.config.reliability.dedup
        if not dd.enabled:
            return None
        return Deduplicator(self.state_dir / "dedup.db", window_s=dd.window_s, max_ids=dd.max_ids)

    def _limiter(self) -> RateLimiter | None:
        limit = self.config.reliability.rate_limit
        return RateLimiter(limit.per_source_per_s, limit.burst) if limit.per_source_per_s > 0 else None

    def _durable_counters(self) -> dict[str, int]:
        assert self.durable is not None
        stats = self.durable.stats()
        out = {f"outbox_{k}": int(v) for k, v in stats.items() if isinstance(v, int)}
        box = stats["outbox"]
        out.update({f"outbox_{k}": int(box[k]) for k in ("rows", "bytes", "expired", "refused_full")})
        return out

    def _register(self, engines: Engines, dead: DeadLetters) -> None:
        """One line per input kind."""
        p = self.config.pipeline
        eco = self.ecosystem = _ecosystem(self.config, self.topics, engines, self.state_dir)
        recognizer = eco.wrap_recognizer(engines.recognizer)
        intents = IntentHandler(
            recognizer, self.topics, engines.model_id, dead, p.transcript_batch_max, pacer=self.pacer
        )
        self._intents = intents
        self._logs: LogHandler | None = None
        self.registry.add(transcript_route(self.topics), eco.wrap_handler(intents))
        # Hermes, control, Home Assistant: they recognize with whatever the intent handler serves now
        eco.register(self.registry, _Serving(intents), intents._lock)
        if engines.log_service is not None:
            wait_s = p.log_batch_wait_ms / 1000
            logs = LogHandler(
                engines.log_service, self.topics, dead, p.log_batch_max, wait_s, pacer=self.pacer
            )
            self._logs = logs
            self.registry.add(logs_route(self.topics), eco.wrap_handler(logs))
        else:
            self.registry.add(logs_route(self.topics), _NoLogService(dead))
        allowed = self.config.reliability.bundles.install_from
        if allowed:
            warm_up = self._warm_up if self.runtime is not None else None
            installer = bundle_installer(self.config, warm_up)
            command = BundleCommandHandler(installer, self.topics, allowed, self._activate)
            self.registry.add(bundle_route(self.topics), command)

    def _warm_up(self, bundle: Any) -> Any:
        """Installer warm-up: the new bundle on its own runtime chain (same ``runtime`` config and
        CPU governor), checked with real inputs; it serves once activated."""
        from edge_agent.runtime.install import _check_outputs

        with self._staged_lock:  # installs run one at a time: anything still staged was refused
            stale, self._staged = list(self._staged.values()), {}
        for runtime in stale:
            runtime.close()
        runtime, model = open_model(bundle, self.config, self.governor)
        try:
            _check_outputs(bundle, model)
        except BaseException:
            runtime.close()
            raise
        with self._staged_lock:
            self._staged[id(model)] = runtime
        return model

    def _activate(self, result: Any) -> None:
        """A bundle passed verification and warm-up: serve with its model from the next batch on
        (intents and log labels), then release the previous model's runtime."""
        from edge_agent.nlu.home import Home
        from edge_agent.nlu.recognizer import IntentRecognizer

        home = Home.from_dict(self.config.home.model_dump(exclude_none=True), source="config home")
        recognizer = self.ecosystem.wrap_recognizer(IntentRecognizer(result.model, home))
        self._intents.swap(recognizer, result.bundle.model_id)
        logs_swapped = self._logs.swap_model(result.model) if self._logs is not None else False
        with self._staged_lock:
            runtime = self._staged.pop(id(result.model), None)
        previous = self.runtime
        if runtime is not None:
            self.runtime = runtime
            if previous is not None:
                previous.close()  # the handlers no longer reach it: both swaps took their locks
        _log.info("app.bundle_activated", model=result.bundle.model_id, slot=result.slot,
                  key_id=result.key_id, logs_swapped=logs_swapped)

    def _runtime_stats(self) -> dict[str, Any] | None:
        """``runtime`` of the stats message: active backend, why others are unavailable, switches,
        residency, threads and the CPU quota's figures."""
        runtime = self.runtime
        if runtime is None:
            return None
        rt = self.config.runtime
        return {
            **runtime.stats(),
            "residency": rt.residency,
            "threads": rt.effective_threads,
            "cpu": self.pacer.stats(),
        }

    def _on_connected(self) -> None:
        """After every (re)connect (network thread, so nothing waits): flush the outbox, re-announce
        to HA."""
        if self.durable is not None:
            self.durable.on_connected()
        for out in self.ecosystem.on_connected():
            self.transport.publish(out.topic, out.payload, qos=out.qos, retain=out.retain)

    def _on_message(self, inbound: Any) -> None:
        if self._pipeline is not None:
            self._pipeline.submit(inbound)

    def start(self) -> None:
        if self.durable is not None:
            self.durable.start()
        self.pipeline.start()
        for transport in self.links.transports:
            transport.start()
        self.wyoming.start()
        self.ecosystem.ready()  # sd_notify READY=1 (Type=notify); the watchdog runs in wait()

    def request_stop(self, *_args: object) -> None:
        self.stopping.set()

    def wait(self) -> int:
        """Block until a stop is requested or the transport fails for good; then shut down."""
        while not self.stopping.wait(0.2):
            self.ecosystem.watchdog()
            fatal = self._fatal()
            if fatal is not None:
                _log.error("app.transport_failed", error=str(fatal))
                print(f"edge-agent: {fatal}", file=sys.stderr)
                self.pipeline.stop()
                for transport in reversed(self.links.transports):
                    transport.close(timeout=1.0)
                return EXIT_TRANSPORT
        self.shutdown()
        return EXIT_OK

    def shutdown(self) -> None:
        """Stop taking inputs, drain in-flight work, publish ``offline``, disconnect."""
        _log.info("app.stopping", queued=len(self.pipeline.queue))
        self.ecosystem.stopping()
        self.wyoming.stop()
        for transport in self.links.transports:
            transport.stop_accepting()
        timeout = self.config.pipeline.drain_timeout_s
        drained = self.pipeline.drain(timeout)
        self.pipeline.flush()  # open log windows become summaries now rather than never
        drained = self.pipeline.drain(timeout) and drained
        if not drained:
            _log.warning("app.drain_incomplete", note="unacknowledged inputs are redelivered by the broker")
        self.pipeline.stop()
        if self.durable is not None:
            self.durable.close()
        for transport in reversed(self.links.transports):  # the main session last: "offline" ends it
            transport.close()
        if self.runtime is not None:
            self.runtime.close()
        _log.info("app.stopped", drained=drained, counters=self.pipeline.counters.snapshot())


class _Serving:
    """The recognizer the intent handler serves with now (it follows bundle swaps); recognition
    through it is interactive work under the CPU quota. Callers hold the handler's lock."""

    def __init__(self, handler: IntentHandler) -> None:
        self._handler = handler

    def recognize(self, texts: Any, context_area: str | None = None) -> Any:
        with self._handler.pacer.interactive():
            return self._handler.recognizer.recognize(texts, context_area)


def _ecosystem(
    config: Config, topics: SiteTopics, engines: Engines, state_dir: Path | None = None
) -> Ecosystem:
    """Hermes, Home Assistant, runtime control and sd_notify (each off unless configured)."""
    from edge_agent.nlu.home import Home
    from edge_agent.nlu.schema import INTENTS

    recognizer = engines.recognizer

    def apply_home(home: Home) -> None:
        if hasattr(recognizer, "home"):
            recognizer.home = home

    return Ecosystem(
        config, topics, intents=list(getattr(recognizer, "intents", INTENTS)), model_id=engines.model_id,
        home=Home.from_dict(config.home.model_dump(exclude_none=True), source="config home"),
        apply_home=apply_home, agent_state_dir=state_dir,
    )


def run_agent(config: Config, engines: Engines | None = None) -> int:
    """Run until SIGTERM/SIGINT; returns the process exit code."""
    configure_logging()
    # a short GIL switch interval lets the network thread take over from a busy worker quickly
    # (the default 5 ms would show up directly in publish-to-intent latency)
    sys.setswitchinterval(0.0005)
    stop = threading.Event()

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        _log.info("app.signal", signal=signal.Signals(signum).name)
        stop.set()

    # installed first, so a SIGTERM during start-up (model loading) is a clean stop too
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        engines = engines or build_engines(config)
        agent = Agent(config, engines, stopping=stop)
    except EdgeAgentError as exc:
        _log.error("app.startup_failed", error=str(exc))
        print(f"edge-agent: {exc}", file=sys.stderr)
        return EXIT_STARTUP
    # everything loaded so far (model, tokenizer, libraries) lives as long as the process: keep it
    # out of the cyclic GC, whose full passes over it would otherwise stall inputs for tens of ms
    gc.collect()
    gc.freeze()
    _log.info("app.starting", site=config.site_id, broker=f"{config.mqtt.host}:{config.mqtt.port}",
              protocol=config.mqtt.protocol, model=engines.model_id)
    agent.start()
    return agent.wait()
