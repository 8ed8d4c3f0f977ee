"""Output ``{prefix}/{site}/status`` (retained): availability, ``online`` or ``offline``.

``online`` is published after every successful connect; ``offline`` is the Last Will (the broker
publishes it when the agent vanishes) and is published on a clean shutdown. Plain strings, so
Home Assistant's availability topic can use them directly.
"""

from __future__ import annotations

from edge_agent.messages.topics import SiteTopics

__all__ = ["OFFLINE", "ONLINE", "SUFFIX", "Availability", "topic"]

SUFFIX = "status"
ONLINE = b"online"
OFFLINE = b"offline"


def topic(topics: SiteTopics) -> str:
    return topics.topic(SUFFIX)


class Availability:
    """The availability message kind: retained ``online`` / ``offline`` on ``{prefix}/{site}/status``."""

    SUFFIX = SUFFIX
    ONLINE = ONLINE
    OFFLINE = OFFLINE
    RETAIN = True

    @staticmethod
    def topic(topics: SiteTopics) -> str:
        return topic(topics)
