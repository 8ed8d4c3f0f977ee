"""What a prepared backend contributes to interpreters, and the interpreter factory that uses it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from edge_agent.runtime.backend import Backend, Interpreter
from edge_agent.runtime.weight_cache import WeightCache

__all__ = ["DelegateSetup", "make_interpreter", "setup_name", "stringify_options"]


@dataclass(frozen=True)
class DelegateSetup:
    """A loaded backend option: the delegates to attach, the bundle variant to run, CPU settings.

    ``delegates`` hold the foreign delegate objects; keeping the setup alive keeps them loaded.
    """

    name: str
    kind: str
    variant: str = "default"
    delegates: tuple[object, ...] = ()
    xnnpack: bool = True
    threads: int | None = None
    details: dict[str, Any] = field(default_factory=dict)
    weight_cache: WeightCache | None = None  # XNNPACK's packed weights in files (LiteRT, cpu)


def make_interpreter(
    backend: Backend, model_path: str | Path, setup: DelegateSetup, threads: int
) -> Interpreter:
    """An interpreter for ``model_path`` with the setup's delegates (tensors allocated).

    With ``xnnpack`` off the built-in kernels run without the default XNNPACK delegate (the CPU
    reference used for golden outputs).
    """
    return backend.make_interpreter(
        model_path,
        setup.threads or threads,
        setup.delegates,
        xnnpack=setup.xnnpack,
        weight_cache=setup.weight_cache,
    )


def stringify_options(options: dict[str, str | int | float | bool]) -> dict[str, str]:
    """Delegate plugins take string options; booleans become ``true``/``false``."""
    return {k: (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in options.items()}


def setup_name(kind: str, label: str | None, taken: Sequence[str]) -> str:
    """A unique, readable name for a preference-list entry (``external``, ``external#2``...)."""
    base = label or kind
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}#{n}"
    return name
