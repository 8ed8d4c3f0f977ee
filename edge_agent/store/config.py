"""``ReliabilityConfig``: the ``reliability:`` section (state directory, outbox, dedup, rate limits,
signed bundle installation).

Example (YAML)::

    reliability:
      state_dir: /var/lib/edge-agent     # outbox.db, dedup.db, bundles/a|b + active, control
      outbox: {max_mb: 64, ttl_h: 168, ack_timeout_s: 10}
      dedup: {window_s: 86400}
      rate_limit: {per_source_per_s: 500, burst: 2000}
      bundles:
        trust_store: /etc/edge-agent/trust   # ed25519 public keys; bundles must be signed
        install_from: [/var/lib/edge-agent/incoming]
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "BundlesConfig",
    "DedupConfig",
    "OutboxConfig",
    "RateLimitConfig",
    "ReliabilityConfig",
    "resolve_state_dir",
]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_default=True)


class OutboxConfig(_Section):
    """Results that cannot be published wait on disk (SQLite WAL) until the broker is back."""

    enabled: bool = Field(True, description="store unpublishable results on disk (off: keep them unacked)")
    max_mb: float = Field(64.0, gt=0, le=65536, description="size bound of stored payloads")
    max_rows: int = Field(200_000, ge=1, le=100_000_000, description="row bound")
    ttl_h: float = Field(168.0, gt=0, le=24 * 365, description="stored results older than this are dropped")
    ack_timeout_s: float = Field(
        10.0, gt=0, le=3600, description="a result without PUBACK after this long goes to the outbox"
    )
    sync: Literal["full", "normal"] = Field(
        "full", description="SQLite synchronous mode: full survives power loss, normal a killed process"
    )


class DedupConfig(_Section):
    """Inputs redelivered within the window (same id, or same content with the DUP flag) publish once."""

    enabled: bool = Field(True, description="suppress duplicate deliveries")
    window_s: float = Field(86400.0, gt=0, le=30 * 86400, description="how long an id is remembered")
    max_ids: int = Field(500_000, ge=1, le=100_000_000, description="ids kept at most (oldest forgotten)")


class RateLimitConfig(_Section):
    """Token bucket per input source (log source, or topic); excess inputs go to the DLQ."""

    per_source_per_s: float = Field(
        500.0, ge=0, le=1_000_000, description="sustained inputs per second per source; 0 disables"
    )
    burst: float = Field(2000.0, ge=1, le=10_000_000, description="inputs a source may send at once")
    kinds: list[str] = Field(["logs"], description="input kinds that are limited (e.g. logs, transcript)")


class BundlesConfig(_Section):
    """Signed bundle installation (A/B slots under ``state_dir/bundles``)."""

    trust_store: Path | None = Field(
        None, description="directory of ed25519 public keys (*.pub); when set, bundles must be signed"
    )
    install_from: list[Path] = Field(
        default_factory=list,
        description="directories the MQTT install command may install from; empty disables the command",
    )


class ReliabilityConfig(_Section):
    """Durability and admission: where state lives, outbox, dedup, rate limits, bundle installs."""

    state_dir: Path | None = Field(
        None,
        description="agent state (outbox.db, dedup.db, bundles/, control); default $STATE_DIRECTORY "
        "(systemd StateDirectory=), else $XDG_STATE_HOME/edge-agent/<site_id>, "
        "else ~/.local/state/edge-agent/<site_id>",
    )
    outbox: OutboxConfig = Field(default_factory=lambda: OutboxConfig.model_validate({}))
    dedup: DedupConfig = Field(default_factory=lambda: DedupConfig.model_validate({}))
    rate_limit: RateLimitConfig = Field(default_factory=lambda: RateLimitConfig.model_validate({}))
    bundles: BundlesConfig = Field(default_factory=lambda: BundlesConfig.model_validate({}))


def resolve_state_dir(
    configured: Path | str | None, site_id: str, environ: Mapping[str, str] | None = None
) -> Path:
    """The agent's state directory; the one policy every part uses (see docs/reliability.md).

    In order: the configured directory; systemd's ``$STATE_DIRECTORY`` (``StateDirectory=``; its
    first entry when it lists several); ``$XDG_STATE_HOME/edge-agent/<site_id>``; else
    ``~/.local/state/edge-agent/<site_id>``.
    """
    env = os.environ if environ is None else environ
    if configured is not None:
        return Path(configured)
    systemd = env.get("STATE_DIRECTORY", "").split(":")[0]
    if systemd:
        return Path(systemd)
    xdg = env.get("XDG_STATE_HOME", "")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".local" / "state"
    return base / "edge-agent" / site_id
