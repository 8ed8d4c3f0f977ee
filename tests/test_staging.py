"""``edge-fw`` output directories appear whole or not at all: a failed or interrupted command
leaves nothing that blocks the next run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from broker import eventually

from firmware_tools.staging import staged_dir

REPO = Path(__file__).resolve().parent.parent


def _leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if ".partial-" in p.name)


def test_a_finished_block_becomes_the_output(tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    with staged_dir(out) as stage:
        assert not out.exists() and stage.parent == tmp_path
        (stage / "manifest.json").write_text("{}")
    assert (out / "manifest.json").read_text() == "{}"
    assert _leftovers(tmp_path) == []


def test_a_failing_block_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    with pytest.raises(ValueError, match="conversion failed"), staged_dir(out) as stage:
        (stage / "block_00.tflite").write_bytes(b"half")
        raise ValueError("conversion failed")
    assert not out.exists() and _leftovers(tmp_path) == []
    with staged_dir(out) as stage:  # the rerun is not blocked
        (stage / "manifest.json").write_text("{}")
    assert (out / "manifest.json").exists()


def test_an_empty_output_directory_is_taken_and_a_full_one_kept(tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    out.mkdir()
    with staged_dir(out) as stage:
        (stage / "a").write_text("new")
    assert (out / "a").read_text() == "new"
    with pytest.raises(OSError), staged_dir(out) as stage:
        (stage / "a").write_text("newer")
    assert (out / "a").read_text() == "new" and _leftovers(tmp_path) == []


@pytest.mark.slow
def test_an_interrupted_synth_bundle_leaves_nothing_and_the_rerun_works(tmp_path: Path) -> None:
    out = tmp_path / "synth"
    cmd = [sys.executable, "-m", "firmware_tools", "synth-bundle", "--params", "60K", "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert eventually(lambda: bool(_leftovers(tmp_path)) or proc.poll() is not None, timeout=240)
        assert proc.poll() is None, "finished before it could be interrupted"
        time.sleep(0.5)  # inside the conversion
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=120)
        # what the command printed says where the signal landed when it did not unwind cleanly
        assert code == 128 + signal.SIGTERM, (
            proc.stderr.read().decode(errors="replace")[-3000:] if proc.stderr else ""
        )
    finally:
        proc.kill()
        proc.wait()
    assert not out.exists() and _leftovers(tmp_path) == []
    rerun = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert (out / "manifest.json").exists() and _leftovers(tmp_path) == []
