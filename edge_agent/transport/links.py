"""Two MQTT sessions of one agent seen as one ``Publisher`` + ``Acker``: ``main`` for
transcripts, commands, status and every result, ``bulk`` for log lines (``mqtt.bulk_session``).

Why: the broker delivers one client's messages in order, through one in-flight window and one
socket, and paho reads them on one network thread. A transcript that shares a session with a
flood of log lines waits behind every log line queued before it. On its own session it does not.

- Acknowledgements go to the session that delivered the input (``Inbound.link``): packet ids
  and the in-order PUBACK rule are per session.
- Every result is published on the main session, log summaries included: the PUBACK of a publish
  made on the bulk session would reach the agent behind the flood of log lines in that session's
  socket (mosquitto 2.0 sends past a client's Receive Maximum once acknowledgements flow), late
  enough for the outbox to time it out and send it twice.
- ``connected`` is the main session's: the outbox (``edge_agent.store.outbox``) stores results
  while it is down and flushes them when it is back.
"""

from __future__ import annotations

from edge_agent.transport.base import Inbound, PublishDone
from edge_agent.transport.mqtt import MqttTransport

__all__ = ["SessionLinks"]


class SessionLinks:
    """``main`` plus an optional ``bulk`` session behind one Publisher / Acker interface."""

    def __init__(self, main: MqttTransport, bulk: MqttTransport | None = None) -> None:
        self.main = main
        self.bulk = bulk

    @property
    def transports(self) -> list[MqttTransport]:
        return [self.main] if self.bulk is None else [self.main, self.bulk]

    @property
    def connected(self) -> bool:
        return self.main.connected

    def publish(
        self,
        topic: str,
        payload: bytes,
        *,
        qos: int = 1,
        retain: bool = False,
        on_done: PublishDone | None = None,
    ) -> None:
        self.main.publish(topic, payload, qos=qos, retain=retain, on_done=on_done)

    def ack(self, inbound: Inbound) -> None:
        if self.bulk is not None and inbound.link == self.bulk.link:
            self.bulk.ack(inbound)
        else:
            self.main.ack(inbound)
