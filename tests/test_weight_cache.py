"""XNNPACK weight cache (LiteRT): streamed segments map packed weights from files named by the
segment's hash, give the resident outputs, and a cold load reads the skeleton, not the weights."""

from __future__ import annotations

import itertools
import json
import mmap
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from delegates.fixtures import synth_bundle_dir

from edge_agent.errors import BackendUnavailable
from edge_agent.runtime import litert_c
from edge_agent.runtime.backend import load_backend
from edge_agent.runtime.bundle import Bundle, load_bundle
from edge_agent.runtime.chain import open_runtime
from edge_agent.runtime.config import RuntimeConfig
from edge_agent.runtime.delegates.cpu import CpuConfig, prepare
from edge_agent.runtime.model import INTENT_OUTPUTS, LOG_OUTPUTS
from edge_agent.runtime.segments import SegmentExecutor, evict_from_page_cache
from edge_agent.runtime.weight_cache import WeightCache, compile_segment, skeleton_ranges

PAGE = mmap.PAGESIZE


@pytest.fixture(scope="module")
def bundle() -> Bundle:
    return load_bundle(synth_bundle_dir())


def _ids(bundle: Bundle, n: int) -> np.ndarray:
    max_len = bundle.manifest["tokenizer"]["max_len"]
    return np.random.default_rng(11).integers(1, 200, size=(n, max_len)).astype(np.int32)


def _cached_executor(bundle: Bundle, cache: WeightCache, **kw: object) -> SegmentExecutor:
    backend = load_backend("litert")
    return SegmentExecutor(
        bundle,
        lambda p: backend.make_interpreter(p, 1, weight_cache=cache),
        residency="stream",
        weight_cache=cache,
        **kw,  # type: ignore[arg-type]
    )


def _cached_pages(path: Path) -> int:
    out = subprocess.run(
        ["fincore", "--noheadings", "--raw", "-o", "PAGES", str(path)], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    return int(out.stdout.split()[0])


def test_streamed_through_the_cache_equals_resident(bundle: Bundle, tmp_path: Path) -> None:
    backend = load_backend("litert")
    cache = WeightCache(bundle, tmp_path / "xnn", backend.version)
    resident = SegmentExecutor(bundle, lambda p: backend.make_interpreter(p, 1), residency="resident")
    ids = _ids(bundle, 3)
    for attempt in ("writes the cache", "maps the cache"):
        ex = _cached_executor(bundle, cache, weight_budget_mb=0.1)
        for task, names in (("intents", INTENT_OUTPUTS), ("logs", LOG_OUTPUTS)):
            want, got = resident.run(task, {"ids": ids}), ex.run(task, {"ids": ids})
            for name in names:
                np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-5, err_msg=attempt)
        ex.close()
    graph = bundle.graph("intents")
    for name in graph:
        seg = bundle.path / bundle.segments()[name].file
        assert cache.file_for(seg).stat().st_size > 0
        sha = bundle.manifest["files"][seg.name]["sha256"]
        assert sha[:16] in cache.file_for(seg).name
        # after the first load, prefetch reads the cache file and the skeleton's ranges
        reads = cache.reads(seg)
        assert reads[0] == (cache.file_for(seg), None) and reads[1][0] == seg and reads[1][1]
    resident.close()


def test_skeleton_leaves_out_the_weight_buffers(bundle: Bundle) -> None:
    seg = bundle.path / bundle.segments()["block_00"].file
    size = seg.stat().st_size
    ranges = skeleton_ranges(seg)
    assert ranges[0][0] == 0 and ranges[-1][1] == size
    assert all(a < b for a, b in ranges) and all(b < c for (_, b), (c, _) in itertools.pairwise(ranges))
    assert all(a % PAGE == 0 for a, _ in ranges[1:]) and all(b % PAGE == 0 for _, b in ranges[:-1])
    kept = sum(b - a for a, b in ranges)
    assert kept < size / 2, (kept, size)  # the block's two weight matrices are most of the file


def test_a_cold_cached_load_reads_the_skeleton_not_the_weights(bundle: Bundle, tmp_path: Path) -> None:
    copy = tmp_path / "bundle"
    shutil.copytree(bundle.path, copy)
    own = load_bundle(copy)
    cache = WeightCache(own, tmp_path / "xnn", load_backend("litert").version)
    ids = _ids(own, 1)
    ex = _cached_executor(own, cache, weight_budget_mb=0.1, prefetch=2)
    want = ex.run("intents", {"ids": ids})  # first pass writes the caches and skeletons
    seg = copy / own.segments()["block_03"].file
    skeleton_pages = sum(-(-(b - a) // PAGE) for a, b in skeleton_ranges(seg))
    file_pages = -(-seg.stat().st_size // PAGE)
    assert skeleton_pages < file_pages
    os.sync()  # the copy's pages and the new cache files are dirty: written back, they can be dropped
    for name in own.graph("intents"):
        for f in cache.files(copy / own.segments()[name].file):
            evict_from_page_cache(f)
    assert _cached_pages(seg) == 0
    got = ex.run("intents", {"ids": ids})
    np.testing.assert_array_equal(got["intent_logits"], want["intent_logits"])
    assert 0 < _cached_pages(seg) <= skeleton_pages < file_pages
    assert _cached_pages(cache.file_for(seg)) > 0
    ex.close()


def test_a_damaged_cache_file_is_made_again(bundle: Bundle, tmp_path: Path) -> None:
    backend = load_backend("litert")
    cache = WeightCache(bundle, tmp_path / "xnn", backend.version)
    ids = _ids(bundle, 2)
    want = _cached_executor(bundle, cache).run("intents", {"ids": ids})
    seg = bundle.path / bundle.segments()["block_01"].file
    target = cache.file_for(seg)
    target.write_bytes(target.read_bytes()[:100])  # as if the writer had died
    got = _cached_executor(bundle, cache).run("intents", {"ids": ids})
    np.testing.assert_array_equal(got["intent_logits"], want["intent_logits"])
    assert target.stat().st_size > 100


def test_cache_files_follow_the_segment_hash(bundle: Bundle, tmp_path: Path) -> None:
    copy = tmp_path / "bundle"
    shutil.copytree(bundle.path, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    first = WeightCache(load_bundle(copy, verify_hashes=False), tmp_path / "xnn", "2.3.0")
    seg = copy / "block_00.tflite"
    manifest["files"]["block_00.tflite"]["sha256"] = "f" * 64  # another build of that segment
    (copy / "manifest.json").write_text(json.dumps(manifest))
    second = WeightCache(load_bundle(copy, verify_hashes=False), tmp_path / "xnn", "2.3.0")
    assert first.file_for(seg) != second.file_for(seg)
    assert WeightCache(load_bundle(copy, verify_hashes=False), tmp_path / "xnn", "2.4.0").file_for(
        seg
    ) != second.file_for(seg)


def test_tflite_runtime_has_no_weight_cache(bundle: Bundle, tmp_path: Path) -> None:
    backend = load_backend("tflite-runtime")
    seg = bundle.path / bundle.segments()["block_00"].file
    with pytest.raises(BackendUnavailable, match="no XNNPACK weight cache"):
        backend.make_interpreter(seg, 1, weight_cache=WeightCache(bundle, tmp_path / "xnn", "2.3.0"))
    setup = prepare(CpuConfig(xnnpack_weight_cache=tmp_path / "xnn"), backend, bundle, "cpu")
    assert setup.weight_cache is None and "unused" in str(setup.details["weight_cache"])
    setup = prepare(CpuConfig(xnnpack_weight_cache=tmp_path / "xnn"), load_backend("litert"), bundle, "cpu")
    assert setup.weight_cache is not None and (tmp_path / "xnn").is_dir()


def test_the_agent_runtime_streams_through_the_cache(bundle: Bundle, tmp_path: Path) -> None:
    backend = load_backend("litert")
    ids = _ids(bundle, 4)
    plain = SegmentExecutor(bundle, lambda p: backend.make_interpreter(p, 1), residency="resident")
    want = plain.run("intents", {"ids": ids})["intent_logits"]
    plain.close()
    cpu = CpuConfig(xnnpack_weight_cache=tmp_path / "xnn")
    cfg = RuntimeConfig(backend="litert", residency="stream", weight_budget_mb=0.1, delegates=[cpu])
    rt = open_runtime(bundle, cfg, backend=backend)
    try:
        got = [rt.queue.submit("intents", {"ids": ids[i : i + 1]}) for i in range(len(ids))]
        rows = np.concatenate([f.result(timeout=60)["intent_logits"] for f in got])
        stats = rt.stats()
    finally:
        rt.close()
    np.testing.assert_allclose(rows, want, rtol=1e-5, atol=1e-5)
    assert stats["active"] == "cpu" and stats["served"] >= len(ids)
    assert len(list((tmp_path / "xnn").glob("*.xnn"))) == len(
        set(bundle.graph("intents")) | set(bundle.graph("logs"))
    )


_STREAM_IN_A_CHILD = """
import json, sys
from pathlib import Path
import numpy as np
from edge_agent.runtime.backend import load_backend
from edge_agent.runtime.bundle import load_bundle
from edge_agent.runtime.segments import SegmentExecutor
from edge_agent.runtime.weight_cache import WeightCache

bundle = load_bundle(Path(sys.argv[1]))
backend = load_backend("litert")
cache = WeightCache(bundle, Path(sys.argv[2]), backend.version)
ex = SegmentExecutor(bundle, lambda p: backend.make_interpreter(p, 1, weight_cache=cache),
                     residency="stream", weight_cache=cache)
ids = np.arange(1, 1 + bundle.manifest["tokenizer"]["max_len"], dtype=np.int32)[None, :]
for _ in range(2):  # writes the cache files, then maps them
    out = ex.run("intents", {"ids": ids})
maps = Path("/proc/self/maps").read_text()
print(json.dumps({
    "shape": list(out["intent_logits"].shape),
    "mapped": sorted({line.split()[-1].rsplit("/", 1)[-1] for line in maps.splitlines() if ".so" in line}),
    "modules": sorted(m for m in sys.modules if m.startswith("ai_edge_litert")),
}))
"""


def test_the_cache_path_maps_no_accelerator_nor_python_wrapper(bundle: Bundle, tmp_path: Path) -> None:
    """LiteRT's C API with CPU-only accelerator registration: no accelerator plugin (WebGPU, NPU
    dispatch) and no pywrap extension in the process, and no INFO line per compile on stderr."""
    out = subprocess.run(
        [sys.executable, "-c", _STREAM_IN_A_CHILD, str(bundle.path), str(tmp_path / "xnn")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["shape"][0] == 1
    assert "libLiteRt.so" in seen["mapped"]
    assert not [m for m in seen["mapped"] if "Accelerator" in m or "Dispatch" in m], seen["mapped"]
    assert not [m for m in seen["mapped"] if "pywrap" in m], seen["mapped"]
    assert "ai_edge_litert.interpreter" not in seen["modules"]
    assert "compiled_model.cc" not in out.stderr and "environment.cc" not in out.stderr, out.stderr[-2000:]
    assert len(list((tmp_path / "xnn").glob("*.xnn"))) == len(bundle.graph("intents"))


def test_a_file_litert_cannot_load_is_backend_unavailable(bundle: Bundle, tmp_path: Path) -> None:
    bogus = tmp_path / "not_a_model.tflite"
    bogus.write_bytes(b"\0" * 4096)
    cache = WeightCache(bundle, tmp_path / "xnn", "2.3.0")
    with pytest.raises(BackendUnavailable, match=r"not_a_model\.tflite"):
        compile_segment(bogus, cache.directory / "bogus.xnn", 1)


def test_a_litert_that_ignores_the_cpu_options_is_refused(
    bundle: Bundle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a LiteRT would that names its CPU options differently: it compiles, writes no cache."""
    monkeypatch.setattr(litert_c, "_CPU_OPTIONS_ID", b"cpu_options_of_another_version")
    seg = bundle.path / bundle.segments()["block_00"].file
    cache = WeightCache(bundle, tmp_path / "xnn", "2.3.0")
    with pytest.raises(BackendUnavailable, match="without writing its XNNPACK weight cache"):
        compile_segment(seg, cache.file_for(seg), 1)
