"""One small interface over the two TFLite interpreters: ``tflite_runtime`` and ``ai_edge_litert``.

``load_backend("auto")`` picks whichever is installed (LiteRT first, then tflite-runtime);
naming one explicitly fails with :class:`BackendUnavailable` saying why. Import errors from the
foreign packages are translated here and nowhere else.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol

from edge_agent.errors import BackendUnavailable, DelegateUnavailable
from edge_agent.runtime.native_log import native_info_dropped, quiet_minimal_logger

if TYPE_CHECKING:
    from edge_agent.runtime.weight_cache import WeightCache

__all__ = [
    "BACKEND_NAMES",
    "Backend",
    "Interpreter",
    "available_backends",
    "load_backend",
]

# name -> module that provides Interpreter and load_delegate
_MODULES: dict[str, str] = {
    "litert": "ai_edge_litert.interpreter",
    "tflite-runtime": "tflite_runtime.interpreter",
}
BACKEND_NAMES: tuple[str, ...] = ("auto", *_MODULES)
_AUTO_ORDER: tuple[str, ...] = ("litert", "tflite-runtime")
# name -> the extension whose TFLite logger can be set to warnings (native_log.py); a backend
# whose logger cannot be set has its INFO lines dropped around each call that may log
_LOGGER_EXTENSIONS: dict[str, str] = {
    "tflite-runtime": "tflite_runtime._pywrap_tensorflow_interpreter_wrapper",
}
_quieted: dict[str, bool] = {}


class Interpreter(Protocol):
    """The part of the TFLite interpreter API the runtime uses (both packages provide it)."""

    def allocate_tensors(self) -> None: ...
    def get_input_details(self) -> list[dict[str, Any]]: ...
    def get_output_details(self) -> list[dict[str, Any]]: ...
    def set_tensor(self, tensor_index: int, value: Any) -> None: ...
    def get_tensor(self, tensor_index: int) -> Any: ...
    def invoke(self) -> None: ...


@dataclass(frozen=True)
class Backend:
    """An installed interpreter package. ``version`` is the package version string if known.

    The package's interpreter extension is imported at first use (``module``), not when the
    backend is chosen: a process that only runs segments compiled through LiteRT's C API (its
    CPU path, with or without the XNNPACK weight cache, ``litert_c.py``) never maps it
    (ai-edge-litert 2.3's keeps about 7 MB resident). An extension that fails to import is
    reported then, as :class:`BackendUnavailable`."""

    name: str
    version: str

    @property
    def module(self) -> ModuleType:
        return _import(self.name)

    def make_interpreter(
        self,
        model_path: str | Path,
        num_threads: int = 1,
        delegates: Sequence[object] = (),
        *,
        xnnpack: bool = True,
        weight_cache: WeightCache | None = None,
    ) -> Interpreter:
        """An interpreter over ``model_path`` (memory-mapped by TFLite), tensors allocated.

        ``xnnpack=False`` runs the built-in kernels without the default XNNPACK delegate: no packed
        copy of the weights (they are read in place from the mapped file), slower int8 GEMMs.
        ``weight_cache`` (LiteRT, XNNPACK, no delegates): XNNPACK's packed weights live in the
        cache's file for this segment, written at the first load and mapped at later ones. LiteRT
        with XNNPACK and no delegates compiles through its C API without the cache too
        (``litert_c.compile_resident``), unless the model has a quantized port or a dynamic
        batch: the package's interpreter extension is then never imported."""
        if weight_cache is not None and xnnpack and not delegates:
            path = Path(model_path)
            return self._compiled(path, weight_cache.file_for(path), num_threads)
        if self.name == "litert" and xnnpack and not delegates:
            from edge_agent.runtime.litert_c import compile_resident

            compiled = compile_resident(Path(model_path), max(1, int(num_threads)))
            if compiled is not None:
                return compiled
        kwargs: dict[str, Any] = {}
        if not xnnpack:
            resolver = self.module.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
            kwargs["experimental_op_resolver_type"] = resolver
        try:
            with self._native_log():
                interp: Interpreter = self.module.Interpreter(
                    model_path=str(model_path),
                    num_threads=max(1, int(num_threads)),
                    experimental_delegates=list(delegates) or None,
                    **kwargs,
                )
                interp.allocate_tensors()  # applies the default XNNPACK delegate, which logs
        except (ValueError, RuntimeError) as exc:
            raise BackendUnavailable(f"{self.name}: cannot load {model_path}: {exc}") from exc
        return interp

    def _native_log(self) -> contextlib.AbstractContextManager[None]:
        """Around a call that may log natively: nothing once this backend's logger is at warnings,
        else its INFO lines dropped from fd 2 (``native_log.py``)."""
        if self.name not in _quieted:
            self.module  # noqa: B018  # imported first: it loads the extension looked up below
            extension = sys.modules.get(_LOGGER_EXTENSIONS.get(self.name, ""))
            _quieted[self.name] = extension is not None and quiet_minimal_logger(extension)
        return contextlib.nullcontext() if _quieted[self.name] else native_info_dropped()

    def _compiled(self, model_path: Path, weight_cache: Path, num_threads: int) -> Interpreter:
        if self.name != "litert":
            raise BackendUnavailable(
                f"{self.name}: no XNNPACK weight cache (ai-edge-litert has one); unset xnnpack_weight_cache"
            )
        from edge_agent.runtime.weight_cache import compile_segment

        return compile_segment(model_path, weight_cache, max(1, int(num_threads)))

    def load_delegate(self, library: str, options: dict[str, str] | None = None) -> object:
        """Load an external delegate shared library; failures become DelegateUnavailable."""
        try:
            with self._native_log():
                return self.module.load_delegate(library, options or {})
        except (ValueError, OSError, RuntimeError) as exc:
            raise DelegateUnavailable(f"{self.name}: cannot load delegate {library}: {exc}") from exc


def available_backends() -> list[str]:
    """Concrete backend names whose package imports on this machine."""
    found = []
    for name in _AUTO_ORDER:
        try:
            _import(name)
        except BackendUnavailable:
            continue
        found.append(name)
    return found


def load_backend(name: str = "auto") -> Backend:
    """The named backend, or the first installed one for ``auto`` (installed: its package imports;
    its interpreter extension is imported at first use)."""
    if name not in BACKEND_NAMES:
        raise BackendUnavailable(f"unknown backend {name!r}; choose one of {', '.join(BACKEND_NAMES)}")
    if name != "auto":
        return _make(name)
    reasons = []
    for candidate in _AUTO_ORDER:
        try:
            return _make(candidate)
        except BackendUnavailable as exc:
            reasons.append(str(exc))
    raise BackendUnavailable("no TFLite backend installed: " + "; ".join(reasons))


def _make(name: str) -> Backend:
    try:
        spec = importlib.util.find_spec(_MODULES[name])
    except ImportError as exc:  # the package itself is missing or fails to import
        raise BackendUnavailable(f"backend {name!r} is not usable: {exc}") from exc
    if spec is None:
        raise BackendUnavailable(f"backend {name!r} is not usable: no module {_MODULES[name]}")
    return Backend(name, _version(name))


def _import(name: str) -> ModuleType:
    try:
        return importlib.import_module(_MODULES[name])
    except ImportError as exc:  # includes a numpy ABI mismatch surfacing as ImportError
        raise BackendUnavailable(f"backend {name!r} is not usable: {exc}") from exc


def _version(name: str) -> str:
    """The package's own ``__version__`` (its ``__init__`` is imported, not its extension); the
    installed distribution's metadata only where a package lacks it (reading metadata costs ~1.6 MB
    RSS and start-up time)."""
    package = importlib.import_module(_MODULES[name].split(".")[0])
    version = getattr(package, "__version__", None)
    if isinstance(version, str):
        return version
    from importlib import metadata

    dist = {"litert": "ai-edge-litert", "tflite-runtime": "tflite-runtime"}[name]
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "unknown"
