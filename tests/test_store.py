"""FileStore / MemoryStore: atomic replace, keys refused when they are paths, nothing left behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from edge_agent.errors import ConfigError
from edge_agent.store import FileStore, MemoryStore, Store


def test_file_store_round_trip_and_missing(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "state")
    assert store.load("templates") is None
    store.save("templates", b'{"a": 1}')
    assert store.load("templates") == b'{"a": 1}'
    store.save("templates", b"second")
    assert store.load("templates") == b"second"
    assert isinstance(store, Store)


def test_file_store_leaves_no_temp_files(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    for i in range(5):
        store.save("k", str(i).encode())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k"]


def test_failed_write_keeps_old_value(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = FileStore(tmp_path)
    store.save("k", b"old")

    def broken_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        store.save("k", b"new")
    monkeypatch.undo()
    assert store.load("k") == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k"]


@pytest.mark.parametrize("key", ["../escape", "a/b", "", ".hidden", "x" * 200])
def test_bad_keys_refused(tmp_path: Path, key: str) -> None:
    with pytest.raises(ConfigError):
        FileStore(tmp_path).save(key, b"x")
    with pytest.raises(ConfigError):
        MemoryStore().save(key, b"x")


def test_memory_store() -> None:
    store = MemoryStore()
    assert store.load("a") is None
    store.save("a", b"1")
    assert store.load("a") == b"1"


def test_state_dir_policy_order(tmp_path: Path) -> None:
    """One policy: configured, then $STATE_DIRECTORY (first entry), then XDG, then ~/.local/state."""
    from edge_agent.store.config import resolve_state_dir

    xdg = str(tmp_path / "xdg")
    env = {"STATE_DIRECTORY": "/var/lib/edge-agent:/var/lib/other", "XDG_STATE_HOME": xdg}
    assert resolve_state_dir(tmp_path / "cfg", "kitchen", env) == tmp_path / "cfg"
    assert resolve_state_dir(None, "kitchen", env) == Path("/var/lib/edge-agent")
    assert resolve_state_dir(None, "kitchen", {"XDG_STATE_HOME": xdg}) == Path(xdg) / "edge-agent" / "kitchen"
    home = Path.home() / ".local" / "state" / "edge-agent" / "kitchen"
    assert resolve_state_dir(None, "kitchen", {}) == home
    assert resolve_state_dir(None, "kitchen", {"XDG_STATE_HOME": "relative/dir"}) == home
