"""Runtime control bridge: commands over MQTT change which intents answer, their thresholds and the home.

The command schema is ``edge_agent.messages.control``, the persisted state
``edge_agent.bridges.control_state``; this module holds the policy
(``Controller``: what each command changes, which results survive) and the pipeline handler.
A change is persisted before it is acknowledged; when the save fails the change is rolled back and
the reply says why.

With ``learn_from_homeassistant`` the controller also keeps the entities of HA discovery configs
seen on the bus (read by ``messages.discovery.learned_entities``) in the home used for resolution.

``reload`` loads the custom-sentences files again (``edge_agent.custom_intents``); its reply says
how many intents and examples are in service, or why the files could not be used.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

import structlog

from edge_agent.bridges.common import HomeTarget, Retire
from edge_agent.bridges.control_config import ControlConfig
from edge_agent.bridges.control_state import ControlState, check_home
from edge_agent.errors import EdgeAgentError, PayloadError
from edge_agent.messages import control as cmds
from edge_agent.messages.discovery import learned_entities
from edge_agent.messages.topics import SiteTopics
from edge_agent.nlu.home import Entity, Home
from edge_agent.pipeline.core import Envelope, HandlerBase, Outcome, Output, Route
from edge_agent.pipeline.handlers import RecognizerLike
from edge_agent.records.intent import IntentResult
from edge_agent.store import Store

__all__ = [
    "ControlConfig",
    "ControlHandler",
    "ControlOutcome",
    "ControlledRecognizer",
    "Controller",
    "Reloadable",
    "control_route",
]

_log = structlog.get_logger("edge_agent.bridges.control")


@dataclass(frozen=True)
class ControlOutcome:
    """What one command did: the reply to publish and what the caller must apply."""

    reply: bytes
    ok: bool
    changed: bool = False
    home_changed: bool = False
    retire_source: str | None = None


class Reloadable(Protocol):
    """The custom intents (``edge_agent.custom_intents.CustomIntents``): what ``reload`` reloads."""

    def reload(self) -> Mapping[str, Any]: ...
    def status(self) -> Mapping[str, Any]: ...


class Controller:
    """The policy: applies commands to a ``ControlState``, persists it, filters results by it."""

    def __init__(
        self,
        cfg: ControlConfig,
        *,
        intents: Sequence[str],
        store: Store,
        base_home: Home | None = None,
        status_extra: Callable[[], Mapping[str, Any]] | None = None,
        custom: Reloadable | None = None,
    ) -> None:
        """``custom``: the custom intents ``reload`` reloads (None: the command is refused)."""
        self.cfg = cfg
        self.intents = tuple(intents)
        self.store = store
        self.base_home = base_home or Home()
        self.status_extra = status_extra
        self.custom = custom
        self.state = self._load()

    # -- persistence ---------------------------------------------------------------------
    def _load(self) -> ControlState:
        raw = self.store.load(self.cfg.state_key)
        if raw is None:
            return ControlState()
        state = ControlState.from_json(raw)
        known = set(self.intents)
        # intents the current bundle no longer has are dropped, not an error
        return replace(
            state,
            disabled=frozenset(i for i in state.disabled if i in known),
            thresholds={i: p for i, p in state.thresholds.items() if i in known},
        )

    def _commit(self, new: ControlState) -> None:
        self.store.save(self.cfg.state_key, new.to_json())  # raises: the old state stays
        self.state = new

    # -- queries used by the pipeline ------------------------------------------------------
    @property
    def enabled(self) -> frozenset[str]:
        return frozenset(self.intents) - self.state.disabled

    def home(self) -> Home:
        """The home used for resolution: the control home (or the configured one) plus learned."""
        base = check_home(self.state.home) if self.state.home is not None else self.base_home
        extra = [Entity(**e) for item in self.state.learned.values() for e in item.get("entities", [])]
        areas = [a for item in self.state.learned.values() for a in item.get("areas", [])]
        if not extra and not areas:
            return base
        known_names = {e.name for e in base.entities}
        entities = list(base.entities) + [e for e in extra if e.name not in known_names]
        all_areas = list(dict.fromkeys([*base.areas, *areas]))
        return Home(areas=all_areas, entities=entities, lists=list(base.lists), floors=list(base.floors))

    def effective_thresholds(self, bundle_thresholds: Mapping[str, float]) -> dict[str, float]:
        """Bundle calibration thresholds overridden by the ones set at run time."""
        return {**bundle_thresholds, **self.state.thresholds}

    def apply(self, result: IntentResult) -> IntentResult:
        """Turn a result into not-recognized when its intent is disabled or under its threshold."""
        intent = result.intent
        if intent is None:
            return result
        threshold = self.state.thresholds.get(intent)
        if intent in self.state.disabled or (threshold is not None and result.confidence < threshold):
            return replace(result, intent=None, slots={})
        return result

    def status(self) -> dict[str, Any]:
        home = self.home()
        out: dict[str, Any] = {
            "intents": {"enabled": sorted(self.enabled), "disabled": sorted(self.state.disabled)},
            "thresholds": dict(sorted(self.state.thresholds.items())),
            "home": {
                "source": "control" if self.state.home is not None else "config",
                "areas": len(home.areas),
                "entities": len(home.entities),
                "learned_entities": sum(len(v.get("entities", [])) for v in self.state.learned.values()),
            },
        }
        if self.custom is not None:
            out["custom_intents"] = dict(self.custom.status())
        if self.status_extra is not None:
            out["agent"] = dict(self.status_extra())
        return out

    # -- commands -------------------------------------------------------------------------
    def handle(self, payload: bytes) -> ControlOutcome:
        """Run one command payload; always returns a reply (errors are replies, not raises)."""
        cmd_id: Any = None
        name: Any = None
        try:
            cmd = cmds.parse_command(payload, self.cfg.max_payload_bytes)
            cmd_id, name = cmd.get("id"), cmd.get("cmd")
            return self._dispatch(cmd, cmd_id)
        except PayloadError as exc:
            return self._reply(cmd_id, name, ok=False, error=str(exc))
        except OSError as exc:
            return self._reply(cmd_id, name, ok=False, error=f"could not persist the change: {exc}")

    def _dispatch(self, cmd: Mapping[str, Any], cmd_id: Any) -> ControlOutcome:
        name = cmd.get("cmd")
        if name == "status":
            return self._reply(cmd_id, name, ok=True)
        if name == "retire_source":
            source = cmds.source_name(cmd)
            return replace(self._reply(cmd_id, name, ok=True), retire_source=source)
        if name == "reload":
            return self._reload(cmd_id)
        self._commit(self._changed(name, cmd))
        return replace(self._reply(cmd_id, name, ok=True), changed=True, home_changed=name == "set_home")

    def _reload(self, cmd_id: Any) -> ControlOutcome:
        """Reload the custom sentences; a failure is an error reply (the intents in service stay)."""
        if self.custom is None:
            return self._reply(cmd_id, "reload", ok=False, error="this agent has no custom intents to reload")
        try:
            self.custom.reload()
        except EdgeAgentError as exc:
            return self._reply(cmd_id, "reload", ok=False, error=f"custom sentences not reloaded: {exc}")
        return replace(self._reply(cmd_id, "reload", ok=True), changed=True)

    def _changed(self, name: Any, cmd: Mapping[str, Any]) -> ControlState:
        """The state after a changing command (not yet persisted)."""
        state = self.state
        if name == "disable_intents":
            return replace(state, disabled=state.disabled | set(cmds.intent_list(cmd, self.intents)))
        if name == "enable_intents":
            return replace(state, disabled=state.disabled - set(cmds.intent_list(cmd, self.intents)))
        if name == "set_thresholds":
            values, resets = cmds.threshold_changes(cmd, self.intents)
            merged = {i: p for i, p in state.thresholds.items() if i not in resets}
            return replace(state, thresholds={**merged, **values})
        if name == "set_home":
            home = cmd.get("home")
            if home is not None:
                check_home(home)
            return replace(state, home=home)
        raise PayloadError(f"unknown cmd {name!r}; expected one of {', '.join(cmds.COMMANDS)}")

    def _reply(self, cmd_id: Any, name: Any, *, ok: bool, error: str | None = None) -> ControlOutcome:
        reply = cmds.ControlReply(cmd_id, name, ok, state=self.status() if ok else None, error=error)
        return ControlOutcome(reply=reply.payload(), ok=ok)

    # -- learning from HA discovery ------------------------------------------------------------
    def learn(self, topic: str, payload: bytes, *, own_node: str | None = None) -> bool:
        """Learn entities/areas from one HA discovery config; True when the home changed.

        An empty payload (HA's removal) forgets what that topic taught. Configs that cannot be
        read are ignored (other integrations' business), never an error of ours.
        """
        if not self.cfg.learn_from_homeassistant:
            return False
        levels = topic.split("/")
        if len(levels) < 4 or levels[-1] != "config" or (own_node is not None and own_node in levels):
            return False
        learned = dict(self.state.learned)
        if not payload.strip():
            if topic not in learned:
                return False
            del learned[topic]
        else:
            item = learned_entities(levels[1], payload)
            if item is None or learned.get(topic) == item:
                return False
            learned[topic] = item
        self._commit(replace(self.state, learned=learned))
        return True


class ControlledRecognizer:
    """A recognizer with runtime control applied to its results (disabled intents, thresholds)."""

    def __init__(self, inner: RecognizerLike, controller: Controller) -> None:
        self.inner = inner
        self.controller = controller

    def recognize(self, texts: Sequence[str], context_area: str | None = None) -> Sequence[Any]:
        return [self.controller.apply(r) for r in self.inner.recognize(texts, context_area)]


def control_route(cfg: ControlConfig, topics: SiteTopics) -> Route:
    """The command topic (``control.topic`` or ``{prefix}/{site}/control``), key ``cmd``."""
    topic = cfg.topic or topics.topic(cmds.SUFFIX)
    return Route("control", topic, lambda t: "cmd" if t == topic else None)


class ControlHandler(HandlerBase):
    """Control commands -> one reply each (+ HA retirement when asked)."""

    kind = "control"
    priority = 5
    batch_max = 16
    batch_wait_s = 0.0

    def __init__(
        self,
        controller: Controller,
        reply_topic: str,
        lock: threading.Lock,
        homes: HomeTarget,
        retire: Retire | None = None,
    ) -> None:
        """``homes``: where a changed home goes; ``retire``: HA's source retirement (None: HA off);
        ``lock``: held with the other bridges' state (discovery, controller)."""
        self.controller = controller
        self.reply_topic = reply_topic
        self.lock = lock
        self.homes = homes
        self.retire = retire

    def handle(self, batch: list[Envelope]) -> list[Outcome]:
        outcomes: list[Outcome] = []
        for env in batch:
            with self.lock:
                done = self.controller.handle(env.payload)
                outs = [Output(self.reply_topic, done.reply, "control_reply")]
                if done.home_changed:
                    self.homes.set_home(self.controller.home())
                if done.retire_source and self.retire is not None:
                    outs += self.retire(done.retire_source)
            _log.info("control.command", ok=done.ok, changed=done.changed)
            outcomes.append(Outcome([env], outs, record_latency=False))
        return outcomes
