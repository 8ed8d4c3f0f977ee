"""MQTT transport over paho-mqtt 2.x (callback API v2). Sees (topic, bytes) only.

- MQTT 5 (default) or 3.1.1, TLS with CA / client certificate, username + password.
- Persistent session: clean start off and a session expiry (clean session off on 3.1.1), inputs
  subscribed at QoS 1, and *manual* acknowledgement: :meth:`MqttTransport.ack` is called by the
  owner once the input's results were acknowledged by the broker.
- A refused CONNACK is a failure (reason code logged; no subscription is made); refusals that
  retrying cannot fix (bad credentials, not authorized, banned...) stop the transport and are
  reported through :attr:`MqttTransport.fatal`.
- A PUBACK with a failure reason code reaches the publisher's ``on_done`` as a failure.
- Reconnects with capped exponential backoff and full jitter (our own loop, not paho's).
- Availability: retained ``online`` after each connect, ``offline`` as Last Will and on close.
  A session without a status topic (the bulk session of :mod:`edge_agent.transport.links`) has
  no Will and says nothing; ``online`` of the main one can wait for it (:meth:`MqttTransport.online_after`).
"""

from __future__ import annotations

import random
import socket
import ssl
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import paho.mqtt.client as paho
import structlog
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode, MQTTProtocolVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode
from paho.mqtt.subscribeoptions import SubscribeOptions

from edge_agent.config import MqttConfig
from edge_agent.errors import ConfigError, TransportError
from edge_agent.security import tls_context
from edge_agent.transport.base import Inbound, PublishDone, PublishOutcome

__all__ = ["FATAL_CONNACK_CODES", "Backoff", "MqttTransport", "TransportCounters", "connect_hint"]

_log = structlog.get_logger("edge_agent.transport")

# CONNACK reason codes that retrying cannot fix (MQTT 5 values; 3.1.1 codes are mapped to these
# by paho): unsupported protocol, bad client id, bad user name or password, not authorized, banned,
# bad authentication method.
FATAL_CONNACK_CODES = frozenset({0x84, 0x85, 0x86, 0x87, 0x8A, 0x8C})


def connect_hint(error: OSError, host: str) -> str:
    """What to check when a connection to the broker could not be opened."""
    if isinstance(error, ConnectionRefusedError):
        return "nothing listens there: start the broker, or point mqtt.host / mqtt.port at it"
    if isinstance(error, socket.gaierror):
        return f"the name {host!r} does not resolve: check mqtt.host"
    if _is_ssl_error(error):
        return "the TLS handshake failed: check mqtt.tls (ca_file, cert_file) and that this port speaks TLS"
    if isinstance(error, TimeoutError):
        return "no answer: check the network, a firewall, and mqtt.host / mqtt.port"
    return "check that the broker runs there (mqtt.host / mqtt.port) and that the network reaches it"


def _is_ssl_error(error: OSError) -> bool:
    """``isinstance(error, ssl.SSLError)``, asked of the error's classes: an SSL error exists only
    once ``ssl`` ran, and a plain connection's error does not run it (deferred, commands/_lean.py)."""
    return any(cls.__module__ == "ssl" and cls.__name__ == "SSLError" for cls in type(error).__mro__)


class _Client(paho.Client):
    """paho's client, whose reads and writes on a plain connection leave ``ssl`` alone.

    paho's ``_sock_recv`` and ``_sock_send`` name ``ssl.SSLWantReadError`` and
    ``ssl.SSLWantWriteError`` in ``except`` clauses, which Python evaluates at every exception,
    the would-block of the non-blocking socket (several per second under load) included. On a
    plain connection they cannot match, and evaluating them would run the deferred ``ssl``
    module and load OpenSSL (about 4.5 MB, docs/runtime.md "Memory"). These two do what paho's
    do without them; a TLS connection uses paho's own.
    """

    def _sock_recv(self, bufsize: int) -> bytes:
        if self._ssl:
            return super()._sock_recv(bufsize)
        if self._sock is None:
            raise ConnectionError("self._sock is None")
        try:
            return self._sock.recv(bufsize)
        except AttributeError as err:  # the socket closed meanwhile (paho's words)
            self._easy_log(paho.MQTT_LOG_DEBUG, "socket was None: %s", err)
            raise ConnectionError() from err

    def _sock_send(self, buf: bytes | bytearray) -> int:
        if self._ssl:
            return super()._sock_send(buf)
        if self._sock is None:
            raise ConnectionError("self._sock is None")
        try:
            return self._sock.send(buf)
        except BlockingIOError as err:
            self._call_socket_register_write()
            raise BlockingIOError() from err


class Backoff:
    """Capped exponential backoff with full jitter: delay n is uniform in [0, min(cap, base*2^n)],
    never below ``base / 2`` so a flapping broker is not hammered."""

    def __init__(self, base: float, cap: float, rng: random.Random | None = None) -> None:
        self.base = base
        self.cap = cap
        self.attempt = 0
        self._rng = rng or random.Random()

    def next(self) -> float:
        ceiling = min(self.cap, self.base * (2 ** min(self.attempt, 30)))
        self.attempt += 1
        return max(self.base / 2, self._rng.uniform(0, ceiling))

    def reset(self) -> None:
        self.attempt = 0


@dataclass
class TransportCounters:
    connects: int = 0
    connect_failures: int = 0
    connect_refused: int = 0
    disconnects: int = 0
    received: int = 0
    acked: int = 0
    published: int = 0
    publish_failed: int = 0
    subscribe_refused: int = 0

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


class MqttTransport:
    """One MQTT connection. ``on_message`` runs on the network thread and may block (backpressure).

    ``status_topic`` None: no Will, no ``online``/``offline`` (a second session of the same agent).
    ``link`` names the session in every :class:`Inbound` it delivers. ``stale_filters`` are
    unsubscribed once per process when a session is resumed: filters this session held in an
    earlier configuration and that another session serves now."""

    def __init__(
        self,
        settings: MqttConfig,
        client_id: str,
        status_topic: str | None,
        subscriptions: Sequence[str],
        on_message: Callable[[Inbound], None],
        on_connected: Callable[[], None] | None = None,
        online: bytes = b"online",
        offline: bytes = b"offline",
        receive_maximum: int | None = None,
        link: str = "main",
        stale_filters: Sequence[str] = (),
    ) -> None:
        self.settings = settings
        self.client_id = client_id
        self.status_topic = status_topic
        self.subscriptions = list(subscriptions)
        self.stale_filters = list(stale_filters)
        self.link = link
        self.counters = TransportCounters()
        self.fatal: TransportError | None = None
        self._on_message = on_message
        self._receive_maximum = receive_maximum
        # called on the network thread after every successful (re)connect, once subscribed and
        # ``online`` is queued: re-announcements (e.g. Home Assistant discovery) go here
        self.connected_hooks: list[Callable[[], None]] = [on_connected] if on_connected else []
        self._online = online
        self._offline = offline
        self._v5 = settings.protocol == "5"
        self._lock = threading.Lock()
        self._pending: dict[int, PublishDone] = {}
        self._early: dict[int, PublishOutcome] = {}
        self._session = 0
        self._pending_subs: set[int] = set()
        # mid -> (settled, qos) of the inputs of this connection, in arrival order
        self._arrivals: OrderedDict[int, tuple[bool, int]] = OrderedDict()
        self._idle = threading.Condition(self._lock)
        self._connected = threading.Event()
        self._session_ended = threading.Event()
        self._closing = threading.Event()
        self._accepting = True
        # set once this session was subscribed (SUBACKs in) in this process; read by the session
        # whose ``online`` waits for this one
        self.subscribed_once = False
        self._gate_lock = threading.Lock()
        self._online_gate: MqttTransport | None = None
        self._online_waiting = False
        self._supervisor: threading.Thread | None = None
        self._backoff = Backoff(settings.reconnect_min_s, settings.reconnect_max_s)
        self._retired_wakeup: tuple[socket.socket | None, socket.socket | None] = (None, None)
        self._client = self._make_client()

    # -- set-up -------------------------------------------------------------------------
    def _make_client(self) -> paho.Client:
        s = self.settings
        protocol = MQTTProtocolVersion.MQTTv5 if self._v5 else MQTTProtocolVersion.MQTTv311
        client = _Client(
            CallbackAPIVersion.VERSION2,
            client_id=self.client_id,
            clean_session=None if self._v5 else False,
            protocol=protocol,
            manual_ack=True,
            reconnect_on_failure=False,
        )
        if s.username is not None:
            client.username_pw_set(s.username, s.password)
        if s.tls is not None:
            client.tls_set_context(self._tls_context())
        client.max_inflight_messages_set(s.max_inflight)
        if self.status_topic is not None:
            client.will_set(self.status_topic, self._offline, qos=1, retain=True)
        client.on_connect = self._handle_connect
        client.on_disconnect = self._handle_disconnect
        client.on_message = self._handle_message
        client.on_publish = self._handle_publish
        client.on_subscribe = self._handle_subscribe
        return client

    def _tls_context(self) -> ssl.SSLContext:
        tls = self.settings.tls
        assert tls is not None
        try:
            # verification on (chain + host name); a client key readable by everyone is refused
            return tls_context(tls.ca_file, tls.cert_file, tls.key_file)
        except (OSError, ssl.SSLError, ConfigError) as exc:
            raise TransportError(f"mqtt.tls: cannot load certificates: {exc}") from None

    def _connect_properties(self) -> Properties | None:
        if not self._v5:
            return None
        props = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
        props.SessionExpiryInterval = self.settings.session_expiry_s
        if self._receive_maximum is not None:
            # the broker never has more unacknowledged inputs in flight to us than the queue holds
            props.ReceiveMaximum = max(1, min(self._receive_maximum, 65535))
        return props

    # -- lifecycle ----------------------------------------------------------------------
    def start(self) -> None:
        """Start connecting in the background (returns at once)."""
        self._supervisor = threading.Thread(target=self._supervise, name="mqtt-supervisor", daemon=True)
        self._supervisor.start()

    def wait_connected(self, timeout: float) -> bool:
        """Wait until connected *and* subscribed (``online`` was published)."""
        return self._connected.wait(timeout)

    @property
    def connected(self) -> bool:
        """Connected and subscribed; False while (re)connecting."""
        return self._connected.is_set()

    def _supervise(self) -> None:
        while not self._closing.is_set():
            error = self._connect_once()
            if error is None:
                self._session_ended.wait()
                self._client.loop_stop()
            if self.fatal is not None or self._closing.is_set():
                break
            delay = self._backoff.next()
            if error is None:
                _log.info(
                    "mqtt.reconnect_wait",
                    link=self.link,
                    delay_s=round(delay, 3),
                    attempt=self._backoff.attempt,
                )
            else:  # one line per backoff step: what failed, where, what to check, when it retries
                s = self.settings
                _log.warning(
                    "mqtt.connect_failed",
                    link=self.link,
                    broker=f"{s.host}:{s.port}",
                    error=str(error),
                    hint=connect_hint(error, s.host),
                    retry_in_s=round(delay, 3),
                    attempt=self._backoff.attempt,
                )
            self._closing.wait(delay)

    def _connect_once(self) -> OSError | None:
        """Open the connection (the CONNACK comes on the network thread); the error if it
        could not be opened."""
        s = self.settings
        self._session_ended.clear()
        try:
            self._client.connect(
                s.host,
                s.port,
                keepalive=s.keepalive_s,
                clean_start=False if self._v5 else paho.MQTT_CLEAN_START_FIRST_ONLY,
                properties=self._connect_properties(),
            )
        except OSError as exc:  # ssl.SSLError is an OSError
            self.counters.connect_failures += 1
            return exc
        _no_delay(self._client)
        self._start_network_thread()
        return None

    def _start_network_thread(self) -> None:
        """``loop_start`` replaces the socket pair through which ``publish`` and ``ack`` wake the
        network thread; a worker that read the old pair just before writes its wake-up to it just
        after. Dropping the old pair would close its reading end there and make that write fail
        (the packet itself is already queued), so it is kept open, unread, until the next start;
        the lost wake-up costs at most one turn of the new network thread's loop (a second), which
        sends whatever is queued."""
        c = self._client
        self._retired_wakeup = (c._sockpairR, c._sockpairW)
        c.loop_start()

    def close(self, timeout: float = 5.0) -> None:
        """Publish ``offline`` (retained), wait for its PUBACK, disconnect cleanly (no Will)."""
        self._accepting = False
        if self._connected.is_set() and self.status_topic is not None:
            done = threading.Event()
            self.publish(self.status_topic, self._offline, qos=1, retain=True, on_done=lambda _o: done.set())
            if not done.wait(timeout):
                _log.warning("mqtt.offline_not_acknowledged", timeout_s=timeout)
        self._closing.set()
        self._client.disconnect()
        self._session_ended.set()
        if self._supervisor is not None:
            self._supervisor.join(timeout)
        self._client.loop_stop()

    def stop_accepting(self) -> None:
        """Inputs arriving from now on are neither delivered nor acknowledged (the broker keeps them)."""
        self._accepting = False

    # -- callbacks (network thread) -----------------------------------------------------
    def _handle_connect(
        self, client: paho.Client, _ud: Any, flags: Any, reason: ReasonCode, _props: Any
    ) -> None:
        if reason.is_failure:
            self._refused(reason)
            return
        self.counters.connects += 1
        self._backoff.reset()
        with self._lock:
            self._session += 1  # acknowledgement order restarts with the new connection
            self._arrivals.clear()
        _log.info("mqtt.connected", session_present=bool(flags.session_present), client_id=self.client_id)
        with self._lock:
            self._pending_subs.clear()
        # a resumed session keeps its subscriptions; subscribing again would make an MQTT 3.1.1
        # broker replay retained messages. The first connect of a process always subscribes (the
        # config may have changed).
        resubscribe = not flags.session_present or self.counters.connects == 1
        if flags.session_present and self.counters.connects == 1 and self.stale_filters:
            self._unsubscribe_stale(client)
        for topic in self.subscription_filters() if resubscribe else []:
            if self._v5:
                # retainHandling 2: a retained input (a stale command) is not replayed at subscribe
                rc, mid = client.subscribe(topic, options=SubscribeOptions(qos=1, retainHandling=2))
            else:
                rc, mid = client.subscribe(topic, qos=1)
            if mid is not None:
                with self._lock:
                    self._pending_subs.add(mid)
            else:
                self.counters.subscribe_refused += 1
                _log.error("mqtt.subscribe_failed", topic=topic, rc=int(rc))
        with self._lock:
            nothing_pending = not self._pending_subs
        if nothing_pending:  # no subscriptions (or none could be sent): nothing to wait for
            self._announce()

    def _unsubscribe_stale(self, client: paho.Client) -> None:
        """A resumed session may still hold filters another session serves now (the agent ran
        with another ``mqtt.bulk_session`` before): drop them, or inputs would arrive twice."""
        stale = self._filters(self.stale_filters)
        rc, _mid = client.unsubscribe(stale)
        _log.info("mqtt.unsubscribe_stale", client_id=self.client_id, filters=stale, rc=int(rc))

    def _announce(self) -> None:
        """Subscribed (SUBACKs in): say ``online``, mark connected, run the connected hooks.
        Doing this only after the SUBACKs means an input sent after seeing ``online`` is never
        missed, even on the very first connection of a fresh session. With :meth:`online_after`,
        ``online`` also waits until the other session was subscribed once."""
        if self.status_topic is not None:
            with self._gate_lock:
                gate = self._online_gate
                ready = gate is None or gate.subscribed_once
                self._online_waiting = not ready
            if ready:
                self._say_online()
        self.subscribed_once = True
        self._connected.set()
        for hook in list(self.connected_hooks):
            hook()

    def online_after(self, other: MqttTransport) -> None:
        """Publish ``online`` only once ``other`` (a session without status) has been subscribed
        at least once in this process; later reconnects of ``other`` do not change the status."""
        self._online_gate = other
        other.connected_hooks.append(self._gate_opened)

    def _gate_opened(self) -> None:
        """The other session is subscribed (its network thread): say a held-back ``online`` now."""
        with self._gate_lock:
            waiting, self._online_waiting = self._online_waiting, False
        if waiting:
            self._say_online()

    def _say_online(self) -> None:
        assert self.status_topic is not None
        self.publish(self.status_topic, self._online, qos=1, retain=True)

    def subscription_filters(self) -> list[str]:
        """The filters sent to the broker: ``$share/<group>/...`` when a shared group is set."""
        return self._filters(self.subscriptions)

    def _filters(self, topics: Sequence[str]) -> list[str]:
        group = self.settings.shared_group
        if group is None:
            return list(topics)
        return [f"$share/{group}/{topic}" for topic in topics]

    def _refused(self, reason: ReasonCode) -> None:
        self.counters.connect_refused += 1
        code = int(reason.value)
        _log.error("mqtt.connect_refused", reason_code=code, reason=str(reason), client_id=self.client_id)
        if code in FATAL_CONNACK_CODES:
            which = "" if self.link == "main" else f" of the {self.link} session (mqtt.bulk_session)"
            self.fatal = TransportError(
                f"broker refused the connection{which} as {self.client_id!r}: {reason} (reason code "
                f"{code}); check mqtt.username, mqtt.password_file, mqtt.client_id and the broker's ACL"
            )
            self._closing.set()

    def _handle_disconnect(
        self, _c: paho.Client, _ud: Any, _flags: Any, reason: ReasonCode, _props: Any
    ) -> None:
        if self._connected.is_set():
            self.counters.disconnects += 1
            log = _log.info if self._closing.is_set() else _log.warning
            log(
                "mqtt.disconnected",
                reason_code=int(reason.value),
                reason=str(reason),
                client_id=self.client_id,
            )
        with self._gate_lock:
            self._online_waiting = False  # the next connect announces again
        self._connected.clear()
        self._session_ended.set()

    def _handle_message(self, _c: paho.Client, _ud: Any, msg: paho.MQTTMessage) -> None:
        if not self._accepting:
            return  # not acknowledged: the broker redelivers it to the next session
        self.counters.received += 1
        if msg.qos > 0:
            with self._lock:
                self._arrivals[msg.mid] = (False, msg.qos)
        self._on_message(
            Inbound(
                topic=msg.topic,
                payload=bytes(msg.payload),
                qos=msg.qos,
                mid=msg.mid,
                retain=bool(msg.retain),
                dup=bool(msg.dup),
                received_at=time.time(),
                received_mono=time.perf_counter(),
                session=self._session,
                link=self.link,
            )
        )

    def _handle_subscribe(
        self, _c: paho.Client, _ud: Any, mid: int, codes: list[ReasonCode], _props: Any
    ) -> None:
        for code in codes:
            if code.is_failure:
                self.counters.subscribe_refused += 1
                _log.error("mqtt.subscribe_refused", reason_code=int(code.value), reason=str(code))
        with self._lock:
            was_pending = mid in self._pending_subs
            self._pending_subs.discard(mid)
            complete = was_pending and not self._pending_subs
        if complete:
            self._announce()

    def _handle_publish(self, _c: paho.Client, _ud: Any, mid: int, reason: ReasonCode, _props: Any) -> None:
        outcome = PublishOutcome(ok=not reason.is_failure, reason_code=int(reason.value), reason=str(reason))
        with self._lock:
            callback = self._pending.pop(mid, None)
            if callback is None:
                self._early[mid] = outcome
            if not self._pending:
                self._idle.notify_all()
        if callback is not None:
            self._finish(callback, outcome)

    def _finish(self, callback: PublishDone, outcome: PublishOutcome) -> None:
        if outcome.ok:
            self.counters.published += 1
        else:
            self.counters.publish_failed += 1
            _log.error("mqtt.publish_refused", reason_code=outcome.reason_code, reason=outcome.reason)
        callback(outcome)

    # -- Publisher / acks ----------------------------------------------------------------
    def publish(
        self,
        topic: str,
        payload: bytes,
        *,
        qos: int = 1,
        retain: bool = False,
        on_done: PublishDone | None = None,
    ) -> None:
        """Queue a publish; ``on_done`` runs (network thread) when the broker acknowledged it,
        or at once with ``ok=False`` when paho refuses it. Kept across reconnects."""
        callback: PublishDone = on_done if on_done is not None else _ignore
        info = self._client.publish(topic, payload, qos=qos, retain=retain)
        # QoS 1/2 publishes made while disconnected are kept by paho and sent after reconnecting;
        # a QoS 0 one is not, so it fails at once like any other refused publish
        queued = info.rc == MQTTErrorCode.MQTT_ERR_NO_CONN and qos > 0
        if info.rc != MQTTErrorCode.MQTT_ERR_SUCCESS and not queued:
            refused = PublishOutcome(ok=False, reason_code=-int(info.rc), reason=paho.error_string(info.rc))
            self._finish(callback, refused)
            return
        with self._lock:
            early = self._early.pop(info.mid, None)
            if early is None:
                self._pending[info.mid] = callback
        if early is not None:
            self._finish(callback, early)

    def ack(self, inbound: Inbound) -> None:
        """Acknowledge an input once its results are safe (QoS 0 needs nothing).

        PUBACKs go out in the order the inputs arrived on this connection (MQTT 4.6): an input
        settled early waits for the ones received before it. Inputs of an earlier connection are
        acknowledged at once (the broker redelivers them with the same packet id)."""
        if inbound.qos == 0:
            return
        ready: list[tuple[int, int]] = []
        with self._lock:
            if inbound.session == self._session and inbound.mid in self._arrivals:
                self._arrivals[inbound.mid] = (True, inbound.qos)
                for mid, (settled, qos) in self._arrivals.items():
                    if not settled:
                        break
                    ready.append((mid, qos))
                for mid, _ in ready:
                    del self._arrivals[mid]
            else:
                ready.append((inbound.mid, inbound.qos))
            self.counters.acked += len(ready)
        for mid, qos in ready:
            try:
                self._client.ack(mid, qos)
            except OSError as exc:
                # paho queues the PUBACK, then wakes its network thread through its socket pair;
                # _start_network_thread keeps a replaced pair open, so this is a backstop: the
                # packet stays queued (or, on a new connection, the broker redelivers the input,
                # which dedup answers once)
                _log.info("mqtt.ack_wake_failed", mid=mid, error=str(exc))

    def unacked_inputs(self) -> int:
        with self._lock:
            return len(self._arrivals)

    def wait_idle(self, timeout: float) -> bool:
        """Wait until every publish got its acknowledgement (True) or ``timeout`` passed."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._pending:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
        return True

    def pending_publishes(self) -> int:
        with self._lock:
            return len(self._pending)


def _no_delay(client: paho.Client) -> None:
    """Send small packets at once: with Nagle's algorithm a result (or PUBACK) can wait for the
    peer's delayed ACK, which adds tens of milliseconds per hop on Linux."""
    sock = client.socket()
    if not isinstance(sock, socket.socket):  # ssl.SSLSocket is one too
        return
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError as exc:  # not a TCP socket (e.g. a proxy); latency only, not correctness
        _log.info("mqtt.nodelay_unavailable", error=str(exc))


def _ignore(_outcome: PublishOutcome) -> None:
    return None
