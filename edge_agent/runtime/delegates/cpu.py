"""The CPU backend: TFLite's built-in kernels, with or without the XNNPACK delegate."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from edge_agent.runtime.backend import Backend
from edge_agent.runtime.bundle import Bundle
from edge_agent.runtime.delegates.base import DelegateSetup

__all__ = ["CpuConfig", "prepare"]


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


def prepare(config: CpuConfig, backend: Backend, bundle: Bundle, name: str) -> DelegateSetup:
    del backend, bundle  # nothing to load
    return DelegateSetup(
        name=name,
        kind="cpu",
        xnnpack=config.xnnpack,
        threads=config.threads,
        details={"xnnpack": config.xnnpack},
    )
