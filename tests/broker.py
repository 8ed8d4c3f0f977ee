"""A real mosquitto for the tests: password auth + ACL on a plain listener, and a TLS listener
(client certificate required) with a CA, server and client certificate generated at test time.

Users (password = ``<user>-secret``):
- ``agent``: read/write everything (the agent under test);
- ``client``: read/write everything (the test's own publisher/subscriber);
- ``limited``: may read inputs and write status/dlq/stats, but NOT intents (MQTT 5 PUBACK 135).

Use ``TestBroker.client()`` for a connected paho client and ``Collector`` to wait for messages.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import subprocess
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import paho.mqtt.client as paho
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion

from edge_agent.demo.broker import Mosquitto, free_port

USERS = ("agent", "client", "limited")

ACL = """\
user agent
topic readwrite #

user client
topic readwrite #

user limited
topic read #
topic write +/+/status
topic write +/+/dlq
topic write +/+/stats
"""


def password(user: str) -> str:
    return f"{user}-secret"


@dataclass
class Certs:
    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _cert(
    subject: str, key: ec.EllipticCurvePrivateKey, issuer: x509.Name | None,
    issuer_key: ec.EllipticCurvePrivateKey, ca: bool, san: bool,
) -> x509.Certificate:
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    now = dt.datetime.now(dt.timezone.utc)
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer or name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if san:
        builder = builder.add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
    if ca:
        builder = builder.add_extension(
            x509.KeyUsage(
                digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                key_encipherment=False, data_encipherment=False, key_agreement=False,
                encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
    return builder.sign(issuer_key, hashes.SHA256())


def make_certs(directory: Path) -> Certs:
    """A throw-away CA, a server certificate for 127.0.0.1/localhost and a client certificate."""
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = _cert("edge-agent test CA", ca_key, None, ca_key, ca=True, san=False)
    files: dict[str, Path] = {}
    for role in ("server", "client"):
        key = ec.generate_private_key(ec.SECP256R1())
        cert = _cert(f"edge-agent test {role}", key, ca_cert.subject, ca_key, ca=False, san=role == "server")
        files[f"{role}_cert"] = directory / f"{role}.crt"
        files[f"{role}_key"] = directory / f"{role}.key"
        files[f"{role}_cert"].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        files[f"{role}_key"].write_bytes(_key_pem(key))
        files[f"{role}_key"].chmod(0o600)
    ca_path = directory / "ca.crt"
    ca_path.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    return Certs(ca=ca_path, **files)


class TestBroker:
    """mosquitto with auth, ACL and TLS in ``workdir``; ``port`` plain, ``tls_port`` TLS."""

    __test__ = False  # not a pytest test class

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self.certs = make_certs(workdir)
        passwd = workdir / "passwd"
        passwd.write_text("", encoding="utf-8")
        passwd.chmod(0o600)
        for user in USERS:
            subprocess.run(
                ["mosquitto_passwd", "-b", str(passwd), user, password(user)],
                check=True, capture_output=True,
            )
        acl = workdir / "acl"
        acl.write_text(ACL, encoding="utf-8")
        acl.chmod(0o600)
        self.tls_port = free_port()
        lines = [
            "allow_anonymous false",
            f"password_file {passwd}",
            f"acl_file {acl}",
            "persistence false",
            "max_queued_messages 100000",
            "set_tcp_nodelay true",
            f"listener {self.tls_port} 127.0.0.1",
            f"cafile {self.certs.ca}",
            f"certfile {self.certs.server_cert}",
            f"keyfile {self.certs.server_key}",
            "require_certificate true",
        ]
        self.mosquitto = Mosquitto(lines, workdir=workdir, extra_ports=[self.tls_port])
        self.port = self.mosquitto.port

    def start(self) -> TestBroker:
        self.mosquitto.start()
        return self

    def stop(self) -> None:
        self.mosquitto.stop()

    def log_tail(self) -> str:
        return self.mosquitto.log_tail()

    def client(
        self, user: str = "client", protocol: str = "5", client_id: str | None = None, tls: bool = False
    ) -> paho.Client:
        """A connected, looping paho client (call ``.disconnect(); .loop_stop()`` when done)."""
        version = MQTTProtocolVersion.MQTTv5 if protocol == "5" else MQTTProtocolVersion.MQTTv311
        client = paho.Client(
            CallbackAPIVersion.VERSION2,
            client_id=client_id or f"test-{uuid.uuid4().hex[:10]}",
            protocol=version,
        )
        client.username_pw_set(user, password(user))
        if tls:
            client.tls_set(
                ca_certs=str(self.certs.ca), certfile=str(self.certs.client_cert),
                keyfile=str(self.certs.client_key),
            )
        connected = threading.Event()
        client.on_connect = lambda c, u, f, rc, p: connected.set() if not rc.is_failure else None
        client.connect("127.0.0.1", self.tls_port if tls else self.port)
        client.loop_start()
        if not connected.wait(10):
            client.loop_stop()
            raise RuntimeError(f"test client could not connect as {user}; broker log:\n{self.log_tail()}")
        return client

    def agent_mqtt(self, user: str = "agent", protocol: str = "5", tls: bool = False) -> dict[str, Any]:
        """The ``mqtt:`` config section for an agent of this broker (password file written 0600)."""
        pw = self.workdir / f"{user}.password"
        pw.write_text(password(user) + "\n", encoding="utf-8")
        pw.chmod(0o600)
        section: dict[str, Any] = {
            "host": "127.0.0.1",
            "port": self.tls_port if tls else self.port,
            "protocol": protocol,
            "username": user,
            "password_file": str(pw),
            "reconnect_min_s": 0.1,
            "reconnect_max_s": 1.0,
        }
        if tls:
            section["tls"] = {
                "ca_file": str(self.certs.ca),
                "cert_file": str(self.certs.client_cert),
                "key_file": str(self.certs.client_key),
            }
        return section


@dataclass
class Collector:
    """Subscribes a client to ``topic_filter`` and records (topic, payload, retain) tuples."""

    client: paho.Client
    topic_filter: str
    messages: list[tuple[str, bytes, bool]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._cond = threading.Condition()
        subscribed = threading.Event()
        self.client.message_callback_add(self.topic_filter, self._on_message)
        self.client.on_subscribe = lambda *a: subscribed.set()
        self.client.subscribe(self.topic_filter, qos=1)
        if not subscribed.wait(10):
            raise RuntimeError(f"no SUBACK for {self.topic_filter}")

    def _on_message(self, _c: Any, _u: Any, msg: paho.MQTTMessage) -> None:
        with self._cond:
            self.messages.append((msg.topic, bytes(msg.payload), bool(msg.retain)))
            self._cond.notify_all()

    def wait_for(
        self, predicate: Callable[[list[tuple[str, bytes, bool]]], bool], timeout: float = 20.0
    ) -> list[tuple[str, bytes, bool]]:
        deadline = time.monotonic() + timeout
        with self._cond:
            while not predicate(self.messages):
                left = deadline - time.monotonic()
                if left <= 0:
                    got = f"{len(self.messages)} messages, last: {self.messages[-5:]}"
                    raise AssertionError(f"timed out waiting on {self.topic_filter}; got {got}")
                self._cond.wait(left)
            return list(self.messages)

    def on(self, topic: str) -> list[bytes]:
        with self._cond:
            return [payload for t, payload, _ in self.messages if t == topic]

    def wait_count(self, topic: str, count: int, timeout: float = 20.0) -> list[bytes]:
        self.wait_for(lambda msgs: sum(1 for t, _, _ in msgs if t == topic) >= count, timeout)
        return self.on(topic)


def publish_wait(client: paho.Client, topic: str, payload: bytes | str, qos: int = 1) -> None:
    info = client.publish(topic, payload, qos=qos)
    info.wait_for_publish(10)
    if not info.is_published():
        raise RuntimeError(f"publish to {topic} not acknowledged")


def unique(prefix: str = "s") -> str:
    return f"{prefix}{uuid.uuid4().hex[:8]}"


def env_without_credentials() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("CREDENTIALS_DIRECTORY", None)
    return env


# -- the agent as a real subprocess ---------------------------------------------------------
REPO_ROOT = Path(__file__).resolve().parent.parent


class TinyRecognizer:
    """A deliberately trivial recognizer for transport/pipeline tests that must not depend on the
    model: 'on' -> HassTurnOn, 'off' -> HassTurnOff, otherwise not recognized. A text containing
    'slow' takes 0.2 s (to have work in flight), 'crash' raises (a handler bug)."""

    def recognize(self, texts: Any, context_area: str | None = None) -> list[Any]:
        from edge_agent.records.intent import IntentResult

        out = []
        for text in texts:
            words = text.lower().split()
            if "slow" in words:
                time.sleep(0.2)
            if "crash" in words:
                raise RuntimeError("tiny recognizer was asked to crash")
            intent = "HassTurnOn" if "on" in words else "HassTurnOff" if "off" in words else None
            out.append(IntentResult(text=text, intent=intent, confidence=0.9 if intent else 0.1))
        return out


def run_tiny_agent(config_path: str) -> int:
    """Entry point of a subprocess agent with the tiny recognizer (no log service)."""
    from edge_agent.app import run_agent
    from edge_agent.config import load
    from edge_agent.engines import Engines

    return run_agent(load(config_path), Engines(recognizer=TinyRecognizer(), model_id="tiny@test"))


class AgentProcess:
    """``edge-agent run --config FILE`` (engine="real") or the tiny-recognizer agent (engine="tiny")
    as a subprocess, its structlog output in ``log_path``."""

    _count = 0

    def __init__(self, config: dict[str, Any], workdir: Path, engine: str = "real") -> None:
        import yaml

        AgentProcess._count += 1
        self.workdir = workdir
        self.config_path = workdir / f"agent-{AgentProcess._count}.yaml"
        self.config_path.write_text(yaml.safe_dump(config), encoding="utf-8")
        self.log_path = workdir / f"agent-{AgentProcess._count}.log"
        self.engine = engine
        self.proc: subprocess.Popen[bytes] | None = None

    def command(self) -> list[str]:
        import sys

        if self.engine == "real":
            return [sys.executable, "-m", "edge_agent", "run", "--config", str(self.config_path)]
        code = (
            "import sys; sys.path.insert(0, sys.argv[2]); from broker import run_tiny_agent; "
            "raise SystemExit(run_tiny_agent(sys.argv[1]))"
        )
        return [sys.executable, "-c", code, str(self.config_path), str(Path(__file__).resolve().parent)]

    def start(self) -> AgentProcess:
        env = env_without_credentials()
        env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                self.command(), stdout=log, stderr=subprocess.STDOUT, env=env, cwd=REPO_ROOT
            )
        return self

    def wait(self, timeout: float = 30.0) -> int:
        assert self.proc is not None
        return self.proc.wait(timeout)

    def terminate(self, timeout: float = 30.0) -> int:
        assert self.proc is not None
        self.proc.terminate()
        return self.proc.wait(timeout)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def events(self) -> list[dict[str, Any]]:
        import json

        out = []
        for line in self.log().splitlines():
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except ValueError:
                    continue
        return out


def eventually(check: Callable[[], bool], timeout: float = 10.0) -> bool:
    """Poll ``check`` until it holds (True) or ``timeout`` passes (False)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True
