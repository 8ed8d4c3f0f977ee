"""Admission of inputs: duplicate suppression (persisted across restarts) and per-source rate limits.

A redelivered input (broker retry after a lost ack, an agent restart, a device that retries)
carries the same id and must produce its result once. The life of an id::

    verdict = dedup.begin(key)     # NEW: process it; DUPLICATE: ack and drop; IN_FLIGHT: ack and drop
    ... publish the result, or put it in the outbox ...
    dedup.complete(key)            # persisted; from now on the id is a duplicate
    # or dedup.abandon(key) when processing ended without a result (the id may come again)

An id is marked done only once its result is safe, so a crash between ``begin`` and
``complete`` lets the redelivered copy be processed rather than lost. Ids are kept in SQLite
(WAL) for ``window_s`` and at most ``max_ids`` of them (oldest pruned first). Completions are
written in group commits every ``commit_interval_s`` (50 ms) by a thread of their own, while
claims and checks go on (a commit never holds up a transcript): a process killed in that interval
forgets those ids, which only matters for an input whose acknowledgement was lost as well; its
redelivered copy is then answered again, with the same id.

Inputs without an id are keyed by a hash of topic and payload. Such a key is always recorded,
but only *checked* when the broker marks the delivery as a redelivery (the MQTT DUP flag): two
identical commands sent on purpose are both processed, a redelivered copy is not
(:func:`input_key`).

:class:`RateLimiter` is a token bucket per source (a device, a log source) so one noisy sender
cannot fill the queue; what it refuses goes to the DLQ with the reason, never silently.
"""

from __future__ import annotations

import enum
import hashlib
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import orjson

from edge_agent.store.outbox import open_sqlite

__all__ = ["Deduplicator", "InputKey", "RateLimiter", "Verdict", "dedup_key", "input_key", "message_id"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS dedup_seen (key TEXT PRIMARY KEY, at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS dedup_seen_at ON dedup_seen (at);
"""
_MAX_KEY = 512
_MAX_ID = 256
_GROUP_MAX = 512  # ids that wake the committer before its interval is up
_BACKLOG_MAX = 8 * _GROUP_MAX  # ids waiting from which complete() commits itself (the committer lags)
_PRUNE_EVERY = 1000


class Verdict(enum.Enum):
    NEW = "new"
    DUPLICATE = "duplicate"
    IN_FLIGHT = "in_flight"


def dedup_key(kind: str, message_id: str) -> str:
    """Key for an input: ids are unique per kind (``transcript``, ``logs/<source>``), not globally."""
    return f"{kind}\x1f{message_id}"


@dataclass(frozen=True)
class InputKey:
    """``key`` to record once the input's result is safe; ``check``: suppress it if already seen."""

    key: str
    check: bool


def message_id(payload: bytes) -> str | None:
    """The ``id`` of a JSON-object payload (string or integer), else None. Never raises."""
    if payload.lstrip()[:1] != b"{":
        return None
    try:
        data = orjson.loads(payload)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(data, dict):
        return None
    ident = data.get("id")
    if isinstance(ident, bool) or not isinstance(ident, str | int):
        return None
    text = str(ident)
    return text if 0 < len(text) <= _MAX_ID else None


def input_key(kind: str, topic: str, payload: bytes, *, redelivery: bool) -> InputKey:
    """Dedup key of an input: by its ``id`` when it has one, else by content (checked on DUP only)."""
    ident = message_id(payload)
    if ident is not None:
        return InputKey(dedup_key(kind, ident), check=True)
    digest = hashlib.sha256(topic.encode("utf-8", "surrogateescape") + b"\x00" + payload).hexdigest()[:32]
    return InputKey(dedup_key(kind, f"#{digest}"), check=redelivery)


class Deduplicator:
    """Thread-safe id window; ``path`` None keeps it in memory only (tests, tools).

    Claims and checks (:meth:`begin`, on the network threads) never wait for a group commit:
    completed ids move from ``pending`` to ``committing`` while the commit writes them, and are
    looked up there; on disk they are read through a second connection, which WAL lets read
    while the other one writes (a commit can take tens of ms when SQLite checkpoints the WAL)."""

    def __init__(
        self,
        path: str | Path | None,
        *,
        window_s: float = 24 * 3600.0,
        max_ids: int = 500_000,
        commit_interval_s: float = 0.05,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if window_s <= 0 or max_ids <= 0 or commit_interval_s < 0:
            raise ValueError("window_s and max_ids must be positive, commit_interval_s >= 0")
        self.window_s, self.max_ids = window_s, max_ids
        self.commit_interval_s = commit_interval_s
        self._clock = clock
        # lock order: _commit_lock, then _lock or _db_lock (never _db_lock, then _lock)
        self._lock = threading.Lock()  # the in-memory state below
        self._db_lock = threading.Lock()  # the writing connection
        self._commit_lock = threading.Lock()  # one group commit at a time, in order
        self._in_flight: set[str] = set()
        self._pending: dict[str, float] = {}  # completed, written at the next group commit
        self._committing: dict[str, float] = {}  # being written by the current group commit
        self._unsaved: OrderedDict[str, float] = OrderedDict()  # completions the disk refused
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._committer: threading.Thread | None = None
        self._since_prune = 0
        self.duplicates = 0
        self.persist_errors = 0
        target = ":memory:" if path is None else str(path)
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._db = open_sqlite(target, "NORMAL", _SCHEMA)  # WAL+NORMAL survives a killed process
        # reads under _lock: a file gets its own reading connection; an in-memory database exists
        # only in its one connection, so reads share it (and its lock) with the writer
        self._reader = open_sqlite(target, "NORMAL", _SCHEMA) if path is not None else self._db
        self._read_lock = threading.Lock() if path is not None else self._db_lock
        self.prune()

    def begin(self, key: str, *, check: bool = True) -> Verdict:
        """Claim ``key`` for processing unless it was completed within the window or is in flight.

        ``check=False`` (content keys of first deliveries) always answers NEW and tracks nothing;
        the key is still recorded by :meth:`complete`.
        """
        key = _check_key(key)
        if not check:
            return Verdict.NEW
        with self._lock:
            if key in self._in_flight:
                self.duplicates += 1
                return Verdict.IN_FLIGHT
            if self._done_at(key) >= self._clock() - self.window_s:
                self.duplicates += 1
                return Verdict.DUPLICATE
            self._in_flight.add(key)
            return Verdict.NEW

    def complete(self, key: str) -> None:
        """The result of ``key`` is published or in the outbox: remember the id.

        It counts as done at once; it reaches the disk with the next group commit (at most
        ``commit_interval_s`` later, sooner once 512 ids wait, or immediately when the interval
        is 0), one transaction for many ids, written by the committer thread (by the caller when
        4096 ids are waiting: the disk is slower than the inputs).
        """
        key = _check_key(key)
        with self._lock:
            self._pending[key] = self._clock()
            self._in_flight.discard(key)
            waiting = len(self._pending)
            start = self._committer is None and self.commit_interval_s > 0
            if start:
                self._committer = threading.Thread(target=self._commit_loop, name="dedup-commit", daemon=True)
        if self.commit_interval_s == 0 or waiting >= _BACKLOG_MAX:  # no interval, or the committer lags
            self._commit()
            return
        if start:
            assert self._committer is not None
            self._committer.start()
        if waiting >= _GROUP_MAX:
            self._wake.set()

    def flush(self) -> None:
        """Write completed ids now (also done by :meth:`close`)."""
        self._commit()

    def _commit_loop(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self.commit_interval_s)
            self._wake.clear()
            self._commit()

    def _commit(self) -> None:
        with self._commit_lock:
            with self._lock:
                rows, self._pending = self._pending, {}
                self._committing.update(rows)
            if not rows:
                return
            saved = self._write(list(rows.items()))
            with self._lock:
                for key, at in rows.items():  # on disk now (or in _unsaved): readable there
                    if self._committing.get(key) == at:
                        del self._committing[key]
                if not saved:
                    self.persist_errors += 1
                    self._unsaved.update(rows)
                    while len(self._unsaved) > self.max_ids:
                        self._unsaved.popitem(last=False)
                self._since_prune += len(rows)
                prune = self._since_prune >= _PRUNE_EVERY
            if prune:
                self._prune()

    def _write(self, rows: list[tuple[str, float]]) -> bool:
        with self._db_lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.executemany(
                    "INSERT INTO dedup_seen (key, at) VALUES (?, ?)"
                    " ON CONFLICT(key) DO UPDATE SET at = excluded.at",
                    rows,
                )
                self._db.execute("COMMIT")
            except sqlite3.OperationalError:  # disk full or read-only: still dedup in this process
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                return False
        return True

    def abandon(self, key: str) -> None:
        """Processing of ``key`` ended without a safe result; a later copy will be processed."""
        with self._lock:
            self._in_flight.discard(key)

    def seen(self, key: str) -> bool:
        """True when ``key`` was completed within the window."""
        key = _check_key(key)
        with self._lock:
            return self._done_at(key) >= self._clock() - self.window_s

    def _done_at(self, key: str) -> float:
        """When ``key`` was completed, or -inf. Caller holds the lock."""
        pending = self._pending.get(key, self._committing.get(key))
        if pending is not None:
            return pending
        with self._read_lock:
            row = self._reader.execute("SELECT at FROM dedup_seen WHERE key = ?", (key,)).fetchone()
        if row is not None:
            return float(row[0])
        return self._unsaved.get(key, float("-inf"))

    def prune(self) -> int:
        """Forget ids older than the window, then the oldest beyond ``max_ids``. Returns rows removed."""
        self._commit()
        with self._commit_lock:
            return self._prune()

    def __len__(self) -> int:
        self._commit()
        with self._db_lock:
            return int(self._db.execute("SELECT COUNT(*) FROM dedup_seen").fetchone()[0])

    @property
    def in_flight(self) -> int:
        return len(self._in_flight)

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._committer is not None:
            self._committer.join(5)
        self._commit()
        with self._db_lock:
            if self._reader is not self._db:
                self._reader.close()
            self._db.close()

    def _prune(self) -> int:
        """Caller holds _commit_lock (so no commit runs meanwhile)."""
        cutoff = self._clock() - self.window_s
        with self._lock:
            self._since_prune = 0
            while self._unsaved and next(iter(self._unsaved.values())) < cutoff:
                self._unsaved.popitem(last=False)
        try:
            with self._db_lock:
                return self._prune_db(cutoff)
        except sqlite3.OperationalError:
            with self._lock:
                self.persist_errors += 1
            return 0

    def _prune_db(self, cutoff: float) -> int:
        removed = self._db.execute("DELETE FROM dedup_seen WHERE at < ?", (cutoff,)).rowcount
        excess = int(self._db.execute("SELECT COUNT(*) FROM dedup_seen").fetchone()[0]) - self.max_ids
        if excess > 0:
            removed += self._db.execute(
                "DELETE FROM dedup_seen WHERE key IN (SELECT key FROM dedup_seen ORDER BY at LIMIT ?)",
                (excess,),
            ).rowcount
        return int(removed)


def _check_key(key: str) -> str:
    if not key or len(key) > _MAX_KEY:
        raise ValueError(f"dedup key must be 1..{_MAX_KEY} characters")
    return key


class RateLimiter:
    """Token bucket per source: ``rate`` inputs per second sustained, ``burst`` at once.

    ``allow(source)`` is False when the source is over its budget. At most ``max_sources``
    buckets are kept (the least recently used is forgotten), so random source names cannot
    grow memory without bound.
    """

    def __init__(
        self,
        rate: float,
        burst: float,
        *,
        max_sources: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if rate <= 0 or burst < 1 or max_sources < 1:
            raise ValueError("rate must be > 0, burst >= 1, max_sources >= 1")
        self.rate, self.burst, self.max_sources = rate, burst, max_sources
        self._clock = clock
        self._lock = threading.Lock()
        self._buckets: OrderedDict[str, list[float]] = OrderedDict()
        self.limited = 0

    def allow(self, source: str) -> bool:
        now = self._clock()
        with self._lock:
            bucket = self._buckets.pop(source, None)
            if bucket is None:
                bucket = [self.burst, now]
            tokens = min(self.burst, bucket[0] + (now - bucket[1]) * self.rate)
            ok = tokens >= 1.0
            bucket[0], bucket[1] = (tokens - 1.0 if ok else tokens), now
            self._buckets[source] = bucket
            while len(self._buckets) > self.max_sources:
                self._buckets.popitem(last=False)
            if not ok:
                self.limited += 1
            return ok

    def __len__(self) -> int:
        """Sources currently tracked."""
        with self._lock:
            return len(self._buckets)
