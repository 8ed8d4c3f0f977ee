"""Accelerator backends, one module each, with their config models.

Each module has a pydantic config model (``kind`` tells them apart; unknown keys are refused)
and ``prepare(config, backend, bundle) -> DelegateSetup``, which loads what the backend needs or
raises :class:`~edge_agent.errors.DelegateUnavailable` with the reason. The ordered preference
list and the fallback between them live in :mod:`edge_agent.runtime.chain`.
"""

from __future__ import annotations

from edge_agent.runtime.delegates.base import DelegateSetup, make_interpreter, setup_name
from edge_agent.runtime.delegates.cpu import CpuConfig
from edge_agent.runtime.delegates.edgetpu import EdgeTpuConfig
from edge_agent.runtime.delegates.external import ExternalConfig
from edge_agent.runtime.delegates.nnapi import NnapiConfig
from edge_agent.runtime.delegates.registry import DelegateConfig, prepare

__all__ = [
    "CpuConfig",
    "DelegateConfig",
    "DelegateSetup",
    "EdgeTpuConfig",
    "ExternalConfig",
    "NnapiConfig",
    "make_interpreter",
    "prepare",
    "setup_name",
]
