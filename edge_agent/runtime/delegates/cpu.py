"""The CPU backend: TFLite's built-in kernels, with or without the XNNPACK delegate."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import structlog
from pydantic import BaseModel, ConfigDict, Field

from edge_agent.runtime.backend import Backend
from edge_agent.runtime.bundle import Bundle
from edge_agent.runtime.delegates.base import DelegateSetup
from edge_agent.runtime.weight_cache import WeightCache

__all__ = ["CpuConfig", "prepare"]

_log = structlog.get_logger(__name__)


class CpuConfig(BaseModel):
    """``{kind: cpu, xnnpack: true, threads: null}``: always available; the end of every chain."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["cpu"] = "cpu"
    name: str | None = Field(default=None, description="label in stats (default: cpu)")
    xnnpack: bool = Field(
        default=True, description="use the XNNPACK delegate (faster int8 kernels, more RAM)"
    )
    threads: int | None = Field(
        default=None, ge=1, le=64, description="interpreter threads (default: runtime.threads)"
    )
    xnnpack_weight_cache: Path | None = Field(
        default=None,
        description="directory for XNNPACK's packed weights (ai-edge-litert): a streamed segment "
        "maps them instead of packing its weights again at every load",
    )


def prepare(config: CpuConfig, backend: Backend, bundle: Bundle, name: str) -> DelegateSetup:
    details: dict[str, object] = {"xnnpack": config.xnnpack}
    cache = None
    if config.xnnpack_weight_cache is not None and config.xnnpack:
        if backend.name == "litert":
            cache = WeightCache(bundle, config.xnnpack_weight_cache, backend.version)
            details["weight_cache"] = str(config.xnnpack_weight_cache)
        else:  # the end of every chain stays available: it runs without the cache
            details["weight_cache"] = f"unused: {backend.name} has no XNNPACK weight cache"
            _log.warning("weight_cache_unused", backend=backend.name, entry=name)
    return DelegateSetup(
        name=name,
        kind="cpu",
        xnnpack=config.xnnpack,
        threads=config.threads,
        details=details,
        weight_cache=cache,
    )
