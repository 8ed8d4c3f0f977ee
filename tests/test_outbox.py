"""Durable outbox on real SQLite files: order, bounds, TTL, crash survival, a write-limited disk."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from edge_agent.store.outbox import (
    PRIORITY_ALERT,
    PRIORITY_INTENT,
    PRIORITY_SUMMARY,
    Outbox,
    OutboxFull,
    OutboxItem,
)

REPO = Path(__file__).resolve().parent.parent


class Clock:
    def __init__(self, t: float = 1000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def test_flush_order_is_priority_then_fifo(tmp_path: Path) -> None:
    ob = Outbox(tmp_path / "o.db")
    ob.put("s/summary/a", b"s1", priority=PRIORITY_SUMMARY)
    ob.put("s/intent", b"i1", priority=PRIORITY_INTENT)
    ob.put("s/summary/a", b"s2", priority=PRIORITY_SUMMARY)
    ob.put("s/alert/a", b"a1", priority=PRIORITY_ALERT)
    ob.put("s/intent", b"i2", priority=PRIORITY_INTENT)
    sent: list[bytes] = []
    assert ob.flush(lambda item: sent.append(item.payload) or True) == 5
    assert sent == [b"i1", b"i2", b"a1", b"s1", b"s2"]
    assert len(ob) == 0
    stats = ob.stats()
    assert stats.put == 5 and stats.published == 5 and stats.rows == 0 and stats.bytes == 0


def test_flush_stops_at_first_failure_and_resumes_in_order(tmp_path: Path) -> None:
    ob = Outbox(tmp_path / "o.db")
    for i in range(6):
        ob.put("t", str(i).encode(), priority=PRIORITY_INTENT, qos=1, retain=i == 0)
    sent: list[OutboxItem] = []

    def broker_drops_after_three(item: OutboxItem) -> bool:
        if len(sent) == 3:
            return False
        sent.append(item)
        return True

    assert ob.flush(broker_drops_after_three) == 3
    assert [i.payload for i in sent] == [b"0", b"1", b"2"] and sent[0].retain and not sent[1].retain
    assert [i.payload for i in ob.peek()] == [b"3", b"4", b"5"]
    rest: list[bytes] = []
    assert ob.flush(lambda item: rest.append(item.payload) or True) == 3
    assert rest == [b"3", b"4", b"5"]


def test_rows_survive_reopen_and_wal_is_on(tmp_path: Path) -> None:
    path = tmp_path / "o.db"
    ob = Outbox(path)
    ob.put("edge/x/intent", b'{"id":"1"}', priority=PRIORITY_INTENT)
    ob.put("edge/x/summary/k", b'{"n":2}', priority=PRIORITY_SUMMARY)
    ob.close()
    again = Outbox(path)
    assert [(i.topic, i.payload) for i in again.peek()] == [
        ("edge/x/intent", b'{"id":"1"}'),
        ("edge/x/summary/k", b'{"n":2}'),
    ]
    assert again.stats().bytes == sum(len(i.payload) + len(i.topic) for i in again.peek())
    mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_rows_survive_a_killed_process(tmp_path: Path) -> None:
    path = tmp_path / "o.db"
    script = textwrap.dedent(
        f"""
        import os, signal
        from edge_agent.store.outbox import Outbox
        ob = Outbox({str(path)!r})
        for i in range(50):
            ob.put("t", b"row%d" % i, priority=i % 3)
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, timeout=60)
    assert proc.returncode == -9
    ob = Outbox(path)
    assert len(ob) == 50
    assert ob.stats().put == 50
    first = ob.peek(3)
    assert [i.priority for i in first] == [0, 0, 0] and first[0].payload == b"row0"


def test_bounds_refuse_new_rows_and_keep_old_ones(tmp_path: Path) -> None:
    ob = Outbox(tmp_path / "o.db", max_rows=3, max_bytes=10_000)
    for i in range(3):
        ob.put("t", b"x" * 10, priority=PRIORITY_SUMMARY, qos=i % 2)
    with pytest.raises(OutboxFull, match="full"):
        ob.put("t", b"intent", priority=PRIORITY_INTENT)
    small = Outbox(tmp_path / "p.db", max_bytes=100)
    small.put("t", b"a" * 60, priority=PRIORITY_INTENT)
    with pytest.raises(OutboxFull):
        small.put("t", b"b" * 60, priority=PRIORITY_INTENT)
    small.put("t", b"c" * 30, priority=PRIORITY_INTENT)  # still fits
    assert [len(i.payload) for i in small.peek()] == [60, 30]
    assert ob.stats().refused_full == 1 and small.stats().refused_full == 1
    assert len(ob) == 3
    ob.flush(lambda _item: True)
    ob.put("t", b"intent", priority=PRIORITY_INTENT)  # room again once flushed
    assert len(ob) == 1


def test_ttl_expires_old_rows_and_counts_them(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "o.db"
    ob = Outbox(path, ttl_s=60, clock=clock)
    ob.put("t", b"old", priority=PRIORITY_INTENT)
    clock.t += 30
    ob.put("t", b"newer", priority=PRIORITY_INTENT)
    assert ob.stats().oldest_age_s == pytest.approx(30)
    clock.t += 45
    sent: list[bytes] = []
    ob.flush(lambda item: sent.append(item.payload) or True)
    assert sent == [b"newer"]
    ob.close()
    stats = Outbox(path, ttl_s=60, clock=clock).stats()
    assert stats.expired == 1 and stats.published == 1


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    ob = Outbox(tmp_path / "o.db", synchronous="NORMAL")

    def writer(n: int) -> None:
        for i in range(100):
            ob.put(f"w{n}", f"{n}:{i}".encode(), priority=n % 2)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    payloads = [i.payload for i in ob.peek(1000)]
    assert len(payloads) == 400 and len(set(payloads)) == 400
    per_writer = [[p for p in payloads if p.startswith(f"{n}:".encode())] for n in range(4)]
    for rows in per_writer:  # FIFO within each writer
        assert rows == sorted(rows, key=lambda p: int(p.split(b":")[1]))


def test_full_disk_is_a_refusal_not_a_crash(tmp_path: Path) -> None:
    """RLIMIT_FSIZE makes the kernel refuse writes past a size, like a full partition."""
    path = tmp_path / "o.db"
    script = textwrap.dedent(
        f"""
        import resource, signal, sys
        from edge_agent.store.outbox import Outbox, OutboxFull
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        ob = Outbox({str(path)!r}, synchronous="FULL")
        resource.setrlimit(resource.RLIMIT_FSIZE, (256 * 1024, 256 * 1024))
        stored = 0
        for i in range(1000):
            try:
                ob.put("t", bytes([i % 251]) * 4000, priority=0)
                stored += 1
            except OutboxFull as exc:
                print(stored, "refused:", exc)
                sys.exit(0)
        sys.exit(3)
        """
    )
    cmd = [sys.executable, "-c", script]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    stored = int(proc.stdout.split()[0])
    assert 0 < stored < 1000 and "refused" in proc.stdout
    ob = Outbox(path)  # no size limit in this process: everything stored before the refusal is intact
    items = ob.peek(2000)
    assert len(items) == stored
    assert all(item.payload == bytes([n % 251]) * 4000 for n, item in enumerate(items))


def test_bounds_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        Outbox(tmp_path / "o.db", max_bytes=0)
    with pytest.raises(ValueError):
        Outbox(tmp_path / "o.db", synchronous="OFF")


# --- DurablePublisher over the real MQTT transport and a real mosquitto


def _transport(
    tmp_path: Path, port: int, name: str, extra: str = "", on_connected: Callable[[], None] | None = None
) -> object:
    from edge_agent.config import load
    from edge_agent.transport.mqtt import MqttTransport

    cfg = tmp_path / f"{name}.yaml"
    cfg.write_text(
        f"mqtt:\n  host: 127.0.0.1\n  port: {port}\n  reconnect_min_s: 0.1\n  reconnect_max_s: 0.5\n{extra}"
    )
    config = load(cfg, environ={})
    return MqttTransport(
        config.mqtt, client_id=name, status_topic=f"t/{name}/status", subscriptions=[],
        on_message=lambda _m: None, on_connected=on_connected,
    )  # fmt: skip


class _Sink:
    """A subscriber recording payloads in arrival order."""

    def __init__(self, port: int, topic: str) -> None:
        import paho.mqtt.client as paho
        from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion
        from paho.mqtt.packettypes import PacketTypes
        from paho.mqtt.properties import Properties

        self.got: list[tuple[str, bytes]] = []
        self._cond = threading.Condition()
        self.client = paho.Client(
            CallbackAPIVersion.VERSION2, client_id=f"sink-{port}", protocol=MQTTProtocolVersion.MQTTv5
        )
        subscribed = threading.Event()
        self.client.on_message = self._on_message
        self.client.on_subscribe = lambda *_a: subscribed.set()
        self.client.reconnect_delay_set(0.1, 0.5)
        props = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
        props.SessionExpiryInterval = 3600  # persistent: results queue for us while we reconnect
        self.client.connect("127.0.0.1", port, clean_start=False, properties=props)
        self.client.loop_start()
        self.client.subscribe(topic, qos=1)
        assert subscribed.wait(10)

    def _on_message(self, _c: object, _u: object, msg: object) -> None:
        with self._cond:
            self.got.append((msg.topic, bytes(msg.payload)))  # type: ignore[attr-defined]
            self._cond.notify_all()

    def wait(self, n: int, timeout: float = 20) -> list[tuple[str, bytes]]:
        with self._cond:
            assert self._cond.wait_for(lambda: len(self.got) >= n, timeout), self.got
            return list(self.got)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def _outcomes() -> tuple[list[object], Callable[[object], None]]:
    seen: list[object] = []
    return seen, seen.append


def test_durable_publisher_stores_while_broker_is_down_and_flushes_in_priority_order(tmp_path: Path) -> None:
    from edge_agent.demo.broker import Mosquitto, free_port
    from edge_agent.store.outbox import DurablePublisher
    from edge_agent.transport.base import PublishOutcome

    port = free_port()
    (tmp_path / "mq").mkdir()
    broker = Mosquitto(
        ["allow_anonymous true", "persistence true", f"persistence_location {tmp_path / 'mq'}/"],
        port=port, workdir=tmp_path / "mq",
    )  # fmt: skip
    broker.start()
    sink = _Sink(port, "e/s/#")  # its session (and subscription) outlives the broker restart below
    broker.stop()
    holder: list[DurablePublisher] = []
    link = _transport(tmp_path, port, "agent-dp", on_connected=lambda: holder[0].on_connected())
    outbox = Outbox(tmp_path / "o.db")
    dp = DurablePublisher(link, outbox, PublishOutcome, ack_timeout_s=2.0)  # type: ignore[arg-type]
    holder.append(dp)
    link.start()  # type: ignore[attr-defined]
    dp.start()
    seen, record = _outcomes()
    try:
        for n in range(3):
            dp.publish(f"e/s/summary/k{n}", f"sum{n}".encode(), on_done=record)
            dp.publish("e/s/intent", f"int{n}".encode(), on_done=record)
        assert len(outbox) == 6 and all(o.ok and o.reason == "stored in outbox" for o in seen)  # type: ignore[attr-defined]
        broker.start()
        got = [payload for _t, payload in sink.wait(6)]
        assert got == [b"int0", b"int1", b"int2", b"sum0", b"sum1", b"sum2"]
        deadline = time.monotonic() + 10
        while (len(outbox) or dp.stats()["flushed"] < 6) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(outbox) == 0 and dp.stats()["flushed"] == 6
        # connected and empty outbox: direct publish, acknowledged by the broker
        seen.clear()
        dp.publish("e/s/intent", b"live", on_done=record)
        assert [p for _t, p in sink.wait(7)][-1] == b"live"
        deadline = time.monotonic() + 10
        while not seen and time.monotonic() < deadline:
            time.sleep(0.02)
        assert seen[0].ok and seen[0].reason != "stored in outbox"  # type: ignore[attr-defined]
        sink.close()
    finally:
        dp.close()
        link.close(timeout=1)  # type: ignore[attr-defined]
        broker.close()


def test_durable_publisher_full_outbox_while_down_asks_to_retry_later(tmp_path: Path) -> None:
    from edge_agent.demo.broker import free_port
    from edge_agent.store.outbox import RETRY_LATER, DurablePublisher
    from edge_agent.transport.base import PublishOutcome

    link = _transport(tmp_path, free_port(), "agent-full")  # nothing listens there
    outbox = Outbox(tmp_path / "o.db", max_rows=2)
    dp = DurablePublisher(link, outbox, PublishOutcome)  # type: ignore[arg-type]
    seen, record = _outcomes()
    for n in range(3):
        dp.publish("e/s/intent", b"%d" % n, on_done=record)
    assert [o.ok for o in seen] == [True, True, False]  # type: ignore[attr-defined]
    assert seen[2].reason_code == RETRY_LATER  # type: ignore[attr-defined]
    assert [i.payload for i in outbox.peek()] == [b"0", b"1"]
    assert dp.stats()["refused_retry"] == 1


def test_durable_publisher_passes_broker_refusals_through(tmp_path: Path) -> None:
    from broker import TestBroker

    from edge_agent.store.outbox import DurablePublisher
    from edge_agent.transport.base import PublishOutcome

    broker = TestBroker(tmp_path / "tb").start()
    mqtt = broker.agent_mqtt(user="limited")
    extra = f"  username: limited\n  password_file: {mqtt['password_file']}\n"
    link = _transport(tmp_path, broker.port, "agent-limited", extra)
    outbox = Outbox(tmp_path / "o.db")
    dp = DurablePublisher(link, outbox, PublishOutcome)  # type: ignore[arg-type]
    link.start()  # type: ignore[attr-defined]
    try:
        assert link.wait_connected(10)  # type: ignore[attr-defined]
        done = threading.Event()
        seen: list[object] = []
        dp.publish("e/s/intent", b"x", on_done=lambda o: (seen.append(o), done.set()))
        assert done.wait(10)
        assert not seen[0].ok and seen[0].reason_code == 135  # type: ignore[attr-defined]
        assert len(outbox) == 0  # a refusal would be refused again: not stored
    finally:
        link.close(timeout=1)  # type: ignore[attr-defined]
        broker.stop()


def test_processes_sharing_a_new_state_dir_all_start(tmp_path: Path) -> None:
    """Agents on one host sharing a state directory open the same new databases at once."""
    script = textwrap.dedent(
        f"""
        from edge_agent.pipeline.dedup import Deduplicator
        from edge_agent.store.outbox import Outbox
        ob = Outbox({str(tmp_path / "o.db")!r})
        d = Deduplicator({str(tmp_path / "d.db")!r})
        for i in range(20):
            ob.put("t", b"x", priority=0)
            d.begin(f"k{{i}}-{{id(ob)}}")
        print("ok")
        """
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for _ in range(6)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 6, [err.decode()[-500:] for _, err in outs]
    assert len(Outbox(tmp_path / "o.db")) == 120
