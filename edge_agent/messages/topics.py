"""Topic layout of one site: ``{prefix}/{site}/...``. A validated value object (no I/O)."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["SiteTopics", "validate_level", "validate_topic", "validate_topic_id"]

_FORBIDDEN = ("+", "#", "/", "\x00")
_WILDCARDS = ("+", "#", "\x00")
_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def validate_level(value: str, what: str = "topic level") -> str:
    """A single topic level: non-empty, no wildcard, no '/', at most 128 characters."""
    if not value or len(value) > 128 or any(ch in value for ch in _FORBIDDEN):
        raise ValueError(f"invalid {what} {value!r}: 1-128 characters without '+', '#', '/' or NUL")
    return value


def validate_topic_id(value: str, what: str) -> str:
    """An id that is used as one MQTT topic level (HA allows ``[A-Za-z0-9_-]`` there)."""
    if not _ID_RE.match(value):
        raise ValueError(f"{what} {value!r} must be 1-64 characters of A-Z, a-z, 0-9, '_' or '-'")
    return value


def validate_topic(value: str) -> str:
    """A whole topic to publish or subscribe exactly: no wildcards, no leading or trailing '/'."""
    if not value or value.startswith("/") or value.endswith("/"):
        raise ValueError(f"topic {value!r} must be non-empty and not start or end with '/'")
    if any(ch in value for ch in _WILDCARDS):
        raise ValueError(f"topic {value!r} must not contain wildcards ('+', '#') or NUL")
    return value


@dataclass(frozen=True)
class SiteTopics:
    """Builds every topic of the agent. ``prefix`` may have several levels (``home/edge``)."""

    prefix: str
    site: str

    def __post_init__(self) -> None:
        for level in self.prefix.split("/"):
            validate_level(level, "topic prefix level")
        validate_level(self.site, "site id")

    @property
    def base(self) -> str:
        return f"{self.prefix}/{self.site}"

    def topic(self, *levels: str) -> str:
        """``{prefix}/{site}/level/...``; each level is validated."""
        for level in levels:
            validate_level(level)
        return "/".join((self.base, *levels))

    def suffix(self, suffix: str) -> str:
        """``{prefix}/{site}/{suffix}`` for a multi-level suffix such as ``summary/kernel``."""
        return self.topic(*suffix.split("/"))

    def relative(self, topic: str) -> list[str] | None:
        """The levels of ``topic`` after ``{prefix}/{site}/``, or None if it is not ours."""
        head = self.base + "/"
        if not topic.startswith(head):
            return None
        return topic[len(head) :].split("/")
