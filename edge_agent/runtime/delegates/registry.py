"""The tagged union of delegate configs and the dispatch from a config to its module."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from edge_agent.runtime.backend import Backend
from edge_agent.runtime.bundle import Bundle
from edge_agent.runtime.delegates import cpu, edgetpu, external, nnapi
from edge_agent.runtime.delegates.base import DelegateSetup

__all__ = ["DelegateConfig", "prepare"]

DelegateConfig = Annotated[
    cpu.CpuConfig | edgetpu.EdgeTpuConfig | external.ExternalConfig | nnapi.NnapiConfig,
    Field(discriminator="kind"),
]


def prepare(config: DelegateConfig, backend: Backend, bundle: Bundle, name: str) -> DelegateSetup:
    """Load what ``config`` needs; raises DelegateUnavailable with the reason when it cannot."""
    if isinstance(config, cpu.CpuConfig):
        return cpu.prepare(config, backend, bundle, name)
    if isinstance(config, edgetpu.EdgeTpuConfig):
        return edgetpu.prepare(config, backend, bundle, name)
    if isinstance(config, external.ExternalConfig):
        return external.prepare(config, backend, bundle, name)
    return nnapi.prepare(config, backend, bundle, name)
