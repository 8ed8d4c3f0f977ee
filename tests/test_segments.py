"""Segment executor: resident / stream / auto give the same outputs; streaming maps, releases,
prefetches and evicts; queued requests share a segment load; synth-bundle makes valid bundles."""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from delegates.fixtures import synth_bundle_dir

from edge_agent.errors import BundleError, InferenceError
from edge_agent.runtime.backend import Backend, load_backend
from edge_agent.runtime.bundle import Bundle, load_bundle
from edge_agent.runtime.model import INTENT_OUTPUTS, LOG_OUTPUTS, Model
from edge_agent.runtime.segments import (
    BatchQueue,
    Feeds,
    SegmentExecutor,
    TaskExecutor,
    evict_from_page_cache,
    plan_residency,
)
from firmware_tools.commands.synth_bundle import parse_params, plan


@pytest.fixture(scope="module")
def bundle() -> Bundle:
    return load_bundle(synth_bundle_dir())


@pytest.fixture(scope="module", params=["tflite-runtime", "litert"])
def backend(request: pytest.FixtureRequest) -> Backend:
    return load_backend(request.param)


def _executor(bundle: Bundle, backend: Backend, residency: str, **kw: object) -> SegmentExecutor:
    return SegmentExecutor(bundle, lambda p: backend.make_interpreter(p, 1), residency=residency, **kw)  # type: ignore[arg-type]


def _ids(bundle: Bundle, n: int, seed: int = 5) -> np.ndarray:
    max_len = bundle.manifest["tokenizer"]["max_len"]
    return np.random.default_rng(seed).integers(1, 200, size=(n, max_len)).astype(np.int32)


def _cached_pages(path: Path) -> int:
    """Pages of ``path`` in the page cache, read with util-linux fincore."""
    out = subprocess.run(
        ["fincore", "--noheadings", "--raw", "-o", "PAGES", str(path)], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    return int(out.stdout.split()[0])


@pytest.mark.parametrize("residency, budget", [("stream", 0.1), ("auto", 0.2), ("stream", None)])
def test_streamed_outputs_equal_resident(
    bundle: Bundle, backend: Backend, residency: str, budget: float | None
) -> None:
    ids = _ids(bundle, 3)
    resident = _executor(bundle, backend, "resident")
    other = _executor(bundle, backend, residency, weight_budget_mb=budget)
    for task, names in (("intents", INTENT_OUTPUTS), ("logs", LOG_OUTPUTS)):
        want = resident.run(task, {"ids": ids})
        got = other.run(task, {"ids": ids})
        for name in names:
            np.testing.assert_array_equal(got[name], want[name])
    other.close()
    resident.close()


def test_stream_maps_each_segment_only_while_it_runs(bundle: Bundle, backend: Backend) -> None:
    graph = bundle.graph("intents")
    size = {n: int(bundle.manifest["files"][bundle.segments()[n].file]["size"]) for n in graph}
    pair_sizes = [size[a] + size[b] for a, b in itertools.pairwise(graph)]
    pairs = max(pair_sizes)
    below_any_pair = (min(pair_sizes) - 1) / (1 << 20)
    # no budget: the running segment and the next one, built ahead; a budget no two segments fit
    # in, or prefetch 0: one at a time
    for budget, prefetch, ahead in ((None, 2, True), (below_any_pair, 2, False), (None, 0, False)):
        ex = _executor(bundle, backend, "stream", weight_budget_mb=budget, prefetch=prefetch)
        ex.run("intents", {"ids": _ids(bundle, 1)})
        assert ex.resident_names == set()
        assert ex.stats.loads == len(graph) and ex.stats.releases == len(graph)
        single = max(ex.sizes[n] for n in graph)
        assert ex.stats.peak_mapped_bytes == (pairs if ahead else single), (budget, prefetch)
        assert ex.stats.prefetches >= (len(graph) - 1 if prefetch else 0)
        ex.close()


def test_the_next_streamed_segment_is_built_on_the_loader_thread(bundle: Bundle, backend: Backend) -> None:
    built: list[tuple[str, str]] = []

    def load(path: Path) -> object:
        built.append((path.stem, threading.current_thread().name))
        return backend.make_interpreter(path, 1)

    ids = _ids(bundle, 2)
    want = _executor(bundle, backend, "resident").run("intents", {"ids": ids})
    for prefetch, ahead in ((2, True), (0, False)):
        built.clear()
        ex = SegmentExecutor(bundle, load, residency="stream", prefetch=prefetch)  # type: ignore[arg-type]
        got = ex.run("intents", {"ids": ids})
        np.testing.assert_array_equal(got["intent_logits"], want["intent_logits"])
        graph = bundle.graph("intents")
        files = [Path(bundle.segments()[n].file).stem for n in graph]
        assert [name for name, _ in built] == files
        on_loader = [thread.startswith("segment-load") for _, thread in built]
        assert on_loader == [False] + [ahead] * (len(graph) - 1), built
        ex.close()


def test_a_failed_pass_releases_the_segment_built_ahead(bundle: Bundle, backend: Backend) -> None:
    ex = _executor(bundle, backend, "stream")
    wrong = np.ones((1, 3), dtype=np.int32)  # the embedding takes max_len ids: the first segment fails
    with pytest.raises((ValueError, InferenceError)):  # set_tensor refuses the shape
        ex.run("intents", {"ids": wrong})
    assert ex.stats.loads == 2 and ex.stats.releases == 2  # the failed segment and the one built ahead
    got = ex.run("intents", {"ids": _ids(bundle, 1)})
    assert got["intent_logits"].shape[0] == 1
    assert ex.stats.loads == ex.stats.releases
    ex.close()


def test_auto_keeps_what_fits_in_the_budget(bundle: Bundle, backend: Backend) -> None:
    budget_mb = 0.15
    ex = _executor(bundle, backend, "auto", weight_budget_mb=budget_mb)
    kept = sum(ex.sizes[n] for n in ex.resident_names)
    assert 0 < 2 * kept <= budget_mb * (1 << 20)
    assert ex.resident_names != set(ex.sizes)  # something must stream at this budget
    ex.run("logs", {"ids": _ids(bundle, 1)})
    streamed = [n for n in bundle.graph("logs") if n not in ex.resident_names]
    assert ex.stats.releases == len(streamed)
    ex.close()


def test_plan_residency_rules() -> None:
    sizes = {"a": 4 << 20, "b": 4 << 20, "c": 1 << 20}
    assert plan_residency(["a", "b", "c"], sizes, "resident", None) == {"a", "b", "c"}
    assert plan_residency(["a", "b", "c"], sizes, "stream", 100) == set()
    assert plan_residency(["a", "b", "c"], sizes, "auto", 10) == {"a", "c"}  # a resident MB costs 2
    assert plan_residency(["a", "b", "c"], sizes, "auto", 7) == {"c"}
    with pytest.raises(BundleError, match="unknown residency"):
        plan_residency(["a"], sizes, "swap", 1)


def test_drop_page_cache_evicts_released_segments(bundle: Bundle, backend: Backend, tmp_path: Path) -> None:
    # a private copy: executors and re-probe threads of other tests map (so keep cached) or read
    # the shared bundle's files at any time
    bundle = load_bundle(shutil.copytree(bundle.path, tmp_path / "bundle"))
    os.sync()  # the fresh copy's pages are dirty until written back, and dirty pages are not evicted
    ex = _executor(bundle, backend, "stream", weight_budget_mb=0.1, drop_page_cache=True, prefetch=0)
    block = bundle.path / bundle.segments()["block_00"].file
    block.read_bytes()
    assert _cached_pages(block) > 0
    ex.run("intents", {"ids": _ids(bundle, 1)})
    assert _cached_pages(block) == 0
    assert ex.stats.evictions == len(bundle.graph("intents"))
    ex.close()


def test_prefetch_brings_evicted_segments_back_into_the_cache(bundle: Bundle, backend: Backend) -> None:
    for spec in bundle.segments().values():
        evict_from_page_cache(bundle.path / spec.file)
    ex = _executor(bundle, backend, "stream", weight_budget_mb=10, prefetch=3)
    ex.run("intents", {"ids": _ids(bundle, 1)})
    ex.close()  # joins the reader thread, so every queued WILLNEED has been issued
    cached = [_cached_pages(bundle.path / bundle.segments()[n].file) for n in bundle.graph("intents")]
    assert all(c > 0 for c in cached)


def test_run_many_equals_one_by_one_and_shares_loads(bundle: Bundle, backend: Backend) -> None:
    ids = _ids(bundle, 5)
    ex = _executor(bundle, backend, "stream", weight_budget_mb=0.1)
    many = ex.run_many("intents", [{"ids": ids[i : i + 1]} for i in range(5)])
    loads = ex.stats.loads
    single = [ex.run("intents", {"ids": ids[i : i + 1]}) for i in range(5)]
    assert loads == len(bundle.graph("intents"))  # five requests, one load per segment
    for a, b in zip(many, single, strict=True):
        np.testing.assert_allclose(a["slot_logits"], b["slot_logits"], atol=1e-5)
    ex.close()


def test_batch_queue_batches_waiting_requests_interactive_first() -> None:
    gate = threading.Event()
    calls: list[tuple[str, int, bool]] = []

    def run_many(task: str, reqs: Sequence[Feeds], background: bool) -> list[Feeds]:
        calls.append((task, len(reqs), background))
        gate.wait(10)
        return [{"y": r["x"] * 2} for r in reqs]

    q = BatchQueue(run_many, max_batch=3)
    first = q.submit("logs", {"x": np.array([0])}, interactive=False)
    while not calls:
        threading.Event().wait(0.005)
    logs = [q.submit("logs", {"x": np.array([i])}, interactive=False) for i in range(1, 5)]
    intents = [q.submit("intents", {"x": np.array([10 + i])}) for i in range(2)]
    gate.set()
    assert [int(f.result(10)["y"][0]) for f in logs] == [2, 4, 6, 8]
    assert [int(f.result(10)["y"][0]) for f in intents] == [20, 22]
    assert int(first.result(10)["y"][0]) == 0
    q.close()
    assert calls == [("logs", 1, True), ("intents", 2, False), ("logs", 3, True), ("logs", 1, True)]


def test_an_interactive_request_on_an_idle_queue_runs_on_its_callers_thread() -> None:
    threads: list[str] = []
    gate = threading.Event()

    def run_many(task: str, reqs: Sequence[Feeds], background: bool) -> list[Feeds]:
        threads.append(threading.current_thread().name)
        if task == "logs":
            gate.wait(10)
        return [{"y": r["x"] + 1} for r in reqs]

    q = BatchQueue(run_many)
    assert int(q.run("intents", {"x": np.array([1])})["y"][0]) == 2
    assert threads == [threading.current_thread().name] and q.inline == 1 and q.batches == 0
    busy = q.submit("logs", {"x": np.array([0])}, interactive=False)  # the worker is running it
    while len(threads) < 2:
        threading.Event().wait(0.005)
    answer: list[Feeds] = []
    caller = threading.Thread(target=lambda: answer.append(q.run("intents", {"x": np.array([5])})))
    caller.start()
    caller.join(0.3)
    assert caller.is_alive() and not answer  # never two runs at once: it waits its turn, queued
    gate.set()
    caller.join(10)
    assert int(answer[0]["y"][0]) == 6 and int(busy.result(10)["y"][0]) == 1
    assert threads[1:] == ["segment-batcher", "segment-batcher"] and q.inline == 1
    q.close()


def test_batch_queue_hands_errors_to_every_caller() -> None:
    def boom(task: str, reqs: Sequence[Feeds], background: bool) -> list[Feeds]:
        raise RuntimeError("kaput")

    q = BatchQueue(boom)
    fut = q.submit("intents", {"x": np.zeros(1)})
    with pytest.raises(RuntimeError, match="kaput"):
        fut.result(10)
    q.close()


def test_task_executor_plugs_into_model_contract(bundle: Bundle, backend: Backend) -> None:
    model = Model(bundle, backend=backend)
    ex = _executor(bundle, backend, "stream", weight_budget_mb=0.1)
    q = BatchQueue(ex.run_many)
    ids = _ids(bundle, 2)
    want, _ = model.run_intents(ids)
    got = np.concatenate(
        [TaskExecutor(q, "intents").run({"ids": ids[i : i + 1]})["intent_logits"] for i in range(2)]
    )
    np.testing.assert_allclose(got, want, atol=1e-5)
    q.close()
    ex.close()
    model.close()


def test_synth_bundle_is_a_valid_bundle_with_the_model_interface(bundle: Bundle) -> None:
    manifest = bundle.manifest
    assert manifest["metrics"]["synthetic"] is True
    assert bundle.graph("intents")[0] == "embed" and bundle.graph("intents")[-1] == "intent_head"
    outputs = {p["name"] for s in bundle.segments().values() for p in s.outputs}
    assert set(INTENT_OUTPUTS) | set(LOG_OUTPUTS) <= outputs
    weights = sum(e["size"] for k, e in manifest["files"].items() if k.endswith(".tflite"))
    params = manifest["metrics"]["params_requested"]
    assert 0.6 * params <= weights <= 1.6 * params  # int8: about a byte per parameter


def test_parse_params_and_plan() -> None:
    assert parse_params("100M") == 100_000_000
    assert parse_params("2.5m") == 2_500_000
    assert parse_params("300K") == 300_000
    for bad in ("lots", "10", "-5M"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_params(bad)
    spec = plan(100_000_000, vocab=256, max_len=32)
    per_block = 2 * spec.dim * spec.ffn
    assert abs(spec.blocks * per_block - 100_000_000) < 2 * per_block


def test_local_executors_serve_model_rows_together_and_close_once(bundle: Bundle, backend: Backend) -> None:
    from edge_agent.runtime.segments import local_executors

    execs = local_executors(bundle, backend, residency="stream", weight_budget_mb=0.1, max_batch=8)
    assert set(execs) == set(bundle.manifest["graphs"])
    assert execs["intents"].interactive and not execs["logs"].interactive
    ids = _ids(bundle, 4)
    rows = execs["logs"].run_many([{"ids": ids[i : i + 1]} for i in range(4)])
    want = _executor(bundle, backend, "resident").run("logs", {"ids": ids})
    np.testing.assert_allclose(
        np.concatenate([r["category_logits"] for r in rows]), want["category_logits"], atol=1e-5
    )
    for ex in execs.values():
        ex.close()  # shared queue and executor: closing twice is fine
    with pytest.raises(InferenceError, match="closed"):
        execs["intents"].run({"ids": ids[:1]})


def test_batch_queue_holds_background_work_over_quota_but_serves_interactive() -> None:
    from edge_agent.runtime.quota import CpuGovernor

    wall, cpu = [0.0], [0.0]
    gov = CpuGovernor(0.5, now=lambda: wall[0], cpu_time=lambda: cpu[0])
    done: list[str] = []

    def run_many(task: str, reqs: Sequence[Feeds], background: bool) -> list[Feeds]:
        done.extend(task for _ in reqs)
        return [dict(r) for r in reqs]

    q = BatchQueue(run_many, governor=gov)
    cpu[0] += 1.0  # the process just burnt a CPU-second: two seconds of debt at 0.5 cores
    background = q.submit("logs", {"x": np.zeros(1)}, interactive=False)
    assert not background.done() and not _wait_for(background, 0.3)
    interactive = q.submit("intents", {"x": np.zeros(1)})
    assert _wait_for(interactive, 5)
    assert done == ["intents"]
    wall[0] += 10.0  # time passes: the debt is paid
    assert _wait_for(background, 5)
    assert done == ["intents", "logs"]
    assert gov.throttled_s > 0
    q.close()


def _wait_for(fut: object, seconds: float) -> bool:
    from concurrent.futures import Future, TimeoutError

    assert isinstance(fut, Future)
    try:
        fut.result(seconds)
    except TimeoutError:
        return False
    return True


def test_invoke_rows_splits_a_batch_without_reloading(bundle: Bundle, backend: Backend) -> None:
    ids = _ids(bundle, 5)
    ex = _executor(bundle, backend, "stream", weight_budget_mb=0.1, invoke_rows=2)
    whole = _executor(bundle, backend, "resident")
    outs = ex.run_many("intents", [{"ids": ids[i : i + 1]} for i in range(5)])
    graph = bundle.graph("intents")
    assert ex.stats.loads == len(graph)
    assert ex.stats.invokes == 3 * len(graph)  # rows 2 + 2 + 1 per segment
    want = whole.run("intents", {"ids": ids})["intent_logits"]
    np.testing.assert_allclose(np.concatenate([o["intent_logits"] for o in outs]), want, atol=1e-5)



def test_prefetcher_caches_every_page_without_mapping_the_file(bundle: Bundle, tmp_path: Path) -> None:
    from edge_agent.runtime.segments import _Prefetcher

    path = shutil.copy(bundle.path / bundle.segments()["block_01"].file, tmp_path / "seg.tflite")
    os.sync()
    evict_from_page_cache(path)
    assert _cached_pages(path) == 0
    reader = _Prefetcher()
    reader.request(path)
    reader.wait(path)  # what the executor does before it maps a requested segment
    pages = -(-path.stat().st_size // os.sysconf("SC_PAGE_SIZE"))
    assert _cached_pages(path) == pages
    assert str(path) not in Path("/proc/self/maps").read_text()
    reader.forget(path)  # released: a later request reads it again
    evict_from_page_cache(path)
    reader.request(path)
    reader.wait(path)
    assert _cached_pages(path) == pages
    reader.wait(tmp_path / "never-requested")  # returns at once
    reader.close()
    assert reader.done == 2


def test_stream_heap_modes_give_the_same_outputs(bundle: Bundle, backend: Backend) -> None:
    ids = _ids(bundle, 2)
    outs = []
    for heap in ("reuse", "return"):
        ex = _executor(bundle, backend, "stream", weight_budget_mb=0.1, heap=heap)
        outs.append(ex.run("intents", {"ids": ids})["intent_logits"])
        ex.close()
    np.testing.assert_array_equal(outs[0], outs[1])
    with pytest.raises(BundleError, match="unknown heap mode 'keep'"):
        _executor(bundle, backend, "stream", heap="keep")
