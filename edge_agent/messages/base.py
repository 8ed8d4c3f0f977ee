"""What the message kinds share: the topic under ``{prefix}/{site}``, the schema id, the payload.

``Message`` is the base of our own JSON kinds (as rhasspy-hermes' ``Message`` is of Hermes'):
``SUFFIX`` is the first topic level under ``{prefix}/{site}``, ``SCHEMA`` the payload's
``edge-agent/<kind>/<version>``; a kind defines ``to_dict`` and gets ``topic`` and ``payload``
(a kind whose payload is not an object, the log lines' array, defines ``to_json`` too).
``SourceMessage`` is a kind about one log source (``{prefix}/{site}/{SUFFIX}/{source}``).
``Publish`` is one message of another system's protocol (Hermes, Home Assistant) ready to send.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from edge_agent.messages._json import dumps
from edge_agent.messages.topics import SiteTopics, validate_level

__all__ = ["Message", "Publish", "SourceMessage"]


class _Topic:
    """``Kind.topic(topics, *levels)`` -> ``{prefix}/{site}/{SUFFIX}/levels...``; on a message,
    ``msg.topic(topics)`` puts its own ``topic_levels()`` (a log source) after the suffix."""

    def __get__(self, message: Message | None, kind: type[Message]) -> Callable[..., str]:
        own = message.topic_levels() if message is not None else ()

        def topic(topics: SiteTopics, *levels: str) -> str:
            return topics.topic(*kind.SUFFIX.split("/"), *own, *levels)  # each level validated

        return topic


class Message(ABC):
    """One message kind of ours. Example: ``IntentMessage.topic(topics)`` -> ``edge/kitchen/intent``."""

    SUFFIX: ClassVar[str]  # may hold several levels ("control/reply")
    SCHEMA: ClassVar[str | int]  # a bare version number only where the payload has always had one

    topic: ClassVar[_Topic] = _Topic()

    def topic_levels(self) -> tuple[str, ...]:
        """Levels of this message's topic after the suffix (none; a log source for SourceMessage)."""
        return ()

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """The JSON payload as a dict, ``schema`` first."""

    def to_json(self) -> Any:
        """The JSON value ``payload`` encodes: ``to_dict()`` for every kind whose payload is an object."""
        return self.to_dict()

    def payload(self) -> bytes:
        return dumps(self.to_json())


@dataclass(frozen=True)
class SourceMessage(Message):
    """A message about one log source; the source is one topic level (validated here)."""

    source: str

    def __post_init__(self) -> None:
        validate_level(self.source, "log source")

    def topic_levels(self) -> tuple[str, ...]:
        return (self.source,)

    @classmethod
    def topic_suffix(cls, source: str) -> str:
        """``{SUFFIX}/{source}``, the part after ``{prefix}/{site}/``."""
        return f"{cls.SUFFIX}/{validate_level(source, 'log source')}"


@dataclass(frozen=True)
class Publish:
    """One message to send as it is: topic, payload bytes, retain flag and QoS."""

    topic: str
    payload: bytes
    retain: bool = False
    qos: int = 1
