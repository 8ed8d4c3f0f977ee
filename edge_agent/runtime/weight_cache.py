"""XNNPACK weight cache: packed weights kept in a file per segment, mapped instead of repacked.

XNNPACK runs int8 layers several times faster than TFLite's built-in kernels here, but it packs
every segment's weights into its own layout when the segment loads, which made a streamed pass
3.5x a resident one. LiteRT's ``CompiledModel`` can keep that packed copy in a file (its XNNPACK
weight cache path, set through the C API in ``litert_c.py``): the first load writes it, later
loads map it.

With a cache hit the runtime never reads the weight buffers of the ``.tflite`` itself, only its
small "skeleton" (flatbuffer tables, shapes, quantization parameters). So the cold read of a
segment is its skeleton plus its cache file, about the size of the segment, instead of both
files in full: :meth:`WeightCache.reads` tells the prefetcher which byte ranges to read, from a
sidecar written when the cache file was made.

Cache files are named by the segment file's sha256 and the LiteRT version, so a changed bundle
or runtime never maps a stale cache (XNNPACK looks packed weights up by buffer index, not by
content). LiteRT only: tflite-runtime 2.14 has no such option.
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
from pathlib import Path

from edge_agent.errors import BackendUnavailable, BundleError
from edge_agent.runtime.bundle import Bundle
from edge_agent.runtime.litert_c import CompiledSegment
from edge_agent.runtime.native_log import native_info_dropped

__all__ = ["WeightCache", "compile_segment", "skeleton_ranges"]

Ranges = list[tuple[int, int]]
_PAGE = mmap.PAGESIZE
# buffers at least this large are weights (read from the cache instead); smaller ones are read
_WEIGHT_BYTES = 4 * _PAGE


def skeleton_ranges(path: Path) -> Ranges:
    """Byte ranges of ``path`` (a .tflite) outside its large constant buffers, page-aligned.

    Parses the flatbuffer through a memory map, so only the tables are read, not the weights."""
    from ai_edge_litert import schema_py_generated as schema

    with path.open("rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
        size = len(data)
        model = schema.Model.GetRootAsModel(data, 0)
        holes = []
        for i in range(model.BuffersLength()):
            buf = model.Buffers(i)
            n = buf.DataLength()
            if n >= _WEIGHT_BYTES:
                start = buf._tab.Vector(buf._tab.Offset(4))  # the `data` vector of table Buffer
                # whole pages inside the buffer only: a page shared with a table is read
                holes.append((-(-start // _PAGE) * _PAGE, (start + n) // _PAGE * _PAGE))
        del model  # holds views into the map
    ranges: Ranges = []
    pos = 0
    for lo, hi in sorted(holes):
        if lo > pos:
            ranges.append((pos, lo))
        pos = max(pos, hi)
    if pos < size:
        ranges.append((pos, size))
    return ranges


class WeightCache:
    """Where a bundle's segments keep their packed weights (``directory``, created if missing)."""

    def __init__(self, bundle: Bundle, directory: Path, runtime_version: str) -> None:
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BundleError(
                f"xnnpack_weight_cache: cannot create {directory}: {exc.strerror}; "
                "point it at a writable directory or leave it unset"
            ) from exc
        self.directory = directory
        self._sha = {bundle.path / f: str(e["sha256"]) for f, e in bundle.manifest["files"].items()}
        self._tag = "litert" + runtime_version.replace("/", "_")
        self._skeletons: dict[Path, Ranges] = {}  # sidecars read once: they never change

    def file_for(self, segment: Path) -> Path:
        sha = self._sha.get(segment)
        if sha is None:
            raise BundleError(f"{segment} is not a file of the bundle")
        return self.directory / f"{segment.stem}-{sha[:16]}-{self._tag}.xnn"

    def _sidecar(self, segment: Path) -> Path:
        return self.file_for(segment).with_suffix(".skeleton.json")

    def loaded(self, segment: Path) -> None:
        """After a load: record the segment's skeleton once its cache file exists."""
        side = self._sidecar(segment)
        if segment in self._skeletons or side.exists() or not self.file_for(segment).exists():
            return
        ranges = skeleton_ranges(segment)
        tmp = side.with_name(f".{side.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"skeleton": ranges}))
        os.replace(tmp, side)
        self._skeletons[segment] = ranges

    def reads(self, segment: Path) -> list[tuple[Path, Ranges | None]]:
        """What to read before ``segment`` loads: whole files (``None``) or byte ranges."""
        cache = self.file_for(segment)
        skeleton = self._skeleton(segment)
        if skeleton is None or not cache.exists():
            return [(segment, None)]
        return [(cache, None), (segment, skeleton)]

    def _skeleton(self, segment: Path) -> Ranges | None:
        if segment not in self._skeletons:
            try:
                raw = json.loads(self._sidecar(segment).read_text())["skeleton"]
            except (OSError, ValueError, KeyError):
                return None
            self._skeletons[segment] = [(int(a), int(b)) for a, b in raw]
        return self._skeletons[segment]

    def files(self, segment: Path) -> list[Path]:
        """Every file of ``segment`` that a load may read (for page-cache eviction)."""
        return [segment, self.file_for(segment)]


def compile_segment(model_path: Path, cache_file: Path, threads: int) -> CompiledSegment:
    """``model_path`` compiled by LiteRT with its XNNPACK weights in ``cache_file`` (the runtime's
    Interpreter protocol; fixed batch, usually 1: the segment executor runs larger requests row by
    row). A cache file that cannot be loaded (left truncated by a crash while it was written) is
    deleted and written again, once. A LiteRT that compiles without writing the file (one whose CPU
    options differ from 2.3's) is refused rather than left to repack the weights at every load."""
    try:
        segment = _compile(model_path, cache_file, threads)
    except RuntimeError:
        with contextlib.suppress(OSError):
            cache_file.unlink()
        try:
            segment = _compile(model_path, cache_file, threads)
        except RuntimeError as exc:
            raise BackendUnavailable(f"litert: cannot compile {model_path}: {exc}") from exc
    if not cache_file.exists():
        segment.close()
        raise BackendUnavailable(
            f"litert: compiled {model_path.name} without writing its XNNPACK weight cache {cache_file}; "
            "this runtime passes CPU options as ai-edge-litert 2.3 takes them: install that version "
            "or leave xnnpack_weight_cache unset"
        )
    return segment


def _compile(model_path: Path, cache_file: Path, threads: int) -> CompiledSegment:
    """LiteRT's environment option keeps its own log at warnings, but the TFLite logger inside
    libLiteRt.so still writes "INFO: Created TensorFlow Lite XNNPACK delegate for CPU." at the
    first compile; it exports no setter, so that line is dropped from fd 2 (``native_log.py``)."""
    with native_info_dropped():
        return CompiledSegment(model_path, cache_file, threads)
