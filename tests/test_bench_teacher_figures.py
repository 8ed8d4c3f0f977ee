"""bench/teacher_figures.py on the tiny build's work directory: the fine-tuned teacher's own
figure on an SGD test split, beside the bundle's student."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tiny_build import TinyBuild, on_the_tiny_build

ROOT = Path(__file__).resolve().parent.parent
ROWS = [  # text, service, intent, spans: two of ours (in scope), two of other services
    ("what's the weather in Paris tomorrow", "Weather_1", "GetWeather", 1),
    ("play some jazz in the kitchen", "Music_3", "PlayMedia", 1),
    ("book a table for two at seven", "Restaurants_1", "ReserveRestaurant", 0),
    ("transfer fifty dollars to my savings", "Banks_1", "TransferMoney", 0),
]


def _sgd(root: Path) -> Path:
    (root / "sgd").mkdir(parents=True)
    lines = [
        json.dumps({"text": t, "service": s, "intent": i, "spans": [{"slot": "x"}] * n})
        for t, s, i, n in ROWS
    ]
    (root / "sgd" / "test.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "bench" / "teacher_figures.py"), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )


@on_the_tiny_build
def test_the_teacher_is_scored_from_the_work_directory_without_training(
    tiny_build: TinyBuild, tmp_path: Path
) -> None:
    assert tiny_build.proc.returncode == 0, tiny_build.proc.stderr[-3000:]
    work = tiny_build.work
    before = sorted(p.relative_to(work) for p in work.rglob("*"))
    loghub = work.parent / "loghub"
    data = _sgd(tmp_path / "data")
    proc = _run(
        "--work", str(work), "--tiny", "--seed", "3", "--log-dir", str(loghub), "--data-dir", str(data),
        "--bundle", str(tiny_build.out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "== SGD test (2 in scope, 4 rows)" in proc.stdout
    row = re.search(
        r"fine-tuned teacher \(MiniLM\) +in scope +([\d.]+)% +falsely rejected +([\d.]+)%", proc.stdout
    )
    assert row is not None, proc.stdout
    # two in-scope rows: each figure is a whole number of halves
    assert float(row.group(1)) in (0.0, 50.0, 100.0) and float(row.group(2)) in (0.0, 50.0, 100.0)
    assert "records no cross-source figures" in proc.stdout  # the tiny build has no folds
    # nothing was trained or written: the work directory is as the build left it
    assert sorted(p.relative_to(work) for p in work.rglob("*")) == before


@on_the_tiny_build
def test_a_work_directory_without_that_teacher_is_refused(tiny_build: TinyBuild, tmp_path: Path) -> None:
    assert tiny_build.proc.returncode == 0, tiny_build.proc.stderr[-3000:]
    data = _sgd(tmp_path / "data")
    proc = _run(
        "--work", str(tmp_path / "empty"), "--tiny", "--seed", "3",
        "--log-dir", str(tiny_build.work.parent / "loghub"), "--data-dir", str(data),
    )  # fmt: skip
    assert proc.returncode != 0
    assert "no teacher weights for this plan and seed" in proc.stderr
