"""Commands print no third-party INFO lines on stderr ("INFO: Created TensorFlow Lite XNNPACK
delegate for CPU." came from the interpreters' C++ logger); warnings and errors still get through."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from delegates.fixtures import synth_bundle_dir

from edge_agent.runtime.native_log import native_info_dropped

ROOT = Path(__file__).resolve().parent.parent
BACKENDS = ["litert", "tflite-runtime"]


def _cli(*args: str, stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "edge_agent", *args],
        input=stdin, capture_output=True, cwd=ROOT, timeout=300, check=False,
    )


def _assert_quiet(proc: subprocess.CompletedProcess[bytes], lines: int) -> None:
    assert proc.returncode == 0, proc.stderr.decode()
    assert len(proc.stdout.splitlines()) == lines
    noisy = [line for line in proc.stderr.decode().splitlines() if line.startswith("INFO")]
    assert not noisy, proc.stderr.decode()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("residency", ["resident", "stream"])
def test_intents_prints_no_info_lines(backend: str, residency: str) -> None:
    args = ["intents", "--backend", backend, "--residency", residency, "--bundle", str(synth_bundle_dir())]
    if residency == "stream":  # litert: through the weight cache (the default) and without it
        args += ["--weight-budget-mb", "0.1"]
    _assert_quiet(_cli(*args, stdin=b"turn on the lights\nplay some jazz\n"), 2)
    if residency == "stream" and backend == "litert":
        _assert_quiet(_cli(*args, "--xnnpack-weight-cache", "off", stdin=b"turn on the lights\n"), 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_logs_classify_prints_no_info_lines(backend: str) -> None:
    lines = b"Jan  1 00:00:00 gw sshd[1]: Accepted password for pi\nkernel: eth0: link down\n"
    _assert_quiet(_cli("logs", "classify", "--backend", backend, stdin=lines), 2)


def test_dropped_info_keeps_warnings_errors_and_order(capfd: pytest.CaptureFixture[str]) -> None:
    os.write(2, b"before\n")
    with native_info_dropped():
        os.write(2, b"INFO: Created TensorFlow Lite XNNPACK delegate for CPU.\n")
        os.write(2, b"WARNING: something to know\n")
        os.write(2, b"ERROR: something wrong\n")
    os.write(2, b"INFO: ours, after the block, is not touched\n")
    assert capfd.readouterr().err.splitlines() == [
        "before",
        "WARNING: something to know",
        "ERROR: something wrong",
        "INFO: ours, after the block, is not touched",
    ]


def test_dropped_info_restores_stderr_when_the_call_raises(capfd: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(RuntimeError), native_info_dropped():
        os.write(2, b"ERROR: about to fail\n")
        raise RuntimeError("boom")
    os.write(2, b"still here\n")
    assert capfd.readouterr().err.splitlines() == ["ERROR: about to fail", "still here"]
