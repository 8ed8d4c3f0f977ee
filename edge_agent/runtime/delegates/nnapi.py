"""Android's Neural Networks API, where the platform provides it.

The Python TFLite wheels carry no NNAPI delegate of their own, so this loads an NNAPI delegate
plugin library (the external-delegate ABI) on a system that has ``libneuralnetworks.so``.
Elsewhere it is unavailable, with that reason recorded.
"""

from __future__ import annotations

import os
import sys
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from edge_agent.errors import DelegateUnavailable
from edge_agent.runtime.backend import Backend
from edge_agent.runtime.bundle import Bundle
from edge_agent.runtime.delegates.base import DelegateSetup, stringify_options

__all__ = ["NNAPI_RUNTIME_PATHS", "NnapiConfig", "platform_has_nnapi", "prepare"]

NNAPI_RUNTIME_PATHS: tuple[str, ...] = (
    "/system/lib64/libneuralnetworks.so",
    "/system/lib/libneuralnetworks.so",
)


class NnapiConfig(BaseModel):
    """``{kind: nnapi, library: libnnapi_delegate_plugin.so, accelerator: null}``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["nnapi"] = "nnapi"
    name: str | None = Field(default=None, description="label in stats (default: nnapi)")
    library: str | None = Field(default=None, min_length=1, description="NNAPI delegate plugin library")
    accelerator: str | None = Field(
        default=None, min_length=1, description="NNAPI device name (default: any)"
    )
    execution_preference: Literal["low_power", "fast_single_answer", "sustained_speed"] = Field(
        default="fast_single_answer", description="what NNAPI optimizes for"
    )
    allow_fp16: bool = Field(default=False, description="let NNAPI run float32 work in float16")


def platform_has_nnapi(paths: tuple[str, ...] = NNAPI_RUNTIME_PATHS) -> bool:
    return any(os.path.exists(p) for p in paths)


def prepare(config: NnapiConfig, backend: Backend, bundle: Bundle, name: str) -> DelegateSetup:
    del bundle
    if not platform_has_nnapi():
        raise DelegateUnavailable(
            f"NNAPI is an Android API and this platform ({sys.platform}) has no libneuralnetworks.so"
        )
    if config.library is None:
        raise DelegateUnavailable("NNAPI present, but no delegate plugin configured (set library)")
    options: dict[str, str | int | float | bool] = {
        "execution_preference": config.execution_preference,
        "allow_fp16": config.allow_fp16,
    }
    if config.accelerator:
        options["accelerator_name"] = config.accelerator
    delegate = backend.load_delegate(config.library, stringify_options(options))
    return DelegateSetup(name=name, kind="nnapi", delegates=(delegate,), details={"library": config.library})
