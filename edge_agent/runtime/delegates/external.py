"""Any TFLite external delegate library (NXP VX, Arm Ethos-U, a GPU delegate...) with its options.

The library must export ``tflite_plugin_create_delegate`` / ``tflite_plugin_destroy_delegate``.
"""

from __future__ import annotations

import os
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from edge_agent.errors import DelegateUnavailable
from edge_agent.runtime.backend import Backend
from edge_agent.runtime.bundle import Bundle
from edge_agent.runtime.delegates.base import DelegateSetup, stringify_options

__all__ = ["ExternalConfig", "prepare"]


class ExternalConfig(BaseModel):
    """``{kind: external, library: /usr/lib/libvx_delegate.so, options: {...}}``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["external"] = "external"
    name: str | None = Field(default=None, description="label in stats (default: the library's file name)")
    library: str = Field(min_length=1, description="path or soname of the delegate library")
    options: dict[str, str | int | float | bool] = Field(
        default_factory=dict, description="key/value options passed to tflite_plugin_create_delegate"
    )
    variant: str = Field(default="default", min_length=1, description="bundle variant this delegate runs")


def prepare(config: ExternalConfig, backend: Backend, bundle: Bundle, name: str) -> DelegateSetup:
    if os.sep in config.library and not os.path.exists(config.library):
        raise DelegateUnavailable(f"delegate library {config.library} does not exist")
    if not bundle.has_variant(config.variant):
        raise DelegateUnavailable(f"bundle {bundle.model_id} has no {config.variant!r} variant")
    delegate = backend.load_delegate(config.library, stringify_options(config.options))
    return DelegateSetup(
        name=name,
        kind="external",
        variant=config.variant,
        delegates=(delegate,),
        details={"library": config.library, "options": sorted(config.options)},
    )
