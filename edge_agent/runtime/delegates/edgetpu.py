"""The Coral EdgeTPU backend: ``libedgetpu.so.1`` and the bundle's ``edgetpu`` variant."""

from __future__ import annotations

import ctypes
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from edge_agent.errors import DelegateUnavailable
from edge_agent.runtime.backend import Backend
from edge_agent.runtime.bundle import Bundle
from edge_agent.runtime.delegates.base import DelegateSetup

__all__ = ["EdgeTpuConfig", "prepare"]


class EdgeTpuConfig(BaseModel):
    """``{kind: edgetpu, device: usb}``. ``device`` is ``usb``, ``pci``, ``usb:N`` or ``pci:N``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["edgetpu"] = "edgetpu"
    name: str | None = Field(default=None, description="label in stats (default: edgetpu)")
    library: str = Field(default="libedgetpu.so.1", min_length=1, description="EdgeTPU runtime library")
    device: str | None = Field(
        default=None,
        pattern=r"^(usb|pci)(:\d+)?$",
        description="which chip: usb, pci, usb:N, pci:N (default: first)",
    )
    variant: str = Field(
        default="edgetpu", min_length=1, description="bundle variant compiled for the EdgeTPU"
    )


def prepare(config: EdgeTpuConfig, backend: Backend, bundle: Bundle, name: str) -> DelegateSetup:
    options = {"device": config.device} if config.device else {}
    try:
        ctypes.CDLL(config.library)  # a missing runtime is reported without a half-built Delegate
        delegate = backend.load_delegate(config.library, options)
    except OSError as exc:
        raise DelegateUnavailable(
            f"EdgeTPU runtime {config.library} is not installed (install libedgetpu1-std or -max): {exc}"
        ) from exc
    except DelegateUnavailable as exc:
        raise DelegateUnavailable(
            f"EdgeTPU runtime {config.library} found, but no Coral {config.device or 'device'} "
            f"could be opened (not attached, or in use): {exc}"
        ) from exc
    if not bundle.has_variant(config.variant):
        raise DelegateUnavailable(
            f"bundle {bundle.model_id} has no {config.variant!r} variant "
            "(segments compiled with edgetpu_compiler)"
        )
    return DelegateSetup(
        name=name,
        kind="edgetpu",
        variant=config.variant,
        delegates=(delegate,),
        details={"library": config.library, "device": config.device},
    )
