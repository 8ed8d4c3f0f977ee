"""Handlers of the built-in input kinds: transcripts -> intents, log lines -> summaries/alerts.

The engines are reached through small protocols so the pipeline never imports runtime code.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import orjson

from edge_agent.errors import EdgeAgentError, PayloadError
from edge_agent.messages import logs as logs_msg
from edge_agent.messages.dlq import DeadLetter
from edge_agent.messages.intent import IntentMessage
from edge_agent.messages.topics import SiteTopics
from edge_agent.messages.transcript import Transcript
from edge_agent.pipeline.core import Envelope, HandlerBase, Outcome, Output, Route
from edge_agent.pipeline.pacing import CpuPacer
from edge_agent.records.logs import Outgoing, RawLine
from edge_agent.records.sla import NORMAL, RULES_ONLY, SMALL_MODEL, mode_of
from edge_agent.transport.base import Inbound

__all__ = [
    "DeadLetters",
    "IntentHandler",
    "LadderLike",
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
    """The log service (``edge_agent.logs.service.LogService``) as the log handler uses it."""

    def ingest(self, source: str, lines: list[RawLine], now: float) -> list[Outgoing]: ...
    def tick(self, now: float) -> list[Outgoing]: ...
    def flush(self, now: float) -> list[Outgoing]: ...
    def swap_model(self, model: Any) -> None: ...
    def limit_lines(self, max_chars: int | None) -> None: ...


class LadderLike(Protocol):
    """The SLA ladder (``edge_agent.runtime.sla.SlaMonitor``): the step a task's next batch runs
    on, and each input's latency."""

    def step(self, task: str) -> str: ...
    def observe(self, task: str, latency_ms: float) -> None: ...


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


class IntentHandler(HandlerBase):
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
        ladder: LadderLike | None = None,
        small: Callable[[], RecognizerLike] | None = None,
        short_chars: int = 64,
    ) -> None:
        """``ladder``: the SLA ladder (None: always ``normal``); ``small``: the recognizer of the
        bundle's small variant, called once on the first batch that needs it; ``short_chars``:
        transcripts are cut to this many characters on every step below ``normal``."""
        self.recognizer = recognizer
        self.topics = topics
        self.topic = IntentMessage.topic(topics)
        self.model_id = model_id
        self.dead = dead_letters
        self.batch_max = batch_max
        self.pacer = pacer or CpuPacer(None)
        self.ladder = ladder
        self.small = small
        self.short_chars = short_chars
        self._small: RecognizerLike | None = None
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
        """Serve with a newly activated bundle from the next batch on (its small variant is not
        loaded: the small_model step serves this recognizer, with cut inputs, until a restart)."""
        with self._lock:
            self.recognizer = recognizer
            self.model_id = model_id
            self.small = None
            self._small = None

    def _for_step(self, step: str) -> RecognizerLike:
        """The recognizer of a step (the caller holds ``lock``)."""
        if step != SMALL_MODEL or self.small is None:
            return self.recognizer
        if self._small is None:
            self._small = self.small()
        return self._small

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
        step = self.ladder.step("intents") if self.ladder is not None else NORMAL
        texts = [t.text if step == NORMAL else t.text[: self.short_chars] for _, t in good]
        try:
            with self.pacer.interactive(), self._lock:
                results = list(self._for_step(step).recognize(texts))
        except EdgeAgentError as exc:
            return outcomes + [self.dead.outcome(env, f"recognition failed: {exc}") for env, _ in good]
        for (env, transcript), result, text in zip(good, results, texts, strict=True):
            found = result.to_dict()
            found["truncated"] = found.get("truncated") or len(text) < len(transcript.text)
            outcomes.append(Outcome(inputs=[env], outputs=[self._output(env, transcript, found, step)]))
        return outcomes

    def _output(self, env: Envelope, transcript: Transcript, result: dict[str, Any], step: str) -> Output:
        latency_ms = (time.perf_counter() - env.inbound.received_mono) * 1000.0
        if self.ladder is not None:
            self.ladder.observe("intents", latency_ms)
        message = IntentMessage(
            id=transcript.id or uuid.uuid4().hex,
            site=self.topics.site,
            text=transcript.text,
            intent=result.get("intent"),
            confidence=float(result.get("confidence", 0.0)),
            slots=result.get("slots", {}),
            latency_ms=latency_ms,
            model=self.model_id,
            mode=mode_of(step),
            step=step,
            extra={"truncated": True} if result.get("truncated") else {},
        )
        return Output(topic=self.topic, payload=message.payload(), label="intent")


class LogHandler(HandlerBase):
    """Log lines of ``{prefix}/{site}/logs/{source}`` -> summaries and alerts of the log service.

    Log lines are batch work under the CPU quota: ``pacer.pace()`` runs before every
    ``CHUNK_LINES`` lines of a source, so a transcript arriving meanwhile waits for at most one
    chunk of log work (a few ms) before it has the interpreter to itself."""

    kind = "logs"
    priority = 10
    ticks = True  # windows close by time
    CHUNK_LINES = 32

    def __init__(
        self,
        service: LogServiceLike,
        topics: SiteTopics,
        dead_letters: DeadLetters,
        batch_max: int = 256,
        batch_wait_s: float = 0.02,
        pacer: CpuPacer | None = None,
        ladder: LadderLike | None = None,
        model: Any = None,
        small: Callable[[], Any] | None = None,
        short_chars: int = 160,
    ) -> None:
        """``ladder``: the SLA ladder (None: always ``normal``). Below ``normal`` lines are cut to
        ``short_chars``; ``small_model`` labels with ``small()`` (called once, when first needed)
        and ``rules_only`` with no model. ``model`` is the service's own model (None: the
        service's model is never swapped, only its lines cut)."""
        self.service = service
        self.topics = topics
        self.dead = dead_letters
        self.batch_max = batch_max
        self.batch_wait_s = batch_wait_s
        self.pacer = pacer or CpuPacer(None)
        self.ladder = ladder
        self.model = model
        self.small = small
        self.short_chars = short_chars
        self._small: Any = None
        self._step = NORMAL  # the step the service is set up for
        self._serving: Any = model
        self._lock = threading.Lock()

    def handle(self, batch: list[Envelope]) -> list[Outcome]:
        self._follow_ladder()
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
            self._observe(envs)
        return outcomes

    def _observe(self, envs: list[Envelope]) -> None:
        if self.ladder is None:
            return
        now = time.perf_counter()
        for env in envs:
            self.ladder.observe("logs", (now - env.inbound.received_mono) * 1000.0)

    def _follow_ladder(self) -> None:
        """Set the service up for the ladder's step before a batch (when it changed)."""
        if self.ladder is None:
            return
        step = self.ladder.step("logs")
        if step == self._step:
            return
        with self._lock:
            self.service.limit_lines(None if step == NORMAL else self.short_chars)
            self._use(self._model_for(step))
            self._step = step

    def _model_for(self, step: str) -> Any:
        if step == RULES_ONLY:
            return None
        if step == SMALL_MODEL and self.small is not None:
            if self._small is None:
                self._small = self.small()
            return self._small
        return self.model

    def _use(self, model: Any) -> None:
        """Label with ``model`` (the caller holds the lock); only with a known own model."""
        if self.model is None or model is self._serving:
            return
        self.service.swap_model(model)
        self._serving = model

    def swap_model(self, model: Any) -> bool:
        """Give the log service a newly activated model (True: it labels with it from now on).
        The ladder's current step is set up again on the next batch (small_model then labels with
        the new model: its small variant is not loaded until a restart)."""
        with self._lock:
            self.service.swap_model(model)
            self.model = self._serving = model
            self.small = self._small = None
            self._step = ""
        return True

    def tick(self, now: float) -> list[Output]:
        with self._lock:
            produced = self.service.tick(now)
        return self._outputs(produced)

    def flush(self, now: float) -> list[Output]:
        """Close open windows (shutdown)."""
        with self._lock:
            produced = self.service.flush(now)
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
