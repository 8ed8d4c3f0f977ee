"""Where the agent keeps what it can rebuild: XNNPACK's packed weights.

The cache directory is systemd's ``$CACHE_DIRECTORY`` (``CacheDirectory=`` in the unit; its first
entry), else ``$XDG_CACHE_HOME/edge-agent``, else ``~/.cache/edge-agent``. A relative
``XDG_CACHE_HOME`` is ignored, as the XDG base directory specification asks.

``runtime.delegates[cpu].xnnpack_weight_cache`` (and ``--xnnpack-weight-cache`` on the commands)
is ``auto``, ``off`` or a directory. ``auto`` turns the cache on where it pays and works: segments
streamed (``residency: stream``) on ai-edge-litert, the only backend with the option.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

__all__ = ["WeightCacheSetting", "cache_home", "make_dir", "parse_setting", "weight_cache_dir"]

WeightCacheSetting = Literal["auto", "off"] | Path


def cache_home(env: Mapping[str, str] | None = None) -> Path:
    """The agent's cache directory (not created here)."""
    env = os.environ if env is None else env
    systemd = env.get("CACHE_DIRECTORY", "").split(":")[0]
    if systemd:
        return Path(systemd)
    xdg = env.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "edge-agent"


def parse_setting(text: str) -> WeightCacheSetting:
    """A command-line value: ``auto``, ``off`` or a directory."""
    if text in ("auto", "off"):
        return "auto" if text == "auto" else "off"
    return Path(text)


def weight_cache_dir(
    setting: WeightCacheSetting | None, backend: str, residency: str, env: Mapping[str, str] | None = None
) -> Path | None:
    """The directory XNNPACK's packed weights go to, or None for no cache.

    A directory given explicitly is used whatever the residency (on a backend without the option
    the runtime says so); ``auto`` is ``cache_home()/xnnpack`` when ``backend`` is ``litert`` and
    ``residency`` is ``stream``, else no cache; ``off`` and None are no cache."""
    if isinstance(setting, Path):
        return setting
    if setting != "auto" or backend != "litert" or residency != "stream":
        return None
    return cache_home(env) / "xnnpack"


def make_dir(directory: Path) -> str | None:
    """Create ``directory`` (and its parents); None when it exists or was made, else why not.
    ``auto`` runs without the cache when its directory cannot be made (a read-only home under
    systemd's ProtectHome=, for one); a directory named explicitly is an error instead."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"cannot create {directory}: {exc.strerror or exc}"
    return None
