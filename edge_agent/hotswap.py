"""Bundle hot-swap: a bundle installed at run time warms up on its own runtime, then serves.

The installer (``runtime.install``) verifies a new bundle and calls ``BundleSwap.warm_up``: the
bundle gets its own runtime chain (same ``runtime`` config and CPU governor) and is checked with
real inputs. After the atomic switch of the active slot, ``activate`` hands its model to the intent
and log handlers (from their next batch on) and closes the previous model's runtime.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import structlog

from edge_agent.config import Config
from edge_agent.engines import RuntimeLike, open_model
from edge_agent.pipeline.handlers import IntentHandler, LogHandler, RecognizerLike
from edge_agent.pipeline.pacing import GovernorLike

__all__ = ["BundleSwap"]

_log = structlog.get_logger("edge_agent.hotswap")


class BundleSwap:
    """Warm-up and activation of installed bundles. ``serve(model)`` builds the recognizer the
    handlers use for a model (home and runtime control applied); ``runtime`` is the one serving."""

    def __init__(
        self,
        config: Config,
        governor: GovernorLike | None,
        runtime: RuntimeLike | None,
        intents: IntentHandler,
        logs: LogHandler | None,
        serve: Callable[[Any], RecognizerLike],
    ) -> None:
        self.config = config
        self.governor = governor
        self.runtime = runtime
        self.intents = intents
        self.logs = logs
        self.serve = serve
        self._staged: dict[int, RuntimeLike] = {}  # id(model) -> its runtime, warmed up, not yet active
        self._staged_lock = threading.Lock()

    def warm_up(self, bundle: Any) -> Any:
        """Installer warm-up: the new bundle on its own runtime chain, checked with real inputs."""
        from edge_agent.runtime.install import check_outputs

        with self._staged_lock:  # installs run one at a time: anything still staged was refused
            stale, self._staged = list(self._staged.values()), {}
        for runtime in stale:
            runtime.close()
        runtime, model = open_model(bundle, self.config, self.governor)
        try:
            check_outputs(bundle, model)
        except BaseException:
            runtime.close()
            raise
        with self._staged_lock:
            self._staged[id(model)] = runtime
        return model

    def activate(self, result: Any) -> None:
        """A bundle passed verification and warm-up: serve with its model from the next batch on
        (intents and log labels), then release the previous model's runtime."""
        self.intents.swap(self.serve(result.model), result.bundle.model_id)
        logs_swapped = self.logs.swap_model(result.model) if self.logs is not None else False
        with self._staged_lock:
            runtime = self._staged.pop(id(result.model), None)
        previous = self.runtime
        if runtime is not None:
            self.runtime = runtime
            if previous is not None:
                previous.close()  # the handlers no longer reach it: both swaps took their locks
        _log.info(
            "app.bundle_activated",
            model=result.bundle.model_id,
            slot=result.slot,
            key_id=result.key_id,
            logs_swapped=logs_swapped,
        )

    def close(self) -> None:
        """Release the serving runtime (shutdown)."""
        if self.runtime is not None:
            self.runtime.close()
