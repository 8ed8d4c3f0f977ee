"""Home Assistant bridge: MQTT discovery of the agent, entity states, HA's birth message, learning.

With ``homeassistant.enabled`` the agent announces one HA device (``messages.discovery``) after
every connect and on HA's birth message, fires its event entity for every recognized intent and
keeps one state per log source from the summaries and alerts. ``HaBridge`` holds the discovery
state; ``HaTap`` adds the HA outputs to the intent and log handlers; ``HaHandler`` reads HA's
status topic and, with ``control.learn_from_homeassistant``, the discovery configs of other devices.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from importlib import metadata

import orjson
import structlog

from edge_agent.bridges.common import HomeTarget, to_outputs
from edge_agent.bridges.control import Controller
from edge_agent.bridges.homeassistant_config import HomeAssistantConfig
from edge_agent.errors import EdgeAgentError, PayloadError
from edge_agent.messages.discovery import HaDiscovery, source_state_from_summary
from edge_agent.messages.topics import SiteTopics
from edge_agent.pipeline.core import Envelope, Handler, HandlerBase, Outcome, Output, Route
from edge_agent.records.intent import IntentResult
from edge_agent.store.base import Store

__all__ = ["HA_STATE_KEY", "HaBridge", "HaHandler", "HaTap", "HomeAssistantConfig"]

_log = structlog.get_logger("edge_agent.bridges.homeassistant")


def _version() -> str:
    try:
        return metadata.version("edge-agent")
    except metadata.PackageNotFoundError:
        return "0+unknown"


HA_STATE_KEY = "homeassistant"  # store key of the entity states in the agent's state directory


class HaBridge:
    """The agent's HA device. ``lock`` guards the discovery state (shared with the control bridge).
    With a ``store``, the entity states (and held alerts) are saved whenever they change and
    restored at start, so a restarted agent does not publish empty states over the last real ones."""

    def __init__(
        self,
        cfg: HomeAssistantConfig,
        topics: SiteTopics,
        *,
        intents: list[str],
        model_id: str,
        lock: threading.Lock,
        store: Store | None = None,
    ) -> None:
        self.cfg = cfg
        self.lock = lock
        self.store = store
        self.discovery = HaDiscovery(
            cfg,
            site_id=topics.site,
            prefix=topics.prefix,
            intents=intents,
            availability_topic=topics.topic("status"),
            sw_version=_version(),
            model_id=model_id,
        )
        self._restore()

    def _restore(self) -> None:
        raw = self.store.load(HA_STATE_KEY) if self.store is not None else None
        if raw is None:
            return
        try:
            self.discovery.restore(orjson.loads(raw))
        except (orjson.JSONDecodeError, PayloadError) as exc:
            _log.warning(
                "homeassistant.state_unreadable", error=str(exc), action="starting from empty states"
            )

    def save(self) -> None:
        """Persist the entity states (callers hold ``lock``)."""
        if self.store is not None:
            self.store.save(HA_STATE_KEY, orjson.dumps(self.discovery.export()))

    def tap(self, handler: Handler) -> Handler:
        """Intents fire the event entity, summaries/alerts update the source entities."""
        return HaTap(handler, self._from_output, self.lock)

    def _from_output(self, out: Output) -> list[Output]:
        if out.label == "intent":
            body = orjson.loads(out.payload)
            slots = {k: v.get("value") for k, v in (body.get("slots") or {}).items() if isinstance(v, dict)}
            intent = body.get("intent")
            if intent is not None and intent not in self.discovery.intents:
                return []
            return to_outputs(
                self.discovery.on_intent(
                    intent, body.get("text", ""), float(body.get("confidence", 0.0)), slots
                ),
                "ha_event",
            )
        if out.label in ("summary", "alert"):
            source = out.topic.rsplit("/", 1)[-1]
            if out.label == "alert":
                published = self.discovery.on_alert(source, time.time())
            else:
                state = source_state_from_summary(orjson.loads(out.payload))
                published = self.discovery.on_summary(source, state, time.time())
            self.save()
            return to_outputs(published, "ha_state")
        return []

    def on_intent(self, result: IntentResult) -> list[Output]:
        """The event of an intent recognized elsewhere (Hermes); nothing for unknown intents."""
        if result.intent not in self.discovery.intents:
            return []
        slots = {k: v.value for k, v in result.slots.items()}
        with self.lock:
            msgs = self.discovery.on_intent(result.intent, result.text, result.confidence, slots)
        return to_outputs(msgs, "ha_event")

    def retire(self, source: str) -> list[Output]:
        """Remove a log source's entities (the caller holds ``lock``)."""
        published = self.discovery.retire(source)
        self.save()
        return to_outputs(published, "ha_discovery")

    def on_connected(self) -> list[Output]:
        """What to publish after every (re)connect: discovery, availability, last states."""
        with self.lock:
            return to_outputs(self.discovery.announce(), "ha_discovery")

    def route(self, learning: bool) -> Route:
        """HA's status topic; with ``learning`` every discovery config under the prefix too."""
        prefix = self.cfg.discovery_prefix + "/"
        status = self.discovery.ha_status_topic

        def match(topic: str) -> str | None:
            if topic == status:
                return "status"
            if learning and topic.startswith(prefix) and topic.endswith("/config"):
                return "config"
            return None

        if learning and not status.startswith(prefix):
            raise EdgeAgentError("with learn_from_homeassistant the HA status topic must be under the prefix")
        return Route("homeassistant", prefix + "#" if learning else status, match)


class HaTap(HandlerBase):
    """A handler that adds outputs derived from another handler's outputs (same kind and route)."""

    def __init__(self, inner: Handler, tap: Callable[[Output], list[Output]], lock: threading.Lock) -> None:
        self.inner = inner
        self.kind = inner.kind
        self.priority = inner.priority
        self.batch_max = inner.batch_max
        self.batch_wait_s = inner.batch_wait_s
        self.ticks = inner.ticks
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
        return self._extend(self.inner.tick(now))

    def flush(self, now: float) -> list[Output]:
        return self._extend(self.inner.flush(now))


class HaHandler(HandlerBase):
    """HA's birth message -> re-announce; discovery configs -> learned home; tick -> alerts, retire."""

    kind = "homeassistant"
    priority = 5
    batch_max = 64
    batch_wait_s = 0.0
    ticks = True  # delayed announcements, alerts that end, sources that retire

    def __init__(
        self, bridge: HaBridge, controller: Controller | None = None, homes: HomeTarget | None = None
    ) -> None:
        """``controller``: learns from other devices' discovery configs (None: not learning);
        ``homes`` receives the controller's home when a config changed what was learned."""
        self.bridge = bridge
        self.discovery = bridge.discovery
        self.controller = controller
        self.homes = homes
        self.announce_at: float | None = None  # HA's birth message seen: re-announce at this time

    def handle(self, batch: list[Envelope]) -> list[Outcome]:
        outcomes: list[Outcome] = []
        for env in batch:
            outs: list[Output] = []
            with self.bridge.lock:
                if env.key == "status" and self.discovery.cfg.announce_jitter_s > 0:
                    if self.discovery.on_ha_status(env.payload):  # "online": after a random delay
                        self.announce_at = time.time() + self.discovery.announce_delay()
                elif env.key == "status":
                    outs = to_outputs(self.discovery.on_ha_status(env.payload), "ha_discovery")
                else:
                    self._learn(env)
            outcomes.append(Outcome([env], outs, record_latency=False))
        return outcomes

    def _learn(self, env: Envelope) -> None:
        ctrl = self.controller
        learned = ctrl is not None and ctrl.learn(env.topic, env.payload, own_node=self.discovery.node_id)
        if learned and ctrl is not None and self.homes is not None:
            self.homes.set_home(ctrl.home())

    def tick(self, now: float) -> list[Output]:
        with self.bridge.lock:
            published = self.discovery.tick(now)
            if published:
                self.bridge.save()
            if self.announce_at is not None and now >= self.announce_at:
                self.announce_at = None
                published += self.discovery.announce()
            return to_outputs(published, "ha_discovery")
