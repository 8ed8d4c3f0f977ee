"""Quiet, human output. Commands print no third-party INFO lines on stderr ("INFO: Created
TensorFlow Lite XNNPACK delegate for CPU." came from the interpreters' C++ logger); warnings and
errors still get through. ``--help`` speaks to users. The agent's own log lines are for people on a
terminal and JSON elsewhere or when asked (edge_agent/logsetup.py)."""

from __future__ import annotations

import io
import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

import pytest
import structlog
from delegates.fixtures import synth_bundle_dir

from edge_agent.demo.broker import free_port
from edge_agent.logsetup import LogFormat, configure_logging
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


def test_pyproject_says_what_setuptools_reads_without_a_warning() -> None:
    """Each of these printed a setuptools warning block at every `pip install` of the checkout
    (demo.sh and test.sh): the licence as a TOML table (deprecated from setuptools 77, which reads
    an SPDX string), and an editable install through setuptools' import finder (flat layout
    without package-dir). Building needs the network here, so the lines themselves are checked."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^license = "Apache-2\.0"$', text, re.M)
    [minimum] = re.findall(r'^requires = \["setuptools>=(\d+)"\]$', text, re.M)
    assert int(minimum) >= 77
    assert re.search(r'^\[tool\.setuptools\]\n(#.*\n)*package-dir = \{ "" = "\." \}$', text, re.M)


def test_help_tells_a_user_what_the_agent_does() -> None:
    proc = _cli("--help", stdin=b"")
    out = proc.stdout.decode()
    assert proc.returncode == 0, proc.stderr.decode()
    assert "IoT gateways" in out and "intents" in out and "log lines" in out
    assert "commands/" not in out and "``" not in out  # the developers' docstring stays in the code


# -- the agent's own log lines: for people on a terminal, JSON elsewhere ----------------------------
@pytest.fixture
def restore_structlog() -> Iterator[None]:
    before = structlog.get_config()
    yield
    structlog.configure(**before)


def _emit(stream: TextIO, log_format: LogFormat) -> None:
    configure_logging(stream=stream, log_format=log_format)
    structlog.get_logger("t").warning("mqtt.connect_failed", broker="127.0.0.1:1", password="hunter2")
    stream.flush()


@contextmanager
def _terminal() -> Iterator[tuple[TextIO, Callable[[], str]]]:
    """A pseudo-terminal: a text stream for which isatty() is true, and what was written to it."""
    master, slave = pty.openpty()
    stream = os.fdopen(slave, "w", encoding="utf-8")
    try:
        yield stream, lambda: os.read(master, 65536).decode().replace("\r\n", "\n")
    finally:
        stream.close()
        os.close(master)


def _plain(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)  # colour codes out


def _is_console_line(line: str) -> bool:
    line = _plain(line)
    return not line.startswith("{") and "mqtt.connect_failed" in line and "warning" in line


@pytest.mark.usefixtures("restore_structlog")
def test_log_lines_are_json_when_stderr_is_not_a_terminal() -> None:
    for fmt in ("auto", "json"):
        out = io.StringIO()
        _emit(out, fmt)  # type: ignore[arg-type]
        event = json.loads(out.getvalue())
        assert event["event"] == "mqtt.connect_failed" and event["level"] == "warning"
        assert event["broker"] == "127.0.0.1:1" and event["password"] != "hunter2"


@pytest.mark.usefixtures("restore_structlog")
def test_log_lines_are_for_people_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    with _terminal() as (tty, written):
        _emit(tty, "auto")
        line = written().strip()
    assert _is_console_line(line) and "broker=127.0.0.1:1" in _plain(line) and "hunter2" not in line
    assert "\x1b[" in line  # coloured on a terminal
    monkeypatch.setenv("NO_COLOR", "1")
    with _terminal() as (tty, written):
        _emit(tty, "auto")
        line = written().strip()
    assert _is_console_line(line) and "\x1b[" not in line
    with _terminal() as (tty, written):
        _emit(tty, "json")  # asked for: JSON on a terminal too
        assert json.loads(written())["event"] == "mqtt.connect_failed"
    out = io.StringIO()
    _emit(out, "console")  # asked for: lines for people in a file, without colour codes
    assert _is_console_line(out.getvalue().strip()) and "\x1b[" not in out.getvalue()


def _run_agent_on_a_terminal(tmp_path: Path, *flags: str) -> str:
    """``edge-agent run`` with stderr on a pseudo-terminal and no broker: what it printed until its
    first failed connection, then SIGTERM."""
    config = tmp_path / "agent.yaml"
    config.write_text(f"site_id: quiet\nmqtt: {{port: {free_port()}}}\n", encoding="utf-8")
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "edge_agent", "run", "--config", str(config), *flags],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave, cwd=ROOT,
    )
    os.close(slave)
    seen = b""
    try:
        deadline = time.monotonic() + 120
        while b"mqtt.connect_failed" not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if ready:
                seen += os.read(master, 65536)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
        while select.select([master], [], [], 0.2)[0]:
            try:
                seen += os.read(master, 65536)
            except OSError:  # EIO: the child has closed the terminal
                break
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    return seen.decode().replace("\r\n", "\n")


def test_agent_logs_for_people_on_a_terminal_and_json_when_asked(tmp_path: Path) -> None:
    lines = [ln for ln in _run_agent_on_a_terminal(tmp_path).splitlines() if ln.strip()]
    assert any(_is_console_line(ln) and "hint=" in _plain(ln) for ln in lines), lines
    assert not [ln for ln in lines if ln.startswith("{")], lines
    assert any("app.stopped" in ln for ln in lines), lines
    asked = _run_agent_on_a_terminal(tmp_path, "--log-format", "json")
    events = [json.loads(ln)["event"] for ln in asked.splitlines() if ln.strip()]
    assert "mqtt.connect_failed" in events and events[-1] == "app.stopped"
