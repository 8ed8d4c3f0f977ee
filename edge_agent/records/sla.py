"""Names of the SLA ladder's steps and modes (``edge_agent.runtime.sla`` moves between them; the
pipeline's handlers act on them; messages carry them)."""

from __future__ import annotations

__all__ = ["DEGRADED", "LADDERS", "NORMAL", "RULES_ONLY", "SHORT_INPUT", "SMALL_MODEL", "mode_of"]

NORMAL = "normal"
SHORT_INPUT = "short_input"
SMALL_MODEL = "small_model"
RULES_ONLY = "rules_only"
DEGRADED = "degraded"
# each task's steps, best first
LADDERS: dict[str, tuple[str, ...]] = {
    "intents": (NORMAL, SHORT_INPUT, SMALL_MODEL),
    "logs": (NORMAL, SHORT_INPUT, SMALL_MODEL, RULES_ONLY),
}


def mode_of(step: str) -> str:
    """``normal`` on the top step, ``degraded`` on any other."""
    return NORMAL if step == NORMAL else DEGRADED
