"""Durable outbox: results that could not be published wait here (SQLite, WAL) until they can.

* Bounded: ``max_bytes`` of payload+topic and ``max_rows``. A put that would exceed either
  raises :class:`OutboxFull`; nothing already stored is evicted to make room. The caller then
  leaves the input unacknowledged, so the broker keeps it (backpressure, not loss).
* TTL: rows older than ``ttl_s`` are removed on the next put/flush and counted as ``expired``
  (the only way a row leaves without being published; the counter survives restarts).
* Priority: lower number first (``PRIORITY_INTENT`` before ``PRIORITY_SUMMARY``); FIFO within
  a priority. :meth:`Outbox.flush` publishes in that order and stops at the first failure, so
  order is kept across reconnects.
* Durable: each put is committed before it returns (``synchronous=FULL`` by default, so it
  survives power loss as well as a killed process).

Thread-safe: one connection guarded by a lock; the network thread and workers may share it.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from edge_agent.errors import EdgeAgentError

__all__ = [
    "CACHE_KIB",
    "PRIORITY_ALERT",
    "PRIORITY_DLQ",
    "PRIORITY_INTENT",
    "PRIORITY_OTHER",
    "PRIORITY_SUMMARY",
    "RETRY_LATER",
    "DurablePublisher",
    "Outbox",
    "OutboxFull",
    "OutboxItem",
    "OutboxStats",
    "default_priority",
    "open_sqlite",
]

PRIORITY_INTENT = 0
PRIORITY_ALERT = 1
PRIORITY_DLQ = 2
PRIORITY_SUMMARY = 3
PRIORITY_OTHER = 9

_SCHEMA = """
CREATE TABLE IF NOT EXISTS outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    priority INTEGER NOT NULL,
    topic TEXT NOT NULL,
    payload BLOB NOT NULL,
    qos INTEGER NOT NULL,
    retain INTEGER NOT NULL,
    created REAL NOT NULL,
    size INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS outbox_order ON outbox (priority, id);
CREATE TABLE IF NOT EXISTS outbox_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""


# page cache of each SQLite connection, KiB
CACHE_KIB = 256


def open_sqlite(
    path: str | Path, synchronous: str, schema: str, *, wait_s: float = 30.0
) -> sqlite3.Connection:
    """A WAL-mode connection usable from several threads, with ``schema`` applied.

    Several processes may open the same file at once (agents sharing a state directory); switching
    a new database to WAL needs a moment of exclusive access, so "database is locked" is retried
    for up to ``wait_s`` seconds instead of failing the start. Each connection's page cache is
    bounded to :data:`CACHE_KIB` (SQLite's default, 2 MB, would grow the agent's RSS by that much
    per connection as a dedup table fills; the pages stay in the OS page cache either way).
    """
    db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=wait_s)
    db.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
    deadline = time.monotonic() + wait_s
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(f"PRAGMA synchronous={synchronous}")
            db.executescript(schema)
            return db
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                db.close()
                raise
            time.sleep(0.05)


class OutboxFull(EdgeAgentError):
    """The outbox is at its size/row bound (or the disk is full); leave the input unacked."""


@dataclass(frozen=True)
class OutboxItem:
    id: int
    priority: int
    topic: str
    payload: bytes
    qos: int
    retain: bool
    created: float


@dataclass(frozen=True)
class OutboxStats:
    rows: int
    bytes: int
    by_priority: dict[int, int]
    oldest_age_s: float | None
    put: int
    published: int
    expired: int
    refused_full: int
    max_bytes: int
    max_rows: int

    def to_dict(self) -> dict[str, object]:
        return {
            "rows": self.rows,
            "bytes": self.bytes,
            "by_priority": {str(k): v for k, v in self.by_priority.items()},
            "oldest_age_s": self.oldest_age_s,
            "put": self.put,
            "published": self.published,
            "expired": self.expired,
            "refused_full": self.refused_full,
            "max_bytes": self.max_bytes,
            "max_rows": self.max_rows,
        }


class Outbox:
    """An on-disk, bounded, prioritized FIFO of MQTT publishes."""

    def __init__(
        self,
        path: str | Path,
        *,
        max_bytes: int = 64 << 20,
        max_rows: int = 200_000,
        ttl_s: float = 7 * 86400.0,
        synchronous: str = "FULL",
        clock: Callable[[], float] = time.time,
    ) -> None:
        if max_bytes <= 0 or max_rows <= 0 or ttl_s <= 0:
            raise ValueError("outbox bounds must be positive")
        if synchronous not in ("FULL", "NORMAL"):
            raise ValueError("synchronous must be FULL or NORMAL")
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.max_bytes, self.max_rows, self.ttl_s = max_bytes, max_rows, ttl_s
        self._clock = clock
        self._lock = threading.Lock()
        self._db = open_sqlite(self.path, synchronous, _SCHEMA)
        row = self._db.execute("SELECT COUNT(*), COALESCE(SUM(size), 0) FROM outbox").fetchone()
        self._rows, self._bytes = int(row[0]), int(row[1])

    # ------------------------------------------------------------------ writes
    def put(self, topic: str, payload: bytes, *, priority: int, qos: int = 1, retain: bool = False) -> int:
        """Store one publish durably; returns its row id. Raises OutboxFull at the bound."""
        size = len(payload) + len(topic.encode())
        with self._lock:
            self._expire_locked()
            if self._rows + 1 > self.max_rows or self._bytes + size > self.max_bytes:
                self._bump("refused_full")
                raise OutboxFull(
                    f"outbox {self.path} is full ({self._rows} rows, {self._bytes} of {self.max_bytes} bytes)"
                )
            try:
                with self._tx():
                    cur = self._db.execute(
                        "INSERT INTO outbox (priority, topic, payload, qos, retain, created, size)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (priority, topic, payload, qos, int(retain), self._clock(), size),
                    )
                    self._bump_in_tx("put")
            except sqlite3.OperationalError as exc:
                self._bump("refused_full")
                raise OutboxFull(f"outbox {self.path}: cannot store: {exc}") from exc
            self._rows += 1
            self._bytes += size
            return int(cur.lastrowid or 0)

    def remove(self, ids: Iterable[int]) -> int:
        """Delete published rows (after the broker acknowledged them). Returns rows removed."""
        id_list = list(ids)
        if not id_list:
            return 0
        with self._lock, self._tx():
            marks = ",".join("?" * len(id_list))
            row = self._db.execute(
                f"SELECT COUNT(*), COALESCE(SUM(size), 0) FROM outbox WHERE id IN ({marks})", id_list
            ).fetchone()
            self._db.execute(f"DELETE FROM outbox WHERE id IN ({marks})", id_list)
            self._bump_in_tx("published", int(row[0]))
            self._rows -= int(row[0])
            self._bytes -= int(row[1])
            return int(row[0])

    def expire(self) -> int:
        """Drop rows older than the TTL now; returns how many."""
        with self._lock:
            return self._expire_locked()

    # ------------------------------------------------------------------ reads
    def peek(self, limit: int = 100) -> list[OutboxItem]:
        """The next ``limit`` rows in publish order (priority, then age)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id, priority, topic, payload, qos, retain, created FROM outbox"
                " ORDER BY priority, id LIMIT ?",
                (limit,),
            ).fetchall()
        return [OutboxItem(r[0], r[1], r[2], bytes(r[3]), r[4], bool(r[5]), r[6]) for r in rows]

    def flush(self, send: Callable[[OutboxItem], bool], *, batch: int = 100) -> int:
        """Publish everything in order. ``send`` returns True once the broker acknowledged the item.

        Stops at the first False (connection gone again) and keeps that item and all later ones.
        Returns how many were published.
        """
        done = 0
        self.expire()
        while items := self.peek(batch):
            for item in items:
                if not send(item):
                    return done
                self.remove([item.id])
                done += 1
        return done

    def __len__(self) -> int:
        return self._rows

    def stats(self) -> OutboxStats:
        with self._lock:
            by_prio = dict(
                self._db.execute("SELECT priority, COUNT(*) FROM outbox GROUP BY priority").fetchall()
            )
            oldest = self._db.execute("SELECT MIN(created) FROM outbox").fetchone()[0]
            counters = dict(self._db.execute("SELECT key, value FROM outbox_meta").fetchall())
        return OutboxStats(
            rows=self._rows,
            bytes=self._bytes,
            by_priority={int(k): int(v) for k, v in by_prio.items()},
            oldest_age_s=None if oldest is None else max(0.0, self._clock() - float(oldest)),
            max_bytes=self.max_bytes,
            max_rows=self.max_rows,
            put=int(counters.get("put", 0)),
            published=int(counters.get("published", 0)),
            expired=int(counters.get("expired", 0)),
            refused_full=int(counters.get("refused_full", 0)),
        )

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # ------------------------------------------------------------------ internals
    def _expire_locked(self) -> int:
        cutoff = self._clock() - self.ttl_s
        with self._tx():
            row = self._db.execute(
                "SELECT COUNT(*), COALESCE(SUM(size), 0) FROM outbox WHERE created < ?", (cutoff,)
            ).fetchone()
            n = int(row[0])
            if n:
                self._db.execute("DELETE FROM outbox WHERE created < ?", (cutoff,))
                self._bump_in_tx("expired", n)
        self._rows -= n
        self._bytes -= int(row[1])
        return n

    def _tx(self) -> _Transaction:
        return _Transaction(self._db)

    def _bump_in_tx(self, name: str, n: int = 1) -> None:
        self._db.execute(
            "INSERT INTO outbox_meta (key, value) VALUES (?, ?)"
            " ON CONFLICT(key) DO UPDATE SET value = value + excluded.value",
            (name, n),
        )

    def _bump(self, name: str) -> None:
        try:
            with self._tx():
                self._bump_in_tx(name)
        except sqlite3.OperationalError:
            pass  # disk full: the counter is best effort, the refusal itself is what matters


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT / ROLLBACK on a connection in autocommit mode."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self._db.execute("COMMIT" if exc_type is None else "ROLLBACK")


# ---------------------------------------------------------------------------------------------
# DurablePublisher: a Publisher that falls back to the outbox


RETRY_LATER = -2001
"""``PublishOutcome.reason_code`` when a result was neither published nor stored (outbox full while
the broker is unreachable): the pipeline must leave the input unacknowledged for redelivery."""

STORED = 0


OutcomeFactory = Callable[[bool, int, str], Any]
DoneCallback = Callable[[Any], None]


class LinkPublisher(Protocol):
    """What DurablePublisher needs from the transport: publish with a completion callback."""

    @property
    def connected(self) -> bool: ...

    def publish(
        self, topic: str, payload: bytes, *, qos: int = 1, retain: bool = False, on_done: Any = None
    ) -> None: ...


def default_priority(topic: str) -> int:
    """Outbox priority from the topic layout ``{prefix}/{site}/<kind>[/<source>]``."""
    levels = topic.split("/")
    for level, prio in (
        ("intent", PRIORITY_INTENT),
        ("alert", PRIORITY_ALERT),
        ("dlq", PRIORITY_DLQ),
        ("summary", PRIORITY_SUMMARY),
    ):
        if level in levels[-2:]:
            return prio
    return PRIORITY_OTHER


@dataclass
class _Direct:
    """A result handed to the transport, not yet acknowledged."""

    topic: str
    payload: bytes
    qos: int
    retain: bool
    on_done: DoneCallback | None
    deadline: float
    settled: bool = False


class DurablePublisher:
    """Publish through ``link``; when that is impossible, store in the outbox and report success.

    * connected and the outbox empty: publish directly; a PUBACK settles it. A broker refusal
      (reason code >= 0x80) is passed through as a failure (it would be refused again).
    * disconnected, a local publish failure, or no PUBACK within ``ack_timeout_s``: the result is
      put in the outbox and reported as done (``reason_code`` 0, reason ``stored in outbox``).
    * while the outbox is not empty, new results queue behind it so order is kept; a background
      flusher publishes the outbox (priority, then FIFO) whenever the link is up.
    * outbox full while disconnected: reported as failed with ``RETRY_LATER``: the caller must
      not acknowledge the input (the broker keeps it). While connected, a full outbox is bypassed.
    * QoS 0 (stats) is never stored.

    ``make_outcome(ok, reason_code, reason)`` builds the transport's PublishOutcome.
    """

    def __init__(
        self,
        link: LinkPublisher,
        outbox: Outbox,
        make_outcome: OutcomeFactory,
        *,
        priority_of: Callable[[str], int] = default_priority,
        ack_timeout_s: float = 10.0,
        flush_window: int = 64,
    ) -> None:
        self.link = link
        self.outbox = outbox
        self._outcome = make_outcome
        self._priority_of = priority_of
        self.ack_timeout_s = ack_timeout_s
        self.flush_window = flush_window
        self._lock = threading.Lock()
        self._direct: dict[int, _Direct] = {}
        self._seq = 0
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.counters = {
            "direct": 0,
            "stored": 0,
            "flushed": 0,
            "refused_retry": 0,
            "timeouts": 0,
            "flush_refused": 0,
        }

    # -- lifecycle ----------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._flush_loop, name="outbox-flusher", daemon=True)
        self._thread.start()

    def on_connected(self) -> None:
        """Call from the transport's on-connect hook: starts a flush."""
        self._wake.set()

    def close(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def stats(self) -> dict[str, Any]:
        with self._lock:
            out: dict[str, Any] = dict(self.counters)
            out["awaiting_ack"] = len(self._direct)
        out["outbox"] = self.outbox.stats().to_dict()
        return out

    # -- Publisher ------------------------------------------------------------------------
    def publish(
        self,
        topic: str,
        payload: bytes,
        *,
        qos: int = 1,
        retain: bool = False,
        on_done: DoneCallback | None = None,
    ) -> None:
        if qos == 0:
            self.link.publish(topic, payload, qos=0, retain=retain, on_done=on_done)
            return
        if self.link.connected and len(self.outbox) == 0:
            self._publish_direct(topic, payload, qos, retain, on_done)
            return
        self._store(topic, payload, qos, retain, on_done, bypass_when_full=True)

    def _publish_direct(
        self, topic: str, payload: bytes, qos: int, retain: bool, on_done: DoneCallback | None
    ) -> None:
        entry = _Direct(topic, payload, qos, retain, on_done, time.monotonic() + self.ack_timeout_s)
        with self._lock:
            self._seq += 1
            token = self._seq
            self._direct[token] = entry
            self.counters["direct"] += 1

        def done(outcome: Any) -> None:
            self._direct_done(token, outcome)

        self.link.publish(topic, payload, qos=qos, retain=retain, on_done=done)

    def _direct_done(self, token: int, outcome: Any) -> None:
        with self._lock:
            entry = self._direct.pop(token, None)
            if entry is None or entry.settled:
                return  # already moved to the outbox after a timeout
            entry.settled = True
        if outcome.ok or outcome.reason_code >= 0x80:
            _call(entry.on_done, outcome)  # acknowledged, or refused by the broker for good
            return
        self._store(
            entry.topic, entry.payload, entry.qos, entry.retain, entry.on_done, bypass_when_full=False
        )

    def _store(
        self,
        topic: str,
        payload: bytes,
        qos: int,
        retain: bool,
        on_done: DoneCallback | None,
        *,
        bypass_when_full: bool,
    ) -> None:
        try:
            self.outbox.put(topic, payload, priority=self._priority_of(topic), qos=qos, retain=retain)
        except OutboxFull as exc:
            if bypass_when_full and self.link.connected:
                self._publish_direct(topic, payload, qos, retain, on_done)
                return
            with self._lock:
                self.counters["refused_retry"] += 1
            _call(on_done, self._outcome(False, RETRY_LATER, f"not published and not stored: {exc}"))
            return
        with self._lock:
            self.counters["stored"] += 1
        self._wake.set()
        _call(on_done, self._outcome(True, STORED, "stored in outbox"))

    # -- timeouts and flushing (background thread) --------------------------------------
    def _expire_direct(self) -> None:
        now = time.monotonic()
        with self._lock:
            late = [(t, e) for t, e in self._direct.items() if e.deadline <= now and not e.settled]
            for token, entry in late:
                entry.settled = True
                del self._direct[token]
                self.counters["timeouts"] += 1
        for _token, entry in late:
            self._store(
                entry.topic, entry.payload, entry.qos, entry.retain, entry.on_done, bypass_when_full=False
            )

    def _flush_loop(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(0.5)
            self._wake.clear()
            self._expire_direct()
            while not self._stop.is_set() and self.link.connected and len(self.outbox) and self._flush_once():
                pass

    def _flush_once(self) -> bool:
        """Publish one window of the outbox; True when all of it was acknowledged."""
        items = self.outbox.peek(self.flush_window)
        if not items:
            return False
        results: dict[int, Any] = {}
        all_done = threading.Event()
        lock = threading.Lock()

        def done_for(item_id: int) -> DoneCallback:
            def done(outcome: Any) -> None:
                with lock:
                    results[item_id] = outcome
                    if len(results) == len(items):
                        all_done.set()

            return done

        for item in items:
            self.link.publish(
                item.topic, item.payload, qos=item.qos, retain=item.retain, on_done=done_for(item.id)
            )
        all_done.wait(self.ack_timeout_s)
        with lock:
            settled = dict(results)
        gone = [i for i, o in settled.items() if o.ok or o.reason_code >= 0x80]
        refused = sum(1 for i in gone if not settled[i].ok)
        self.outbox.remove(gone)
        with self._lock:
            self.counters["flushed"] += len(gone) - refused
            self.counters["flush_refused"] += refused
        return len(gone) == len(items)


def _call(callback: DoneCallback | None, outcome: Any) -> None:
    if callback is not None:
        callback(outcome)
