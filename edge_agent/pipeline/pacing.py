"""The pipeline's side of the CPU quota (``runtime.cpu.quota``): interactive vs batch work.

Transcripts are interactive: they run at once, and while one is in flight batch work yields
(in flight: from its admission by the pipeline, :meth:`CpuPacer.enter`, until its result is
handed to the transport, :meth:`CpuPacer.leave`; and while it is recognized, :meth:`interactive`).
Log batches are batch work: :meth:`CpuPacer.pace` runs before each chunk and waits while
interactive work is in flight (at most ``max_yield_s`` per call) or the process is over its
quota. The model's batching queue asks the same governor before background model batches; the
pacer never holds the governor's lock while it waits, so a waiting log worker cannot hold up a
transcript anywhere.

The pipeline never imports the runtime: the governor is reached through :class:`GovernorLike`
(``edge_agent.runtime.quota.CpuGovernor`` fits it).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any, Protocol

__all__ = ["CpuPacer", "GovernorLike"]


class GovernorLike(Protocol):
    quota: float

    def wait_needed(self) -> float: ...
    def charge_wait(self, seconds: float) -> None: ...
    def interactive(self) -> AbstractContextManager[None]: ...
    def stats(self) -> dict[str, float]: ...


class CpuPacer:
    """Marks interactive work and paces batch work under ``governor`` (None: no quota, no waits)."""

    def __init__(
        self, governor: GovernorLike | None, *, max_step_s: float = 0.05, max_yield_s: float = 0.5
    ) -> None:
        self.governor = governor
        self._step = max_step_s
        self._max_yield = max_yield_s
        self._cv = threading.Condition()
        self._interactive = 0
        self.paced_s = 0.0
        self.paces = 0

    @contextlib.contextmanager
    def interactive(self) -> Iterator[None]:
        """Interactive work in flight: never waits; batch work waits until it is done."""
        if self.governor is None:
            yield
            return
        with self._cv:
            self._interactive += 1
        try:
            with self.governor.interactive():
                yield
        finally:
            with self._cv:
                self._interactive -= 1
                self._cv.notify_all()

    def enter(self) -> None:
        """An interactive input was admitted (it is queued, run and published from now on): batch
        work yields from its next :meth:`pace` until :meth:`leave`. Without a quota: nothing."""
        if self.governor is None:
            return
        with self._cv:
            self._interactive += 1

    def leave(self) -> None:
        if self.governor is None:
            return
        with self._cv:
            self._interactive -= 1
            self._cv.notify_all()

    def pace(self) -> float:
        """Before a unit of batch work: wait while interactive work runs or the quota is spent.
        Returns the seconds waited."""
        governor = self.governor
        if governor is None:
            return 0.0
        started = time.monotonic()
        yield_until = started + self._max_yield
        while True:
            with self._cv:
                # never more than max_yield_s per call: a stream of transcripts slows log work
                # down, it cannot stop it
                while self._interactive and (left := yield_until - time.monotonic()) > 0:
                    self._cv.wait(min(self._step, left))
            wait = governor.wait_needed()
            if wait <= 0:
                break
            time.sleep(min(wait, self._step))
        waited = time.monotonic() - started
        if waited > 0:
            governor.charge_wait(waited)
        self.paced_s += waited
        self.paces += 1
        return waited

    def stats(self) -> dict[str, Any] | None:
        """The governor's figures plus the pipeline's own waits (None without a quota)."""
        if self.governor is None:
            return None
        return {**self.governor.stats(), "log_paced_s": round(self.paced_s, 3), "log_paces": self.paces}
