"""Composition root: config -> engines -> pipeline (+ bridges) -> transport; lifecycle and signals.

``Agent`` wires the parts; ``run_agent`` is what ``edge-agent run`` calls. The engines
(``edge_agent.engines``: recognizer, log service, runtime) can be injected, which is how tests and
the demo run the agent in-process. The bridges (``edge_agent.bridges``: Hermes, runtime control,
Home Assistant) are built here when enabled; bundles installed at run time swap in through
``edge_agent.hotswap``; the user's custom intents (``intents.custom_sentences``) load through
``edge_agent.custom_intents`` at start, on SIGHUP and on the control command ``reload``.
"""

from __future__ import annotations

import gc
import signal
import sys
import threading
import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, Protocol

import structlog

from edge_agent.bridges.common import HomeBinding
from edge_agent.config import Config
from edge_agent.custom_intents import CustomIntents
from edge_agent.engines import Engines, build_engines, bundle_installer, config_home
from edge_agent.errors import EdgeAgentError, TransportError
from edge_agent.hotswap import BundleSwap
from edge_agent.logsetup import LogFormat, configure_logging
from edge_agent.messages import status as status_msg
from edge_agent.messages.topics import SiteTopics
from edge_agent.nlu.schema import INTENTS, OUT_OF_SCOPE
from edge_agent.pipeline.bundle_command import BundleCommandHandler, bundle_route
from edge_agent.pipeline.core import Envelope, Handler, HandlerBase, Outcome, Registry
from edge_agent.pipeline.dedup import Deduplicator, RateLimiter
from edge_agent.pipeline.handlers import (
    DeadLetters,
    IntentHandler,
    LogHandler,
    RecognizerLike,
    logs_route,
    transcript_route,
)
from edge_agent.pipeline.pacing import CpuPacer
from edge_agent.pipeline.service import Pipeline
from edge_agent.records.sla import LADDERS
from edge_agent.runtime.sla import SlaMonitor, ladder_steps
from edge_agent.sdnotify import Notifier, Watchdog
from edge_agent.store import FileStore
from edge_agent.store.config import resolve_state_dir
from edge_agent.store.outbox import DurablePublisher, Outbox
from edge_agent.transport.base import Publisher, PublishOutcome
from edge_agent.transport.links import SessionLinks
from edge_agent.transport.mqtt import MqttTransport

if TYPE_CHECKING:  # the bridges are imported where they are built: a bridge that is off costs nothing
    from edge_agent.bridges.control import Controller
    from edge_agent.bridges.homeassistant import HaBridge

__all__ = ["Agent", "configure_logging", "run_agent"]

_log = structlog.get_logger("edge_agent.app")

EXIT_OK = 0
EXIT_TRANSPORT = 3
EXIT_STARTUP = 4
# input kinds that arrive on the bulk MQTT session when ``mqtt.bulk_session`` is on
BULK_KINDS = frozenset({"logs"})


class _NoLogService(HandlerBase):
    """Stands in when the build has no log service: every log input goes to the DLQ, with the reason."""

    kind = "logs"
    priority = 10
    batch_max = 64
    batch_wait_s = 0.0

    def __init__(self, dead: DeadLetters) -> None:
        self.dead = dead

    def handle(self, batch: list[Envelope]) -> list[Outcome]:
        return [self.dead.outcome(env, "log summaries are not available in this build") for env in batch]


class Service(Protocol):
    """A bridge's server with a life of its own (the Wyoming service)."""

    def start(self) -> None: ...
    def stop(self) -> None: ...
    def set_intents(self, intents: Sequence[str], custom: Collection[str]) -> None: ...


class _NoService:
    """Stands in for a server whose feature is off."""

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def set_intents(self, intents: Sequence[str], custom: Collection[str]) -> None:
        pass


class _FollowingHome:
    """The small variant's recognizer, resolving against the home of the recognizer in service
    (runtime control and HA learning replace that one's home)."""

    def __init__(self, small: Any, served: Any) -> None:
        self.small = small
        self.served = served

    def recognize(self, texts: Any, context_area: str | None = None) -> Any:
        if self.served is not None:
            self.small.home = self.served.home
        return self.small.recognize(texts, context_area)


class Agent:
    """One running agent: transport + pipeline + handlers for one site."""

    def __init__(
        self,
        config: Config,
        engines: Engines,
        stopping: threading.Event | None = None,
        reloading: threading.Event | None = None,
    ) -> None:
        """``reloading``: set (by SIGHUP) to reload the custom sentences from ``wait``'s loop."""
        self.config = config
        self.topics = SiteTopics(config.topics.prefix, config.site_id)
        self.stopping = stopping or threading.Event()
        self.reloading = reloading or threading.Event()
        self.reannounce = threading.Event()  # HA's discovery config changed: publish it from wait()
        self.custom = CustomIntents(config.intents.custom_sentences, engines.custom_holder)
        self.custom.try_reload()  # nothing recognizes yet: no lock needed
        self.registry = Registry()
        self._pipeline: Pipeline | None = None
        rel = config.reliability
        self.state_dir = resolve_state_dir(rel.state_dir, config.site_id)
        self.durable: DurablePublisher | None = None
        self.pacer = CpuPacer(engines.governor)
        steps = {task: ladder_steps(task, engines.small is not None, engines.model_id) for task in LADDERS}
        self.sla = SlaMonitor(config.sla, steps)
        self.small = engines.small
        self.notifier = Notifier.from_env()
        self.watchdog = Watchdog.from_env(self.notifier)
        dead = DeadLetters(self.topics, config.pipeline.dlq_payload_max_bytes)
        self._register(engines, dead)
        bulk_kinds = BULK_KINDS if config.mqtt.bulk_session else frozenset()
        self.transport, self.bulk = self._transports(bulk_kinds)
        self.links = SessionLinks(self.transport, self.bulk)
        self.pipeline = Pipeline(
            self.registry,
            self._publisher(),
            self.links,
            self.topics,
            config.pipeline,
            extra_counters=self._mqtt_counters,
            dedup=self._deduplicator(),
            limiter=self._limiter(),
            limited_kinds=frozenset(rel.rate_limit.kinds),
            # a worker of its own for transcripts whenever log work could hold them up: a batch
            # stretched by the CPU quota, or a flood the bulk session lets in beside them
            interactive_worker=engines.governor is not None or bool(bulk_kinds),
            bulk_kinds=bulk_kinds,
            pacer=self.pacer,
        )
        if self.durable is not None:
            self.pipeline.more_stats = self._durable_counters
        self.pipeline.runtime_stats = self._runtime_stats
        self.pipeline.sla_stats = self.sla.stats
        self._pipeline = self.pipeline
        self.wyoming = self._wyoming()
        self.wyoming.set_intents(self.intent_names, self.custom.names)
        self.custom.lock = self.intents_handler.lock  # examples are embedded with the model in service
        self.custom.on_change = self._custom_changed

    def _wyoming(self) -> Service:
        """The Wyoming server when ``wyoming.enabled``; the package (and asyncio's server side)
        is imported only then."""
        cfg = self.config.wyoming
        if not cfg.enabled:
            return _NoService()
        from edge_agent.bridges.wyoming import wyoming_service

        intents = self.intents_handler
        return wyoming_service(
            cfg, self.config.site_id, intents, intents.lock, lambda: intents.model_id,
            self.intent_names, self.pipeline,
        )

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
            self.state_dir / "outbox.db",
            max_bytes=int(box.max_mb * (1 << 20)),
            max_rows=box.max_rows,
            ttl_s=box.ttl_h * 3600.0,
            synchronous=box.sync.upper(),
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
        """One line per input kind; the bridges after the transcripts, as they share the recognizer."""
        p = self.config.pipeline
        self.homes = HomeBinding(config_home(self.config), engines.home_holder)
        self.bridge_lock = threading.Lock()  # discovery and controller state, shared by the bridges
        builtin = self.builtin_names = [i for i in engines.intents if i != OUT_OF_SCOPE] or list(INTENTS)
        names = self.intent_names = builtin + [i for i in self.custom.names if i not in builtin]
        self.controller = self._controller(names)
        self.ha = self._home_assistant(names, engines.model_id)
        sla = self.config.sla
        intents = IntentHandler(
            self._serve(engines.recognizer),
            self.topics,
            engines.model_id,
            dead,
            p.transcript_batch_max,
            pacer=self.pacer,
            ladder=self.sla,
            small=self._small_recognizer(engines),
            short_chars=sla.intents_short_chars,
        )
        self.intents_handler = intents
        self.registry.add(transcript_route(self.topics), self._tap(intents))
        self._register_bridges(intents)
        logs: LogHandler | None = None
        if engines.log_service is not None:
            wait_s = p.log_batch_wait_ms / 1000
            small = engines.small
            logs = LogHandler(
                engines.log_service,
                self.topics,
                dead,
                p.log_batch_max,
                wait_s,
                pacer=self.pacer,
                ladder=self.sla,
                model=engines.model,
                small=(lambda: small("logs")) if small is not None else None,
                short_chars=sla.logs_short_chars,
            )
            self.registry.add(logs_route(self.topics), self._tap(logs))
        else:
            self.registry.add(logs_route(self.topics), _NoLogService(dead))
        self.swap = BundleSwap(
            self.config, engines.governor, engines.runtime, intents, logs, self._serve_model
        )
        allowed = self.config.reliability.bundles.install_from
        if allowed:
            warm_up = self.swap.warm_up if engines.runtime is not None else None
            installer = bundle_installer(self.config, warm_up)
            command = BundleCommandHandler(installer, self.topics, allowed, self.swap.activate)
            self.registry.add(bundle_route(self.topics), command)

    def _controller(self, intents: list[str]) -> Controller | None:
        """Runtime control, its state in the agent's state directory unless ``control.state_dir``."""
        cfg = self.config.control
        if not cfg.enabled:
            return None
        from edge_agent.bridges.control import Controller

        store = FileStore(Path(cfg.state_dir) if cfg.state_dir else self.state_dir)
        controller = Controller(
            cfg, intents=intents, store=store, base_home=self.homes.home, custom=self.custom
        )
        self.homes.set_home(controller.home())
        return controller

    def _home_assistant(self, intents: list[str], model_id: str) -> HaBridge | None:
        cfg = self.config.homeassistant
        if not cfg.enabled:
            return None
        from edge_agent.bridges.homeassistant import HaBridge

        store = FileStore(self.state_dir) if self.state_dir is not None else None  # states survive a restart
        return HaBridge(
            cfg, self.topics, intents=intents, model_id=model_id, lock=self.bridge_lock, store=store
        )

    def _register_bridges(self, intents: IntentHandler) -> None:
        """Hermes, control, Home Assistant: they recognize with whatever the intent handler serves."""
        cfg, ha = self.config, self.ha
        if cfg.hermes.enabled:
            from edge_agent.bridges.hermes import HermesHandler, hermes_route

            on_intent = ha.on_intent if ha is not None else None
            self.registry.add(hermes_route(), HermesHandler(intents, cfg.hermes, intents.lock, on_intent))
        if self.controller is not None:
            from edge_agent.bridges.control import ControlHandler, control_route
            from edge_agent.messages.control import ControlReply

            reply = cfg.control.reply_topic or ControlReply.topic(self.topics)
            retire = ha.retire if ha is not None else None
            handler = ControlHandler(self.controller, reply, self.bridge_lock, self.homes, retire)
            self.registry.add(control_route(cfg.control, self.topics), handler)
        if ha is not None:
            from edge_agent.bridges.homeassistant import HaHandler

            learner = self.controller if cfg.control.learn_from_homeassistant else None
            self.registry.add(ha.route(learner is not None), HaHandler(ha, learner, self.homes))

    def _serve(self, recognizer: RecognizerLike) -> RecognizerLike:
        """The recognizer the handlers use: with runtime control on, its results filtered by it."""
        if self.controller is None:
            return recognizer
        from edge_agent.bridges.control import ControlledRecognizer

        return ControlledRecognizer(recognizer, self.controller)

    def _small_recognizer(self, engines: Engines) -> Callable[[], RecognizerLike] | None:
        """The recognizer of the bundle's small variant (loaded when the ladder first needs it)."""
        small = engines.small
        if small is None:
            return None

        def load() -> RecognizerLike:
            from edge_agent.nlu.recognizer import IntentRecognizer

            recognizer = IntentRecognizer(small("intents"), self.homes.home, small.calibration)
            self.custom.follow(recognizer)  # the custom intents too, embedded by the small model
            return self._serve(_FollowingHome(recognizer, engines.home_holder))

        return load

    def _serve_model(self, model: Any) -> RecognizerLike:
        """The recognizer of a swapped-in bundle's model, resolving against the current home."""
        from edge_agent.nlu.recognizer import IntentRecognizer

        with self.bridge_lock:  # the lock control and HA learning replace the home under
            recognizer = IntentRecognizer(model, self.homes.home)
            self.homes.bind(recognizer)
        self.custom.bind(recognizer)  # the new model embeds the custom examples again
        return self._serve(recognizer)

    def _custom_changed(self, names: list[str]) -> None:
        """The custom intents changed (a reload, a bundle swap): Wyoming's ``describe``, runtime
        control and HA's event types list them from now on, and ``wait`` sends HA a new discovery
        config. Lock-free (each list is replaced whole): a control ``reload`` calls this while
        holding the bridges' lock."""
        self.intent_names = self.builtin_names + [i for i in names if i not in self.builtin_names]
        self.wyoming.set_intents(self.intent_names, names)
        if self.controller is not None:
            self.controller.intents = tuple(self.intent_names)
        if self.ha is not None:
            self.ha.discovery.intents = tuple(self.intent_names)
            self.reannounce.set()

    def _tap(self, handler: Handler) -> Handler:
        """With HA on: intents fire the event entity, summaries/alerts update the source entities."""
        return handler if self.ha is None else self.ha.tap(handler)

    def _runtime_stats(self) -> dict[str, Any] | None:
        """``runtime`` of the stats message: active backend, why others are unavailable, switches,
        residency, threads and the CPU quota's figures."""
        runtime = self.swap.runtime
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
        for out in self.ha.on_connected() if self.ha is not None else []:
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
        self.notifier.ready(status="running")  # sd_notify READY=1 (Type=notify); the watchdog runs in wait()

    def wait(self) -> int:
        """Block until a stop is requested or the transport fails for good; then shut down. A
        reload asked for meanwhile (SIGHUP) runs here, on the main thread."""
        while not self.stopping.wait(0.2):
            self.watchdog.ping()
            if self.reloading.is_set():
                self.reloading.clear()
                self.custom.try_reload()
            if self.reannounce.is_set() and self.ha is not None:
                self.reannounce.clear()
                for out in self.ha.on_connected():
                    self.transport.publish(out.topic, out.payload, qos=out.qos, retain=out.retain)
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
        self.notifier.stopping()
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
        self.swap.close()
        if self.small is not None:
            self.small.close()
        _log.info("app.stopped", drained=drained, counters=self.pipeline.counters.snapshot())


def run_agent(config: Config, engines: Engines | None = None, log_format: LogFormat = "auto") -> int:
    """Run until SIGTERM/SIGINT; returns the process exit code."""
    configure_logging(log_format=log_format)
    # a short GIL switch interval lets the network thread take over from a busy worker quickly
    # (the default 5 ms would show up directly in publish-to-intent latency)
    sys.setswitchinterval(0.0005)
    stop, reload = threading.Event(), threading.Event()

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        _log.info("app.signal", signal=signal.Signals(signum).name)
        (reload if signum == signal.SIGHUP else stop).set()

    # installed first, so a SIGTERM during start-up (model loading) is a clean stop too, and a
    # SIGHUP then (systemd's ExecReload) a reload once running rather than the default: exit
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    try:
        engines = engines or build_engines(config)
        agent = Agent(config, engines, stopping=stop, reloading=reload)
    except EdgeAgentError as exc:
        _log.error("app.startup_failed", error=str(exc))
        print(f"edge-agent: {exc}", file=sys.stderr)
        return EXIT_STARTUP
    # everything loaded so far (model, tokenizer, libraries) lives as long as the process: keep it
    # out of the cyclic GC, whose full passes over it would otherwise stall inputs for tens of ms
    gc.collect()
    gc.freeze()
    _log.info(
        "app.starting",
        site=config.site_id,
        broker=f"{config.mqtt.host}:{config.mqtt.port}",
        protocol=config.mqtt.protocol,
        model=engines.model_id,
    )
    agent.start()
    return agent.wait()
