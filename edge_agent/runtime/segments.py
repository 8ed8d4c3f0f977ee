"""Segment executor: runs a bundle's task graphs with weights resident, streamed, or a mix.

* ``resident``: every segment's interpreter is built once (its file memory-mapped) and kept.
* ``stream``: a segment's interpreter is built (file mapped read-only) just before it runs and
  dropped right after, so at most two segments' weights are mapped at a time: the one running and
  the next, which a loader thread builds meanwhile where both fit in ``weight_budget_mb`` (one
  segment otherwise, or with ``prefetch: 0``). With ``heap:
  return`` (default) large buffers a segment allocates (e.g. packed weights) get their own
  mappings, returned when freed (glibc's mmap threshold is pinned, see :class:`_Glibc`); with
  ``reuse`` the next segment reuses them from the heap. Either way the heap is trimmed once per
  pass (trimming after every segment cost far more time than it saved RSS). A reader thread
  reads the next segments into the page cache ahead of their use (see :class:`_Prefetcher`),
  bounded by ``prefetch`` segments and by ``weight_budget_mb`` (``prefetch: 0`` turns reading and
  building ahead off). With ``drop_page_cache`` the released segment's pages are also evicted from
  the page cache (``POSIX_FADV_DONTNEED``).
* ``auto``: segments are kept resident, in graph order, while their files fit in
  ``weight_budget_mb``; the rest stream.

Several requests handed over together (:meth:`SegmentExecutor.run_many`, or queued through
:class:`BatchQueue`) go through each segment while it is loaded: invokes over the concatenated
batch (at most ``invoke_rows`` rows each, which bounds activation memory) when the segment's
batch dimension is dynamic, one invoke per request otherwise. Either way a streamed segment is
loaded once per batch, not once per request.
"""

from __future__ import annotations

import contextlib
import ctypes
import heapq
import itertools
import os
import queue
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from edge_agent.errors import BundleError, InferenceError
from edge_agent.runtime.backend import Backend, Interpreter
from edge_agent.runtime.bundle import Bundle, SegmentSpec
from edge_agent.runtime.runner import SegmentRunner
from edge_agent.runtime.weight_cache import WeightCache

__all__ = [
    "BatchQueue",
    "Feeds",
    "SegmentExecutor",
    "TaskExecutor",
    "evict_from_page_cache",
    "local_executors",
    "plan_residency",
]

Feeds = dict[str, npt.NDArray[Any]]
LoadInterpreter = Callable[[Path], Interpreter]
Reads = list[tuple[Path, list[tuple[int, int]] | None]]  # files to read ahead, whole or by ranges
_MB = 1 << 20


class _Glibc:
    """The two glibc allocator knobs streaming uses (absent elsewhere: both become no-ops)."""

    M_MMAP_THRESHOLD = -3
    STREAM_MMAP_THRESHOLD = 1 << 20

    def __init__(self) -> None:
        self.lib: Any = None
        with contextlib.suppress(OSError, AttributeError):
            lib = ctypes.CDLL("libc.so.6")
            lib.malloc_trim.argtypes = [ctypes.c_size_t]
            lib.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
            self.lib = lib
        self._pinned = False

    def trim(self) -> None:
        """Hand freed heap back to the OS, so RSS follows what is in use."""
        if self.lib is not None:
            self.lib.malloc_trim(0)

    def pin_mmap_threshold(self) -> None:
        """Serve every allocation of 1 MiB or more with its own mapping, returned on free.

        glibc otherwise raises its mmap threshold after the first large free, and from then on a
        streamed segment's large buffers (packed weights, kernel scratch) come from the heap. With
        the built-in (ruy) kernels they fragment it: peak RSS on the 100M synthetic bundle was
        8-15 MB higher. The price is fresh pages, faulted in, for every load; XNNPACK, which packs
        every segment's weights again at each load, streamed about 1.4x slower with it for ~1 MB
        less RSS, hence ``heap: reuse``. Process-wide, set once by the first executor that streams
        with ``heap: return``."""
        if self.lib is not None and not self._pinned:
            self._pinned = bool(self.lib.mallopt(self.M_MMAP_THRESHOLD, self.STREAM_MMAP_THRESHOLD))


_GLIBC = _Glibc()

# stream: what happens to a released segment's large buffers (see _Glibc.pin_mmap_threshold)
HEAP_MODES = ("return", "reuse")


def evict_from_page_cache(path: Path) -> None:
    """Ask the kernel to drop ``path``'s clean pages from the page cache."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


# A resident segment costs about twice its file in RSS: the mapped file plus the kernels' packed
# copy of its weights (measured with bench/streaming.py on tflite-runtime 2.14).
RESIDENT_COST = 2.0


def plan_residency(
    order: Sequence[str], sizes: dict[str, int], residency: str, weight_budget_mb: float | None
) -> set[str]:
    """Names of the segments to keep resident (``order``: first use across the task graphs).

    ``auto`` keeps segments, in order, while ``RESIDENT_COST`` x their file sizes fit the budget."""
    if residency == "resident":
        return set(order)
    if residency == "stream":
        return set()
    if residency != "auto":
        raise BundleError(f"unknown residency {residency!r}; use resident, stream or auto")
    budget = (weight_budget_mb or 0.0) * _MB
    kept: set[str] = set()
    used = 0.0
    for name in order:
        cost = RESIDENT_COST * sizes[name]
        if used + cost <= budget:
            kept.add(name)
            used += cost
    return kept


@dataclass
class _Loaded:
    spec: SegmentSpec
    interp: Any
    runner: SegmentRunner
    dynamic: bool
    batch: int


@dataclass
class ExecutorStats:
    loads: int = 0
    releases: int = 0
    invokes: int = 0
    requests: int = 0
    prefetches: int = 0
    evictions: int = 0
    bytes_loaded: int = 0
    peak_mapped_bytes: int = 0

    def to_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


class _Prefetcher:
    """Reader thread: brings segment files into the page cache (not our RSS) ahead of their use.

    Each file is read by one ``sendfile`` to ``/dev/null``: the kernel reads it sequentially
    (with its readahead) into the page cache, no user-space buffer touches RSS, and the call runs
    without the GIL, so the reader keeps going while the interpreter thread builds a segment (it
    holds the GIL then). The interpreter thread waits for a requested file to be read
    (:meth:`wait`) before it maps it, so the disk sees one sequential stream instead of the
    reader's reads interleaved with page faults of the mapping. Measured on the 100M synthetic
    bundle (21 files, 100 MB, evicted; this machine's virtio disk, readahead 8 MB): ``sendfile``
    94 ms, ``POSIX_FADV_WILLNEED`` then ``sendfile`` 128 ms, ``read()`` through a 1 MB buffer
    158 ms (medians of 6). A read loop through a Python buffer also takes the GIL between chunks,
    and faulting the mapping while the reader read the same file halved the reader's speed."""

    def __init__(self) -> None:
        self._queue: queue.Queue[tuple[Path, Reads] | None] = queue.Queue()
        self._null = os.open(os.devnull, os.O_WRONLY)
        self._read: dict[Path, threading.Event] = {}
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._loop, name="segment-prefetch", daemon=True)
        self._thread.start()
        self.done = 0

    def request(self, path: Path, reads: Reads | None = None) -> None:
        """Read ``path`` ahead, or rather ``reads`` (files whole or by byte ranges) when given."""
        with self._lock:
            self._read.setdefault(path, threading.Event())
        self._queue.put((path, reads if reads is not None else [(path, None)]))

    def wait(self, path: Path, timeout: float = 30.0) -> None:
        """Until a requested ``path`` has been read (returns at once for one never requested)."""
        with self._lock:
            event = self._read.get(path)
        if event is not None:
            event.wait(timeout)

    def forget(self, path: Path) -> None:
        """``path`` was used and released: a later request reads it again."""
        with self._lock:
            event = self._read.get(path)
            if event is not None and event.is_set():
                del self._read[path]

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join(timeout=5)
        if not self._thread.is_alive():
            os.close(self._null)

    def _loop(self) -> None:
        while (item := self._queue.get()) is not None:
            path, reads = item
            try:
                for file, ranges in reads:
                    self._warm(file, ranges)
            except OSError:
                pass  # a vanished file shows up when the segment loads
            finally:
                with self._lock:
                    event = self._read.get(path)
                if event is not None:
                    event.set()
            self.done += 1

    def _warm(self, path: Path, ranges: list[tuple[int, int]] | None = None) -> None:
        """The whole file, with the kernel's readahead; or only ``ranges`` (a cached segment's
        skeleton) without it, since readahead would bring the weights between them in too."""
        fd = os.open(path, os.O_RDONLY)
        try:
            if ranges is None:
                ranges = [(0, os.fstat(fd).st_size)]
            else:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
            for start, end in ranges:
                offset = start
                while offset < end and (n := os.sendfile(self._null, fd, offset, end - offset)):
                    offset += n
        finally:
            os.close(fd)


@dataclass
class SegmentExecutor:
    """Runs ``bundle``'s graphs; ``load(path)`` makes an interpreter for one segment file."""

    bundle: Bundle
    load: LoadInterpreter
    variant: str = "default"
    residency: str = "resident"
    weight_budget_mb: float | None = None
    prefetch: int = 2
    drop_page_cache: bool = False
    heap: str = "return"
    pace: Callable[[], object] | None = None
    invoke_rows: int | None = None
    # where ``load`` keeps XNNPACK's packed weights (LiteRT): what to read ahead, what to evict
    weight_cache: WeightCache | None = None
    stats: ExecutorStats = field(default_factory=ExecutorStats)

    def __post_init__(self) -> None:
        self._specs = self.bundle.segments(self.variant)
        self._graphs = {
            task: self.bundle.graph(task, self.variant) for task in self.bundle.manifest["graphs"]
        }
        if self.residency == "resident":
            self._use_fused()
        order = list(dict.fromkeys(n for g in self._graphs.values() for n in g))
        unknown = [n for n in order if n not in self._specs]
        if unknown:
            raise BundleError(f"{self.bundle.path}: graphs use unknown segments {', '.join(unknown)}")
        files = self.bundle.manifest["files"]
        self.sizes = {n: int(files[self._specs[n].file]["size"]) for n in order}
        self.resident_names = plan_residency(order, self.sizes, self.residency, self.weight_budget_mb)
        self._resident: dict[str, _Loaded] = {}
        self._warm: set[str] = set()
        if self.heap not in HEAP_MODES:
            raise BundleError(f"unknown heap mode {self.heap!r}; use {' or '.join(HEAP_MODES)}")
        streams = len(self.resident_names) < len(order)
        if streams and self.heap == "return":
            _GLIBC.pin_mmap_threshold()
        self._prefetcher = _Prefetcher() if streams and self.prefetch else None
        # streamed segments are built on one thread, the next while the current one runs
        self._loader = ThreadPoolExecutor(1, "segment-load") if streams and self.prefetch else None
        self._pending: dict[str, Future[_Loaded]] = {}
        for name in order:
            if name in self.resident_names:
                self._resident[name] = self._load(name)

    def _use_fused(self) -> None:
        """Resident graphs run the bundle's fused file where it has one: one invoke per request
        instead of one per segment, with the same outputs (streaming needs the segments)."""
        for task in self._graphs:
            spec = self.bundle.fused(task, self.variant)
            if spec is not None:
                self._specs[spec.name] = spec
                self._graphs[task] = [spec.name]

    # -- public ---------------------------------------------------------------------------
    @property
    def tasks(self) -> list[str]:
        return list(self._graphs)

    def run(self, task: str, feeds: Feeds, *, background: bool = False) -> Feeds:
        """One request (any batch size) through ``task``'s graph.

        Returns the feeds and the graph's final outputs (intermediate values are dropped)."""
        return self.run_many(task, [feeds], background=background)[0]

    def run_many(self, task: str, requests: Sequence[Feeds], background: bool = False) -> list[Feeds]:
        """Several requests through the graph, each segment loaded once for all of them.

        ``background`` work calls ``pace`` (the CPU governor) before each segment.
        """
        graph = self._graph(task)
        envs = [dict(r) for r in requests]
        self.stats.requests += len(envs)
        drops = self._drops(task)
        try:
            for i, name in enumerate(graph):
                self._read_ahead(graph, i)
                if background and self.pace is not None:
                    self.pace()
                seg = self._acquire(name)
                self._load_ahead(graph, i)
                try:
                    self._run_segment(seg, envs)
                finally:
                    self._release(seg)
                for env in envs:
                    for value in drops[i]:
                        env.pop(value, None)
        finally:
            self._drop_pending()
            if any(n not in self.resident_names for n in graph):
                _GLIBC.trim()  # what the streamed segments left on the heap goes back between passes
        return envs

    def _drops(self, task: str) -> list[set[str]]:
        """Per step, the intermediate values no later segment reads (freed as soon as possible:
        a batch of hidden states per block would otherwise pile up)."""
        graph = self._graph(task)
        consumed_at: dict[str, int] = {}
        produced: set[str] = set()
        for i, name in enumerate(graph):
            for port in self._specs[name].inputs:
                consumed_at[port["name"]] = i
            produced |= {port["name"] for port in self._specs[name].outputs}
        drops: list[set[str]] = [set() for _ in graph]
        for value, last in consumed_at.items():
            if value in produced:
                drops[last].add(value)
        return drops

    def close(self) -> None:
        self._resident.clear()
        self._drop_pending()
        if self._loader is not None:
            self._loader.shutdown(wait=True)
            self._loader = None
        if self._prefetcher is not None:
            self._prefetcher.close()
            self._prefetcher = None

    def mapped_budget_bytes(self) -> int | None:
        return None if self.weight_budget_mb is None else int(self.weight_budget_mb * _MB)

    # -- loading --------------------------------------------------------------------------
    def _graph(self, task: str) -> list[str]:
        try:
            return self._graphs[task]
        except KeyError as exc:
            raise InferenceError(f"bundle has no graph for task {task!r}") from exc

    def _path(self, name: str) -> Path:
        return self.bundle.path / self._specs[name].file

    def _load(self, name: str) -> _Loaded:
        spec = self._specs[name]
        interp: Any = self.load(self._path(name))
        runner = SegmentRunner(spec, interp)
        sig = [d.get("shape_signature", d["shape"]) for d in interp.get_input_details()]
        dynamic = all(len(s) > 0 and int(s[0]) == -1 for s in sig)
        batch = int(interp.get_input_details()[0]["shape"][0]) if sig else 1
        self.stats.loads += 1
        self.stats.bytes_loaded += self.sizes[name]
        if self.weight_cache is not None:
            self.weight_cache.loaded(self._path(name))
        return _Loaded(spec, interp, runner, dynamic, batch)

    def _acquire(self, name: str) -> _Loaded:
        loaded = self._resident.get(name)
        if loaded is not None:
            return loaded
        pending = self._pending.pop(name, None)
        seg = pending.result() if pending is not None else self._load_streamed(name)
        mapped = self.sizes[name] + self._resident_bytes()
        self.stats.peak_mapped_bytes = max(self.stats.peak_mapped_bytes, mapped)
        return seg

    def _resident_bytes(self) -> int:
        return sum(self.sizes[n] for n in self._resident)

    def _load_streamed(self, name: str) -> _Loaded:
        if self._prefetcher is not None:
            self._prefetcher.wait(self._path(name))
        return self._load(name)

    def _load_ahead(self, graph: list[str], index: int) -> None:
        """Start building the next streamed segment of ``graph`` after ``index`` on the loader
        thread: its compile (and any wait for its reads) overlaps the current segment's invokes.
        One segment ahead, and only while both fit in ``weight_budget_mb`` with the resident ones,
        and with a weight cache only once the next one's cache file exists: writing it packs the
        weights in the heap, which built ahead put 5 MB on the first run's peak (100M bundle)."""
        if self._loader is None:
            return
        for name in graph[index + 1 :]:
            if name in self.resident_names:
                continue
            if name not in self._pending:
                current = self.sizes[graph[index]] if graph[index] not in self.resident_names else 0
                mapped = current + self.sizes[name] + self._resident_bytes()
                budget = self.mapped_budget_bytes()
                if budget is not None and mapped > budget:
                    return
                cache = self.weight_cache
                if cache is not None and not cache.file_for(self._path(name)).exists():
                    return  # a first compile packs its weights in the heap: one at a time (peak RSS)
                self._pending[name] = self._loader.submit(self._load_streamed, name)
                self.stats.peak_mapped_bytes = max(self.stats.peak_mapped_bytes, mapped)
            return

    def _drop_pending(self) -> None:
        """A pass that stopped early (an error) leaves its next segment built: release it."""
        for future in self._pending.values():
            if not future.cancel():
                with contextlib.suppress(Exception):
                    self._release(future.result())
        self._pending.clear()

    def _release(self, seg: _Loaded) -> None:
        name = seg.spec.name
        if name in self._resident:
            return
        seg.runner = None  # type: ignore[assignment]
        seg.interp = None  # the interpreter (and its mapping of the file) goes with its last reference
        self.stats.releases += 1
        self._warm.discard(name)
        if self._prefetcher is not None:
            self._prefetcher.forget(self._path(name))
        if self.drop_page_cache:
            path = self._path(name)
            for file in self.weight_cache.files(path) if self.weight_cache else [path]:
                with contextlib.suppress(OSError):
                    evict_from_page_cache(file)
            self.stats.evictions += 1

    def _read_ahead(self, graph: list[str], index: int) -> None:
        """Queue reads of the next streamed segments within the look-ahead and the budget."""
        if self._prefetcher is None:
            return
        budget = self.mapped_budget_bytes()
        ahead = 0
        used = self.sizes[graph[index]] if graph[index] not in self.resident_names else 0
        for name in graph[index:]:
            if name in self.resident_names:
                continue
            if ahead >= self.prefetch + 1 or (budget is not None and used > budget and ahead > 0):
                break
            ahead += 1
            if name != graph[index]:
                used += self.sizes[name]
            if name not in self._warm:
                self._warm.add(name)
                path = self._path(name)
                reads = self.weight_cache.reads(path) if self.weight_cache else None
                self._prefetcher.request(path, reads)
                self.stats.prefetches += 1

    # -- running --------------------------------------------------------------------------
    def _run_segment(self, seg: _Loaded, envs: list[Feeds]) -> None:
        first = seg.runner.inputs[0].name
        sizes = [int(np.shape(env[first])[0]) for env in envs]
        if seg.dynamic and len(envs) > 1 and _same_trailing(seg, envs):
            for group in self._groups(envs, sizes):
                self._invoke_merged(seg, [envs[k] for k in group], [sizes[k] for k in group])
            return
        for env, size in zip(envs, sizes, strict=True):
            if seg.dynamic or size == seg.batch:
                self._invoke(seg, env, size)
            else:
                self._invoke_rows(seg, env, size)

    def _groups(self, envs: list[Feeds], sizes: list[int]) -> list[list[int]]:
        """Requests split into invokes of at most ``invoke_rows`` rows (activation memory)."""
        limit = self.invoke_rows or sum(sizes)
        groups: list[list[int]] = [[]]
        rows = 0
        for k, size in enumerate(sizes):
            if groups[-1] and rows + size > limit:
                groups.append([])
                rows = 0
            groups[-1].append(k)
            rows += size
        return groups

    def _invoke_merged(self, seg: _Loaded, envs: list[Feeds], sizes: list[int]) -> None:
        if len(envs) == 1:
            self._invoke(seg, envs[0], sizes[0])
            return
        merged = {p.name: np.concatenate([env[p.name] for env in envs]) for p in seg.runner.inputs}
        self._invoke(seg, merged, sum(sizes))
        offsets = np.cumsum([0, *sizes])
        for k, env in enumerate(envs):
            for port in seg.runner.outputs:
                env[port.name] = merged[port.name][offsets[k] : offsets[k + 1]]

    def _invoke(self, seg: _Loaded, env: Feeds, batch: int) -> None:
        if batch != seg.batch:
            for port, detail in zip(seg.runner.inputs, _input_details(seg), strict=True):
                seg.interp.resize_tensor_input(port.index, [batch, *list(detail["shape"][1:])])
            seg.interp.allocate_tensors()
            seg.batch = batch
        seg.runner.run(env)
        self.stats.invokes += 1

    def _invoke_rows(self, seg: _Loaded, env: Feeds, size: int) -> None:
        """A fixed-batch segment (batch ``seg.batch``, usually 1): run the request row by row."""
        step = seg.batch
        parts: list[Feeds] = []
        for start in range(0, size, step):
            row = {p.name: env[p.name][start : start + step] for p in seg.runner.inputs}
            self._invoke(seg, row, step)
            parts.append(row)
        for port in seg.runner.outputs:
            env[port.name] = np.concatenate([p[port.name] for p in parts])


def _input_details(seg: _Loaded) -> list[dict[str, Any]]:
    by_index = {int(d["index"]): d for d in seg.interp.get_input_details()}
    return [by_index[p.index] for p in seg.runner.inputs]


def _same_trailing(seg: _Loaded, envs: list[Feeds]) -> bool:
    return all(len({tuple(np.shape(env[p.name])[1:]) for env in envs}) == 1 for p in seg.runner.inputs)


# -- request batching ------------------------------------------------------------------------
RunMany = Callable[[str, Sequence[Feeds], bool], list[Feeds]]


class Governor(Protocol):
    """The part of the CPU governor the queue uses (see edge_agent.runtime.quota)."""

    def wait_needed(self) -> float: ...
    def charge_wait(self, seconds: float) -> None: ...


@dataclass(order=True)
class _Request:
    priority: int
    seq: int
    task: str = field(compare=False)
    feeds: Feeds = field(compare=False)
    future: Future[Feeds] = field(compare=False)


class BatchQueue:
    """One worker thread in front of ``run_many``: queued requests of a task go through together.

    Interactive requests (priority 0) are taken before background ones (priority 1); a batch
    holds requests of one task and one priority, at most ``max_batch`` of them. With a
    ``governor`` (:class:`edge_agent.runtime.quota.CpuGovernor`), a background batch starts only
    when the process is within its CPU quota; the worker waits on its queue meanwhile, so an
    interactive request arriving then is served at once.

    A single interactive request that finds nothing queued and nothing running is run at once
    on the caller's thread (``run``): handing it to the worker and waiting for its answer would
    cost two thread switches for nothing to batch it with. One batch runs at a time either way.
    """

    def __init__(self, run_many: RunMany, *, max_batch: int = 8, governor: Governor | None = None) -> None:
        if max_batch < 1:
            raise ValueError("max_batch must be >= 1")
        self._run_many = run_many
        self._governor = governor
        self.max_batch = max_batch
        self._heap: list[_Request] = []
        self._cv = threading.Condition()
        self._seq = itertools.count()
        self._closed = False
        self._running = False  # a batch is being run (by the worker or inline by a caller)
        self.batches = 0
        self.batched_requests = 0
        self.inline = 0  # requests run on their caller's thread
        self._thread = threading.Thread(target=self._loop, name="segment-batcher", daemon=True)
        self._thread.start()

    def submit(self, task: str, feeds: Feeds, *, interactive: bool = True) -> Future[Feeds]:
        fut: Future[Feeds] = Future()
        with self._cv:
            if self._closed:
                raise InferenceError("executor queue is closed")
            heapq.heappush(self._heap, _Request(0 if interactive else 1, next(self._seq), task, feeds, fut))
            self._cv.notify()
        return fut

    def run(self, task: str, feeds: Feeds, *, interactive: bool = True) -> Feeds:
        if interactive and self._claim_idle():
            try:
                self.inline += 1
                return self._run_many(task, [feeds], False)[0]
            finally:
                self._release()
        return self.submit(task, feeds, interactive=interactive).result()

    def _claim_idle(self) -> bool:
        """Take the right to run now when nothing is queued or running (see the class docstring)."""
        with self._cv:
            if self._closed or self._running or self._heap:
                return False
            self._running = True
            return True

    def _release(self) -> None:
        with self._cv:
            self._running = False
            self._cv.notify_all()

    def close(self) -> None:
        """Stop taking requests, finish the queued ones, stop the worker (idempotent)."""
        with self._cv:
            self._closed = True
            self._cv.notify_all()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=10)

    def _take(self) -> list[_Request] | None:
        with self._cv:
            while True:
                while (not self._heap or self._running) and not self._closed:
                    self._cv.wait()
                if not self._heap:
                    return None
                if self._running:  # closing while a caller runs inline: let it finish first
                    self._cv.wait(0.05)
                    continue
                wait = self._background_wait()
                if wait <= 0:
                    break
                started = time.monotonic()
                self._cv.wait(min(wait, 0.05))  # a new (interactive) request wakes us early
                if self._governor is not None:
                    self._governor.charge_wait(time.monotonic() - started)
            head = heapq.heappop(self._heap)
            batch = [head]
            rest: list[_Request] = []
            while self._heap and len(batch) < self.max_batch:
                req = heapq.heappop(self._heap)
                same = req.task == head.task and req.priority == head.priority
                (batch if same else rest).append(req)
            for req in rest:
                heapq.heappush(self._heap, req)
            self._running = True
            return batch

    def _background_wait(self) -> float:
        if self._governor is None or self._closed or self._heap[0].priority == 0:
            return 0.0
        return self._governor.wait_needed()

    def _loop(self) -> None:
        while (batch := self._take()) is not None:
            self.batches += 1
            self.batched_requests += len(batch)
            try:
                outs = self._run_many(batch[0].task, [r.feeds for r in batch], batch[0].priority > 0)
            except Exception as exc:  # handed to every waiting caller, which re-raises it
                self._release()
                for req in batch:
                    req.future.set_exception(exc)
                continue
            self._release()
            for req, out in zip(batch, outs, strict=True):
                req.future.set_result(out)


class TaskExecutor:
    """``run(feeds) -> dict`` for one task over a :class:`BatchQueue` (model.Executor protocol).

    ``on_close`` (idempotent) releases what the executors share; ``close()`` calls it."""

    def __init__(
        self,
        queue: BatchQueue,
        task: str,
        *,
        interactive: bool = True,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        self._queue = queue
        self.task = task
        self.interactive = interactive
        self._on_close = on_close

    def run(self, feeds: Feeds) -> Feeds:
        return self._queue.run(self.task, feeds, interactive=self.interactive)

    def run_many(self, requests: Sequence[Feeds]) -> list[Feeds]:
        """Queue all of ``requests`` at once, so they go through each loaded segment together."""
        if len(requests) == 1:  # nothing to batch it with: run at once when the queue is idle
            return [self.run(requests[0])]
        futures = [self._queue.submit(self.task, f, interactive=self.interactive) for f in requests]
        return [f.result() for f in futures]

    def close(self) -> None:
        if self._on_close is not None:
            self._on_close()


def local_executors(
    bundle: Bundle,
    backend: Backend,
    *,
    threads: int = 1,
    residency: str = "stream",
    weight_budget_mb: float | None = None,
    variant: str = "default",
    delegates: Sequence[object] = (),
    prefetch: int = 2,
    heap: str = "return",
    max_batch: int = 8,
    weight_cache_dir: Path | None = None,
) -> dict[str, TaskExecutor]:
    """Executors for ``Model`` on one backend (no fallback chain): a streaming / auto segment
    executor behind a batching queue. ``auto`` without a budget keeps everything resident.
    ``weight_cache_dir``: XNNPACK's packed weights kept there (LiteRT; see ``weight_cache.py``)."""
    if residency == "auto" and weight_budget_mb is None:
        residency = "resident"
    cache = WeightCache(bundle, weight_cache_dir, backend.version) if weight_cache_dir else None
    ex = SegmentExecutor(
        bundle,
        lambda path: backend.make_interpreter(path, threads, delegates, weight_cache=cache),
        variant=variant,
        residency=residency,
        weight_budget_mb=weight_budget_mb,
        prefetch=prefetch,
        heap=heap,
        weight_cache=cache,
    )
    queue = BatchQueue(ex.run_many, max_batch=max_batch)

    def close() -> None:
        queue.close()
        ex.close()

    return {
        task: TaskExecutor(queue, task, interactive=(task != "logs"), on_close=close) for task in ex.tasks
    }
