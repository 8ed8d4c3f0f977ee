"""The pipeline: route inputs, queue them by priority, run handlers on workers, publish results,
acknowledge inputs once their results are acknowledged, tick time-based handlers, publish stats.

No paho here: it talks to a ``Publisher`` and an ``Acker`` (the transport, or an outbox wrapping it).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import structlog

from edge_agent.config import PipelineConfig
from edge_agent.messages.stats import StatsMessage
from edge_agent.messages.topics import SiteTopics
from edge_agent.pipeline.core import Envelope, Outcome, Output, Registry
from edge_agent.pipeline.dedup import Deduplicator, RateLimiter, Verdict, input_key
from edge_agent.pipeline.handlers import DeadLetters
from edge_agent.pipeline.pacing import CpuPacer
from edge_agent.pipeline.queue import LaneQueue, QueueClosed
from edge_agent.pipeline.stats import LatencyWindow, ProcessGauges, SafeCounters
from edge_agent.store.outbox import RETRY_LATER
from edge_agent.transport.base import Acker, Inbound, Publisher, PublishOutcome

__all__ = ["Pipeline"]

_log = structlog.get_logger("edge_agent.pipeline")
INTERACTIVE_PRIORITY = 0  # handlers of this priority are interactive work (never paced)


@dataclass
class _Settle:
    """Outputs of one outcome still awaiting their broker acknowledgement."""

    outcome: Outcome
    left: int
    emitted_at: float
    retry: bool = False  # an output was neither published nor stored: leave the inputs unacked


class Pipeline:
    def __init__(
        self,
        registry: Registry,
        publisher: Publisher,
        acker: Acker,
        topics: SiteTopics,
        settings: PipelineConfig,
        extra_counters: Callable[[], dict[str, int]] | None = None,
        dedup: Deduplicator | None = None,
        limiter: RateLimiter | None = None,
        limited_kinds: frozenset[str] = frozenset({"logs"}),
        interactive_worker: bool = False,
        bulk_kinds: frozenset[str] = frozenset(),
        pacer: CpuPacer | None = None,
    ) -> None:
        self.registry = registry
        self.publisher = publisher
        self.acker = acker
        self.topics = topics
        self.settings = settings
        self.counters = SafeCounters()
        self.latency = LatencyWindow()
        self.dead = DeadLetters(topics, settings.dlq_payload_max_bytes)
        self.queue: LaneQueue[Envelope] = LaneQueue(settings.queue_size)
        # kinds delivered by the bulk MQTT session queue in a pool of their own (queue_size each):
        # a full log pool blocks only the bulk session's network thread, never a transcript
        for kind, handler in registry.handlers.items():
            self.queue.add_lane(kind, handler.priority, pool="bulk" if kind in bulk_kinds else "")
        self._extra_counters = extra_counters
        self.dedup = dedup
        self.limiter = limiter
        self.limited_kinds = limited_kinds
        # one more worker, the only one that takes interactive kinds (priority 0: transcripts,
        # Hermes), so a log batch held back by the CPU quota never keeps a transcript waiting for
        # a worker, and transcripts are still answered in order
        self.interactive_worker = interactive_worker
        # interactive inputs from admission to result: batch work yields to them meanwhile. Only
        # when the batch kinds queue in a pool of their own (bulk_kinds): on one shared pool a
        # transcript admitted while the queue is full waits for room that only the log worker can
        # make, and that worker would be yielding to it
        self.pacer = pacer if bulk_kinds else None
        self._paced: set[int] = set()  # id() of the admitted interactive envelopes
        self.more_stats: Callable[[], dict[str, int]] | None = None  # e.g. the outbox's counters
        # the model runtime's state (active backend, fallbacks, CPU quota): "runtime" in stats
        self.runtime_stats: Callable[[], dict[str, Any] | None] | None = None
        # the SLA ladder's state: "mode" (normal | degraded) and "sla" in stats
        self.sla_stats: Callable[[], dict[str, Any]] | None = None
        self._gauges = ProcessGauges()
        self._started = time.monotonic()
        self._lock = threading.Lock()
        self._unsettled = 0
        self._open_inputs = 0  # submitted and not yet settled (queued, in a handler, or publishing)
        self._idle = threading.Condition(self._lock)
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    # -- network side ---------------------------------------------------------------------
    def submit(self, inbound: Inbound) -> None:
        """Route and enqueue one input (network thread; blocks while the queue is full)."""
        self.counters.add("received")
        with self._lock:
            self._open_inputs += 1
        if len(inbound.payload) > self.settings.max_payload_bytes:
            reason = f"payload of {len(inbound.payload)} bytes exceeds {self.settings.max_payload_bytes}"
            self._dead_on_arrival(inbound, reason)
            return
        if inbound.retain:  # only MQTT 3.1.1 replays retained messages to us (MQTT 5 is asked not to)
            reason = "retained input: commands are not replayed from the broker's retained store"
            self._dead_on_arrival(inbound, reason)
            return
        routed = self.registry.route(inbound.topic)
        if routed is None:
            self._dead_on_arrival(inbound, "no handler for this topic")
            return
        kind, key = routed
        if self._over_rate(kind, key, inbound):
            return
        envelope = self._admit(kind, key, inbound)
        if envelope is None:
            return
        self._enter(envelope)
        try:
            self.queue.put(kind, envelope)
        except QueueClosed:
            self._leave([envelope])
            self._forget(envelope)
            self.counters.add("refused_closing")  # not acknowledged: the broker redelivers it
            self._close_inputs(1)

    def _over_rate(self, kind: str, key: str, inbound: Inbound) -> bool:
        """Per-source token bucket; an input over the budget becomes a DLQ record (and is acked)."""
        if self.limiter is None or kind not in self.limited_kinds:
            return False
        source = f"{kind}/{key}" if key else inbound.topic
        if self.limiter.allow(source):
            return False
        self.counters.add("rate_limited")
        rate = f"{self.limiter.rate:g}/s, burst {self.limiter.burst:g}"
        self._dead_on_arrival(inbound, f"rate limit exceeded for source {source!r} ({rate})")
        return True

    def _admit(self, kind: str, key: str, inbound: Inbound) -> Envelope | None:
        """Dedup: a copy of an input whose results are safe (or in progress) is acked, not run again."""
        if self.dedup is None:
            return Envelope(kind=kind, key=key, inbound=inbound)
        ikey = input_key(kind, inbound.topic, inbound.payload, redelivery=inbound.dup)
        if self.dedup.begin(ikey.key, check=ikey.check) is not Verdict.NEW:
            self.counters.add("duplicates")
            self.acker.ack(inbound)
            self._close_inputs(1)
            return None
        return Envelope(kind=kind, key=key, inbound=inbound, dedup_key=ikey.key)

    def _enter(self, envelope: Envelope) -> None:
        pacer = self.pacer
        if pacer is None or self.registry.handlers[envelope.kind].priority > INTERACTIVE_PRIORITY:
            return
        with self._lock:
            self._paced.add(id(envelope))
        pacer.enter()

    def _leave(self, envelopes: list[Envelope]) -> None:
        if self.pacer is None or not self._paced:  # (an admitted envelope was added before it got here)
            return
        with self._lock:
            done = [env for env in envelopes if id(env) in self._paced]
            self._paced.difference_update(id(env) for env in done)
        for _env in done:
            self.pacer.leave()

    def _forget(self, envelope: Envelope) -> None:
        if self.dedup is not None and envelope.dedup_key is not None:
            self.dedup.abandon(envelope.dedup_key)

    def _dead_on_arrival(self, inbound: Inbound, reason: str) -> None:
        env = Envelope(kind="invalid", key="", inbound=inbound)
        self.emit(self.dead.outcome(env, reason))

    # -- workers ------------------------------------------------------------------------
    def start(self) -> None:
        for i in range(self.settings.workers):
            self._spawn(self._work, f"pipeline-worker-{i}")
        if self.interactive_worker:
            self._spawn(self._work_interactive, "pipeline-interactive")
        if any(h.ticks for h in self.registry.handlers.values()):
            self._spawn(self._tick_loop, "pipeline-ticker")
        if self.settings.stats_interval_s > 0:
            self._spawn(self._stats_loop, "pipeline-stats")

    def _spawn(self, target: Callable[[], None], name: str) -> None:
        thread = threading.Thread(target=target, name=name, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _work(self) -> None:
        others = INTERACTIVE_PRIORITY + 1 if self.interactive_worker else None
        while not self._stop.is_set():
            self._work_once(min_priority=others)

    def _work_interactive(self) -> None:
        while not self._stop.is_set():
            self._work_once(max_priority=INTERACTIVE_PRIORITY)

    def _work_once(self, max_priority: int | None = None, min_priority: int | None = None) -> None:
        got = self.queue.get(timeout=0.2, max_priority=max_priority, min_priority=min_priority)
        if got is None:
            return
        kind, first = got
        handler = self.registry.handlers[kind]
        batch = [first]
        if handler.batch_max > 1:
            batch += self.queue.take_more(kind, handler.batch_max - 1, handler.batch_wait_s)
        self.counters.add(f"batches_{kind}")
        for outcome in self._run_handler(kind, batch):
            self.emit(outcome)

    def _run_handler(self, kind: str, batch: list[Envelope]) -> list[Outcome]:
        try:
            return self.registry.handlers[kind].handle(batch)
        except Exception as exc:  # the worker boundary: a poison input must not kill the agent
            _log.exception("pipeline.handler_failed", kind=kind, batch=len(batch))
            self.counters.add("handler_errors")
            reason = f"internal error in {kind} handler: {type(exc).__name__}: {exc}"
            return [self.dead.outcome(env, reason) for env in batch]

    def _tick_loop(self) -> None:
        period = self.settings.tick_interval_s
        while not self._stop.wait(period):
            for handler in list(self.registry.handlers.values()):
                outputs = handler.tick(time.time())
                if outputs:
                    self.emit(Outcome(inputs=[], outputs=outputs, record_latency=False))

    def flush(self) -> None:
        """Ask handlers with open state (log windows) to publish it now (before shutting down)."""
        for handler in list(self.registry.handlers.values()):
            outputs = handler.flush(time.time())
            if outputs:
                self.emit(Outcome(inputs=[], outputs=outputs, record_latency=False))

    # -- results and acknowledgements -----------------------------------------------------
    def emit(self, outcome: Outcome) -> None:
        """Publish the outputs; acknowledge the inputs once all were acknowledged by the broker."""
        self._leave(outcome.inputs)
        if outcome.record_latency:
            now = time.perf_counter()
            for env in outcome.inputs:
                self.latency.add((now - env.inbound.received_mono) * 1000.0)
        if not outcome.outputs:
            self._settled(outcome)
            return
        state = _Settle(outcome=outcome, left=len(outcome.outputs), emitted_at=time.perf_counter())
        with self._lock:
            self._unsettled += 1
        for output in outcome.outputs:
            self._publish(state, output)

    def _publish(self, state: _Settle, output: Output) -> None:
        def done(result: PublishOutcome) -> None:
            self._published(state, output, result)

        self.publisher.publish(
            output.topic, output.payload, qos=output.qos, retain=output.retain, on_done=done
        )

    def _published(self, state: _Settle, output: Output, result: PublishOutcome) -> None:
        if result.ok:
            self.counters.add(f"out_{output.label}")
        elif result.reason_code == RETRY_LATER:
            self.counters.add("left_for_redelivery")
            state.retry = True
        else:
            self.counters.add("publish_failed")
            _log.error(
                "pipeline.result_refused",
                topic=output.topic,
                label=output.label,
                reason_code=result.reason_code,
                reason=result.reason,
            )
            if output.label != "dlq":
                self._divert_to_dlq(state, output, result)
        with self._lock:
            state.left -= 1
            finished = state.left == 0
            if finished:
                self._unsettled -= 1
                self._idle.notify_all()
        if finished:
            self._settled(state.outcome, safe=not state.retry)

    def _divert_to_dlq(self, state: _Settle, output: Output, result: PublishOutcome) -> None:
        """A refused result becomes a DLQ record of each input it settles (never silently lost)."""
        reason = f"result on {output.topic} refused by the broker: {result.reason} ({result.reason_code})"
        records = [self.dead.output(env.inbound, reason) for env in state.outcome.inputs]
        with self._lock:
            state.left += len(records)
        for record in records:
            self._publish(state, record)

    def _settled(self, outcome: Outcome, safe: bool = True) -> None:
        """Every output is published or stored: remember the inputs as done, then ack them. When an
        output could not be kept (``safe`` False) the inputs stay unacked for the broker to redeliver."""
        for env in outcome.inputs:
            if self.dedup is not None and env.dedup_key is not None:
                if safe:
                    self.dedup.complete(env.dedup_key)
                else:
                    self.dedup.abandon(env.dedup_key)
            if safe:
                self.acker.ack(env.inbound)
        self.counters.add("settled" if safe else "unacked_for_redelivery", len(outcome.inputs))
        self._close_inputs(len(outcome.inputs))

    def _close_inputs(self, n: int) -> None:
        if n:
            with self._lock:
                self._open_inputs -= n
                self._idle.notify_all()

    # -- stats ----------------------------------------------------------------------------
    def stats(self) -> StatsMessage:
        counters = self.counters.snapshot()
        if self._extra_counters is not None:
            counters.update({f"mqtt_{k}": v for k, v in self._extra_counters().items()})
        if self.more_stats is not None:
            counters.update(self.more_stats())
        with self._lock:
            unsettled = self._unsettled
        queue = {
            "depth": len(self.queue),
            "capacity": self.queue.capacity,
            "high_water": self.queue.high_water,
            "backpressure_waits": self.queue.backpressure_waits,
            "unsettled": unsettled,
        }
        queue.update({f"depth_{k}": v for k, v in self.queue.depths().items()})
        sla = dict(self.sla_stats()) if self.sla_stats is not None else {}
        return StatsMessage(
            site=self.topics.site,
            ts=time.time(),
            uptime_s=time.monotonic() - self._started,
            counters=counters,
            queue=queue,
            latency_ms=self.latency.summary(),
            rss_mb=self._gauges.rss_mb(),
            cpu_percent=self._gauges.cpu_percent(),
            mode=str(sla.pop("mode", "normal")),
            extra=self._runtime_extra() | ({"sla": sla} if sla else {}),
        )

    def _runtime_extra(self) -> dict[str, Any]:
        runtime = self.runtime_stats() if self.runtime_stats is not None else None
        return {} if runtime is None else {"runtime": runtime}

    def publish_stats(self) -> None:
        message = self.stats()
        self.publisher.publish(StatsMessage.topic(self.topics), message.payload(), qos=0)

    def _stats_loop(self) -> None:
        while not self._stop.wait(self.settings.stats_interval_s):
            self.publish_stats()

    # -- shutdown -------------------------------------------------------------------------
    def drain(self, timeout: float) -> bool:
        """Wait until every submitted input is settled (its results acknowledged by the broker, the
        input acknowledged) and no output is awaiting its PUBACK (True), or ``timeout`` passed."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._unsettled or self._open_inputs:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(min(left, 0.05))
        return True

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self.queue.close()
        for thread in self._threads:
            thread.join(timeout)
