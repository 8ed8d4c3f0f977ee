"""``edge-agent demo`` (what README's first command runs): private broker, shipped bundle, samples."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib import resources
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_demo_runs_end_to_end_and_prints_every_result() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "edge_agent", "demo", "--timeout", "90"],
        capture_output=True, text=True, cwd=REPO, timeout=180,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    samples = resources.files("edge_agent").joinpath("demo", "transcripts.txt").read_text("utf-8")
    texts = [t.strip() for t in samples.splitlines() if t.strip() and not t.startswith("#")]
    intent_lines = [line for line in out.splitlines() if line.startswith("  intent ")]
    assert len(intent_lines) == len(texts)
    for text in texts:
        assert any(repr(text) in line for line in intent_lines), text
    assert re.search(rf"done +{len(texts)}/{len(texts)} transcripts answered", out)
    sources = {line.split()[1] for line in out.splitlines() if line.startswith("  summary ")}
    assert sources == {"gw-kernel", "zigbee", "network"}
    assert "  dlq      transcript is not UTF-8" in out
    assert out.index("  status   online") < out.index("  status   offline")
    # nothing on stderr to worry a newcomer: a host without a thermal zone is no warning
    assert "sla.thermal_off" not in result.stderr and "warning" not in result.stderr.lower(), result.stderr
