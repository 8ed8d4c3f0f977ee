"""The tiny model build that several test files read: ``build-model --tiny --seed 3`` run once per
test session (the ``tiny_build`` fixture of conftest.py), shared by every xdist worker."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def edge_fw(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "import sys; from firmware_tools.cli import main; sys.exit(main())", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=600,
        check=False,
    )


@dataclass(frozen=True)
class TinyBuild:
    """``build-model --tiny --seed 3`` run once per test session: its bundle and stage outputs
    (read-only: a test that changes them works on a copy) and what the command printed."""

    out: Path
    work: Path
    proc: subprocess.CompletedProcess[str]
    args: tuple[str, ...]  # the build's own arguments (a rerun that should reuse its stages passes them)


def _shared_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's temp root, common to every pytest-xdist worker of the run (each worker's
    own base temp is a folder inside it); the run's own base temp without xdist."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def shared_tiny_build(tmp_path_factory: pytest.TempPathFactory) -> TinyBuild:
    """The tiny build, made by whichever worker asks first; the others wait on the file lock and
    read its result (~2-3 min on 2 cores instead of once per test). It reads real log lines from
    ``--log-dir`` (a few written here per training system), so that path needs no build of its own."""
    root = _shared_root(tmp_path_factory) / "tiny-build"
    root.mkdir(exist_ok=True)
    out, work, result = root / "bundle", root / "work", root / "result.json"
    args = ("build-model", "--tiny", "--seed", "3", "--work", str(work), "--log-dir", str(root / "loghub"))
    with (root / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not result.exists():
            # set up before any test's own private state and caches (conftest.py): the build's go here
            env = {**os.environ, "XDG_STATE_HOME": str(root / "state"), "XDG_CACHE_HOME": str(root / "cache"),
                   "STATE_DIRECTORY": str(root / "state" / "edge-agent"), "KERAS_HOME": str(root / "keras")}
            env.pop("CACHE_DIRECTORY", None)
            _write_loghub(root / "loghub")
            proc = edge_fw(*args, "--out", str(out), env=env)
            result.write_text(json.dumps([proc.returncode, proc.stdout, proc.stderr]), encoding="utf-8")
        code, stdout, stderr = json.loads(result.read_text(encoding="utf-8"))
    return TinyBuild(out, work, subprocess.CompletedProcess([], code, stdout, stderr), args)


LOGHUB_LINES = 3  # real lines per training system in the tiny build's --log-dir


def _write_loghub(logs: Path) -> None:
    """A loghub-shaped folder per training system: a few lines and their structured file."""
    from firmware_tools.data.loghub import TRAIN_SYSTEMS

    for system in TRAIN_SYSTEMS:
        (logs / system).mkdir(parents=True, exist_ok=True)
        lines = [f"2026-01-05 10:00:0{i} INFO {system} worker {i} finished job" for i in range(LOGHUB_LINES)]
        (logs / system / f"{system}_2k.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
        rows = "".join(f"{i},INFO,x,E1\n" for i in range(LOGHUB_LINES))  # E1: labelled in every system
        structured = logs / system / f"{system}_2k.log_structured.csv"
        structured.write_text("LineId,Level,Content,EventId\n" + rows)


def on_the_tiny_build(test: Callable[..., None]) -> Callable[..., None]:
    """A test that reads the shared build. scripts/test.sh runs each test file on one xdist worker
    (--dist loadfile), files in name order: those of tests/test_build_model.py run one after
    another on the worker that builds (a build keeps both cores busy, so two at once would only
    slow each other), while the others run the rest."""
    return pytest.mark.slow(pytest.mark.timeout(900)(test))
