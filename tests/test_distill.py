"""Knowledge distillation targets and losses (tests/distill_checks.py, run in a child process so
that TensorFlow stays out of this one)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUN = "import runpy; runpy.run_path('tests/distill_checks.py', run_name='__main__')"


@pytest.mark.slow
def test_distillation_targets_and_losses() -> None:
    proc = subprocess.run(
        # -c puts the working directory (this checkout) first on the path, as in test_build_model
        [sys.executable, "-c", RUN],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "3 checks passed" in proc.stdout
