"""bench/paired_dumps.py: two bundles' per-line dumps paired per group and over all lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchload import load_bench

bench = load_bench("paired_dumps")


def _dump(path: Path, rows: list[tuple[str, str, bool]]) -> Path:
    path.write_text("".join(json.dumps({"key": k, "group": g, "ok": ok}) + "\n" for k, g, ok in rows))
    return path


def test_pairs_by_key_per_group_and_overall(tmp_path: Path) -> None:
    a = _dump(tmp_path / "a", [("1", "x", True), ("2", "x", False), ("3", "y", True)])
    # b in another order: pairing goes by key, not by position
    b = _dump(tmp_path / "b", [("3", "y", False), ("2", "x", True), ("1", "x", True)])
    lines = bench.paired(bench.read(a), bench.read(b))
    assert lines == [
        "x: a 1/2, b 2/2; only a right 0, only b right 1, p = 1.0",
        "y: a 1/1, b 0/1; only a right 1, only b right 0, p = 1.0",
        "all lines: a 2/3, b 2/3; only a right 1, only b right 1, p = 1.0",
    ]


def test_dumps_of_different_lines_are_refused(tmp_path: Path) -> None:
    a = _dump(tmp_path / "a", [("1", "x", True)])
    b = _dump(tmp_path / "b", [("2", "x", True)])
    with pytest.raises(SystemExit, match="different lines"):
        bench.paired(bench.read(a), bench.read(b))
