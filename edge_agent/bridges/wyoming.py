"""Wyoming intent and handle service: Home Assistant's Wyoming integration uses the agent as a
conversation agent and runs our intents on its own entities.

Built on the ``wyoming`` package's asyncio server (``AsyncTcpServer`` + ``AsyncEventHandler``),
in a thread of its own with its own event loop. Events served:

- ``describe`` -> ``info``: an intent program and a handle program, our intent names, language en;
- ``recognize`` -> ``intent`` (name, entities = slots with normalized values, a spoken response)
  or ``not-recognized``;
- ``transcript`` -> what the connection's program answers: the intent program (default,
  ``transcript_program``) answers like ``recognize`` (HA then executes the intent); the handle
  program answers ``handled`` (a short spoken confirmation) or ``not-handled``. A client picks
  the program with ``select-program`` before its request;
- ``ping`` -> ``pong``; other event types are dropped, as the protocol asks of servers.

The satellite's area is read from the request's ``context`` (key ``area_context_key``) and fills
the area slot when the text names none; the request's context is echoed in the reply.

Recognition goes through the recognizer the MQTT intent handler serves with (one model in
memory), under that handler's lock, on a worker thread so the event loop never blocks. Limits:
``max_clients`` connections at once, ``idle_timeout_s`` per connection, ``max_event_bytes`` per
event; each is answered with an ``error`` event (codes below) and never stops the agent.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import datetime as dt
import threading
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from importlib import metadata
from typing import Any, Protocol

import orjson
import structlog
from wyoming.asr import Transcript
from wyoming.error import Error
from wyoming.event import Event, async_write_event
from wyoming.handle import Handled, NotHandled
from wyoming.info import (
    Attribution,
    Describe,
    HandleModel,
    HandleProgram,
    Info,
    IntentModel,
    IntentProgram,
    SelectProgram,
)
from wyoming.intent import Entity, Intent, NotRecognized, Recognize
from wyoming.ping import Ping, Pong
from wyoming.server import AsyncEventHandler, AsyncTcpServer

from edge_agent.bridges.wyoming_config import WyomingConfig
from edge_agent.errors import EdgeAgentError

__all__ = [
    "ERROR_BUSY",
    "ERROR_IDLE",
    "ERROR_MALFORMED",
    "ERROR_RECOGNITION",
    "ERROR_TOO_LARGE",
    "HANDLE_PROGRAM",
    "INTENT_PROGRAM",
    "WyomingService",
    "spoken_confirmation",
    "wyoming_service",
]

_log = structlog.get_logger("edge_agent.bridges.wyoming")

INTENT_PROGRAM = "edge-agent-intent"
HANDLE_PROGRAM = "edge-agent-handle"
LANGUAGES = ["en"]
ERROR_BUSY = "busy"
ERROR_IDLE = "idle-timeout"
ERROR_TOO_LARGE = "event-too-large"
ERROR_MALFORMED = "malformed-event"
ERROR_RECOGNITION = "recognition-failed"
NOT_UNDERSTOOD = "Sorry, I didn't understand that."
_ATTRIBUTION = Attribution(name="edge-agent", url="https://edge-agent.invalid/docs/home-assistant")


class ServingRecognizer(Protocol):
    """The recognizer the MQTT intent handler serves with (the pipeline's ``IntentHandler``)."""

    def recognize(self, texts: Any, context_area: str | None = None) -> Any: ...


class StatsSink(Protocol):
    """Where the agent's stats message gathers extra counters (``Pipeline.more_stats``)."""

    more_stats: Callable[[], dict[str, int]] | None


class _Refused(Exception):
    """An event the connection cannot go on after (``code``: the error event's code)."""

    def __init__(self, code: str, text: str) -> None:
        super().__init__(text)
        self.code = code
        self.text = text


class _Malformed(Exception):
    """An event that is refused while the stream stays in step (the next event can be read)."""


# -- spoken confirmations of the handle program -------------------------------------------------
_ACTIONS: dict[str, str] = {
    "HassTurnOn": "Turned on {target}.",
    "HassTurnOff": "Turned off {target}.",
    "HassToggle": "Toggled {target}.",
    "HassStopMoving": "Stopped {target}.",
    "HassVacuumStart": "Started {target}.",
    "HassVacuumReturnToBase": "Sent {target} back to its dock.",
    "HassLawnMowerStartMowing": "Started mowing.",
    "HassLawnMowerDock": "Sent the mower back to its dock.",
    "HassMediaPause": "Paused.",
    "HassMediaUnpause": "Resumed.",
    "HassMediaNext": "Skipped to the next one.",
    "HassMediaPrevious": "Went back to the previous one.",
    "HassSetVolumeRelative": "Changed the volume.",
    "HassMediaPlayerMute": "Muted.",
    "HassMediaPlayerUnmute": "Unmuted.",
    "HassCancelTimer": "Timer cancelled.",
    "HassCancelAllTimers": "All timers cancelled.",
    "HassPauseTimer": "Timer paused.",
    "HassUnpauseTimer": "Timer resumed.",
    "HassIncreaseTimer": "Added time to the timer.",
    "HassDecreaseTimer": "Took time off the timer.",
    "HassNevermind": "OK.",
    "EdgeLightSetRelative": "Adjusted {target}.",
    "EdgeClimateSetRelative": "Adjusted the temperature.",
}


def _target(slots: Mapping[str, Any]) -> str:
    """'the kitchen light', 'the kitchen lights', 'the lights upstairs', 'it'."""
    name, area, floor = slots.get("name"), slots.get("area"), slots.get("floor")
    if name:
        place = f" in the {area}" if area and str(area).lower() not in str(name).lower() else ""
        return f"the {name}{place}"
    kind = slots.get("device_class") or slots.get("domain")
    if isinstance(kind, list):
        kind = kind[0] if kind else None
    things = f"{str(kind).replace('_', ' ')}s" if kind else "devices"
    where = area or floor
    return f"the {where} {things}" if where else f"the {things}"


def _duration(slots: Mapping[str, Any]) -> str:
    parts = [
        f"{slots[unit]} {unit if slots[unit] != 1 else unit[:-1]}"
        for unit in ("hours", "minutes", "seconds")
        if slots.get(unit)
    ]
    return " and ".join(parts) if parts else "the time you asked"


def _with_value(intent: str, slots: Mapping[str, Any]) -> str | None:
    target = _target(slots)
    if intent == "HassLightSet":
        if slots.get("brightness") is not None:
            return f"Set {target} to {slots['brightness']} percent."
        return f"Set {target} to {slots['color']}." if slots.get("color") else f"Set {target}."
    if intent == "HassSetPosition" and slots.get("position") is not None:
        return f"Set {target} to {slots['position']} percent."
    if intent == "HassFanSetSpeed" and slots.get("percentage") is not None:
        return f"Set {target} to {slots['percentage']} percent."
    if intent == "HassClimateSetTemperature" and slots.get("temperature") is not None:
        return f"Set the temperature to {slots['temperature']} degrees."
    if intent == "HassSetVolume" and slots.get("volume_level") is not None:
        return f"Volume set to {slots['volume_level']} percent."
    if intent == "HassStartTimer":
        return f"Timer started for {_duration(slots)}."
    if intent in ("HassListAddItem", "HassShoppingListAddItem") and slots.get("item"):
        where = slots.get("name") or "shopping"
        return f"Added {slots['item']} to your {where} list."
    if intent in ("HassListCompleteItem", "HassShoppingListCompleteItem") and slots.get("item"):
        return f"Checked off {slots['item']}."
    if intent == "HassMediaSearchAndPlay" and slots.get("search_query"):
        return f"Playing {slots['search_query']}."
    return None


def spoken_confirmation(intent: str, slots: Mapping[str, Any], now: dt.datetime | None = None) -> str | None:
    """A short spoken answer for a recognized intent; None when the agent cannot answer it here
    (questions about the state of the home, the weather, a timer's remaining time)."""
    if intent == "HassGetCurrentTime":
        t = now or dt.datetime.now()
        return f"It is {t.hour % 12 or 12}:{t.minute:02d} {'AM' if t.hour < 12 else 'PM'}."
    if intent == "HassGetCurrentDate":
        d = now or dt.datetime.now()
        return f"Today is {d:%A}, {d:%B} {d.day}."
    template = _ACTIONS.get(intent)
    if template is not None:
        return template.format(target=_target(slots))
    return _with_value(intent, slots)


# -- one connection ---------------------------------------------------------------------------
class _Counters:
    """Counters of the service (event loop thread writes, stats thread reads: ints, no lock)."""

    NAMES = (
        "connections",
        "refused_busy",
        "idle_timeouts",
        "too_large",
        "malformed",
        "ignored",
        "describe",
        "recognize",
        "transcript",
        "intent",
        "not_recognized",
        "handled",
        "not_handled",
        "recognition_failed",
    )

    def __init__(self) -> None:
        self.values = dict.fromkeys(self.NAMES, 0)
        self.clients = 0

    def add(self, name: str) -> None:
        self.values[name] += 1

    def as_stats(self) -> dict[str, int]:
        out = {f"wyoming_{k}": v for k, v in self.values.items()}
        out["wyoming_clients"] = self.clients
        return out


class _Connection(AsyncEventHandler):
    """One client: reads bounded events, answers them; errors end this connection only."""

    def __init__(
        self, service: WyomingService, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        super().__init__(reader, writer)
        self.service = service
        self.cfg = service.cfg
        self.program = INTENT_PROGRAM if self.cfg.transcript_program == "intent" else HANDLE_PROGRAM

    async def run(self) -> None:
        counters = self.service.counters
        if counters.clients >= self.cfg.max_clients:
            counters.add("refused_busy")
            await self._close_with(ERROR_BUSY, f"too many clients (max_clients {self.cfg.max_clients})")
            return
        counters.clients += 1
        counters.add("connections")
        self._is_running = True
        try:
            await self._serve()
        except _Refused as exc:
            await self._close_with(exc.code, exc.text)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the client went away mid-event
        finally:
            counters.clients -= 1
            self.writer.close()

    async def _serve(self) -> None:
        while self._is_running:
            try:
                event = await asyncio.wait_for(self._read_event(), self.cfg.idle_timeout_s)
            except TimeoutError:
                self.service.counters.add("idle_timeouts")
                raise _Refused(ERROR_IDLE, f"no event for {self.cfg.idle_timeout_s:g} s") from None
            except _Malformed as exc:
                self.service.counters.add("malformed")
                await self.write_event(Error(text=str(exc), code=ERROR_MALFORMED).event())
                continue
            if event is None or not await self.handle_event(event):
                return

    async def _close_with(self, code: str, text: str) -> None:
        _log.info("wyoming.refused", code=code, reason=text)
        with contextlib.suppress(ConnectionError, TimeoutError):
            await asyncio.wait_for(async_write_event(Error(text=text, code=code).event(), self.writer), 5.0)
        self.writer.close()

    async def _read_event(self) -> Event | None:
        """One event within ``max_event_bytes``; None at the end of the stream."""
        limit = self.cfg.max_event_bytes
        try:
            line = await self.reader.readuntil(b"\n")
        except asyncio.IncompleteReadError:
            return None
        except asyncio.LimitOverrunError:
            self.service.counters.add("too_large")
            raise _Refused(ERROR_TOO_LARGE, f"event header longer than max_event_bytes ({limit})") from None
        header = _parse_header(line)
        data_len, payload_len = _length(header, "data_length"), _length(header, "payload_length")
        if len(line) + data_len + payload_len > limit:
            self.service.counters.add("too_large")
            raise _Refused(
                ERROR_TOO_LARGE,
                f"event of {len(line) + data_len + payload_len} bytes is "
                f"larger than max_event_bytes ({limit})",
            )
        data = header.get("data") or {}
        extra = await self.reader.readexactly(data_len) if data_len else b""
        payload = await self.reader.readexactly(payload_len) if payload_len else None
        if not isinstance(data, dict):
            raise _Malformed("'data' must be an object")
        if extra:
            more = _json(extra, "event data")
            if not isinstance(more, dict):
                raise _Malformed("event data must be a JSON object")
            data = {**data, **more}
        return Event(type=header["type"], data=data, payload=payload)

    async def handle_event(self, event: Event) -> bool:
        counters = self.service.counters
        if Describe.is_type(event.type):
            counters.add("describe")
            await self.write_event(self.service.info().event())
        elif Ping.is_type(event.type):
            await self.write_event(Pong(text=event.data.get("text")).event())
        elif SelectProgram.is_type(event.type):
            await self._select(event)
        elif Recognize.is_type(event.type):
            counters.add("recognize")
            await self._answer(event, INTENT_PROGRAM)
        elif Transcript.is_type(event.type):
            counters.add("transcript")
            await self._answer(event, self.program)
        else:
            counters.add("ignored")  # "servers are expected to drop unrecognized events"
        return True

    async def _select(self, event: Event) -> None:
        name = event.data.get("name")
        if name not in (INTENT_PROGRAM, HANDLE_PROGRAM):
            self.service.counters.add("malformed")
            text = f"unknown program {name!r}; programs: {INTENT_PROGRAM}, {HANDLE_PROGRAM}"
            await self.write_event(Error(text=text, code=ERROR_MALFORMED).event())
            return
        self.program = name

    async def _answer(self, event: Event, program: str) -> None:
        text, context = event.data.get("text"), event.data.get("context")
        if not isinstance(text, str) or not text.strip() or not isinstance(context, dict | None):
            self.service.counters.add("malformed")
            msg = f"{event.type} needs a non-empty 'text' and an optional 'context' object"
            await self.write_event(Error(text=msg, code=ERROR_MALFORMED).event())
            return
        area = context.get(self.cfg.area_context_key) if context else None
        try:
            result = await self.service.recognize(text, area if isinstance(area, str) and area else None)
        except EdgeAgentError as exc:
            self.service.counters.add("recognition_failed")
            await self.write_event(Error(text=f"recognition failed: {exc}", code=ERROR_RECOGNITION).event())
            return
        reply = _reply(result, program, context)
        self.service.counters.add(reply.type.replace("-", "_"))
        await self.write_event(reply)


def _reply(result: Any, program: str, context: dict[str, Any] | None) -> Event:
    slots = {name: slot.value for name, slot in result.slots.items()}
    answer = spoken_confirmation(result.intent, slots) if result.intent is not None else None
    if program == HANDLE_PROGRAM:
        if answer is not None:
            return Handled(text=answer, context=context).event()
        said = NOT_UNDERSTOOD if result.intent is None else "I understood that, but I can't answer it here."
        return NotHandled(text=said, context=context).event()
    if result.intent is None:
        return NotRecognized(text=NOT_UNDERSTOOD, context=context).event()
    entities = [Entity(name=name, value=value) for name, value in slots.items()]
    return Intent(name=result.intent, entities=entities, text=answer, context=context).event()


def _json(raw: bytes, what: str) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise _Malformed(f"{what} is not JSON: {exc}") from None


def _parse_header(line: bytes) -> dict[str, Any]:
    header = _json(line, "event header")
    if not isinstance(header, dict) or not isinstance(header.get("type"), str) or not header["type"]:
        raise _Malformed("event header must be a JSON object with a non-empty string 'type'")
    return header


def _length(header: Mapping[str, Any], key: str) -> int:
    value = header.get(key)
    if value is None:
        return 0
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        # the stream cannot be followed past a length we cannot trust
        raise _Refused(ERROR_MALFORMED, f"'{key}' must be a non-negative integer")
    return value


# -- the service ------------------------------------------------------------------------------
class _Server(AsyncTcpServer):
    """The wyoming TCP server with the stream reader's line limit set to ``max_event_bytes``."""

    def __init__(self, host: str, port: int, limit: int) -> None:
        super().__init__(host, port)
        self.limit = limit
        self.bound: asyncio.Server | None = None

    async def start(self, handler_factory: Callable[..., AsyncEventHandler]) -> None:
        callback = partial(self._handler_callback, handler_factory)
        self.bound = await asyncio.start_server(callback, host=self.host, port=self.port, limit=self.limit)
        self._server = self.bound
        await self.bound.start_serving()


class WyomingService:
    """The Wyoming server of one agent, on its own thread and event loop; ``start``/``stop`` are
    no-ops when ``wyoming.enabled`` is off."""

    def __init__(
        self,
        cfg: WyomingConfig,
        serving: ServingRecognizer,
        lock: threading.Lock,
        model_id: Callable[[], str],
        intents: Sequence[str],
        site_id: str,
    ) -> None:
        self.cfg = cfg
        self.serving = serving
        self.lock = lock
        self.model_id = model_id
        self.intents = list(intents)
        self.site_id = site_id
        self.counters = _Counters()
        self.port: int | None = None  # the bound port once started
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="wyoming-nlu")

    def stats(self) -> dict[str, int]:
        return self.counters.as_stats() if self.cfg.enabled else {}

    def info(self) -> Info:
        version = _version()
        model = self.model_id()
        names = ", ".join(self.intents)
        intent = IntentProgram(
            name=INTENT_PROGRAM,
            attribution=_ATTRIBUTION,
            installed=True,
            version=version,
            description="On-device intent recognition; Home Assistant runs the recognized intent",
            models=[
                IntentModel(
                    name=model,
                    attribution=_ATTRIBUTION,
                    installed=True,
                    version=model,
                    description=f"intents: {names}",
                    languages=LANGUAGES,
                )
            ],
        )
        handle = HandleProgram(
            name=HANDLE_PROGRAM,
            attribution=_ATTRIBUTION,
            installed=True,
            version=version,
            description="On-device intent recognition answered with a short spoken confirmation",
            models=[
                HandleModel(
                    name=model,
                    attribution=_ATTRIBUTION,
                    installed=True,
                    version=model,
                    description=f"intents: {names}",
                    languages=LANGUAGES,
                )
            ],
        )
        return Info(intent=[intent], handle=[handle])

    async def recognize(self, text: str, area: str | None) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, self._recognize, text, area)

    def _recognize(self, text: str, area: str | None) -> Any:
        with self.lock:
            return self.serving.recognize([text], area)[0]

    # -- lifecycle (called by the agent's main thread) --------------------------------------
    def start(self, timeout: float = 10.0) -> None:
        """Listen (and announce over mDNS when configured); a failure is logged, the agent goes on
        serving MQTT."""
        if not self.cfg.enabled:
            return
        self._thread = threading.Thread(target=self._run, name="wyoming", daemon=True)
        self._thread.start()
        self._ready.wait(timeout)

    def _run(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        server = _Server(self.cfg.host, self.cfg.port, self.cfg.max_event_bytes)
        try:
            await server.start(partial(_Connection, self))
        except OSError as exc:
            _log.error(
                "wyoming.listen_failed",
                host=self.cfg.host,
                port=self.cfg.port,
                error=str(exc),
                note="the MQTT paths go on; fix wyoming.host/port and restart",
            )
            self._ready.set()
            return
        assert server.bound is not None
        self.port = server.bound.sockets[0].getsockname()[1]
        _log.info("wyoming.listening", host=self.cfg.host, port=self.port)
        zeroconf = await self._announce() if self.cfg.zeroconf else None
        self._ready.set()
        await self._stop.wait()
        if zeroconf is not None:
            await zeroconf.async_close()
        await server.stop()
        self._pool.shutdown(wait=False)

    async def _announce(self) -> Any:
        """mDNS announcement of ``_wyoming._tcp`` (HA's zeroconf discovery); None when unavailable."""
        try:
            from wyoming.zeroconf import HomeAssistantZeroconf
        except ImportError:
            _log.warning("wyoming.zeroconf_unavailable", reason="the 'zeroconf' package is not installed")
            return None
        name = self.cfg.zeroconf_name or f"edge-agent-{self.site_id}"
        host = None if self.cfg.host in ("0.0.0.0", "::") else self.cfg.host
        try:
            announcer = HomeAssistantZeroconf(port=self.port or self.cfg.port, name=name, host=host)
            await announcer.register_server()
        except OSError as exc:
            _log.warning("wyoming.zeroconf_failed", error=str(exc))
            return None
        _log.info("wyoming.zeroconf_announced", name=name)
        return announcer._aiozc

    def stop(self, timeout: float = 5.0) -> None:
        loop, stop = self._loop, self._stop
        if loop is None or stop is None or self._thread is None:
            return
        loop.call_soon_threadsafe(stop.set)
        self._thread.join(timeout)


def _version() -> str:
    try:
        return metadata.version("edge-agent")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def wyoming_service(
    cfg: WyomingConfig,
    site_id: str,
    serving: ServingRecognizer,
    lock: threading.Lock,
    model_id: Callable[[], str],
    intents: Sequence[str],
    stats: StatsSink,
) -> WyomingService:
    """The agent's Wyoming service (``cfg``: the config's ``wyoming`` section); its counters join
    the stats message."""
    from edge_agent.nlu.schema import OUT_OF_SCOPE

    names = [i for i in intents if i != OUT_OF_SCOPE]
    service = WyomingService(cfg, serving, lock, model_id, names, site_id)
    previous = stats.more_stats
    stats.more_stats = lambda: {**(previous() if previous is not None else {}), **service.stats()}
    return service
