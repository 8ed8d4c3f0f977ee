"""Hermes NLU messages (the Snips/Rhasspy protocol): queries in, intents or not-recognized out.

Topics::

    in   hermes/nlu/query                  {"input", "siteId", "id"?, "sessionId"?, "customData"?,
                                            "intentFilter"?, "lang"?, "wakewordId"?, "asrConfidence"?}
    out  hermes/intent/<intentName>        recognized (intent allowed by intentFilter)
    out  hermes/nlu/intentParsed           same body, optional (config hermes.publish_intent_parsed)
    out  hermes/nlu/intentNotRecognized    nothing recognized, intent filtered out or disabled
    out  hermes/error/nlu                  the query could not be processed

Example::

    >>> q = NluQuery.from_payload(b'{"input": "turn on the kitchen light", "siteId": "kitchen"}')
    >>> q.site_id
    'kitchen'

Slots are one per slot of our ``IntentResult`` (same slot names as ``edge/<site>/intent``), with
``value.kind`` chosen from the slot's meaning: ``Percentage`` (brightness, position, percentage,
volume_level), ``Number`` (steps and other numbers), ``Duration`` (hours/minutes/seconds and the
``start_`` variants, in Snips' duration shape), ``Temperature`` and ``Custom`` for text. Built-in
kinds carry Snips' built-in entity names (``snips/number`` ...); custom slots use the slot name.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from edge_agent.errors import PayloadError
from edge_agent.messages.base import Publish
from edge_agent.records.intent import IntentResult, SlotValue

__all__ = [
    "ERROR_TOPIC",
    "INTENT_PARSED_TOPIC",
    "INTENT_TOPIC_PREFIX",
    "MAX_INPUT_CHARS",
    "NOT_RECOGNIZED_TOPIC",
    "QUERY_TOPIC",
    "HermesMessage",
    "NluQuery",
    "error_for_payload",
    "error_message",
    "hermes_slot",
    "intent_topic",
    "peek_site_session",
    "respond",
    "slot_kind",
]

QUERY_TOPIC = "hermes/nlu/query"
INTENT_TOPIC_PREFIX = "hermes/intent/"
INTENT_PARSED_TOPIC = "hermes/nlu/intentParsed"
NOT_RECOGNIZED_TOPIC = "hermes/nlu/intentNotRecognized"
ERROR_TOPIC = "hermes/error/nlu"

MAX_INPUT_CHARS = 4096
_CONTEXT_CHARS = 512

_PERCENTAGE_SLOTS = frozenset({"brightness", "position", "percentage", "volume_level"})
_DURATION_UNITS = ("hours", "minutes", "seconds")
_DURATION_SLOTS = {u: u for u in _DURATION_UNITS} | {f"start_{u}": u for u in _DURATION_UNITS}
_TEMPERATURE_SLOTS = frozenset({"temperature"})
_UNITS = {"c": "celsius", "celsius": "celsius", "f": "fahrenheit", "fahrenheit": "fahrenheit"}
_BUILTIN_ENTITY = {
    "Number": "snips/number",
    "Percentage": "snips/percentage",
    "Duration": "snips/duration",
    "Temperature": "snips/temperature",
}


@dataclass(frozen=True)
class HermesMessage(Publish):
    """One outgoing Hermes message: topic and JSON payload bytes (sent with the bridge's QoS)."""

    def json(self) -> dict[str, Any]:
        out: dict[str, Any] = orjson.loads(self.payload)
        return out


def _opt_str(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is None or isinstance(value, str):
        return value
    raise PayloadError(f"hermes query field {key!r} must be a string or null, got {type(value).__name__}")


def _intent_filter(data: Mapping[str, Any]) -> tuple[str, ...] | None:
    value = data.get("intentFilter")
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise PayloadError("hermes query field 'intentFilter' must be a list of intent names or null")
    return tuple(value) or None  # an empty filter restricts nothing (as Rhasspy does)


def _asr_confidence(data: Mapping[str, Any]) -> float | None:
    value = data.get("asrConfidence")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise PayloadError("hermes query field 'asrConfidence' must be a finite number or null")
    return float(value)


@dataclass(frozen=True)
class NluQuery:
    """A ``hermes/nlu/query``: text to recognize plus the ids to echo in the answer.

    ``custom_data`` is echoed unchanged (Hermes defines it as a string; other JSON values
    sent by Node-RED flows are passed back as they came).
    """

    input: str
    site_id: str = "default"
    id: str | None = None
    session_id: str | None = None
    custom_data: Any = None
    intent_filter: tuple[str, ...] | None = None
    lang: str | None = None
    wakeword_id: str | None = None
    asr_confidence: float | None = None

    TOPIC = QUERY_TOPIC

    @classmethod
    def from_payload(cls, payload: bytes) -> NluQuery:
        """Parse and validate a query; raises ``PayloadError`` naming the bad field."""
        try:
            data = orjson.loads(payload)
        except orjson.JSONDecodeError as exc:
            raise PayloadError(f"hermes query is not JSON: {exc}") from None
        if not isinstance(data, dict):
            raise PayloadError("hermes query must be a JSON object")
        text = data.get("input")
        if not isinstance(text, str):
            raise PayloadError("hermes query field 'input' (string) is required")
        if len(text) > MAX_INPUT_CHARS:
            raise PayloadError(f"hermes query 'input' is longer than {MAX_INPUT_CHARS} characters")
        site = data.get("siteId", "default")
        if not isinstance(site, str) or not site:
            raise PayloadError("hermes query field 'siteId' must be a non-empty string")
        return cls(
            input=text,
            site_id=site,
            id=_opt_str(data, "id"),
            session_id=_opt_str(data, "sessionId"),
            custom_data=data.get("customData"),
            intent_filter=_intent_filter(data),
            lang=_opt_str(data, "lang"),
            wakeword_id=_opt_str(data, "wakewordId"),
            asr_confidence=_asr_confidence(data),
        )

    def allows(self, intent: str) -> bool:
        return self.intent_filter is None or intent in self.intent_filter


def peek_site_session(payload: bytes) -> tuple[str, str | None]:
    """Best-effort siteId/sessionId of a payload that failed to parse (for the error reply)."""
    try:
        data = orjson.loads(payload)
    except orjson.JSONDecodeError:
        return "default", None
    if not isinstance(data, dict):
        return "default", None
    site = data.get("siteId")
    session = data.get("sessionId")
    return (
        site if isinstance(site, str) and site else "default",
        session if isinstance(session, str) else None,
    )


def intent_topic(intent: str) -> str:
    """``hermes/intent/<intentName>``; refuses names that are not a single topic level."""
    if not intent or any(ch in intent for ch in "/+#\x00"):
        raise PayloadError(f"intent name {intent!r} cannot be used as a Hermes topic level")
    return INTENT_TOPIC_PREFIX + intent


def slot_kind(slot: str, value: Any) -> str:
    """The Hermes ``value.kind`` of one of our slots."""
    if slot in _DURATION_SLOTS and _is_number(value):
        return "Duration"
    if slot in _TEMPERATURE_SLOTS and (_is_number(value) or isinstance(value, dict)):
        return "Temperature"
    if slot in _PERCENTAGE_SLOTS and _is_number(value):
        return "Percentage"
    if _is_number(value):
        return "Number"
    return "Custom"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _duration_value(unit: str, amount: float) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": "Duration"}
    for name in ("years", "quarters", "months", "weeks", "days", *_DURATION_UNITS):
        out[name] = amount if name == unit else 0
    out["precision"] = "Exact"
    return out


def _temperature_value(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        unit = value.get("unit")
        unit_name = _UNITS.get(str(unit).lower()) if unit is not None else None
        return {"kind": "Temperature", "value": value.get("value"), "unit": unit_name}
    return {"kind": "Temperature", "value": value, "unit": None}


def _hermes_value(slot: str, value: Any) -> dict[str, Any]:
    kind = slot_kind(slot, value)
    if kind == "Duration":
        return _duration_value(_DURATION_SLOTS[slot], value)
    if kind == "Temperature":
        return _temperature_value(value)
    return {"kind": kind, "value": value}


def hermes_slot(name: str, slot: SlotValue) -> dict[str, Any]:
    """One Hermes slot object from one of our slots."""
    value = _hermes_value(name, slot.value)
    out: dict[str, Any] = {
        "entity": _BUILTIN_ENTITY.get(value["kind"], name),
        "slotName": name,
        "rawValue": slot.raw,
        "value": value,
        "confidence": round(slot.confidence, 4),
        "range": None,
    }
    if slot.start >= 0 and slot.end >= slot.start:
        out["range"] = {"start": slot.start, "end": slot.end}
    return out


def _base(query: NluQuery) -> dict[str, Any]:
    return {"input": query.input, "siteId": query.site_id, "id": query.id, "sessionId": query.session_id}


def _intent_body(query: NluQuery, result: IntentResult, intent: str) -> dict[str, Any]:
    body = _base(query)
    body["intent"] = {"intentName": intent, "confidenceScore": round(result.confidence, 4)}
    body["slots"] = [hermes_slot(name, slot) for name, slot in result.slots.items()]
    body.update(
        customData=query.custom_data,
        asrTokens=None,
        asrConfidence=query.asr_confidence,
        rawInput=query.input,
        wakewordId=query.wakeword_id,
        lang=query.lang,
    )
    return body


def _not_recognized(query: NluQuery) -> HermesMessage:
    body = _base(query)
    body["customData"] = query.custom_data
    return HermesMessage(NOT_RECOGNIZED_TOPIC, orjson.dumps(body))


def respond(
    query: NluQuery,
    result: IntentResult,
    *,
    enabled: Collection[str] | None = None,
    intent_parsed: bool = False,
) -> list[HermesMessage]:
    """The messages that answer ``query`` given our recognition ``result``.

    ``enabled``: intents currently enabled by runtime control (None = all). An intent outside
    ``enabled`` or the query's ``intentFilter`` is answered as not recognized.
    """
    intent = result.intent
    if intent is None or not query.allows(intent) or (enabled is not None and intent not in enabled):
        return [_not_recognized(query)]
    payload = orjson.dumps(_intent_body(query, result, intent))
    out = [HermesMessage(intent_topic(intent), payload)]
    if intent_parsed:
        out.insert(0, HermesMessage(INTENT_PARSED_TOPIC, payload))
    return out


def error_message(
    error: str, *, site_id: str = "default", session_id: str | None = None, context: str | None = None
) -> HermesMessage:
    """``hermes/error/nlu``: ``context`` is the offending input, capped."""
    if context is not None and len(context) > _CONTEXT_CHARS:
        context = context[:_CONTEXT_CHARS] + "…"
    body = {"error": error, "siteId": site_id, "context": context, "sessionId": session_id}
    return HermesMessage(ERROR_TOPIC, orjson.dumps(body))


def error_for_payload(error: str, payload: bytes) -> HermesMessage:
    """The error reply to a query payload that could not be parsed or processed."""
    site, session = peek_site_session(payload)
    return error_message(
        error, site_id=site, session_id=session, context=payload.decode("utf-8", errors="replace")
    )
