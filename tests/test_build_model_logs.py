"""``edge-fw build-model --tiny --log-dir``: real log lines reach the build. A file of its own, so
that this second build runs on another xdist worker than the shared one (tests/test_build_model.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_build_model import edge_fw

from edge_agent.runtime.bundle import load_bundle


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_log_dir_reaches_the_build(tmp_path: Path) -> None:
    """Real log lines: --log-dir reaches the build (a folder per training system, written here)."""
    from firmware_tools.data.loghub import TRAIN_SYSTEMS

    logs = tmp_path / "loghub"
    for system in TRAIN_SYSTEMS:
        (logs / system).mkdir(parents=True)
        lines = [f"2026-01-05 10:00:0{i} INFO {system} worker {i} finished job" for i in range(3)]
        (logs / system / f"{system}_2k.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
        rows = "".join(f"{i},INFO,x\n" for i in range(3))
        (logs / system / f"{system}_2k.log_structured.csv").write_text("LineId,Level,Content\n" + rows)
    out, work = tmp_path / "bundle", tmp_path / "work"
    proc = edge_fw("build-model", "--tiny", "--out", str(out), "--work", str(work), "--log-dir", str(logs))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "424 log lines" in proc.stdout  # 400 generated + 24 real
    assert load_bundle(out).manifest["build"]["real_logs"] is True
