"""The backend preference chain: probe each backend, run on the best, fall back, switch back.

At start every entry of ``runtime.delegates`` is probed in order: its delegate must load, and a
warm-up through every task graph must give final outputs that match the CPU golden outputs
(computed once, with the chain's ``cpu`` entry) within ``probe_tolerance`` of their range.
The first that passes becomes active; the reasons the others are unavailable are logged and kept for stats.

When the active backend fails at run time (an invoke error: the accelerator was unplugged, a
driver died), it is marked failed, the next backend that passes its probe takes over, and the
same requests are run again there: a failure never loses a request. Failed or unavailable
backends ranked above the active one are probed again every ``reprobe_interval_s`` (in a
background thread) and the chain switches back when one passes.
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import structlog

from edge_agent.errors import BackendUnavailable, BundleError, DelegateUnavailable, InferenceError
from edge_agent.runtime.backend import Backend, load_backend
from edge_agent.runtime.bundle import Bundle
from edge_agent.runtime.cachedir import make_dir, weight_cache_dir
from edge_agent.runtime.config import RuntimeConfig
from edge_agent.runtime.delegates import (
    CpuConfig,
    DelegateConfig,
    DelegateSetup,
    make_interpreter,
    prepare,
    setup_name,
)
from edge_agent.runtime.segments import BatchQueue, Feeds, Governor, SegmentExecutor, TaskExecutor

__all__ = [
    "BackendState",
    "Candidate",
    "ChainRuntime",
    "DelegateChain",
    "Engine",
    "Golden",
    "build_chain",
    "compare_outputs",
    "open_runtime",
    "resolve_weight_cache",
    "warmup_feeds",
]

_log = structlog.get_logger("edge_agent.runtime.chain")
_PROBE_ERRORS = (DelegateUnavailable, BackendUnavailable, BundleError, InferenceError)
_RUN_ERRORS = (InferenceError, BackendUnavailable, DelegateUnavailable)


class Engine(Protocol):
    """What runs the graphs on one backend (a :class:`SegmentExecutor`)."""

    def run_many(self, task: str, requests: Sequence[Feeds], background: bool = False) -> list[Feeds]: ...
    def close(self) -> None: ...


@dataclass(frozen=True)
class Candidate:
    """One entry of the preference list: ``build()`` loads it (raising with the reason if it can't)."""

    name: str
    kind: str
    build: Callable[[], Engine]


@dataclass(frozen=True)
class Golden:
    """Warm-up inputs per task and the CPU reference outputs (the graph's final outputs) for them."""

    feeds: dict[str, Feeds]
    outputs: dict[str, Feeds]


@dataclass
class BackendState:
    name: str
    kind: str
    status: str = "unprobed"  # unprobed | active | standby | unavailable | failed
    reason: str | None = None
    probes: int = 0
    failures: int = 0
    last_probe: float | None = None  # chain clock
    probe_ms: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "status": self.status,
            "reason": self.reason,
            "probes": self.probes,
            "failures": self.failures,
            "probe_ms": None if self.probe_ms is None else round(self.probe_ms, 1),
        }


def compare_outputs(expected: Feeds, got: Feeds, tolerance: float) -> str | None:
    """None when every expected output matches within ``tolerance`` x its range, else why not."""
    for name, ref in expected.items():
        if name not in got:
            return f"warm-up produced no {name!r}"
        out = np.asarray(got[name], dtype=np.float64)
        ref64 = np.asarray(ref, dtype=np.float64)
        if out.shape != ref64.shape:
            return f"warm-up {name!r} has shape {out.shape}, CPU golden {ref64.shape}"
        if not np.all(np.isfinite(out)):
            return f"warm-up {name!r} is not finite"
        diff = float(np.max(np.abs(out - ref64))) if out.size else 0.0
        scale = max(float(np.max(np.abs(ref64))) if ref64.size else 0.0, 1e-6)
        if diff > tolerance * scale:
            return f"warm-up {name!r} differs from CPU golden by {diff:.4g} (allowed {tolerance * scale:.4g})"
    return None


class DelegateChain:
    """Runs requests on the best working backend of ``candidates`` (ordered, best first)."""

    def __init__(
        self,
        candidates: Sequence[Candidate],
        golden: Golden,
        *,
        tolerance: float = 0.05,
        reprobe_interval_s: float = 60.0,
        background_reprobe: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not candidates:
            raise ValueError("the backend chain needs at least one candidate")
        self._candidates = list(candidates)
        self._golden = golden
        self._tolerance = tolerance
        self._interval = reprobe_interval_s
        self._background = background_reprobe
        self._clock = clock
        self.states = [BackendState(c.name, c.kind) for c in candidates]
        self._active: tuple[int, Engine] | None = None
        self._lock = threading.RLock()
        self._reprobing = threading.Lock()
        self.switches: deque[dict[str, Any]] = deque(maxlen=50)
        self.failovers = 0
        self.retried_requests = 0
        self.served = 0
        self._closed = False
        self._start()

    # -- public ---------------------------------------------------------------------------
    @property
    def active(self) -> str | None:
        return None if self._active is None else self._candidates[self._active[0]].name

    def run(self, task: str, feeds: Feeds, background: bool = False) -> Feeds:
        return self.run_many(task, [feeds], background)[0]

    def run_many(self, task: str, requests: Sequence[Feeds], background: bool = False) -> list[Feeds]:
        """Run on the active backend; on a backend failure switch and retry the same requests."""
        self._maybe_reprobe()
        with self._lock:
            while True:
                if self._active is None:
                    raise InferenceError("no backend can run the model: " + self._reasons())
                index, engine = self._active
                try:
                    outs = engine.run_many(task, requests, background)
                except _RUN_ERRORS as exc:
                    self._fail_over(index, engine, exc, len(requests))
                    continue
                self.served += len(requests)
                return outs

    def reprobe(self) -> str | None:
        """Probe the backends ranked above the active one; switch to the best that passes."""
        with self._reprobing:
            limit = len(self._candidates) if self._active is None else self._active[0]
            for index in range(limit):
                engine = self._probe(index)
                if engine is None:
                    continue
                with self._lock:
                    current = self._active
                    if self._closed or (current is not None and current[0] <= index):
                        engine.close()
                        break
                    self._activate(index, engine, "re-probe passed")
                    if current is not None:
                        self.states[current[0]].status = "standby"
                        current[1].close()
                break
        return self.active

    def stats(self) -> dict[str, Any]:
        return {
            "active": self.active,
            "backends": [s.to_dict() for s in self.states],
            "switches": list(self.switches),
            "failovers": self.failovers,
            "retried_requests": self.retried_requests,
            "served": self.served,
        }

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._active is not None:
                self._active[1].close()
                self._active = None

    # -- probing --------------------------------------------------------------------------
    def _start(self) -> None:
        for index in range(len(self._candidates)):
            engine = self._probe(index)
            if engine is None:
                continue
            if self._active is None:
                self._activate(index, engine, "start")
            else:
                self.states[index].status = "standby"
                engine.close()
        if self._active is None:
            _log.error("no_backend", reasons=self._reasons())

    def _probe(self, index: int) -> Engine | None:
        """Load candidate ``index`` and check its warm-up; the engine if it passes, else None."""
        cand, state = self._candidates[index], self.states[index]
        state.probes += 1
        state.last_probe = self._clock()
        started = time.perf_counter()
        engine: Engine | None = None
        try:
            engine = cand.build()
            reason = self._check(engine)
        except _PROBE_ERRORS as exc:
            reason = str(exc)
        state.probe_ms = (time.perf_counter() - started) * 1000
        if reason is None and engine is not None:
            state.reason = None
            return engine
        if engine is not None:
            engine.close()
        state.status = "unavailable" if state.status in ("unprobed", "unavailable") else "failed"
        state.reason = reason
        _log.warning("backend_unavailable", backend=cand.name, kind=cand.kind, reason=reason)
        return None

    def _check(self, engine: Engine) -> str | None:
        for task, feeds in self._golden.feeds.items():
            out = engine.run_many(task, [feeds])[0]
            problem = compare_outputs(self._golden.outputs[task], out, self._tolerance)
            if problem is not None:
                return f"{task}: {problem}"
        return None

    def _activate(self, index: int, engine: Engine, why: str) -> None:
        previous = self.active
        self._active = (index, engine)
        self.states[index].status = "active"
        self.switches.append({"at": time.time(), "from": previous, "to": self.active, "reason": why})
        _log.info("backend_active", backend=self.active, previous=previous, reason=why)

    def _fail_over(self, index: int, engine: Engine, exc: Exception, n_requests: int) -> None:
        state = self.states[index]
        state.status, state.reason = "failed", f"failed at run time: {exc}"
        state.failures += 1
        state.last_probe = self._clock()
        engine.close()
        self._active = None
        self.failovers += 1
        self.retried_requests += n_requests
        _log.warning("backend_failed", backend=state.name, reason=str(exc), retrying=n_requests)
        for nxt in range(index + 1, len(self._candidates)):
            new = self._probe(nxt)
            if new is not None:
                self.switches.append(
                    {
                        "at": time.time(),
                        "from": state.name,
                        "to": self._candidates[nxt].name,
                        "reason": str(exc),
                    }
                )
                self._active = (nxt, new)
                self.states[nxt].status = "active"
                _log.info("backend_active", backend=self.active, previous=state.name, reason="fallback")
                return
        self.switches.append({"at": time.time(), "from": state.name, "to": None, "reason": str(exc)})

    def _maybe_reprobe(self) -> None:
        limit = len(self._candidates) if self._active is None else self._active[0]
        now = self._clock()
        due = any(
            self.states[i].last_probe is None or now - (self.states[i].last_probe or 0.0) >= self._interval
            for i in range(limit)
        )
        if not due or self._closed or self._reprobing.locked():
            return
        if self._background:
            threading.Thread(target=self.reprobe, name="backend-reprobe", daemon=True).start()
        else:
            self.reprobe()

    def _reasons(self) -> str:
        return "; ".join(f"{s.name}: {s.reason}" for s in self.states if s.reason) or "none configured"


# -- composition ---------------------------------------------------------------------------
def warmup_feeds(bundle: Bundle, seed: int = 1234) -> dict[str, Feeds]:
    """Deterministic warm-up inputs for every task graph (token ids for ``ids``, noise otherwise).

    Drawn with the standard library's generator: the agent never imports ``numpy.random``
    (``commands/_lean.py`` loads it lazily)."""
    rng = random.Random(seed)
    specs = bundle.segments()
    feeds: dict[str, Feeds] = {}
    for task in bundle.manifest["graphs"]:
        # the pieces of the task's own tokenizer (a teacher's bundle: word pieces for intents)
        entry = bundle.tokenizer_entry(task) if "tokenizer" in bundle.manifest else {}
        vocab = int(entry.get("vocab_size", 100))
        produced: set[str] = set()
        task_feeds: Feeds = {}
        for name in bundle.graph(task):
            for port in specs[name].inputs:
                if port["name"] in produced or port["name"] in task_feeds:
                    continue
                shape = [1 if int(d) < 0 else int(d) for d in port["shape"]]
                count = math.prod(shape)
                if np.dtype(port["dtype"]).kind in "iu":
                    values = [float(rng.randrange(1, max(2, vocab))) for _ in range(count)]
                else:
                    values = [rng.gauss(0.0, 1.0) for _ in range(count)]
                task_feeds[port["name"]] = np.array(values).astype(port["dtype"]).reshape(shape)
            produced |= {p["name"] for p in specs[name].outputs}
        feeds[task] = task_feeds
    return feeds


def _engine_factory(
    bundle: Bundle, backend: Backend, cfg: RuntimeConfig, pace: Callable[[], object] | None
) -> Callable[[DelegateSetup], SegmentExecutor]:
    threads = cfg.effective_threads

    def build(setup: DelegateSetup) -> SegmentExecutor:
        return SegmentExecutor(
            bundle,
            lambda path: make_interpreter(backend, path, setup, threads),
            variant=setup.variant,
            residency=cfg.residency,
            weight_budget_mb=cfg.weight_budget_mb,
            prefetch=cfg.prefetch,
            drop_page_cache=cfg.drop_page_cache,
            heap=cfg.stream_heap,
            pace=pace,
            invoke_rows=cfg.invoke_rows,
            weight_cache=setup.weight_cache,
        )

    return build


def resolve_weight_cache(config: DelegateConfig, cfg: RuntimeConfig, backend: Backend) -> DelegateConfig:
    """A ``cpu`` entry with ``xnnpack_weight_cache: auto`` made explicit for this runtime: the cache
    directory's ``xnnpack`` folder when segments stream on litert, else off (``cachedir.py``); off,
    with a warning, when that folder cannot be created."""
    if not isinstance(config, CpuConfig) or config.xnnpack_weight_cache != "auto":
        return config
    directory = weight_cache_dir("auto", backend.name, cfg.residency)
    problem = make_dir(directory) if directory is not None else None
    if problem is not None:
        _log.warning("weight_cache_off", reason=problem, hint="set CacheDirectory= or xnnpack_weight_cache")
        directory = None
    return config.model_copy(update={"xnnpack_weight_cache": directory or "off"})


def _candidate(
    config: DelegateConfig,
    name: str,
    backend: Backend,
    bundle: Bundle,
    build: Callable[[DelegateSetup], Engine],
) -> Candidate:
    return Candidate(name, config.kind, lambda: build(prepare(config, backend, bundle, name)))


def _golden(bundle: Bundle, build: Callable[[DelegateSetup], Engine], reference: DelegateSetup) -> Golden:
    feeds = warmup_feeds(bundle)
    engine = build(reference)
    try:
        outputs = {}
        for task, f in feeds.items():
            out = engine.run_many(task, [f])[0]
            last = bundle.segments()[bundle.graph(task)[-1]]
            outputs[task] = {p["name"]: out[p["name"]] for p in last.outputs}
    finally:
        engine.close()
    return Golden(feeds, outputs)


def _reference_setup(cfg: RuntimeConfig) -> DelegateSetup:
    """The CPU the golden outputs come from: the chain's first ``cpu`` entry as configured
    (LiteRT's XNNPACK and its built-in kernels can round int8 differently, so the reference must
    be the CPU that actually serves), else the built-in kernels without XNNPACK."""
    for config in cfg.delegates:
        if isinstance(config, CpuConfig):
            return DelegateSetup("cpu-reference", "cpu", xnnpack=config.xnnpack, threads=config.threads)
    return DelegateSetup("cpu-reference", "cpu", xnnpack=False)


def build_chain(
    bundle: Bundle,
    cfg: RuntimeConfig,
    *,
    backend: Backend | None = None,
    pace: Callable[[], object] | None = None,
    background_reprobe: bool = True,
) -> DelegateChain:
    """Probe ``cfg.delegates`` over ``bundle`` and return the chain running on the best one."""
    backend = backend or load_backend(cfg.backend)
    build = _engine_factory(bundle, backend, cfg, pace)
    names: list[str] = []
    candidates = []
    for config in cfg.delegates:
        label = config.name or (config.library.rsplit("/", 1)[-1] if config.kind == "external" else None)
        names.append(setup_name(config.kind, label, names))
        resolved = resolve_weight_cache(config, cfg, backend)
        candidates.append(_candidate(resolved, names[-1], backend, bundle, build))
    return DelegateChain(
        candidates,
        _golden(bundle, build, _reference_setup(cfg)),
        tolerance=cfg.probe_tolerance,
        reprobe_interval_s=cfg.reprobe_interval_s,
        background_reprobe=background_reprobe,
    )


@dataclass
class ChainRuntime:
    """The chain behind a batching queue, with one ``model.Executor`` per task."""

    chain: DelegateChain
    queue: BatchQueue
    executors: dict[str, TaskExecutor] = field(default_factory=dict)

    def stats(self) -> dict[str, Any]:
        return {
            **self.chain.stats(),
            "batches": self.queue.batches,
            "batched_requests": self.queue.batched_requests,
        }

    def close(self) -> None:
        self.queue.close()
        self.chain.close()


def open_runtime(
    bundle: Bundle,
    cfg: RuntimeConfig,
    *,
    backend: Backend | None = None,
    governor: Governor | None = None,
) -> ChainRuntime:
    """Chain + batching queue; ``executors["intents"]``/``["logs"]`` plug into ``Model``.

    With a ``governor`` (``quota.governor_from_config(cfg.cpu.quota, cfg.cpu.affinity)``)
    background batches start only within the CPU quota; interactive ones never wait for it."""
    chain = build_chain(bundle, cfg, backend=backend)
    queue = BatchQueue(chain.run_many, max_batch=cfg.max_batch, governor=governor)
    executors = {
        "intents": TaskExecutor(queue, "intents", interactive=True),
        "logs": TaskExecutor(queue, "logs", interactive=False),
    }
    return ChainRuntime(chain, queue, executors)
