"""Input ``{prefix}/{site}/transcript``: a recognized utterance to turn into an intent.

Payload: JSON ``{"text": "turn on the kitchen light", "id": "abc", "lang": "en", "confidence": 0.93}``
(only ``text`` is required; other keys are ignored) or the plain UTF-8 text itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from edge_agent.errors import PayloadError
from edge_agent.messages._json import loads_object
from edge_agent.messages.base import Message

__all__ = ["SCHEMA", "SUFFIX", "Transcript"]

SUFFIX = "transcript"
SCHEMA = "edge-agent/transcript/1"
MAX_TEXT_CHARS = 4096
MAX_ID_CHARS = 256


@dataclass(frozen=True)
class Transcript(Message):
    text: str
    id: str | None = None
    lang: str | None = None
    confidence: float | None = None

    SUFFIX: ClassVar[str] = SUFFIX
    SCHEMA: ClassVar[str | int] = SCHEMA

    def to_dict(self) -> dict[str, Any]:
        """The JSON form a client publishes (``parse`` reads it back); unset keys are left out."""
        optional = {"id": self.id, "lang": self.lang, "confidence": self.confidence}
        return {"schema": SCHEMA, "text": self.text, **{k: v for k, v in optional.items() if v is not None}}

    @classmethod
    def parse(cls, raw: bytes) -> Transcript:
        """Decode a payload; raises PayloadError naming what is wrong."""
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise PayloadError(f"transcript is not UTF-8: {exc.reason} at byte {exc.start}") from None
        stripped = text.strip()
        if stripped.startswith("{"):
            return cls._from_json(raw)
        return cls._checked(stripped, None, None, None)

    @classmethod
    def _from_json(cls, raw: bytes) -> Transcript:
        data = loads_object(raw)
        if not isinstance(data, dict):
            raise PayloadError("transcript JSON must be an object")
        text = data.get("text")
        if not isinstance(text, str):
            raise PayloadError("transcript 'text' must be a string")
        ident = data.get("id")
        if ident is not None and not isinstance(ident, (str, int)):
            raise PayloadError("transcript 'id' must be a string or an integer")
        lang = data.get("lang")
        if lang is not None and not isinstance(lang, str):
            raise PayloadError("transcript 'lang' must be a string")
        conf = data.get("confidence")
        if conf is not None and (isinstance(conf, bool) or not isinstance(conf, (int, float))):
            raise PayloadError("transcript 'confidence' must be a number")
        return cls._checked(text.strip(), None if ident is None else str(ident), lang, conf)

    @classmethod
    def _checked(cls, text: str, ident: str | None, lang: str | None, conf: float | None) -> Transcript:
        if not text:
            raise PayloadError("transcript text is empty")
        if len(text) > MAX_TEXT_CHARS:
            raise PayloadError(f"transcript text longer than {MAX_TEXT_CHARS} characters")
        if ident is not None and len(ident) > MAX_ID_CHARS:
            raise PayloadError(f"transcript id longer than {MAX_ID_CHARS} characters")
        if conf is not None and not 0.0 <= conf <= 1.0:
            raise PayloadError("transcript 'confidence' must be within [0, 1]")
        return cls(text=text, id=ident, lang=lang, confidence=None if conf is None else float(conf))
