"""Handlers of the built-in input kinds: transcripts -> intents, log lines -> summaries/alerts.

The engines are reached through small protocols so the pipeline never imports runtime code.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Sequence
from typing import Any, Protocol

import orjson

from edge_agent.errors import EdgeAgentError, PayloadError
from edge_agent.messages import logs as logs_msg
from edge_agent.messages.dlq import DeadLetter
from edge_agent.messages.intent import IntentMessage
from edge_agent.messages.topics import SiteTopics
from edge_agent.messages.transcript import Transcript
from edge_agent.pipeline.core import Envelope, Outcome, Output, Route
from edge_agent.pipeline.pacing import CpuPacer
from edge_agent.records.logs import Outgoing, RawLine
from edge_agent.transport.base import Inbound

__all__ = [
    "DeadLetters",
    "IntentHandler",
    "LogHandler",
    "LogServiceLike",
    "RecognizerLike",
    "ResultLike",
    "logs_route",
    "transcript_route",
]


class ResultLike(Protocol):
    def to_dict(self) -> dict[str, Any]: ...


class RecognizerLike(Protocol):
    def recognize(self, texts: Sequence[str], context_area: str | None = None) -> Sequence[Any]: ...


class LogServiceLike(Protocol):
    def ingest(self, source: str, lines: list[RawLine], now: float) -> list[Outgoing]: ...

    def tick(self, now: float) -> list[Outgoing]: ...


class DeadLetters:
    """Builds DLQ outputs for one site."""

    def __init__(self, topics: SiteTopics, cap: int) -> None:
        self.topic = DeadLetter.topic(topics)
        self.cap = cap

    def output(self, inbound: Inbound, reason: str) -> Output:
        record = DeadLetter(
            reason=reason,
            input_topic=inbound.topic,
            input_payload=inbound.payload,
            received_at=inbound.received_at,
            cap=self.cap,
        )
        return Output(topic=self.topic, payload=record.payload(), label="dlq")

    def outcome(self, envelope: Envelope, reason: str) -> Outcome:
        output = self.output(envelope.inbound, reason)
        return Outcome(inputs=[envelope], outputs=[output], record_latency=False)


def transcript_route(topics: SiteTopics) -> Route:
    exact = Transcript.topic(topics)
    return Route("transcript", exact, lambda topic: "" if topic == exact else None)


def logs_route(topics: SiteTopics) -> Route:
    def match(topic: str) -> str | None:
        levels = topics.relative(topic)
        return None if levels is None else logs_msg.source_of(levels)

    return Route("logs", logs_msg.filter_topic(topics), match)


class IntentHandler:
    """Transcripts -> ``{prefix}/{site}/intent``. Batches what is already queued into one model call.

    Recognition is interactive work under the CPU quota (``pacer``): it never waits for it, and
    log batches yield while it runs."""

    kind = "transcript"
    priority = 0
    batch_wait_s = 0.0

    def __init__(
        self,
        recognizer: RecognizerLike,
        topics: SiteTopics,
        model_id: str,
        dead_letters: DeadLetters,
        batch_max: int = 16,
        pacer: CpuPacer | None = None,
    ) -> None:
        self.recognizer = recognizer
        self.topics = topics
        self.topic = IntentMessage.topic(topics)
        self.model_id = model_id
        self.dead = dead_letters
        self.batch_max = batch_max
        self.pacer = pacer or CpuPacer(None)
        self._lock = threading.Lock()

    @property
    def lock(self) -> threading.Lock:
        """Held while recognizing; other handlers that share the recognizer take it too."""
        return self._lock

    def recognize(self, texts: Sequence[str], context_area: str | None = None) -> Sequence[Any]:
        """Recognize with the recognizer served now (it follows swaps) as interactive work under
        the CPU quota. The caller holds ``lock``."""
        with self.pacer.interactive():
            return self.recognizer.recognize(texts, context_area)

    def swap(self, recognizer: RecognizerLike, model_id: str) -> None:
        """Serve with a newly activated bundle from the next batch on."""
        with self._lock:
            self.recognizer = recognizer
            self.model_id = model_id

    def handle(self, batch: list[Envelope]) -> list[Outcome]:
        outcomes: list[Outcome] = []
        good: list[tuple[Envelope, Transcript]] = []
        for env in batch:
            try:
                good.append((env, Transcript.parse(env.payload)))
            except PayloadError as exc:
                outcomes.append(self.dead.outcome(env, str(exc)))
        if not good:
            return outcomes
        try:
            with self.pacer.interactive(), self._lock:
                results = list(self.recognizer.recognize([t.text for _, t in good]))
        except EdgeAgentError as exc:
            return outcomes + [self.dead.outcome(env, f"recognition failed: {exc}") for env, _ in good]
        for (env, transcript), result in zip(good, results, strict=True):
            outcomes.append(Outcome(inputs=[env], outputs=[self._output(env, transcript, result.to_dict())]))
        return outcomes

    def _output(self, env: Envelope, transcript: Transcript, result: dict[str, Any]) -> Output:
        message = IntentMessage(
            id=transcript.id or uuid.uuid4().hex,
            site=self.topics.site,
            text=transcript.text,
            intent=result.get("intent"),
            confidence=float(result.get("confidence", 0.0)),
            slots=result.get("slots", {}),
            latency_ms=(time.perf_counter() - env.inbound.received_mono) * 1000.0,
            model=self.model_id,
            extra={"truncated": True} if result.get("truncated") else {},
        )
        return Output(topic=self.topic, payload=message.payload(), label="intent")


class LogHandler:
    """Log lines of ``{prefix}/{site}/logs/{source}`` -> summaries and alerts of the log service.

    Log lines are batch work under the CPU quota: ``pacer.pace()`` runs before every
    ``CHUNK_LINES`` lines of a source, so a transcript arriving meanwhile waits for at most one
    chunk of log work (a few ms) before it has the interpreter to itself."""

    kind = "logs"
    priority = 10
    CHUNK_LINES = 32

    def __init__(
        self,
        service: LogServiceLike,
        topics: SiteTopics,
        dead_letters: DeadLetters,
        batch_max: int = 256,
        batch_wait_s: float = 0.02,
        pacer: CpuPacer | None = None,
    ) -> None:
        self.service = service
        self.topics = topics
        self.dead = dead_letters
        self.batch_max = batch_max
        self.batch_wait_s = batch_wait_s
        self.pacer = pacer or CpuPacer(None)
        self._lock = threading.Lock()

    def handle(self, batch: list[Envelope]) -> list[Outcome]:
        outcomes: list[Outcome] = []
        by_source: dict[str, tuple[list[Envelope], list[RawLine]]] = {}
        for env in batch:
            try:
                lines = list(logs_msg.LogBatch.parse(env.key, env.payload).lines)
            except PayloadError as exc:
                outcomes.append(self.dead.outcome(env, str(exc)))
                continue
            envs, acc = by_source.setdefault(env.key, ([], []))
            envs.append(env)
            acc.extend(lines)
        now = time.time()
        for source, (envs, lines) in by_source.items():
            produced: list[Outgoing] = []
            for start in range(0, len(lines), self.CHUNK_LINES):
                self.pacer.pace()
                with self._lock:
                    produced += self.service.ingest(source, lines[start : start + self.CHUNK_LINES], now)
            outcomes.append(Outcome(inputs=envs, outputs=self._outputs(produced)))
        return outcomes

    def swap_model(self, model: Any) -> bool:
        """Give the log service a newly activated model; False when the service cannot swap."""
        swap = getattr(self.service, "swap_model", None)
        if swap is None:
            return False
        with self._lock:
            swap(model)
        return True

    def tick(self, now: float) -> list[Output]:
        with self._lock:
            produced = self.service.tick(now)
        return self._outputs(produced)

    def flush(self, now: float) -> list[Output]:
        """Close open windows (shutdown); a service without ``flush`` has nothing to close."""
        flush = getattr(self.service, "flush", None)
        if flush is None:
            return []
        with self._lock:
            produced: list[Outgoing] = flush(now)
        return self._outputs(produced)

    def _outputs(self, produced: list[Outgoing]) -> list[Output]:
        return [
            Output(
                topic=self.topics.suffix(item.topic_suffix),
                payload=orjson.dumps(item.payload),
                label=item.topic_suffix.split("/", 1)[0],
            )
            for item in produced
        ]
