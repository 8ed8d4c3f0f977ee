"""A bounded priority queue with one FIFO lane per message kind.

``get`` serves the lane with the lowest priority number first (transcripts before logs);
``take_more`` drains further items of one lane to form a micro-batch, waiting a little for more
only while no higher-priority item is waiting. ``put`` blocks when the queue is full
(backpressure on the network thread) and counts each time it had to wait; nothing is dropped.

Lanes may be put in separate pools, each bounded by ``capacity`` on its own: inputs of the bulk
MQTT session (log lines) then never make a transcript's ``put`` wait.

A ``put`` wakes only a waiter that can take the item: a worker whose priority range holds the
lane, or a ``take_more`` of that lane or of a less urgent one. With a worker reserved for
transcripts beside the log workers, a transcript wakes no log worker that would find nothing to
do, and a log line does not wake the transcript worker.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Generic, TypeVar

__all__ = ["LaneQueue", "QueueClosed"]

T = TypeVar("T")
K = TypeVar("K")


class QueueClosed(Exception):
    """The queue was closed while a caller waited to put."""


class LaneQueue(Generic[T]):
    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("capacity must be >= 1")
        self.capacity = capacity
        self._lanes: dict[str, deque[T]] = {}
        self._priority: dict[str, int] = {}
        self._pool_of: dict[str, str] = {}
        self._pools: dict[str, int] = {}  # pool -> items queued in its lanes
        self._order: list[str] = []
        self._size = 0
        self._closed = False
        self._lock = threading.Lock()
        self._space = threading.Condition(self._lock)  # puts waiting for room in their pool
        # getters by priority range (max_priority, min_priority), take_more callers by lane
        self._getters: dict[tuple[int | None, int | None], threading.Condition] = {}
        self._takers: dict[str, threading.Condition] = {}
        self.backpressure_waits = 0
        self.backpressure_s = 0.0
        self.high_water = 0

    def add_lane(self, lane: str, priority: int, pool: str = "") -> None:
        """A lane served by ``priority`` (lowest first), bounded together with the lanes of ``pool``."""
        with self._lock:
            self._lanes.setdefault(lane, deque())
            self._priority[lane] = priority
            self._pool_of[lane] = pool
            self._pools.setdefault(pool, 0)
            self._order = sorted(self._lanes, key=lambda name: self._priority[name])

    def __len__(self) -> int:
        with self._lock:
            return self._size

    def put(self, lane: str, item: T) -> None:
        """Append to ``lane``; blocks while its pool is full (counted as backpressure)."""
        pool = self._pool_of[lane]
        with self._lock:
            if self._pools[pool] >= self.capacity and not self._closed:
                self.backpressure_waits += 1
                started = time.perf_counter()
                while self._pools[pool] >= self.capacity and not self._closed:
                    self._space.wait(0.5)
                self.backpressure_s += time.perf_counter() - started
            if self._closed:
                raise QueueClosed("queue closed")
            self._lanes[lane].append(item)
            self._pools[pool] += 1
            self._size += 1
            self.high_water = max(self.high_water, self._size)
            self._wake_for(lane)

    def _wake_for(self, lane: str) -> None:
        """Wake one getter that may take an item of ``lane``, and the ``take_more`` callers it
        concerns: of that lane, or of a less urgent one (they stop early). Caller holds the lock."""
        priority = self._priority[lane]
        for (max_priority, min_priority), cond in self._getters.items():
            if (max_priority is None or priority <= max_priority) and (
                min_priority is None or priority >= min_priority
            ):
                cond.notify()
        for name, cond in self._takers.items():
            if name == lane or self._priority[name] > priority:
                cond.notify_all()

    def get(
        self, timeout: float, max_priority: int | None = None, min_priority: int | None = None
    ) -> tuple[str, T] | None:
        """The next item of the most urgent non-empty lane, or None after ``timeout``. Only lanes
        whose priority number lies within ``min_priority``..``max_priority`` (when given): a
        worker reserved for interactive lanes, and the others that leave those lanes to it."""
        deadline = time.monotonic() + timeout
        with self._lock:
            cond = self._condition(self._getters, (max_priority, min_priority))
            while True:
                for lane in self._order:
                    priority = self._priority[lane]
                    if max_priority is not None and priority > max_priority:
                        break  # _order is sorted by priority
                    if min_priority is not None and priority < min_priority:
                        continue
                    items = self._lanes[lane]
                    if items:
                        self._size -= 1
                        self._pools[self._pool_of[lane]] -= 1
                        self._space.notify_all()
                        return lane, items.popleft()
                left = deadline - time.monotonic()
                if left <= 0 or self._closed:
                    return None
                cond.wait(left)

    def take_more(self, lane: str, limit: int, wait_s: float) -> list[T]:
        """Up to ``limit`` more items of ``lane``; waits up to ``wait_s`` for them to arrive,
        but returns early when a more urgent lane has work."""
        out: list[T] = []
        deadline = time.monotonic() + wait_s
        with self._lock:
            items = self._lanes[lane]
            while len(out) < limit:
                while items and len(out) < limit:
                    out.append(items.popleft())
                    self._size -= 1
                    self._pools[self._pool_of[lane]] -= 1
                if len(out) >= limit or self._urgent_than(lane) or self._closed:
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._condition(self._takers, lane).wait(left)
            if out:
                self._space.notify_all()
        return out

    def _condition(self, table: dict[K, threading.Condition], key: K) -> threading.Condition:
        """The condition that waiters of ``key`` wait on (made at its first waiter). Caller holds
        the lock."""
        cond = table.get(key)
        if cond is None:
            cond = table[key] = threading.Condition(self._lock)
        return cond

    def _urgent_than(self, lane: str) -> bool:
        mine = self._priority[lane]
        return any(self._lanes[name] for name in self._order if self._priority[name] < mine)

    def depths(self) -> dict[str, int]:
        with self._lock:
            return {name: len(items) for name, items in self._lanes.items()}

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for cond in (self._space, *self._getters.values(), *self._takers.values()):
                cond.notify_all()
