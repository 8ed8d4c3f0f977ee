"""XNNPACK weight cache: packed weights kept in a file per segment, mapped instead of repacked.

XNNPACK runs int8 layers several times faster than TFLite's built-in kernels here, but it packs
every segment's weights into its own layout when the segment loads, which made a streamed pass
3.5x a resident one. ai-edge-litert's ``CompiledModel`` can keep that packed copy in a file
(``CpuOptions.xnnpack_weight_cache_path``): the first load writes it, later loads map it.

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
import threading
from pathlib import Path
from typing import Any

import numpy as np

from edge_agent.errors import BackendUnavailable, BundleError
from edge_agent.runtime.bundle import Bundle

__all__ = ["CompiledInterpreter", "WeightCache", "skeleton_ranges"]

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


class CompiledInterpreter:
    """The runtime's Interpreter protocol over a LiteRT ``CompiledModel`` whose XNNPACK weights
    come from ``cache_file``. Unquantized inputs and outputs, fixed batch (the model's own, usually 1:
    the segment executor runs larger requests row by row)."""

    def __init__(self, model_path: Path, cache_file: Path, threads: int) -> None:
        try:
            self._model = _compile(model_path, cache_file, threads)
        except RuntimeError:
            # a cache file left truncated (a crash while writing it) is made again, once
            with contextlib.suppress(OSError):
                cache_file.unlink()
            try:
                self._model = _compile(model_path, cache_file, threads)
            except RuntimeError as exc:
                raise BackendUnavailable(f"litert: cannot compile {model_path}: {exc}") from exc
        key, sig = next(iter(self._model.get_signature_list().items()))
        self._inputs = _details(model_path, self._model.get_input_tensor_details(key), sig["inputs"])
        self._outputs = _details(model_path, self._model.get_output_tensor_details(key), sig["outputs"])
        self._in_bufs = self._model.create_input_buffers(0)
        self._out_bufs = self._model.create_output_buffers(0)
        self._in_pos = {int(d["index"]): k for k, d in enumerate(self._inputs)}
        self._values: dict[int, Any] = {}

    def allocate_tensors(self) -> None:
        pass  # buffers are made with the model

    def get_input_details(self) -> list[dict[str, Any]]:
        return [dict(d) for d in self._inputs]

    def get_output_details(self) -> list[dict[str, Any]]:
        return [dict(d) for d in self._outputs]

    def resize_tensor_input(self, tensor_index: int, shape: Any) -> None:
        raise ValueError("a compiled segment has a fixed batch; run larger requests row by row")

    def set_tensor(self, tensor_index: int, value: Any) -> None:
        detail = self._inputs[self._in_pos[tensor_index]]
        array = np.ascontiguousarray(value, dtype=detail["dtype"])
        if list(array.shape) != list(detail["shape"]):
            raise ValueError(f"input {detail['name']}: shape {array.shape}, expected {detail['shape']}")
        self._in_bufs[self._in_pos[tensor_index]].write(array)

    def invoke(self) -> None:
        self._model.run_by_index(0, self._in_bufs, self._out_bufs)
        for detail, buf in zip(self._outputs, self._out_bufs, strict=True):
            n = int(np.prod(detail["shape"]))
            self._values[int(detail["index"])] = buf.read(n, detail["dtype"]).reshape(detail["shape"])

    def get_tensor(self, tensor_index: int) -> Any:
        return self._values[tensor_index]


def _compile(model_path: Path, cache_file: Path, threads: int) -> Any:
    try:
        from ai_edge_litert.compiled_model import CompiledModel
        from ai_edge_litert.cpu_options import CpuOptions
        from ai_edge_litert.hardware_accelerator import HardwareAccelerator
        from ai_edge_litert.options import Options
    except ImportError as exc:
        raise BackendUnavailable(
            f"litert: this ai-edge-litert has no CompiledModel CPU options ({exc}); the XNNPACK "
            "weight cache was built against 2.3"
        ) from exc

    cpu = CpuOptions(num_threads=max(1, threads), xnnpack_weight_cache_path=str(cache_file))
    options = Options(hardware_accelerators=HardwareAccelerator.CPU, cpu_options=cpu)
    return CompiledModel.from_file(str(model_path), options=options, environment=_environment())


_ENV: list[Any] = []
_ENV_LOCK = threading.Lock()


def _environment() -> Any:
    """One LiteRT environment for the process, pointed at a directory without accelerator
    plugins (this package's own): by default every compile tries to load the NPU plugins that the
    wheel carries, which took a streamed segment's load from 0.6 to 1.0 ms (median of 20)."""
    with _ENV_LOCK:
        if not _ENV:
            from ai_edge_litert.environment import Environment

            none = str(Path(__file__).resolve().parent)
            _ENV.append(Environment.create(compiler_plugin_path=none, dispatch_library_path=none))
        return _ENV[0]


def _details(model_path: Path, by_name: dict[str, dict[str, Any]], order: list[str]) -> list[dict[str, Any]]:
    out = []
    for name in order:
        d = by_name[name]
        dtype = np.dtype(d["dtype"]).type
        if dtype in (np.int8, np.uint8):  # the compiled model's details carry no scale
            raise BackendUnavailable(
                f"litert: {model_path.name} has a quantized port {d['name']!r}; the weight cache "
                "path takes float (and integer id) inputs and outputs: the bundle's default variant"
            )
        shape = np.array(d["shape"], dtype=np.int32)
        out.append(
            {
                "name": d["name"],
                "index": int(d["index"]),
                "dtype": dtype,
                "shape": shape,
                "shape_signature": shape,
                "quantization": (0.0, 0),
            }
        )
    return out
