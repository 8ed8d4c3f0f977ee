"""bench/streaming.py's cold ratio compares like with like: the ``read()`` baseline reads the bytes
a cold streamed forward of the intent graph reads, file by file, as the page cache shows them, and
the bench refuses the ratio when the two differ or either reads a file outside the intent graph."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from benchload import load_bench
from delegates.fixtures import synth_bundle_dir

from edge_agent.runtime.backend import load_backend
from edge_agent.runtime.bundle import Bundle, load_bundle
from edge_agent.runtime.segments import SegmentExecutor, evict_from_page_cache

PAGE = os.sysconf("SC_PAGE_SIZE")


bench = load_bench("streaming")


@pytest.fixture
def bundle(tmp_path: Path) -> Bundle:
    """A private copy, written back to disk, so that eviction drops its pages and no other test's
    reads of the shared one show up in the page cache."""
    copy = tmp_path / "bundle"
    shutil.copytree(synth_bundle_dir(), copy)
    os.sync()
    return load_bundle(copy)


def test_unlike_bytes_names_each_file_that_differs(tmp_path: Path) -> None:
    embed, head = tmp_path / "embed.tflite", tmp_path / "intent_head.tflite"
    log_head = tmp_path / "log_head.tflite"
    graph = {embed, head}
    same = {embed: [(0, 8192)], head: [(0, 4096)]}
    assert bench.unlike_bytes(same, dict(same), graph) == []
    assert bench.unlike_bytes(same, {**same, log_head: [(0, 4096)]}, graph) == [
        "log_head.tflite: read by read(), not of the graph",
        "log_head.tflite: other bytes (the forward 0, read() 4096)",
    ]
    assert bench.unlike_bytes(same, {**same, embed: [(0, 4096)]}, graph) == [
        "embed.tflite: other bytes (the forward 8192, read() 4096)"
    ]
    # as many bytes, other pages: not the same reads either
    assert bench.unlike_bytes(same, {**same, embed: [(4096, 12288)]}, graph) == [
        "embed.tflite: other bytes (the forward 8192, read() 8192)"
    ]
    assert bench.unlike_bytes({**same, log_head: [(0, 4096)]}, {**same, log_head: [(0, 4096)]}, graph) == [
        "log_head.tflite: read by the forward, not of the graph",
        "log_head.tflite: read by read(), not of the graph",
    ]


def test_cached_ranges_follow_eviction_and_reads(tmp_path: Path) -> None:
    f = tmp_path / "blob"
    f.write_bytes(os.urandom(64 * PAGE + 100))
    os.sync()
    evict_from_page_cache(f)
    assert bench.cached_ranges(f) == []
    with f.open("rb") as fh:
        os.posix_fadvise(fh.fileno(), 0, 0, os.POSIX_FADV_RANDOM)
        fh.seek(8 * PAGE)
        fh.read(2 * PAGE)
        fh.seek(64 * PAGE)
        fh.read()
    assert bench.cached_ranges(f) == [(8 * PAGE, 10 * PAGE), (64 * PAGE, 64 * PAGE + 100)]


def _cold(bundle: Bundle, backend: str, cache_dir: Path | None) -> dict[str, Any]:
    cfg = {
        "bundle": str(bundle.path),
        "backend": backend,
        "threads": 1,
        "runs": 2,
        "xnnpack": 1,
        "heap": "return",
        "prefetch": 2,
        "invoke_rows": None,
        "residency": "stream",
        "budget": 0.1,
        "cold": True,
        "weight_cache": str(cache_dir) if cache_dir else None,
    }
    result: dict[str, Any] = bench._child(cfg)
    return result


@pytest.mark.slow
@pytest.mark.parametrize("backend, cached", [("tflite-runtime", False), ("litert", True)])
def test_the_bench_reads_what_the_cold_forward_reads(
    bundle: Bundle, backend: str, cached: bool, tmp_path: Path
) -> None:
    result = _cold(bundle, backend, tmp_path / "xnn" if cached else None)
    assert result["unlike"] == [], result["unlike"]
    segments = [bundle.segments()[n].file for n in bundle.graph("intents")]
    read = set(result["read_files"])
    assert set(segments) <= read and "log_head.tflite" not in read
    if cached:  # and the graph's cache files, no other
        assert len(read) == 2 * len(segments) and all(f.endswith(".xnn") for f in read - set(segments))
    else:  # the graph's segments, whole
        assert read == set(segments)
        size = sum((bundle.path / f).stat().st_size for f in segments)
        assert result["read_mb"] * (1 << 20) == size


@pytest.mark.slow
def test_reading_every_segment_is_not_what_the_forward_reads(bundle: Bundle) -> None:
    """The comparison the bench made before: read() of every segment, the log head's too."""
    backend = load_backend("tflite-runtime")
    ex = SegmentExecutor(bundle, lambda p: backend.make_interpreter(p, 1), residency="stream")
    ids = np.ones((1, int(bundle.manifest["tokenizer"]["max_len"])), dtype=np.int32)
    everything = bench._candidate_files(bundle, None)
    graph = bench.graph_files(bundle, "intents", None)
    for f in everything:
        evict_from_page_cache(f)
    ex.run("intents", {"ids": ids})
    forward = bench.page_cache(everything)
    ex.close()
    buf = bytearray(1 << 20)
    every_segment = {f: [(0, f.stat().st_size)] for f in everything}
    bench._read(every_segment, evict_from_page_cache, everything, buf)
    unlike = bench.unlike_bytes(forward, bench.page_cache(everything), graph)
    assert unlike and all(line.startswith("log_head.tflite") for line in unlike), unlike
    bench._read(forward, evict_from_page_cache, everything, buf)
    assert bench.unlike_bytes(forward, bench.page_cache(everything), graph) == []
