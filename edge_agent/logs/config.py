"""Typed settings of the log summaries (``logs:`` in the agent config). Unknown keys are refused."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["LogsConfig"]


class LogsConfig(BaseModel):
    """Windows, change detection and alerting of the log summaries, per source."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    window_s: float = Field(
        default=60.0, gt=0, le=86400, description="A summary closes after this many seconds."
    )
    window_lines: int = Field(
        default=5000, ge=1, le=1_000_000, description="A summary closes early after this many lines."
    )
    top_templates: int = Field(
        default=5, ge=1, le=100, description="Templates listed in a summary, most frequent first."
    )
    max_anomalies: int = Field(
        default=10, ge=0, le=1000, description="Anomalous lines listed in a summary (highest score)."
    )
    max_line_chars: int = Field(
        default=8192,
        ge=64,
        le=1_000_000,
        description="Longer lines are cut to this many characters (flagged truncated).",
    )
    baseline_alpha: float = Field(
        default=0.3, gt=0, le=1, description="EWMA weight of the newest window in a template's rate baseline."
    )
    surge_factor: float = Field(
        default=3.0,
        gt=1,
        description="A template surges when its window rate is this many times its baseline.",
    )
    surge_min_count: int = Field(
        default=10, ge=1, description="A surge needs at least this many lines in the window."
    )
    anomaly_threshold: float = Field(
        default=0.5, ge=0, le=1, description="Anomaly score from which a line is anomalous."
    )
    alert_threshold: float = Field(
        default=0.8,
        ge=0,
        le=1,
        description="An anomalous line opens an alert when it is critical or its score reaches this.",
    )
    incident_gap_s: float = Field(
        default=3.0,
        ge=0,
        le=3600,
        description="Anomalous lines of a source this close (s) to an open incident's last line join it.",
    )
    incident_gap_lines: int = Field(
        default=10,
        ge=0,
        le=100_000,
        description="... and at most this many of the source's lines after it.",
    )
    incident_max_s: float = Field(
        default=15.0,
        ge=0,
        le=86400,
        description="An incident stays open at most this long; a fault still going on then opens a new one.",
    )
    input_fault_parties: int = Field(
        default=5,
        ge=1,
        le=10_000,
        description="A request failing on its own input is a warning until this many parties meet it.",
    )
    alert_cooldown_s: float = Field(
        default=60.0, ge=0, description="A template alerts at most once per this many seconds per source."
    )
    max_sources: int = Field(
        default=256, ge=1, le=100_000, description="Sources tracked at once (oldest idle evicted)."
    )
    max_templates: int = Field(
        default=5000,
        ge=10,
        le=1_000_000,
        description="Templates kept (all sources); the least recently used go first.",
    )
    state_dir: str | None = Field(
        default=None, description="Directory where template state is kept across restarts (none: not kept)."
    )
    state_key: str = Field(
        default="logs-templates", min_length=1, description="Store key of the template state."
    )
    save_every_s: float = Field(
        default=60.0, ge=0, description="Template state is saved at most this often (0: every tick)."
    )
