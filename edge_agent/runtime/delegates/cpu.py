"""The CPU backend: TFLite's built-in kernels, with or without the XNNPACK delegate."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import structlog
from pydantic import BaseModel, ConfigDict, Field, field_validator

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
    xnnpack_weight_cache: Literal["auto", "off"] | Path | None = Field(
        default="auto",
        description="XNNPACK's packed weights kept in files (ai-edge-litert), so a streamed segment "
        "maps them instead of packing its weights again at every load: auto (on when segments "
        "stream on litert, under the cache directory), off (or null), or a directory",
    )

    @field_validator("xnnpack_weight_cache", mode="before")
    @classmethod
    def _unquoted_off(cls, value: Any) -> Any:
        return "off" if value is False else value  # YAML reads an unquoted `off` as false


def prepare(config: CpuConfig, backend: Backend, bundle: Bundle, name: str) -> DelegateSetup:
    """``xnnpack_weight_cache: auto`` is resolved by the chain, which knows the residency
    (``chain.resolve_weight_cache``); here it counts as off, like ``off`` and null."""
    details: dict[str, object] = {"xnnpack": config.xnnpack}
    cache = None
    directory = config.xnnpack_weight_cache
    if isinstance(directory, Path) and config.xnnpack:
        if backend.name == "litert":
            cache = WeightCache(bundle, directory, backend.version)
            details["weight_cache"] = str(directory)
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
