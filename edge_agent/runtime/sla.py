"""SLA and thermal fallback: the degradation ladder (docs/sla.md).

Each task (``intents``, ``logs``) has a ladder of steps, from best to cheapest::

    normal -> short_input -> small_model -> rules_only (logs only)

``short_input`` cuts transcripts and log lines to a shorter maximum length, ``small_model`` runs the
bundle's ``small`` variant (skipped, with a log line, when the bundle has none) and ``rules_only``
labels log lines from their templates and stated levels without a model.

A :class:`Ladder` steps down one step when the p95 of its sliding latency window exceeds the budget
or the gateway is hot, and back up one step when the window is under ``budget * (1 - hysteresis)``
and the temperature under ``limit - hysteresis_c``; every step is held at least ``dwell_s``
(``recover_after_s`` before stepping up) and measured afresh: the window restarts at each switch.
:class:`Ladder` is pure (the caller passes the time and the thermal state);
:class:`SlaMonitor` adds the clock, the thermal sensor, a lock and the switch log.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from edge_agent.records.sla import DEGRADED, LADDERS, NORMAL, RULES_ONLY, SHORT_INPUT, SMALL_MODEL

__all__ = [
    "DEGRADED",
    "EMPTY_GRACE_S",
    "LADDERS",
    "NORMAL",
    "RULES_ONLY",
    "SHORT_INPUT",
    "SMALL_MODEL",
    "Ladder",
    "SlaConfig",
    "SlaMonitor",
    "Switch",
    "ThermalSensor",
    "ladder_steps",
    "p95",
]

_log = structlog.get_logger("edge_agent.sla")

DEFAULT_THERMAL = Path("/sys/class/thermal/thermal_zone0/temp")
EMPTY_GRACE_S = 5.0  # how long an empty thermal file may keep the last reading (ThermalSensor)
_KEPT_SWITCHES = 16


class SlaConfig(BaseModel):
    """The ``sla:`` section: latency budgets, the thermal limit and the ladder's hysteresis."""

    model_config = ConfigDict(extra="forbid", validate_default=True)

    enabled: bool = Field(True, description="step down the ladder under load or heat (false: never)")
    intents_p95_ms: float = Field(
        250.0, gt=0, le=600_000, description="p95 budget of transcript -> intent latency (ms)"
    )
    logs_p95_ms: float = Field(
        2000.0, gt=0, le=600_000, description="p95 budget of log batch -> processed latency (ms)"
    )
    window: int = Field(100, ge=5, le=100_000, description="latencies per task in the sliding window")
    min_samples: int = Field(
        20, ge=1, le=100_000, description="latencies a step needs before its p95 is judged"
    )
    latency_hysteresis: float = Field(
        0.3, ge=0, lt=1, description="step back up only when p95 < budget * (1 - this)"
    )
    dwell_s: float = Field(5.0, ge=0, le=3600, description="least time between two switches of a task")
    recover_after_s: float = Field(
        30.0, ge=0, le=86400, description="least time on a degraded step before stepping back up"
    )
    thermal_path: Path | None = Field(
        DEFAULT_THERMAL,
        description="file holding the temperature in millidegrees Celsius; null turns the thermal check off",
    )
    thermal_limit_c: float = Field(80.0, gt=0, le=200, description="step down at or above this temperature")
    thermal_hysteresis_c: float = Field(
        5.0, ge=0, le=100, description="step back up only below thermal_limit_c minus this"
    )
    thermal_poll_s: float = Field(1.0, ge=0, le=3600, description="how often the thermal file is read")
    intents_short_chars: int = Field(
        64, ge=8, le=100_000, description="transcripts are cut to this many characters from short_input on"
    )
    logs_short_chars: int = Field(
        160, ge=16, le=1_000_000, description="log lines are cut to this many characters from short_input on"
    )

    @field_validator("min_samples")
    @classmethod
    def _fits_window(cls, value: int, info: ValidationInfo) -> int:
        window = info.data.get("window")
        if window is not None and value > window:
            raise ValueError(f"must be <= window ({window}); raise sla.window or lower sla.min_samples")
        return value

    @field_validator("thermal_hysteresis_c")
    @classmethod
    def _below_limit(cls, value: float, info: ValidationInfo) -> float:
        limit = info.data.get("thermal_limit_c")
        if limit is not None and value >= limit:
            raise ValueError(f"must be < thermal_limit_c ({limit}); e.g. 5")
        return value

    def budget_ms(self, task: str) -> float:
        return self.intents_p95_ms if task == "intents" else self.logs_p95_ms

    def short_chars(self, task: str) -> int:
        return self.intents_short_chars if task == "intents" else self.logs_short_chars


def p95(values: Sequence[float]) -> float:
    """Nearest-rank 95th percentile (``values`` not empty)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def ladder_steps(task: str, has_small: bool, model_id: str = "") -> tuple[str, ...]:
    """The steps of ``task``'s ladder; without a ``small`` variant its step is left out (logged)."""
    steps = LADDERS[task]
    if has_small:
        return steps
    _log.info(
        "sla.step_skipped",
        task=task,
        step=SMALL_MODEL,
        reason=f"bundle {model_id or '(unnamed)'} has no 'small' variant (edge-fw build-model makes one)",
    )
    return tuple(s for s in steps if s != SMALL_MODEL)


@dataclass(frozen=True)
class Switch:
    """One move of a task's ladder."""

    task: str
    before: str
    after: str
    reason: str
    at: float  # epoch seconds

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "from": self.before,
            "to": self.after,
            "reason": self.reason,
            "at": self.at,
        }


class Ladder:
    """One task's steps and latency window (pure: ``decide`` gets the time and thermal state)."""

    def __init__(self, task: str, steps: Sequence[str], config: SlaConfig) -> None:
        if not steps or steps[0] != NORMAL:
            raise ValueError(f"a ladder starts at {NORMAL!r}, got {list(steps)}")
        self.task = task
        self.steps = tuple(steps)
        self.cfg = config
        self.budget_ms = config.budget_ms(task)
        self.index = 0
        self.samples: deque[float] = deque(maxlen=config.window)
        self.since = -math.inf  # monotonic time of the last switch

    @property
    def step(self) -> str:
        return self.steps[self.index]

    def observe(self, latency_ms: float) -> None:
        self.samples.append(latency_ms)

    def p95(self) -> float | None:
        """p95 of the current step's window; None while it holds fewer than ``min_samples``."""
        if len(self.samples) < self.cfg.min_samples:
            return None
        return p95(self.samples)

    def decide(self, now: float, hot: str | None) -> tuple[str, str, str] | None:
        """(step before, step after, reason) when the ladder moves now, else None. ``hot``: why
        the gateway is too hot (None when it is not, or the thermal check is off)."""
        held = now - self.since
        if held < self.cfg.dwell_s:
            return None
        late = self._late()
        if (late or hot) and self.index < len(self.steps) - 1:
            return self._move(now, +1, late or str(hot))
        if self.index > 0 and hot is None and held >= self.cfg.recover_after_s and self._recovered():
            return self._move(now, -1, self._recovery_reason())
        return None

    def _late(self) -> str | None:
        current = self.p95()
        if current is None or current <= self.budget_ms:
            return None
        return (
            f"p95 {current:.1f} ms > budget {self.budget_ms:g} ms over the last {len(self.samples)} "
            f"{self.task} on step {self.step}"
        )

    def _recovered(self) -> bool:
        current = self.p95()
        return current is None or current < self.budget_ms * (1 - self.cfg.latency_hysteresis)

    def _recovery_reason(self) -> str:
        current = self.p95()
        floor = self.budget_ms * (1 - self.cfg.latency_hysteresis)
        seen = "too few latencies to judge" if current is None else f"p95 {current:.1f} ms"
        return f"{seen} < {floor:g} ms (budget less hysteresis) and not hot"

    def _move(self, now: float, by: int, reason: str) -> tuple[str, str, str]:
        before = self.step
        self.index += by
        self.since = now
        self.samples.clear()  # the new step is measured afresh
        return before, self.step, reason


class ThermalSensor:
    """Reads a thermal file (millidegrees Celsius) at most every ``poll_s``; off when ``path`` is
    None or unreadable (logged once, never raised).

    ``missing_is_normal``: the path is the built-in default, which a host without a thermal zone
    does not have; that file missing at the first read is a debug line. A warning is for a problem
    someone can act on: a configured path that is missing, a file that cannot be read or parsed,
    or one that was read before and has gone. An empty read after a good one is a file being
    rewritten in place (truncate, then write): the last reading stands, for ``EMPTY_GRACE_S`` at
    most; a file empty that long cannot be parsed (a warning, the check off)."""

    def __init__(
        self,
        path: Path | None,
        poll_s: float,
        clock: Callable[[], float] = time.monotonic,
        missing_is_normal: bool = False,
    ) -> None:
        self.path = path
        self.poll_s = poll_s
        self.clock = clock
        self.missing_is_normal = missing_is_normal
        self.last_c: float | None = None
        self._read_at = -math.inf
        self._ever_read = False
        self._empty_since: float | None = None  # when the file was first found empty (mid-rewrite)
        if path is None:
            _log.info("sla.thermal_off", reason="sla.thermal_path is null")

    def read_c(self) -> float | None:
        if self.path is None:
            return None
        now = self.clock()
        if now - self._read_at >= self.poll_s:
            self._read_at = now
            self.last_c = self._read()
        return self.last_c

    def _read(self) -> float | None:
        assert self.path is not None
        try:
            text = self.path.read_text(encoding="ascii").strip()
            if not text and self._ever_read and not self._empty_too_long():
                return self.last_c  # caught between truncate and write: keep the last reading
            value = int(text) / 1000.0
        except FileNotFoundError as exc:
            if self.missing_is_normal and not self._ever_read:
                _log.debug("sla.thermal_off", path=str(self.path), reason="no thermal zone on this host")
                self.path = None
            else:
                self._off(f"cannot read a temperature: {exc}")
            return None
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            self._off(f"cannot read a temperature: {exc}")
            return None
        self._ever_read = True
        self._empty_since = None
        return value

    def _empty_too_long(self) -> bool:
        """Whether the file has been empty for ``EMPTY_GRACE_S`` (a writer that stopped half way:
        a temperature kept longer than that would be stale)."""
        now = self.clock()
        if self._empty_since is None:
            self._empty_since = now
        return now - self._empty_since >= EMPTY_GRACE_S

    def _off(self, reason: str) -> None:
        assert self.path is not None
        _log.warning(
            "sla.thermal_off",
            path=str(self.path),
            reason=reason,
            fix="set sla.thermal_path to this board's thermal zone file, or null",
        )
        self.path = None


class SlaMonitor:
    """The ladders of every task, the thermal sensor and the switch log; thread-safe. The handlers
    call :meth:`step` before a batch and :meth:`observe` with each input's latency."""

    def __init__(
        self,
        config: SlaConfig,
        steps: Mapping[str, Sequence[str]],
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.cfg = config
        self.ladders = {task: Ladder(task, s, config) for task, s in steps.items()}
        self.thermal = ThermalSensor(
            config.thermal_path,
            config.thermal_poll_s,
            clock,
            missing_is_normal=config.thermal_path == DEFAULT_THERMAL,
        )
        self.clock = clock
        self.wall = wall
        self.switches: deque[Switch] = deque(maxlen=_KEPT_SWITCHES)
        self.switch_count = 0
        self._hot = False
        self._lock = threading.Lock()

    def step(self, task: str) -> str:
        """The step ``task`` runs its next batch on (moving the ladder first when it is due)."""
        ladder = self.ladders.get(task)
        if ladder is None:
            return NORMAL
        with self._lock:
            if self.cfg.enabled:
                moved = ladder.decide(self.clock(), self._heat())
                if moved is not None:
                    self._record(ladder, moved)
            return ladder.step

    def observe(self, task: str, latency_ms: float) -> None:
        ladder = self.ladders.get(task)
        if ladder is not None:
            with self._lock:
                ladder.observe(latency_ms)

    def mode(self, task: str | None = None) -> str:
        """``normal`` or ``degraded``: of ``task``, or of the agent (any task degraded)."""
        with self._lock:
            ladders = [self.ladders[task]] if task in self.ladders else list(self.ladders.values())
            return DEGRADED if any(lad.index for lad in ladders) else NORMAL

    def stats(self) -> dict[str, Any]:
        """``sla`` of the stats message."""
        with self._lock:
            tasks = {
                task: {
                    "step": lad.step,
                    "steps": list(lad.steps),
                    "p95_ms": _rounded(lad.p95()),
                    "budget_ms": lad.budget_ms,
                    "samples": len(lad.samples),
                }
                for task, lad in self.ladders.items()
            }
            return {
                "mode": DEGRADED if any(lad.index for lad in self.ladders.values()) else NORMAL,
                "enabled": self.cfg.enabled,
                "temperature_c": self.thermal.last_c,
                "thermal_limit_c": self.cfg.thermal_limit_c if self.thermal.path is not None else None,
                "tasks": tasks,
                "switches": self.switch_count,
                "recent": [s.to_dict() for s in self.switches],
            }

    def _heat(self) -> str | None:
        """Why it is too hot now (with hysteresis), or None."""
        temp = self.thermal.read_c()
        if temp is None:
            self._hot = False
            return None
        limit = self.cfg.thermal_limit_c
        cool_below = limit - self.cfg.thermal_hysteresis_c
        self._hot = temp >= limit or (self._hot and temp >= cool_below)
        if not self._hot:
            return None
        if temp >= limit:
            return f"temperature {temp:.1f} C >= limit {limit:g} C"
        return f"temperature {temp:.1f} C not yet below {cool_below:g} C (limit less hysteresis)"

    def _record(self, ladder: Ladder, moved: tuple[str, str, str]) -> None:
        before, after, reason = moved
        self.switches.append(Switch(ladder.task, before, after, reason, round(self.wall(), 3)))
        self.switch_count += 1
        _log.warning(
            "sla.switch",
            task=ladder.task,
            before=before,
            after=after,
            mode=DEGRADED if ladder.index else NORMAL,
            reason=reason,
        )


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)
