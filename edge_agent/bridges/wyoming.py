"""Wyoming intent and handle service: Home Assistant's Wyoming integration uses the agent as a
conversation agent and runs our intents on its own entities.

Built on the ``wyoming`` package's asyncio server (``AsyncTcpServer`` + ``AsyncEventHandler``),
in a thread of its own with its own event loop. Events served:

- ``describe`` -> ``info``: an intent program and a handle program, our intent names, language en;
- ``recognize`` -> ``intent`` (name, entities = slots with normalized values, a spoken response)
  or ``not-recognized``;
- ``transcript`` -> what the connection's program answers: the intent program (default,
  ``transcript_program``) answers with what the listening Home Assistant can run
  (``ha_plan.plan``: an ``intent`` HA then executes, with a spoken text that for a question is the
  answer read from HA's states; or ``not-handled`` with words that say what is missing; a custom
  intent of ``intents.custom_sentences`` goes as it is, for the user's ``intent_script``); the
  handle program answers ``handled`` (a short spoken confirmation) or ``not-handled``. A client
  picks the program with ``select-program`` before its request;
- ``ping`` -> ``pong``; other event types are dropped, as the protocol asks of servers.

Which intents HA can run depends on its release (``ha_intents``): ``ha_version`` in the config,
or learned from HA's REST API with ``ha_url`` and a token (``ha_api``), which also gives the
entities' states for answers. A ``recognize`` request gets the model's intent as recognized.

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
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
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

from edge_agent.bridges.ha_api import HaApi, HaCache
from edge_agent.bridges.ha_intents import OLDEST, HaVersion, parse_version
from edge_agent.bridges.ha_plan import (
    QUESTIONS,
    Explain,
    HomeView,
    answer,
    needs_states,
    plan,
    spoken_confirmation,
)
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
        "explained",
        "mapped",
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
        raw = Recognize.is_type(event.type)
        try:
            result, view = await self.service.understand(
                text, area if isinstance(area, str) and area else None, None if raw else program
            )
        except EdgeAgentError as exc:
            self.service.counters.add("recognition_failed")
            await self.write_event(Error(text=f"recognition failed: {exc}", code=ERROR_RECOGNITION).event())
            return
        reply = self.service.reply(result, None if raw else program, context, view)
        self.service.counters.add(reply.type.replace("-", "_"))
        await self.write_event(reply)


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
        self.custom: frozenset[str] = frozenset()  # the user's own intents (replaced whole on a reload)
        self.site_id = site_id
        self.counters = _Counters()
        self.port: int | None = None  # the bound port once started
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="wyoming-nlu")
        self.ha = _ha_cache(cfg, self._ha_failed)
        self._ha_logged: dict[str, str] = {}
        self._version_logged: tuple[HaVersion, str] | None = None

    def stats(self) -> dict[str, int]:
        return self.counters.as_stats() if self.cfg.enabled else {}

    def set_intents(self, intents: Sequence[str], custom: Collection[str]) -> None:
        """The intents ``describe`` lists, and which of them are the user's own (sent to HA as they
        are); each list is replaced whole (a reload of the custom sentences)."""
        from edge_agent.nlu.schema import OUT_OF_SCOPE

        self.intents = [i for i in intents if i != OUT_OF_SCOPE]
        self.custom = frozenset(custom)

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

    async def understand(
        self, text: str, area: str | None, program: str | None
    ) -> tuple[Any, HomeView | None]:
        """The recognition and, for a ``program`` (None: a plain recognize), what the agent
        knows of the listening HA for it; on the worker thread (HA's API is asked there)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, self._understand, text, area, program)

    def _understand(self, text: str, area: str | None, program: str | None) -> tuple[Any, HomeView | None]:
        with self.lock:
            result = self.serving.recognize([text], area)[0]
        if program is None or result.intent is None:
            return result, None
        return result, self.view(result.intent, program)

    def view(self, intent: str, program: str) -> HomeView:
        """The listening HA's release and, when ``intent`` needs them and HA can be asked, its states."""
        version, source = self._ha_version()
        wanted = intent in QUESTIONS if program == HANDLE_PROGRAM else needs_states(intent, version)
        states = self.ha.states() if self.ha is not None and wanted else None
        return HomeView(version, source != "assumed", states)

    def _ha_version(self) -> tuple[HaVersion, str]:
        version, source = OLDEST, "assumed"
        learned = self.ha.version() if self.ha is not None else None
        if learned is not None:
            try:
                version, source = parse_version(learned), "home-assistant"
            except ValueError:
                self._ha_failed("version", f"HA reported a version we cannot read: {learned!r}")
        if source == "assumed" and self.cfg.ha_version is not None:
            version, source = parse_version(self.cfg.ha_version), "config"
        if self._version_logged != (version, source):
            self._version_logged = (version, source)
            log = _log.warning if source == "assumed" else _log.info
            log("wyoming.ha_version", version=str(version), source=source,
                note="set wyoming.ha_version, or ha_url and a token" if source == "assumed" else None)
        return version, source

    def _ha_failed(self, what: str, error: str) -> None:
        """HA's API failed: logged once per kind of request until the error changes."""
        if self._ha_logged.get(what) != error:
            self._ha_logged[what] = error
            _log.warning("wyoming.ha_api_failed", request=what, error=error)

    def reply(
        self, result: Any, program: str | None, context: dict[str, Any] | None, view: HomeView | None
    ) -> Event:
        """The event that answers one recognition on ``program`` (None: a plain recognize)."""
        slots = {name: slot.value for name, slot in result.slots.items()}
        if result.intent is None:
            if program == HANDLE_PROGRAM:
                return NotHandled(text=NOT_UNDERSTOOD, context=context).event()
            return NotRecognized(text=NOT_UNDERSTOOD, context=context).event()
        if program is None or view is None:  # recognize: the model's intent as recognized
            entities = [Entity(name=name, value=value) for name, value in slots.items()]
            text = spoken_confirmation(result.intent, slots)
            return Intent(name=result.intent, entities=entities, text=text, context=context).event()
        if program == HANDLE_PROGRAM:
            said = _handled_text(result.intent, slots, view)
            if said is not None:
                return Handled(text=said, context=context).event()
            return NotHandled(text="I understood that, but I can't answer it here.", context=context).event()
        if result.intent in self.custom:  # the user's own intent: their intent_script in HA runs it
            entities = [Entity(name=name, value=value) for name, value in slots.items()]
            return Intent(name=result.intent, entities=entities, context=context).event()
        decided = plan(result.intent, slots, view)
        if isinstance(decided, Explain):
            self.counters.add("explained")
            _log.info("wyoming.explained", intent=result.intent, reason=decided.reason)
            return NotHandled(text=decided.text, context=context).event()
        if decided.intent != result.intent:
            self.counters.add("mapped")
            _log.info("wyoming.mapped", intent=result.intent, sent=decided.intent, version=str(view.version))
        entities = [Entity(name=name, value=value) for name, value in decided.slots.items()]
        return Intent(name=decided.intent, entities=entities, text=decided.text, context=context).event()

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


def _handled_text(intent: str, slots: dict[str, Any], view: HomeView) -> str | None:
    """The handle program's answer: a question from HA's states when it can see them, else a
    confirmation; None when it has nothing to say."""
    if intent in QUESTIONS:
        return answer(intent, slots, view.states) if view.states is not None else None
    return spoken_confirmation(intent, slots)


def _ha_cache(cfg: WyomingConfig, on_error: Callable[[str, str], None]) -> HaCache | None:
    token = cfg.ha_token
    if cfg.ha_url is None or token is None:
        return None
    return HaCache(HaApi(cfg.ha_url, token, cfg.ha_timeout_s), on_error)


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
