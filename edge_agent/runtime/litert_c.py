"""LiteRT's C API (``libLiteRt.so`` from the ai-edge-litert wheel), called through ctypes.

The XNNPACK weight cache needs LiteRT's ``CompiledModel``, and the CPU path of ``litert`` runs
through it whether or not segments stream (:func:`compile_resident`). The wheel's Python wrappers
(the ``Interpreter``'s and ``CompiledModel``'s) cost a process about 15 MB of resident memory
that a CPU-only compile never uses:

* its extension library (``libpywrap_litert_common.so``, 18 MB on disk) keeps about 7 MB of
  pages resident once imported (11 MB once it has compiled);
* the environment it creates registers every accelerator the wheel carries, and the WebGPU one
  (``libLiteRtWebGpuAccelerator.so``) leaves about 3.8 MB resident after its start-up.

The C library is what that wrapper calls underneath, and its API is public and versioned
(``VERS_1.0`` symbols). Called directly, the environment gets no runtime library directory (the
wrapper passes the package's own directory, where LiteRT finds the WebGPU accelerator) and
``kLiteRtEnvOptionTagAutoRegisterAccelerators`` set to the CPU alone (the default adds GPU and
NPU): either keeps accelerator libraries out of the process, checked with ``/proc/self/maps``.
``kLiteRtEnvOptionTagMinLoggerSeverity`` at warnings silences the ``INFO`` lines LiteRT writes
at every compile.

CPU options travel as LiteRT does it itself: an opaque option named ``xnnpack`` whose payload is
a small TOML text (``num_threads``, ``weight_cache_file_path``) that the runtime parses.

Built against ai-edge-litert 2.3; a library without these symbols is reported as
:class:`BackendUnavailable`.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import threading
import weakref
from pathlib import Path
from typing import Any

import numpy as np

from edge_agent.errors import BackendUnavailable
from edge_agent.runtime.native_log import native_info_dropped

__all__ = ["CompiledSegment", "NotCompilable", "compile_resident", "library_path"]

_P = ctypes.c_void_p
_SIZE = ctypes.c_size_t
_STATUS = ctypes.c_int

# litert_environment_options.h / litert_any.h / litert_common.h / litert_model_types.h
_TAG_AUTO_REGISTER_ACCELERATORS = 24
_TAG_MIN_LOGGER_SEVERITY = 25
_ANY_INT = 2
_HW_CPU = 1
_SEVERITY_WARNING = 2
_CPU_OPTIONS_ID = b"xnnpack"
_ELEMENT_TYPES: dict[int, type[np.generic]] = {
    1: np.float32,
    2: np.int32,
    3: np.uint8,
    4: np.int64,
    6: np.bool_,
    7: np.int16,
    9: np.int8,
    10: np.float16,
    11: np.float64,
}
_QUANTIZED = {3, 9}
# LiteRtRankedTensorType: int32 element type, then LiteRtLayout {rank:7, has_strides:1 in one
# 32-bit unit; int32 dimensions[8]; uint32 strides[8]}: 72 bytes on the 64-bit Linux ABIs of the
# wheels (x86-64, aarch64)
_RANKED_TYPE_BYTES = 72
_RANK_OFFSET = 4
_DIMS_OFFSET = 8
_ALIGN = 64  # LITERT_HOST_MEMORY_BUFFER_ALIGNMENT


class NotCompilable(BackendUnavailable):
    """A model this path does not run: a quantized port, or (when asked for) a dynamic batch."""


class _AnyValue(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("value", ctypes.c_int64)]


class _EnvOption(ctypes.Structure):
    _fields_ = [("tag", ctypes.c_int), ("value", _AnyValue)]


# name -> (restype, argtypes); restype None means the call returns void
_SIGNATURES: dict[str, tuple[Any, list[Any]]] = {
    "LiteRtCreateEnvironment": (_STATUS, [ctypes.c_int, ctypes.POINTER(_EnvOption), ctypes.POINTER(_P)]),
    "LiteRtCreateModelFromFile": (_STATUS, [_P, ctypes.c_char_p, ctypes.POINTER(_P)]),
    "LiteRtDestroyModel": (None, [_P]),
    "LiteRtCreateOptions": (_STATUS, [ctypes.POINTER(_P)]),
    "LiteRtDestroyOptions": (None, [_P]),
    "LiteRtSetOptionsHardwareAccelerators": (_STATUS, [_P, ctypes.c_int]),
    "LiteRtCreateOpaqueOptions": (_STATUS, [ctypes.c_char_p, _P, _P, ctypes.POINTER(_P)]),
    "LiteRtAddOpaqueOptions": (_STATUS, [_P, _P]),
    "LiteRtCreateCompiledModel": (_STATUS, [_P, _P, _P, ctypes.POINTER(_P)]),
    "LiteRtDestroyCompiledModel": (None, [_P]),
    "LiteRtRunCompiledModel": (_STATUS, [_P, _SIZE, _SIZE, ctypes.POINTER(_P), _SIZE, ctypes.POINTER(_P)]),
    "LiteRtGetModelSignature": (_STATUS, [_P, _SIZE, ctypes.POINTER(_P)]),
    "LiteRtGetNumSignatureInputs": (_STATUS, [_P, ctypes.POINTER(_SIZE)]),
    "LiteRtGetNumSignatureOutputs": (_STATUS, [_P, ctypes.POINTER(_SIZE)]),
    "LiteRtGetSignatureInputTensorByIndex": (_STATUS, [_P, _SIZE, ctypes.POINTER(_P)]),
    "LiteRtGetSignatureOutputTensorByIndex": (_STATUS, [_P, _SIZE, ctypes.POINTER(_P)]),
    "LiteRtGetTensorName": (_STATUS, [_P, ctypes.POINTER(ctypes.c_char_p)]),
    "LiteRtGetRankedTensorType": (_STATUS, [_P, _P]),
    "LiteRtCreateTensorBufferFromHostMemory": (_STATUS, [_P, _P, _SIZE, _P, ctypes.POINTER(_P)]),
    "LiteRtDestroyTensorBuffer": (None, [_P]),
}


def library_path() -> Path:
    """``libLiteRt.so`` of the installed ai-edge-litert, found without importing its extensions."""
    try:
        spec = importlib.util.find_spec("ai_edge_litert")
    except (ImportError, ValueError) as exc:
        raise BackendUnavailable(f"litert: ai-edge-litert is not importable: {exc}") from exc
    if spec is None or not spec.submodule_search_locations:
        raise BackendUnavailable("litert: ai-edge-litert is not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / "libLiteRt.so"
    if not path.exists():
        raise BackendUnavailable(f"litert: this ai-edge-litert has no C library ({path} is missing)")
    return path


class _Api:
    """The C library with the signatures this module calls, and one CPU-only environment."""

    def __init__(self, path: Path) -> None:
        try:
            self.lib = ctypes.CDLL(str(path), mode=os.RTLD_LOCAL)
            for name, (restype, argtypes) in _SIGNATURES.items():
                fn = getattr(self.lib, name)
                fn.restype = restype
                fn.argtypes = argtypes
        except (OSError, AttributeError) as exc:
            raise BackendUnavailable(f"litert: cannot use the C API in {path}: {exc}") from exc
        libc = ctypes.CDLL(None)
        self.malloc = libc.malloc
        self.malloc.restype = _P
        self.malloc.argtypes = [_SIZE]
        self.free = libc.free
        self.free.restype = None
        self.free.argtypes = [_P]
        options = (_EnvOption * 2)(
            _EnvOption(_TAG_AUTO_REGISTER_ACCELERATORS, _AnyValue(_ANY_INT, _HW_CPU)),
            _EnvOption(_TAG_MIN_LOGGER_SEVERITY, _AnyValue(_ANY_INT, _SEVERITY_WARNING)),
        )
        self.env = _P()
        self.check(self.lib.LiteRtCreateEnvironment(2, options, ctypes.byref(self.env)), "create environment")

    def check(self, status: int, what: str) -> None:
        if status != 0:
            raise RuntimeError(f"LiteRT {what}: status {status}")

    def c_string(self, text: str) -> int:
        """A copy of ``text`` in C memory, to be released with ``free``."""
        raw = text.encode() + b"\0"
        ptr = self.malloc(len(raw))
        if not ptr:
            raise MemoryError("malloc")
        ctypes.memmove(ptr, raw, len(raw))
        return int(ptr)


_API: list[_Api] = []
_API_LOCK = threading.Lock()


def _api() -> _Api:
    with _API_LOCK:
        if not _API:
            _API.append(_Api(library_path()))
        return _API[0]


def _aligned(shape: tuple[int, ...], dtype: type[np.generic]) -> np.ndarray[Any, Any]:
    nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    raw = np.empty(nbytes + _ALIGN, np.uint8)
    start = -raw.ctypes.data % _ALIGN
    return raw[start : start + nbytes].view(dtype).reshape(shape)


class _Port:
    """One signature input or output: its tensor name, dtype, fixed shape and host buffer."""

    def __init__(self, api: _Api, tensor: int, model_path: Path) -> None:
        name = ctypes.c_char_p()
        api.check(api.lib.LiteRtGetTensorName(tensor, ctypes.byref(name)), "tensor name")
        self.name = (name.value or b"").decode()
        ranked = (ctypes.c_uint8 * _RANKED_TYPE_BYTES)()
        api.check(api.lib.LiteRtGetRankedTensorType(tensor, ranked), f"tensor type of {self.name}")
        raw = bytes(ranked)
        element = int.from_bytes(raw[:4], "little")
        if element in _QUANTIZED:
            raise NotCompilable(
                f"litert: {model_path.name} has a quantized port {self.name!r}; the weight cache path "
                "takes float (and integer id) inputs and outputs: the bundle's default variant"
            )
        if element not in _ELEMENT_TYPES:
            raise BackendUnavailable(
                f"litert: {model_path.name}: port {self.name!r} has element type {element}"
            )
        rank = raw[_RANK_OFFSET] & 0x7F
        dims = np.frombuffer(raw, dtype=np.int32, count=rank, offset=_DIMS_OFFSET)
        self.dynamic = bool(np.any(dims < 0))
        # a dynamic dimension (the batch) runs at 1: the segment executor feeds larger requests row by row
        self.shape = tuple(max(1, int(d)) for d in dims)
        fixed = np.array(self.shape, dtype=np.int32)
        ctypes.memmove(ctypes.addressof(ranked) + _DIMS_OFFSET, fixed.ctypes.data, fixed.nbytes)
        self.dtype = _ELEMENT_TYPES[element]
        self.array = _aligned(self.shape, self.dtype)
        self.buffer = _P()
        api.check(
            api.lib.LiteRtCreateTensorBufferFromHostMemory(
                ranked, self.array.ctypes.data, self.array.nbytes, None, ctypes.byref(self.buffer)
            ),
            f"buffer for {self.name}",
        )


def _release(api: _Api, handles: dict[str, Any]) -> None:
    for buffer in handles["buffers"]:
        api.lib.LiteRtDestroyTensorBuffer(buffer)
    if handles["compiled"]:
        api.lib.LiteRtDestroyCompiledModel(handles["compiled"])
    if handles["options"]:
        api.lib.LiteRtDestroyOptions(handles["options"])
    if handles["model"]:
        api.lib.LiteRtDestroyModel(handles["model"])


class CompiledSegment:
    """A ``.tflite`` compiled for the CPU (XNNPACK) by LiteRT; the runtime's Interpreter protocol
    over host buffers that LiteRT reads and writes in place. With ``cache_file`` its packed
    weights live in that file (the weight cache). Fixed batch (the model's own, 1 where it is
    dynamic); ``fixed_batch_only`` refuses a model with a dynamic batch (:class:`NotCompilable`)
    before anything is compiled."""

    def __init__(
        self, model_path: Path, cache_file: Path | None, threads: int, *, fixed_batch_only: bool = False
    ) -> None:
        api = _api()
        self._handles: dict[str, Any] = {"model": _P(), "options": _P(), "compiled": _P(), "buffers": []}
        self._finalizer = weakref.finalize(self, _release, api, self._handles)
        try:
            api.check(
                api.lib.LiteRtCreateModelFromFile(
                    api.env, str(model_path).encode(), ctypes.byref(self._handles["model"])
                ),
                "load model",
            )
            self._bind(api, model_path)
            if fixed_batch_only and any(p.dynamic for p in self._inputs):
                raise NotCompilable(f"litert: {model_path.name} has a dynamic batch")
            self._compile(api, model_path, cache_file, threads)
        except BaseException:
            self._finalizer()
            raise

    def _compile(self, api: _Api, model_path: Path, cache_file: Path | None, threads: int) -> None:
        h = self._handles
        lib = api.lib
        api.check(lib.LiteRtCreateOptions(ctypes.byref(h["options"])), "create options")
        api.check(lib.LiteRtSetOptionsHardwareAccelerators(h["options"], _HW_CPU), "select the CPU")
        toml = f"num_threads = {max(1, int(threads))}\n"
        if cache_file is not None:
            toml += f'weight_cache_file_path = "{cache_file}"\n'
        payload = api.c_string(toml)
        cpu = _P()
        free = ctypes.cast(api.free, _P)  # the payload's destructor: LiteRT frees it with its options
        status = lib.LiteRtCreateOpaqueOptions(_CPU_OPTIONS_ID, payload, free, ctypes.byref(cpu))
        if status != 0:
            api.free(payload)
            api.check(status, "CPU options")
        api.check(lib.LiteRtAddOpaqueOptions(h["options"], cpu), "add CPU options")  # options own it now
        api.check(
            lib.LiteRtCreateCompiledModel(api.env, h["model"], h["options"], ctypes.byref(h["compiled"])),
            f"compile {model_path.name}",
        )

    def _bind(self, api: _Api, model_path: Path) -> None:
        lib = api.lib
        signature = _P()
        api.check(
            lib.LiteRtGetModelSignature(self._handles["model"], 0, ctypes.byref(signature)), "signature"
        )
        ports = []
        for count_fn, tensor_fn in (
            (lib.LiteRtGetNumSignatureInputs, lib.LiteRtGetSignatureInputTensorByIndex),
            (lib.LiteRtGetNumSignatureOutputs, lib.LiteRtGetSignatureOutputTensorByIndex),
        ):
            count = _SIZE()
            api.check(count_fn(signature, ctypes.byref(count)), "signature size")
            side = []
            for i in range(count.value):
                tensor = _P()
                api.check(tensor_fn(signature, i, ctypes.byref(tensor)), "signature tensor")
                port = _Port(api, tensor.value or 0, model_path)
                self._handles["buffers"].append(port.buffer)
                side.append(port)
            ports.append(side)
        self._inputs, self._outputs = ports
        self._in = (_P * len(self._inputs))(*[p.buffer for p in self._inputs])
        self._out = (_P * len(self._outputs))(*[p.buffer for p in self._outputs])
        self._api = api
        self._path = model_path

    # -- the Interpreter protocol (index = position: inputs first, then outputs) ------------------
    def allocate_tensors(self) -> None:
        pass  # buffers are made with the model

    def get_input_details(self) -> list[dict[str, Any]]:
        return [_detail(p, i) for i, p in enumerate(self._inputs)]

    def get_output_details(self) -> list[dict[str, Any]]:
        n = len(self._inputs)
        return [_detail(p, n + i) for i, p in enumerate(self._outputs)]

    def resize_tensor_input(self, tensor_index: int, shape: Any) -> None:
        raise ValueError("a compiled segment has a fixed batch; run larger requests row by row")

    def set_tensor(self, tensor_index: int, value: Any) -> None:
        port = self._inputs[tensor_index]
        array = np.asarray(value)
        if array.shape != port.shape:
            raise ValueError(f"input {port.name}: shape {array.shape}, expected {port.shape}")
        np.copyto(port.array, array, casting="same_kind")

    def invoke(self) -> None:
        lib = self._api.lib
        status = lib.LiteRtRunCompiledModel(
            self._handles["compiled"], 0, len(self._inputs), self._in, len(self._outputs), self._out
        )
        if status != 0:
            raise RuntimeError(f"LiteRT run of {self._path.name}: status {status}")

    def get_tensor(self, tensor_index: int) -> Any:
        return self._outputs[tensor_index - len(self._inputs)].array.copy()

    def close(self) -> None:
        """Destroy the compiled model now (otherwise when the last reference goes)."""
        self._finalizer()


def _detail(port: _Port, index: int) -> dict[str, Any]:
    shape = np.array(port.shape, dtype=np.int32)
    return {
        "name": port.name,
        "index": index,
        "dtype": port.dtype,
        "shape": shape,
        "shape_signature": shape.copy(),  # fixed: the executor must not resize it
        "quantization": (0.0, 0),
    }


def compile_resident(model_path: Path, threads: int) -> CompiledSegment | None:
    """``model_path`` compiled by LiteRT for XNNPACK, no weight cache: how a resident segment runs
    on ``litert`` without the wheel's Python interpreter extension, whose pages and state cost
    about 6.5 MB of RSS (docs/runtime.md, "Memory"). None when the interpreter should run it: a
    model with a quantized port or a dynamic batch (the interpreter resizes its batch to run many
    requests in one invoke), or a LiteRT whose C API this module cannot use."""
    try:
        _api()
    except BackendUnavailable:
        return None
    try:
        with native_info_dropped():  # "INFO: Created TensorFlow Lite XNNPACK delegate" at the first compile
            return CompiledSegment(model_path, None, threads, fixed_batch_only=True)
    except NotCompilable:
        return None
    except RuntimeError as exc:
        raise BackendUnavailable(f"litert: cannot load {model_path}: {exc}") from exc
