"""Measure several students as one: their outputs averaged, inside any bench script.

Usage (a measurement, not a runtime feature)::

    EDGE_AGENT_ENSEMBLE="/work/b42/B=/work/b43/B,/work/b44/B" PYTHONPATH=bench/ensemble \\
        .venv/bin/python bench/ship_check.py /work/b42/B /work/b43/B --target "SGD in scope" ...

Python imports ``sitecustomize`` at start-up from ``PYTHONPATH``, so this file reaches every
script ``ship_check.py`` starts. ``EDGE_AGENT_ENSEMBLE`` maps a primary bundle to the others
(``PRIMARY=OTHER,OTHER``; several mappings separated by ``;``): whenever a ``Model`` is opened on
the primary, the others are opened beside it, and every batch the primary's graphs run goes
through the others too; intent, slot and log logits and the sentence embedding are averaged
(``run_intent_outputs`` makes the embedding unit length again). The primary's tokenizer,
calibration and labels are used, so the bundles must share a tokenizer (students of one set of
stages do; this is checked). Other bundles, such as the one a script compares against, run as
they are.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def _mapping(spec: str) -> dict[Path, list[Path]]:
    out: dict[Path, list[Path]] = {}
    for part in filter(None, (p.strip() for p in spec.split(";"))):
        primary, _, others = part.partition("=")
        out[Path(primary).resolve()] = [Path(o).resolve() for o in others.split(",") if o]
    return out


def _install(spec: str) -> None:
    import numpy as np

    from edge_agent.errors import BundleError
    from edge_agent.runtime import model as model_mod
    from edge_agent.runtime.bundle import load_bundle

    members = _mapping(spec)
    original_init = model_mod.Model.__init__
    original_run = model_mod.Model._run_batch

    def init(self: Any, bundle: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, bundle, *args, **kwargs)
        self._ensemble = []
        for other in members.get(Path(bundle.path).resolve(), []):
            ob = load_bundle(other)
            if ob.tokenizer_path.read_bytes() != bundle.tokenizer_path.read_bytes():
                raise BundleError(f"{other}: another tokenizer than {bundle.path}'s; cannot average")
            tasks = kwargs.get("tasks", ("intents", "logs"))
            self._ensemble.append(model_mod.Model(ob, tasks=tasks))

    def run_batch(self: Any, task: str, ids: Any, names: tuple[str, ...]) -> list[Any]:
        outs = original_run(self, task, ids, names)
        extra = [original_run(m, task, ids, names) for m in getattr(self, "_ensemble", [])]
        if not extra:
            return outs
        return [np.mean([o, *(e[i] for e in extra)], axis=0).astype(np.float32) for i, o in enumerate(outs)]

    model_mod.Model.__init__ = init  # type: ignore[method-assign]
    model_mod.Model._run_batch = run_batch  # type: ignore[method-assign]


if os.environ.get("EDGE_AGENT_ENSEMBLE"):
    _install(os.environ["EDGE_AGENT_ENSEMBLE"])
