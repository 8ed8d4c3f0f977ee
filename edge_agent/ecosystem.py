"""Wiring of the ecosystem bridges into the agent: Hermes, Home Assistant, runtime control, sd_notify.

``app.Agent`` owns one ``Ecosystem`` and calls it at five points (see .coord/patch_ecosystem.diff):
``wrap_recognizer`` (runtime control), ``wrap_handler`` (HA events and source states from the
intent and log outputs), ``register`` (routes of Hermes, control and HA), ``on_connected``
(re-announce after every connect) and ``ready``/``watchdog``/``stopping`` (systemd). Everything is
off unless enabled in the config; the message logic lives in ``messages.hermes``,
``messages.discovery`` and ``control``.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

import orjson
import structlog

from edge_agent.control import Controller
from edge_agent.ecosystem_config import ControlConfig, HermesConfig, HomeAssistantConfig
from edge_agent.errors import EdgeAgentError, PayloadError
from edge_agent.messages import hermes
from edge_agent.messages.discovery import HaDiscovery, Publish, source_state_from_summary
from edge_agent.messages.topics import SiteTopics
from edge_agent.nlu.home import Home
from edge_agent.nlu.schema import INTENTS, OUT_OF_SCOPE
from edge_agent.pipeline.core import Envelope, Handler, Outcome, Output, Registry, Route
from edge_agent.sdnotify import Notifier, watchdog_interval
from edge_agent.store import FileStore

__all__ = ["Ecosystem", "EcosystemSettings", "to_outputs"]

_log = structlog.get_logger("edge_agent.ecosystem")
_DEFAULT_STATE_DIR = "/var/lib/edge-agent"
HA_STATE_KEY = "homeassistant"  # FileStore key of the HA entity states in the agent's state dir


def _version() -> str:
    try:
        return metadata.version("edge-agent")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def to_outputs(msgs: Sequence[Publish | hermes.HermesMessage], label: str, qos: int = 1) -> list[Output]:
    """Pipeline outputs from the pure modules' messages."""
    out: list[Output] = []
    for m in msgs:
        if isinstance(m, Publish):
            out.append(Output(m.topic, m.payload, label, qos=m.qos, retain=m.retain))
        else:
            out.append(Output(m.topic, m.payload, label, qos=qos))
    return out


class _Controlled:
    """The recognizer with runtime control applied (disabled intents, thresholds)."""

    def __init__(self, inner: Any, controller: Controller) -> None:
        self.inner = inner
        self.controller = controller

    def recognize(self, texts: Sequence[str], context_area: str | None = None) -> Sequence[Any]:
        return [self.controller.apply(r) for r in self.inner.recognize(texts, context_area)]


class _Tap:
    """A handler that adds outputs derived from another handler's outputs (same kind and route)."""

    def __init__(self, inner: Handler, tap: Callable[[Output], list[Output]], lock: threading.Lock) -> None:
        self.inner = inner
        self.kind = inner.kind
        self.priority = inner.priority
        self.batch_max = inner.batch_max
        self.batch_wait_s = inner.batch_wait_s
        self._tap = tap
        self._lock = lock

    def _extend(self, outputs: list[Output]) -> list[Output]:
        extra: list[Output] = []
        with self._lock:
            for out in outputs:
                extra.extend(self._tap(out))
        return outputs + extra

    def handle(self, batch: list[Envelope]) -> list[Outcome]:
        outcomes = self.inner.handle(batch)
        for outcome in outcomes:
            outcome.outputs = self._extend(outcome.outputs)
        return outcomes

    def tick(self, now: float) -> list[Output]:
        tick: Callable[[float], list[Output]] | None = getattr(self.inner, "tick", None)
        return self._extend(tick(now)) if tick is not None else []

    def flush(self, now: float) -> list[Output]:
        flush: Callable[[float], list[Output]] | None = getattr(self.inner, "flush", None)
        return self._extend(flush(now)) if flush is not None else []


class EcosystemSettings(Protocol):
    """The three config sections this module reads (``Config.hermes/homeassistant/control``)."""

    @property
    def hermes(self) -> HermesConfig: ...

    @property
    def homeassistant(self) -> HomeAssistantConfig: ...

    @property
    def control(self) -> ControlConfig: ...


class Ecosystem:
    """The bridges of one agent. ``intents``: the bundle's intent names (event types, control)."""

    def __init__(
        self,
        settings: EcosystemSettings,
        topics: SiteTopics,
        *,
        intents: Sequence[str],
        model_id: str,
        home: Home,
        apply_home: Callable[[Home], None],
        environ: Mapping[str, str] | None = None,
        agent_state_dir: Path | None = None,
    ) -> None:
        env = os.environ if environ is None else environ
        self.settings = settings
        self.topics = topics
        self.intents = [i for i in intents if i != OUT_OF_SCOPE] or list(INTENTS)
        self.apply_home = apply_home
        self.notifier = Notifier.from_env(env)
        self._watchdog_s = watchdog_interval(env)
        self._last_watchdog = 0.0
        self._lock = threading.Lock()  # discovery and controller state, shared by the handlers
        self.controller: Controller | None = None
        if settings.control.enabled:
            state_dir = (settings.control.state_dir or env.get("STATE_DIRECTORY", "").split(":")[0]
                         or env.get("EDGE_AGENT_STATE_DIR") or _DEFAULT_STATE_DIR)
            self.controller = Controller(settings.control, intents=self.intents,
                                         store=FileStore(Path(state_dir)), base_home=home)
        self.discovery: HaDiscovery | None = None
        if settings.homeassistant.enabled:
            self.discovery = HaDiscovery(
                settings.homeassistant, site_id=topics.site, prefix=topics.prefix, intents=self.intents,
                availability_topic=topics.topic("status"), sw_version=_version(), model_id=model_id,
            )
        # HA's entity states survive a restart: saved with the agent's state, restored here
        self._ha_store = (FileStore(agent_state_dir)
                          if self.discovery is not None and agent_state_dir is not None else None)
        self._restore_ha()

    def _restore_ha(self) -> None:
        raw = self._ha_store.load(HA_STATE_KEY) if self._ha_store is not None else None
        if raw is None or self.discovery is None:
            return
        try:
            self.discovery.restore(orjson.loads(raw))
        except (orjson.JSONDecodeError, PayloadError) as exc:
            _log.warning("ecosystem.ha_state_unreadable", error=str(exc), action="starting from empty states")

    def save_ha(self) -> None:
        """Persist the HA entity states (callers hold ``_lock``)."""
        if self._ha_store is not None and self.discovery is not None:
            self._ha_store.save(HA_STATE_KEY, orjson.dumps(self.discovery.export()))

    # -- recognizer and handlers of the service ---------------------------------------------
    def wrap_recognizer(self, recognizer: Any) -> Any:
        """The recognizer every handler uses; with control on, its home is the controlled one."""
        if self.controller is None:
            return recognizer
        self.apply_home(self.controller.home())
        return _Controlled(recognizer, self.controller)

    def wrap_handler(self, handler: Handler) -> Handler:
        """With HA on: intents fire the event entity, summaries/alerts update the source entities."""
        if self.discovery is None:
            return handler
        return _Tap(handler, self._ha_tap, self._lock)

    def _ha_tap(self, out: Output) -> list[Output]:
        discovery = self.discovery
        if discovery is None:
            return []
        if out.label == "intent":
            body = orjson.loads(out.payload)
            slots = {k: v.get("value") for k, v in (body.get("slots") or {}).items() if isinstance(v, dict)}
            intent = body.get("intent")
            if intent is not None and intent not in discovery.intents:
                return []
            return to_outputs(discovery.on_intent(intent, body.get("text", ""),
                                                  float(body.get("confidence", 0.0)), slots), "ha_event")
        if out.label in ("summary", "alert"):
            source = out.topic.rsplit("/", 1)[-1]
            if out.label == "alert":
                published = discovery.on_alert(source, time.time())
            else:
                state = source_state_from_summary(orjson.loads(out.payload))
                published = discovery.on_summary(source, state, time.time())
            self.save_ha()
            return to_outputs(published, "ha_state")
        return []

    # -- routes of our own inputs ---------------------------------------------------------------
    def register(self, registry: Registry, recognizer: Any, lock: threading.Lock) -> None:
        """``recognizer``/``lock``: the (wrapped) recognizer and the lock the intent handler holds."""
        s = self.settings
        if s.hermes.enabled:
            route = Route("hermes", hermes.QUERY_TOPIC,
                          lambda t: "query" if t == hermes.QUERY_TOPIC else None)
            registry.add(route, HermesHandler(recognizer, s.hermes, lock, self))
        if self.controller is not None:
            topic = s.control.topic or self.topics.topic("control")
            reply = s.control.reply_topic or self.topics.topic("control", "reply")
            route = Route("control", topic, lambda t: "cmd" if t == topic else None)
            registry.add(route, ControlHandler(self, reply))
        if self.discovery is not None:
            registry.add(self._ha_route(), HaHandler(self))

    def _ha_route(self) -> Route:
        assert self.discovery is not None
        prefix = self.discovery.cfg.discovery_prefix + "/"
        status = self.discovery.ha_status_topic
        learn = self.controller is not None and self.settings.control.learn_from_homeassistant

        def match(topic: str) -> str | None:
            if topic == status:
                return "status"
            if learn and topic.startswith(prefix) and topic.endswith("/config"):
                return "config"
            return None

        if learn and not status.startswith(prefix):
            raise EdgeAgentError("with learn_from_homeassistant the HA status topic must be under the prefix")
        return Route("homeassistant", prefix + "#" if learn else status, match)

    # -- lifecycle ------------------------------------------------------------------------------
    def on_connected(self) -> list[Output]:
        """What to publish after every (re)connect: HA discovery, availability, last states."""
        if self.discovery is None:
            return []
        with self._lock:
            return to_outputs(self.discovery.announce(), "ha_discovery")

    def ready(self) -> None:
        self.notifier.ready(status="running")

    def watchdog(self) -> None:
        now = time.monotonic()
        if self._watchdog_s is not None and now - self._last_watchdog >= self._watchdog_s:
            self._last_watchdog = now
            self.notifier.watchdog()

    def stopping(self) -> None:
        self.notifier.stopping()


class HermesHandler:
    """``hermes/nlu/query`` -> ``hermes/intent/<name>`` | intentNotRecognized | ``hermes/error/nlu``."""

    kind = "hermes"
    priority = 0  # interactive, like transcripts
    batch_max = 16
    batch_wait_s = 0.0

    def __init__(self, recognizer: Any, cfg: HermesConfig, lock: threading.Lock,
                 eco: Ecosystem | None = None) -> None:
        self.recognizer = recognizer
        self.cfg = cfg
        self.lock = lock
        self.eco = eco  # with HA on, a recognized Hermes intent fires the HA event entity too

    def _error(self, env: Envelope, msg: hermes.HermesMessage) -> Outcome:
        return Outcome([env], to_outputs([msg], "hermes_error", self.cfg.qos))

    def handle(self, batch: list[Envelope]) -> list[Outcome]:
        outcomes: list[Outcome] = []
        good: list[tuple[Envelope, hermes.NluQuery]] = []
        for env in batch:
            try:
                query = hermes.NluQuery.from_payload(env.payload)
            except PayloadError as exc:
                outcomes.append(self._error(env, hermes.error_for_payload(str(exc), env.payload)))
                continue
            if self.cfg.site_ids and query.site_id not in self.cfg.site_ids:
                outcomes.append(Outcome([env], [], record_latency=False))  # another site's NLU answers
                continue
            good.append((env, query))
        if not good:
            return outcomes
        try:
            with self.lock:
                results = list(self.recognizer.recognize([q.input for _, q in good]))
        except EdgeAgentError as exc:
            for env, q in good:
                err = hermes.error_message(f"recognition failed: {exc}", site_id=q.site_id,
                                           session_id=q.session_id, context=q.input)
                outcomes.append(self._error(env, err))
            return outcomes
        for (env, query), result in zip(good, results, strict=True):
            msgs = hermes.respond(query, result, intent_parsed=self.cfg.publish_intent_parsed)
            outputs = to_outputs(msgs, "hermes", self.cfg.qos)
            if msgs[-1].topic.startswith(hermes.INTENT_TOPIC_PREFIX):
                outputs += self._event(result)
            outcomes.append(Outcome([env], outputs))
        return outcomes

    def _event(self, result: Any) -> list[Output]:
        if self.eco is None or self.eco.discovery is None or result.intent not in self.eco.discovery.intents:
            return []
        slots = {k: v.value for k, v in result.slots.items()}
        with self.eco._lock:
            msgs = self.eco.discovery.on_intent(result.intent, result.text, result.confidence, slots)
        return to_outputs(msgs, "ha_event")


class ControlHandler:
    """Control commands -> one reply each (+ HA retirement when asked)."""

    kind = "control"
    priority = 5
    batch_max = 16
    batch_wait_s = 0.0

    def __init__(self, eco: Ecosystem, reply_topic: str) -> None:
        assert eco.controller is not None
        self.eco = eco
        self.controller = eco.controller
        self.reply_topic = reply_topic

    def handle(self, batch: list[Envelope]) -> list[Outcome]:
        outcomes: list[Outcome] = []
        for env in batch:
            with self.eco._lock:
                done = self.controller.handle(env.payload)
                outs = [Output(self.reply_topic, done.reply, "control_reply")]
                if done.home_changed:
                    self.eco.apply_home(self.controller.home())
                if done.retire_source and self.eco.discovery is not None:
                    outs += to_outputs(self.eco.discovery.retire(done.retire_source), "ha_discovery")
                    self.eco.save_ha()
            _log.info("control.command", ok=done.ok, changed=done.changed)
            outcomes.append(Outcome([env], outs, record_latency=False))
        return outcomes


class HaHandler:
    """HA's birth message -> re-announce; discovery configs -> learned home; tick -> alerts, retire."""

    kind = "homeassistant"
    priority = 5
    batch_max = 64
    batch_wait_s = 0.0

    def __init__(self, eco: Ecosystem) -> None:
        assert eco.discovery is not None
        self.eco = eco
        self.discovery = eco.discovery
        self.announce_at: float | None = None  # HA's birth message seen: re-announce at this time

    def handle(self, batch: list[Envelope]) -> list[Outcome]:
        outcomes: list[Outcome] = []
        for env in batch:
            outs: list[Output] = []
            with self.eco._lock:
                if env.key == "status" and self.discovery.cfg.announce_jitter_s > 0:
                    if self.discovery.on_ha_status(env.payload):  # "online": after a random delay
                        self.announce_at = time.time() + self.discovery.announce_delay()
                elif env.key == "status":
                    outs = to_outputs(self.discovery.on_ha_status(env.payload), "ha_discovery")
                elif self.eco.controller is not None and self.eco.controller.learn(
                    env.topic, env.payload, own_node=self.discovery.node_id
                ):
                    self.eco.apply_home(self.eco.controller.home())
            outcomes.append(Outcome([env], outs, record_latency=False))
        return outcomes

    def tick(self, now: float) -> list[Output]:
        with self.eco._lock:
            published = self.discovery.tick(now)
            if published:
                self.eco.save_ha()
            if self.announce_at is not None and now >= self.announce_at:
                self.announce_at = None
                published += self.discovery.announce()
            return to_outputs(published, "ha_discovery")
