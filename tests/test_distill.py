"""Knowledge distillation targets and losses (tests/distill_checks.py, run in a child process so
that TensorFlow stays out of this one)."""

from __future__ import annotations

import pytest
from childcheck import run_check_script


@pytest.mark.slow
def test_distillation_targets_and_losses() -> None:
    run_check_script("distill_checks.py", "10 checks passed")
