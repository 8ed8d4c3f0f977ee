"""Tests leave nothing outside their own directories: conftest's autouse fixture points the
agent's state and cache directories (and those of every child process, which inherits the
environment) at a temporary tree, so no site folder lands in ~/.local/state/edge-agent."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from edge_agent.runtime.cachedir import cache_home
from edge_agent.store.config import resolve_state_dir

TMP = Path(tempfile.gettempdir()).resolve()


def test_state_and_cache_resolve_inside_the_temporary_tree() -> None:
    for path in (resolve_state_dir(None, "site1"), cache_home()):
        assert path.resolve().is_relative_to(TMP), path
        assert not path.resolve().is_relative_to(Path.home().resolve() / ".local")
    assert "CACHE_DIRECTORY" not in os.environ


def test_a_child_process_inherits_them() -> None:
    code = (
        "from edge_agent.store.config import resolve_state_dir\n"
        "from edge_agent.runtime.cachedir import cache_home\n"
        "print(resolve_state_dir(None, 's')); print(cache_home())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    for line in out.stdout.splitlines():
        assert Path(line).resolve().is_relative_to(TMP), line
