"""The pipeline queue's pools (one per MQTT session with ``mqtt.bulk_session``) and the dedup
claim path that must not wait for a group commit: what keeps a transcript off the log path."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from edge_agent.pipeline.dedup import Deduplicator, Verdict
from edge_agent.pipeline.queue import LaneQueue


def test_a_full_bulk_pool_does_not_block_an_interactive_put() -> None:
    queue: LaneQueue[str] = LaneQueue(2)
    queue.add_lane("transcript", 0)
    queue.add_lane("logs", 10, pool="bulk")
    queue.put("logs", "l1")
    queue.put("logs", "l2")
    blocked = threading.Event()
    done = threading.Event()

    def third_log() -> None:
        blocked.set()
        queue.put("logs", "l3")  # waits: the bulk pool is full
        done.set()

    threading.Thread(target=third_log, daemon=True).start()
    assert blocked.wait(2)
    assert not done.wait(0.2)
    queue.put("transcript", "t1")  # its own pool: returns at once
    queue.put("transcript", "t2")
    assert len(queue) == 4 and queue.depths() == {"transcript": 2, "logs": 2}
    assert queue.get(timeout=1) == ("transcript", "t1")  # still served first
    assert queue.get(timeout=1, min_priority=1) == ("logs", "l1")  # frees the bulk pool
    assert done.wait(2)
    assert queue.backpressure_waits == 1


def test_lanes_of_one_pool_share_its_bound() -> None:
    queue: LaneQueue[str] = LaneQueue(1)
    queue.add_lane("transcript", 0)
    queue.add_lane("hermes", 0)
    queue.put("transcript", "t")
    waiting = threading.Thread(target=queue.put, args=("hermes", "h"), daemon=True)
    waiting.start()
    waiting.join(0.2)
    assert waiting.is_alive()  # same pool: backpressure as before
    assert queue.get(timeout=1) == ("transcript", "t")
    waiting.join(2)
    assert not waiting.is_alive()
    assert queue.depths() == {"transcript": 0, "hermes": 1}


def test_a_claim_does_not_wait_for_a_group_commit_in_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dedup = Deduplicator(tmp_path / "d.db", commit_interval_s=0.01)
    writing = threading.Event()
    release = threading.Event()
    real_write = dedup._write

    def slow_write(rows: list[tuple[str, float]]) -> bool:
        writing.set()
        release.wait(10)  # a slow disk, or SQLite checkpointing the WAL
        return real_write(rows)

    monkeypatch.setattr(dedup, "_write", slow_write)
    assert dedup.begin("transcript\x1fa") is Verdict.NEW
    dedup.complete("transcript\x1fa")
    assert writing.wait(5)
    try:
        answers: list[Verdict] = []
        claim = threading.Thread(target=lambda: answers.extend(
            [dedup.begin("transcript\x1fb"), dedup.begin("transcript\x1fa")]))
        claim.start()
        claim.join(2)
        assert not claim.is_alive(), "a claim waited for the commit"
        # a new id is claimed; the id being written is already known as done
        assert answers == [Verdict.NEW, Verdict.DUPLICATE]
    finally:
        release.set()
    dedup.complete("transcript\x1fb")
    dedup.flush()
    assert dedup.begin("transcript\x1fb") is Verdict.DUPLICATE
    assert len(dedup) == 2
    dedup.close()


def test_log_work_yields_from_a_transcripts_admission_to_its_result() -> None:
    """Under a quota, batch work yields to a transcript as soon as it is admitted (while it is
    queued, recognized and its intent handed to the transport), not only during recognition."""
    from edge_agent.config import PipelineConfig
    from edge_agent.messages.topics import SiteTopics
    from edge_agent.pipeline.core import Envelope, HandlerBase, Outcome, Registry
    from edge_agent.pipeline.handlers import transcript_route
    from edge_agent.pipeline.pacing import CpuPacer
    from edge_agent.pipeline.service import Pipeline
    from edge_agent.runtime.quota import CpuGovernor
    from edge_agent.transport.base import Inbound

    class Transcripts(HandlerBase):
        kind = "transcript"
        priority = 0
        batch_max = 1
        batch_wait_s = 0.0

        def handle(self, batch: list[Envelope]) -> list[Outcome]:
            return [Outcome(inputs=batch, outputs=[])]

    class Acks:
        def __init__(self) -> None:
            self.acked: list[Inbound] = []

        def ack(self, inbound: Inbound) -> None:
            self.acked.append(inbound)

    topics = SiteTopics("edge", "s1")
    registry = Registry()
    registry.add(transcript_route(topics), Transcripts())
    pacer = CpuPacer(CpuGovernor(8.0), max_yield_s=10.0)
    acks = Acks()
    settings = PipelineConfig.model_validate({"stats_interval_s": 0})
    shared = Pipeline(registry, None, acks, topics, settings, pacer=pacer)  # type: ignore[arg-type]
    assert shared.pacer is None  # one pool for all kinds: yielding from admission could livelock
    pipeline = Pipeline(registry, None, acks, topics, settings,  # type: ignore[arg-type]
                        pacer=pacer, bulk_kinds=frozenset({"logs"}))
    inbound = Inbound(topic="edge/s1/transcript", payload=b"turn on", qos=1, mid=1, retain=False,
                      dup=False, received_at=time.time(), received_mono=time.perf_counter())
    pipeline.submit(inbound)  # admitted and queued; no worker has it yet
    log_batch = threading.Thread(target=pacer.pace)
    log_batch.start()
    log_batch.join(0.3)
    assert log_batch.is_alive()  # the log batch waits for the queued transcript
    got = pipeline.queue.get(timeout=1)
    assert got is not None
    for outcome in registry.handlers["transcript"].handle([got[1]]):
        pipeline.emit(outcome)  # the result is out: log work goes on
    log_batch.join(5)
    assert not log_batch.is_alive()
    assert acks.acked == [inbound]
    # never longer than max_yield_s per pace(): transcripts slow log work down, never stop it
    short = CpuPacer(CpuGovernor(8.0), max_yield_s=0.2)
    short.enter()
    started = time.monotonic()
    short.pace()
    assert 0.15 <= time.monotonic() - started < 3.0
    short.leave()


def _waiting(queue: LaneQueue[str], key: tuple[int | None, int | None]) -> int:
    """Getters of one priority range blocked in ``get`` and not yet woken (CPython's Condition)."""
    cond = queue._getters.get(key)
    return 0 if cond is None else len(cond._waiters)  # type: ignore[attr-defined]


def test_a_transcript_wakes_the_transcript_worker_and_not_a_log_worker() -> None:
    queue: LaneQueue[str] = LaneQueue(8)
    queue.add_lane("transcript", 0)
    queue.add_lane("logs", 10)
    got: dict[str, object] = {}

    def worker(name: str, **limits: int) -> None:
        got[name] = queue.get(timeout=3, **limits)

    logs = threading.Thread(target=worker, args=("logs",), kwargs={"min_priority": 1}, daemon=True)
    talk = threading.Thread(target=worker, args=("talk",), kwargs={"max_priority": 0}, daemon=True)
    logs.start()
    talk.start()
    deadline = time.monotonic() + 2
    while (_waiting(queue, (None, 1)), _waiting(queue, (0, None))) != (1, 1):
        assert time.monotonic() < deadline, "the two workers never waited"
        time.sleep(0.005)
    queue.put("transcript", "t1")
    # notify takes a woken waiter off its list at once: the transcript worker's list is empty,
    # the log worker still waits, unwoken (it would find nothing to take)
    assert _waiting(queue, (0, None)) == 0
    assert _waiting(queue, (None, 1)) == 1
    talk.join(2)
    assert got["talk"] == ("transcript", "t1")
    queue.put("logs", "l1")
    logs.join(2)
    assert got["logs"] == ("logs", "l1")


def test_a_log_batch_that_waits_to_fill_stops_early_for_a_transcript() -> None:
    queue: LaneQueue[str] = LaneQueue(8)
    queue.add_lane("transcript", 0)
    queue.add_lane("logs", 10)
    queue.put("logs", "l1")
    assert queue.get(timeout=1, min_priority=1) == ("logs", "l1")
    took: list[list[str]] = []
    started = time.monotonic()
    filler = threading.Thread(target=lambda: took.append(queue.take_more("logs", 8, 5.0)), daemon=True)
    filler.start()
    time.sleep(0.1)
    queue.put("transcript", "t1")  # more urgent work: the batch stops waiting
    filler.join(2)
    assert took == [[]] and time.monotonic() - started < 2
