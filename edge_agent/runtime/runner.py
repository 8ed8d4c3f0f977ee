"""One segment's interpreter with its ports resolved by value name: what the resident chain
(``model.SegmentChain``) and the segment executor (``segments.SegmentExecutor``) both run.

Quantizes int8 ports at the boundary, so callers feed and read float values by manifest name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from edge_agent.errors import BundleError, InferenceError
from edge_agent.runtime.backend import Interpreter
from edge_agent.runtime.bundle import SegmentSpec

__all__ = ["SegmentRunner"]


@dataclass
class _Port:
    name: str  # manifest value name (e.g. "h1")
    index: int  # interpreter tensor index
    dtype: Any
    scale: float
    zero_point: int


class SegmentRunner:
    """One segment's interpreter with its ports resolved; quantizes int8 ports at the boundary."""

    def __init__(self, spec: SegmentSpec, interpreter: Interpreter) -> None:
        self.spec = spec
        self._interp = interpreter
        self.inputs = _ports(spec.name, spec.inputs, interpreter.get_input_details())
        self.outputs = _ports(spec.name, spec.outputs, interpreter.get_output_details())

    def run(self, env: dict[str, npt.NDArray[Any]]) -> None:
        for port in self.inputs:
            self._interp.set_tensor(port.index, _to_port(env[port.name], port))
        try:
            self._interp.invoke()
        except RuntimeError as exc:
            raise InferenceError(f"segment {self.spec.name}: invoke failed: {exc}") from exc
        for port in self.outputs:
            env[port.name] = _from_port(self._interp.get_tensor(port.index), port)


def _ports(segment: str, specs: Sequence[dict[str, Any]], details: list[dict[str, Any]]) -> list[_Port]:
    by_name = {d["name"]: d for d in details}
    ports = []
    for spec in specs:
        tensor = spec.get("tensor", spec["name"])
        detail = by_name.get(tensor)
        if detail is None:
            raise BundleError(f"segment {segment}: model has no tensor {tensor!r} for {spec['name']!r}")
        scale, zero = detail.get("quantization", (0.0, 0))
        ports.append(_Port(spec["name"], int(detail["index"]), detail["dtype"], float(scale), int(zero)))
    return ports


def _to_port(value: npt.NDArray[Any], port: _Port) -> npt.NDArray[Any]:
    if port.dtype in (np.int8, np.uint8) and value.dtype == np.float32 and port.scale:
        info = np.iinfo(port.dtype)
        q = np.round(value / port.scale) + port.zero_point
        quantized: npt.NDArray[Any] = np.clip(q, info.min, info.max).astype(port.dtype)
        return quantized
    return value.astype(port.dtype, copy=False)


def _from_port(value: npt.NDArray[Any], port: _Port) -> npt.NDArray[Any]:
    if port.dtype in (np.int8, np.uint8) and port.scale:
        out: npt.NDArray[Any] = ((value.astype(np.float32) - port.zero_point) * port.scale).astype(np.float32)
        return out
    return np.asarray(value)
