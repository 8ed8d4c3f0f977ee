"""The service's custom intents: ``intents.custom_sentences`` loaded into the recognizer in service.

``CustomIntents.reload`` reads and expands the files (``edge_agent.nlu.custom``), then embeds the
examples with the serving model under the lock the intents are recognized under, and swaps the
new set in whole. It runs at start, on SIGHUP and on the control command ``reload``. A file that
cannot be used (bad YAML, a bad template, a bundle without a sentence embedding) is logged and
the intents in service stay as they were. ``bind`` loads the current set into the recognizer of a
bundle swapped in at run time (its model embeds the examples again); ``follow`` adds a recognizer
that gets every set too, on its own model (the SLA ladder's small variant), without a say in
whether a reload succeeds.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import structlog

from edge_agent.errors import EdgeAgentError

if TYPE_CHECKING:
    from edge_agent.nlu.custom import CustomIndex, CustomSentences

__all__ = ["CustomHolder", "CustomIntents"]

_log = structlog.get_logger("edge_agent.custom_intents")


class CustomHolder(Protocol):
    """A recognizer that custom sentences load into (``IntentRecognizer``)."""

    def load_custom(self, sentences: CustomSentences | None) -> CustomIndex | None: ...


class CustomIntents:
    """The configured files and the set in service. ``lock``: the one the recognizer's model is
    used under; ``on_change(names)``: called with the custom intent names after every change."""

    def __init__(
        self,
        paths: Sequence[Path],
        holder: CustomHolder | None,
        lock: threading.Lock | None = None,
        on_change: Callable[[list[str]], None] | None = None,
    ) -> None:
        self.paths = list(paths)
        self.holder = holder
        self.lock = lock or threading.Lock()
        self.on_change = on_change
        self.sentences: CustomSentences | None = None
        self.index: CustomIndex | None = None
        self.error: str | None = None  # why the last load failed (None: it did not)
        self.followers: list[CustomHolder] = []

    @property
    def names(self) -> list[str]:
        """The custom intents in service (intents named like a built-in one only teach it)."""
        return self.index.custom_names if self.index is not None else []

    def status(self) -> dict[str, Any]:
        """What is in service and the last error, for the control reply."""
        out: dict[str, Any] = {"paths": [str(p) for p in self.paths]}
        out.update(self.index.summary() if self.index is not None else {"intents": 0, "examples": 0})
        out["error"] = self.error
        return out

    def reload(self) -> Mapping[str, Any]:
        """Load the files again; raises ``EdgeAgentError`` (logged, the set in service kept)."""
        if not self.paths:
            return self.status()
        if self.holder is None:
            self.error = "custom intents need the bundle's own recognizer (these engines have none)"
            _log.warning("custom_intents.unavailable", reason=self.error)
            raise EdgeAgentError(self.error)
        from edge_agent.nlu.custom import load_custom_sentences

        start = time.perf_counter()
        try:
            sentences = load_custom_sentences(self.paths)
            with self.lock:
                index = self.holder.load_custom(sentences)
        except EdgeAgentError as exc:
            self.error = str(exc)
            _log.error(
                "custom_intents.load_failed",
                error=self.error,
                kept_intents=len(self.index.intents) if self.index is not None else 0,
            )
            raise
        self.sentences, self.index, self.error = sentences, index, None
        assert index is not None
        for follower in self.followers:
            with self.lock:
                self._load_into(follower)
        _log.info(
            "custom_intents.loaded",
            **index.summary(),
            seconds=round(time.perf_counter() - start, 3),
        )
        if self.on_change is not None:
            self.on_change(self.names)
        return self.status()

    def try_reload(self) -> None:
        """``reload`` where nobody waits for an answer (start-up, SIGHUP): errors are only logged."""
        with contextlib.suppress(EdgeAgentError):  # logged by reload; the set in service stays
            self.reload()

    def follow(self, holder: CustomHolder) -> None:
        """``holder`` recognizes the custom intents from now on, this set and every later one
        (its model must have a sentence embedding: else it goes without them, logged). It is not
        serving yet: no lock (the intent handler calls this holding it)."""
        self.followers.append(holder)
        if self.sentences is not None:
            self._load_into(holder)

    def _load_into(self, follower: CustomHolder) -> None:
        try:
            follower.load_custom(self.sentences)
        except EdgeAgentError as exc:
            _log.error("custom_intents.load_failed", error=str(exc), recognizer="small variant")

    def bind(self, holder: CustomHolder | None) -> None:
        """A new recognizer (a bundle swapped in) serves: load the current set into it. It is not
        serving yet, so no lock; a model without a sentence embedding serves without the set."""
        self.holder = holder
        if holder is None or self.sentences is None:
            return
        try:
            self.index = holder.load_custom(self.sentences)
            self.error = None
        except EdgeAgentError as exc:
            self.index, self.error = None, str(exc)
            _log.error("custom_intents.load_failed", error=self.error, kept_intents=0)
        if self.on_change is not None:
            self.on_change(self.names)
