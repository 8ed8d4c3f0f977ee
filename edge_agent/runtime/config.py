"""``RuntimeConfig``: the ``runtime:`` section of the agent config (backend, delegates, residency, CPU).

Example (YAML)::

    runtime:
      backend: auto
      delegates:                 # preference order; the first that loads and passes warm-up runs
        - {kind: edgetpu, device: usb}
        - {kind: external, library: /usr/lib/libvx_delegate.so, options: {cache_file: /var/cache/vx}}
        - {kind: cpu, xnnpack: true}
      residency: auto            # resident | stream | auto
      weight_budget_mb: 16
      threads: 1
      cpu: {quota: 0.5, affinity: [1]}
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from edge_agent.runtime.delegates import CpuConfig, DelegateConfig

__all__ = ["CpuQuotaConfig", "Residency", "RuntimeConfig"]

Residency = Literal["resident", "stream", "auto"]


def _default_delegates() -> list[DelegateConfig]:
    return [CpuConfig()]


class CpuQuotaConfig(BaseModel):
    """CPU budget of the agent process, in cores (0.5 = half of one core on average)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    quota: float | None = Field(
        default=None, gt=0, le=1024, description="average cores the agent may use; null = no governor"
    )
    affinity: list[int] | None = Field(
        default=None, min_length=1, description="pin the process to these CPU ids"
    )
    burst_ms: int = Field(default=200, ge=0, le=60_000, description="CPU time batch work may borrow ahead")

    @model_validator(mode="after")
    def _affinity_ids(self) -> CpuQuotaConfig:
        if self.affinity is not None and any(c < 0 for c in self.affinity):
            raise ValueError("cpu.affinity holds CPU ids, which are >= 0")
        return self

    def threads_for(self, requested: int) -> int:
        """Interpreter threads that make sense under the quota (never more than ceil(quota))."""
        if self.quota is None:
            return requested
        return max(1, min(requested, math.ceil(self.quota)))


class RuntimeConfig(BaseModel):
    """How the model runs: which backend and accelerators, how weights are held, how much CPU."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    backend: Literal["auto", "tflite-runtime", "litert"] = Field(
        default="auto", description="interpreter package"
    )
    delegates: list[DelegateConfig] = Field(
        default_factory=_default_delegates,
        min_length=1,
        description="ordered preference list; each is probed at start, the first that passes runs",
    )
    residency: Residency = Field(
        default="resident", description="resident: all mapped; stream: map per use; auto"
    )
    weight_budget_mb: float | None = Field(
        default=None, gt=0, description="stream/auto: MB of weights mapped (and prefetched) at once"
    )
    prefetch: int = Field(
        default=2,
        ge=0,
        le=32,
        description="stream: segments read ahead by the reader thread (0: none, and none built ahead)",
    )
    drop_page_cache: bool = Field(
        default=False, description="stream: evict released segments from the page cache"
    )
    stream_heap: Literal["return", "reuse"] = Field(
        default="return",
        description="stream: return a released segment's large buffers to the OS (lowest peak RSS) "
        "or reuse them for the next segment (faster with XNNPACK, which repacks weights per load)",
    )
    max_batch: int = Field(
        default=8, ge=1, le=256, description="queued requests pushed through a loaded segment together"
    )
    invoke_rows: int | None = Field(
        default=None, ge=1, le=4096, description="rows per invoke inside a batch (bounds activation RAM)"
    )
    threads: int = Field(default=1, ge=1, le=64, description="interpreter threads (capped by cpu.quota)")
    probe_tolerance: float = Field(
        default=0.05,
        gt=0,
        le=1,
        description="warm-up outputs may differ from CPU golden by this share of their range",
    )
    reprobe_interval_s: float = Field(
        default=60.0, gt=0, description="how often a failed better backend is probed again to switch back"
    )
    cpu: CpuQuotaConfig = Field(default_factory=CpuQuotaConfig)

    @model_validator(mode="after")
    def _budget_needed(self) -> RuntimeConfig:
        if self.residency == "auto" and self.weight_budget_mb is None:
            raise ValueError(
                "runtime.residency 'auto' needs runtime.weight_budget_mb (MB of weights to keep)"
            )
        return self

    @property
    def effective_threads(self) -> int:
        return self.cpu.threads_for(self.threads)
