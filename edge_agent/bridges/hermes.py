"""Hermes bridge: answers Rhasspy/Snips NLU queries on the bus with our recognizer.

``hermes/nlu/query`` in; ``hermes/intent/<name>``, ``hermes/nlu/intentNotRecognized`` or
``hermes/error/nlu`` out (payloads: ``edge_agent.messages.hermes``). With Home Assistant on, a
recognized Hermes intent fires the HA event entity too.

Example (YAML)::

    hermes:
      enabled: true
      site_ids: [kitchen, default]
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from edge_agent.bridges.common import to_outputs
from edge_agent.bridges.hermes_config import HermesConfig
from edge_agent.errors import EdgeAgentError, PayloadError
from edge_agent.messages import hermes
from edge_agent.pipeline.core import Envelope, HandlerBase, Outcome, Output, Route
from edge_agent.pipeline.handlers import RecognizerLike
from edge_agent.records.intent import IntentResult

__all__ = ["HermesConfig", "HermesHandler", "hermes_route"]


def hermes_route() -> Route:
    """``hermes/nlu/query``, key ``query``."""
    return Route("hermes", hermes.QUERY_TOPIC, lambda t: "query" if t == hermes.QUERY_TOPIC else None)


class HermesHandler(HandlerBase):
    """``hermes/nlu/query`` -> ``hermes/intent/<name>`` | intentNotRecognized | ``hermes/error/nlu``."""

    kind = "hermes"
    priority = 0  # interactive, like transcripts
    batch_max = 16
    batch_wait_s = 0.0

    def __init__(
        self,
        recognizer: RecognizerLike,
        cfg: HermesConfig,
        lock: threading.Lock,
        on_intent: Callable[[IntentResult], list[Output]] | None = None,
    ) -> None:
        """``lock``: the one the intent handler recognizes under; ``on_intent``: extra outputs of a
        recognized intent (the HA event, when HA is on)."""
        self.recognizer = recognizer
        self.cfg = cfg
        self.lock = lock
        self.on_intent = on_intent

    def _error(self, env: Envelope, msg: hermes.HermesMessage) -> Outcome:
        return Outcome([env], to_outputs([msg], "hermes_error", self.cfg.qos))

    def _queries(self, batch: list[Envelope]) -> tuple[list[Outcome], list[tuple[Envelope, hermes.NluQuery]]]:
        """Errors and other sites' queries (answered now), and the queries to recognize."""
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
        return outcomes, good

    def handle(self, batch: list[Envelope]) -> list[Outcome]:
        outcomes, good = self._queries(batch)
        if not good:
            return outcomes
        try:
            with self.lock:
                results = list(self.recognizer.recognize([q.input for _, q in good]))
        except EdgeAgentError as exc:
            for env, q in good:
                err = hermes.error_message(
                    f"recognition failed: {exc}", site_id=q.site_id, session_id=q.session_id, context=q.input
                )
                outcomes.append(self._error(env, err))
            return outcomes
        for (env, query), result in zip(good, results, strict=True):
            msgs = hermes.respond(query, result, intent_parsed=self.cfg.publish_intent_parsed)
            outputs = to_outputs(msgs, "hermes", self.cfg.qos)
            if msgs[-1].topic.startswith(hermes.INTENT_TOPIC_PREFIX) and self.on_intent is not None:
                outputs += self.on_intent(result)
            outcomes.append(Outcome([env], outputs))
        return outcomes
