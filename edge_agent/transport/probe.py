"""One MQTT connection attempt with the agent's settings, for ``edge-agent check-config --probe``.

It opens the connection the agent would (host, port, protocol, TLS, user name and password),
waits for the CONNACK, and disconnects. Its client id is the agent's with ``-probe`` appended,
so a running agent is not pushed off the broker, and it asks for a clean session that ends with
the connection, so nothing stays on the broker.
"""

from __future__ import annotations

import ssl
import time
from typing import Any

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion

from edge_agent.config import MqttConfig
from edge_agent.errors import ConfigError
from edge_agent.security import tls_context
from edge_agent.transport.mqtt import connect_hint

__all__ = ["probe_broker"]


def probe_broker(
    settings: MqttConfig, client_id: str, password: str | None, timeout: float = 5.0
) -> str | None:
    """None when the broker accepted the connection, else what went wrong and what to check."""
    where = f"{settings.host}:{settings.port}"
    v5 = settings.protocol == "5"
    client = paho.Client(
        CallbackAPIVersion.VERSION2,
        client_id=f"{client_id}-probe",
        clean_session=None if v5 else True,
        protocol=MQTTProtocolVersion.MQTTv5 if v5 else MQTTProtocolVersion.MQTTv311,
    )
    answer: list[Any] = []
    client.on_connect = lambda _c, _u, _f, reason, _p: answer.append(reason)
    if settings.username is not None:
        client.username_pw_set(settings.username, password)
    try:
        if settings.tls is not None:
            tls = settings.tls
            client.tls_set_context(tls_context(tls.ca_file, tls.cert_file, tls.key_file))
        client.connect(settings.host, settings.port, keepalive=settings.keepalive_s)
    except ConfigError as exc:
        return f"mqtt.tls: {exc}"
    except (OSError, ssl.SSLError) as exc:
        return f"cannot connect to {where} ({exc.strerror or exc}): {connect_hint(exc, settings.host)}"
    try:
        return _await_connack(client, answer, where, timeout)
    finally:
        client.disconnect()


def _await_connack(client: paho.Client, answer: list[Any], where: str, timeout: float) -> str | None:
    deadline = time.monotonic() + timeout
    while not answer and time.monotonic() < deadline:
        rc = client.loop(timeout=0.1)
        if rc != paho.MQTT_ERR_SUCCESS and not answer:
            return (
                f"{where} closed the connection before its CONNACK ({paho.error_string(rc)}); "
                "check that this port speaks MQTT, and mqtt.tls"
            )
    if not answer:
        return f"no CONNACK from {where} within {timeout:g} s; check that this port speaks MQTT"
    reason = answer[0]
    if reason.is_failure:
        return (
            f"{where} refused the connection: {reason} (reason code {int(reason.value)}); "
            "check mqtt.username, the password and the broker's ACL"
        )
    return None
