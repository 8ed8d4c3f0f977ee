"""Builders shared by the runtime tests: a small synthetic bundle and the gcc-built test delegates.

The bundle is made by ``edge-fw synth-bundle`` in a subprocess (TensorFlow stays out of the test
process) and cached under the temp dir by a hash of the generator's source, so a test session
(all its xdist workers: a file lock) builds it once. The delegates are compiled from
``test_delegate.c`` with gcc at test time.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from edge_agent.runtime.backend import Backend, load_backend
from edge_agent.runtime.bundle import Bundle, load_bundle

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
SYNTH_SOURCE = REPO / "firmware_tools" / "commands" / "synth_bundle.py"
VARIANTS = {"good": [], "null": ["-DCREATE_RETURNS_NULL"], "flaky": ["-DFAIL_AT_INVOKE"]}


def synth_bundle_dir(params: str = "300K") -> Path:
    digest = hashlib.sha256(SYNTH_SOURCE.read_bytes() + params.encode()).hexdigest()[:16]
    root = Path(tempfile.gettempdir()) / "edge-agent-test-bundles"
    final = root / f"synth-{params}-{digest}"
    if (final / "manifest.json").exists():
        return final
    root.mkdir(parents=True, exist_ok=True)
    # one build at a time: a parallel run's other workers (pytest-xdist) wait and take its result
    with (root / f"synth-{params}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (final / "manifest.json").exists():
            return final
        work = Path(tempfile.mkdtemp(dir=root, prefix="build-"))
        code = "import sys; from firmware_tools.cli import main; sys.exit(main(sys.argv[1:]))"
        env = {**os.environ, "PYTHONPATH": str(REPO), "TF_CPP_MIN_LOG_LEVEL": "3"}
        subprocess.run(
            [sys.executable, "-c", code, "synth-bundle", "--params", params, "--out", str(work / "b")],
            check=True,
            cwd=REPO,
            env=env,
            capture_output=True,
        )
        with contextlib.suppress(OSError):  # another session won the race; theirs is identical
            os.replace(work / "b", final)
        shutil.rmtree(work, ignore_errors=True)
    return final


def build_delegates(out: Path) -> dict[str, Path]:
    """Compile the three test delegates into ``out``; name -> .so path."""
    libs = {}
    for name, flags in VARIANTS.items():
        lib = out / f"lib{name}_delegate.so"
        subprocess.run(
            [
                "gcc",
                "-O2",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-shared",
                "-fPIC",
                *flags,
                "-o",
                str(lib),
                str(HERE / "test_delegate.c"),
            ],
            check=True,
            capture_output=True,
        )
        libs[name] = lib
    return libs


# pytest fixtures shared by test_delegates.py and test_delegates_chain.py (imported there by name)
BACKENDS = ["tflite-runtime", "litert"]


@pytest.fixture(scope="module")
def bundle() -> Bundle:
    return load_bundle(synth_bundle_dir())


@pytest.fixture(scope="module")
def libs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return build_delegates(tmp_path_factory.mktemp("delegates"))


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Backend:
    return load_backend(request.param)
