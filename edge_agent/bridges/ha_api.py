"""What the agent learns from Home Assistant's REST API: its version, its entities' states and areas.

With ``wyoming.ha_url`` and a long-lived access token (``wyoming.ha_token_file``, read by
``edge_agent.config.load``) the Wyoming service asks HA, on its worker thread and only when an
answer needs it:

- ``GET /api/config`` -> the release that is listening (``version``), cached for ``CACHE_S``;
- ``GET /api/states`` -> every entity's state and attributes, fresh for every question;
- ``POST /api/template`` -> each entity's area (HA's ``area_name``), cached for ``CACHE_S``
  (the template API needs an admin's token; without it areas are unknown and questions by area
  get an honest sentence).

Requests use the standard library (``urllib``) with ``ha_timeout_s``; any failure is an
``HaApiError`` whose text never holds the token. Nothing here runs at import or in config validation.
"""

from __future__ import annotations

import json
import ssl
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from edge_agent.errors import EdgeAgentError

__all__ = ["AREAS_TEMPLATE", "CACHE_S", "EntityState", "HaApi", "HaApiError", "HaCache", "entity_states"]

CACHE_S = 300.0  # how long a learned version and the area map are trusted
_RETRY_S = 30.0  # after a failure, how long before HA is asked again for the version / areas
# one render: every entity id and its area name (null when none), in the same order
AREAS_TEMPLATE = (
    "{% set ids = states | map(attribute='entity_id') | list %}"
    "{{ {'ids': ids, 'areas': ids | map('area_name') | list} | tojson }}"
)


class HaApiError(EdgeAgentError):
    """Home Assistant's API could not be reached or gave an answer we cannot use."""


@dataclass(frozen=True)
class EntityState:
    """One entity as HA reports it: id, friendly name, state, area (None: none or unknown)."""

    entity_id: str
    name: str
    state: str
    area: str | None = None
    attributes: Mapping[str, Any] = field(default_factory=dict)

    @property
    def domain(self) -> str:
        return self.entity_id.split(".", 1)[0]


class HaApi:
    """Blocking client of HA's REST API (``url`` like ``http://homeassistant.local:8123``)."""

    def __init__(self, url: str, token: str, timeout_s: float) -> None:
        self.url = url.rstrip("/")
        self._token = token
        self.timeout_s = timeout_s
        # https: the system's trust store (a self-signed HA certificate must be trusted by the system)
        self._ssl = ssl.create_default_context()

    def __repr__(self) -> str:  # never shows the token
        return f"HaApi({self.url!r})"

    def config(self) -> dict[str, Any]:
        return _mapping(self._call("GET", "/api/config"), "/api/config")

    def states(self) -> list[dict[str, Any]]:
        body = self._call("GET", "/api/states")
        if not isinstance(body, list):
            raise HaApiError("/api/states: expected a list of states")
        return [s for s in body if isinstance(s, dict) and isinstance(s.get("entity_id"), str)]

    def areas(self) -> dict[str, str]:
        """entity id -> area name of the entities that have an area."""
        rendered = self._call("POST", "/api/template", {"template": AREAS_TEMPLATE}, raw=True)
        data = _mapping(_loads(rendered, "/api/template"), "/api/template")
        ids, areas = data.get("ids"), data.get("areas")
        if not isinstance(ids, list) or not isinstance(areas, list) or len(ids) != len(areas):
            raise HaApiError("/api/template: the area map did not render as expected")
        return {str(i): str(a) for i, a in zip(ids, areas, strict=True) if isinstance(a, str) and a}

    def _call(self, method: str, path: str, payload: Any = None, raw: bool = False) -> Any:
        data = None if payload is None else json.dumps(payload).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {self._token}")
        req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s, context=self._ssl) as resp:
                body: bytes = resp.read()
        except urllib.error.HTTPError as exc:
            hint = " (check the token in wyoming.ha_token_file)" if exc.code in (401, 403) else ""
            raise HaApiError(f"{method} {path}: HTTP {exc.code}{hint}") from None
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            reason = getattr(exc, "reason", exc)
            raise HaApiError(f"{method} {path}: {reason}") from None
        text = body.decode("utf-8", errors="replace")
        return text if raw else _loads(text, path)


def _loads(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        raise HaApiError(f"{what}: the answer is not JSON") from None


def _mapping(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise HaApiError(f"{what}: expected a JSON object")
    return value


def entity_states(raw: list[dict[str, Any]], areas: Mapping[str, str]) -> list[EntityState]:
    """HA's state objects -> EntityState, with the area from ``areas``."""
    out: list[EntityState] = []
    for item in raw:
        entity_id = str(item["entity_id"])
        attrs = item.get("attributes") if isinstance(item.get("attributes"), dict) else {}
        assert isinstance(attrs, dict)
        name = attrs.get("friendly_name")
        out.append(
            EntityState(
                entity_id=entity_id,
                name=str(name) if isinstance(name, str) and name else entity_id.split(".", 1)[-1],
                state=str(item.get("state", "unknown")),
                area=areas.get(entity_id),
                attributes=attrs,
            )
        )
    return out


class HaCache:
    """The version and areas learned from HA (cached), the states (fresh). Thread-safe; every
    method returns None instead of raising when HA cannot answer, after logging why once."""

    def __init__(
        self,
        api: HaApi,
        on_error: Callable[[str, str], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.api = api
        self.on_error = on_error
        self.clock = clock
        self._lock = threading.Lock()
        self._version: tuple[float, str | None] | None = None
        self._areas: tuple[float, dict[str, str] | None] | None = None

    def version(self) -> str | None:
        """The listening release as HA reports it ('2025.4.4'); None when HA cannot be asked."""
        with self._lock:
            now = self.clock()
            if self._version is not None and now < self._version[0]:
                return self._version[1]
            try:
                found = self.api.config().get("version")
                value = found if isinstance(found, str) else None
                self._version = (now + CACHE_S, value)
            except HaApiError as exc:
                self.on_error("version", str(exc))
                value = None
                self._version = (now + _RETRY_S, None)
            return value

    def states(self) -> list[EntityState] | None:
        """Every entity's state now, with areas where known; None when HA cannot be asked."""
        try:
            raw = self.api.states()
        except HaApiError as exc:
            self.on_error("states", str(exc))
            return None
        return entity_states(raw, self._area_map())

    def _area_map(self) -> dict[str, str]:
        with self._lock:
            now = self.clock()
            if self._areas is None or now >= self._areas[0]:
                try:
                    self._areas = (now + CACHE_S, self.api.areas())
                except HaApiError as exc:
                    self.on_error("areas", str(exc))
                    self._areas = (now + _RETRY_S, None)
            return self._areas[1] or {}
