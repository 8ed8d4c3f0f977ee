"""Real log lines for the log heads (firmware_tools/data/loghub.py) on a folder the test writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from edge_agent.runtime.tokenizer import Tokenizer
from firmware_tools.data.loghub import (
    SEVERITY_BENCH_SYSTEMS,
    STRIP_SHARE,
    TRAIN_SYSTEMS,
    load_loghub,
    strip_level,
)
from firmware_tools.model.dataset import encode_logs, train_tokenizer

RAW = [
    "081109 203615 148 INFO dfs.DataNode: Receiving block blk_1 src: /10.0.0.1:5000",
    "081109 203616 149 WARN dfs.DataNode: Slow BlockReceiver write packet to mirror took 400ms",
]
STRUCTURED = "LineId,Level,Content\n1,INFO,Receiving block\n2,WARN,Slow BlockReceiver\n"


def _system(root: Path, name: str, raw: list[str], structured: str) -> None:
    (root / name).mkdir(parents=True)
    (root / name / f"{name}_2k.log").write_text("\n".join(raw) + "\n", encoding="utf-8")
    (root / name / f"{name}_2k.log_structured.csv").write_text(structured, encoding="utf-8")


def test_stated_levels_and_the_system_category_are_known_anomaly_is_not(tmp_path: Path) -> None:
    _system(tmp_path, "HDFS", RAW, STRUCTURED)
    _system(
        tmp_path,
        "Proxifier",
        ["[10.30 16:49:06] chrome.exe - host:443 open through proxy"],
        "LineId,Content\n1,x\n",
    )
    lines = load_loghub(tmp_path, {"HDFS": TRAIN_SYSTEMS["HDFS"], "Proxifier": TRAIN_SYSTEMS["Proxifier"]})
    assert [(x.severity, x.category) for x in lines] == [
        ("info", "storage"),
        ("warning", "storage"),
        (None, "network"),
    ]
    assert not any(x.anomaly_known for x in lines)
    tok = Tokenizer(train_tokenizer([x.line for x in lines] * 20, tmp_path / "sp", 60, 1), 16)
    arrays = encode_logs(tok, lines)
    assert arrays.known_mask().tolist() == [[1, 1, 0], [1, 1, 0], [0, 1, 0]]


def test_a_system_whose_files_disagree_is_refused(tmp_path: Path) -> None:
    _system(tmp_path, "HDFS", RAW[:1], STRUCTURED)
    with pytest.raises(ValueError, match="1 lines but 2 structured rows"):
        load_loghub(tmp_path, {"HDFS": "storage"})
    with pytest.raises(FileNotFoundError, match="Spark"):
        load_loghub(tmp_path, {"Spark": "application"})


def test_the_level_token_is_cut_out_of_the_header_only() -> None:
    assert strip_level("03-17 16:13:38.811  1702  2395 D WindowManager: E draw", "D") == (
        "03-17 16:13:38.811  1702  2395 WindowManager: E draw"
    )
    assert strip_level("[Sun Dec 04 04:47:44 2005] [error] child in error state 6", "error") == (
        "[Sun Dec 04 04:47:44 2005] child in error state 6"
    )
    assert strip_level("2016-09-28 04:30:30, Info                  CBS    Loaded", "Info") == (
        "2016-09-28 04:30:30, CBS    Loaded"
    )
    assert strip_level("INFO: starting", "INFO") == "starting"
    assert strip_level("081109 203615 148 dfs.DataNode: no level here", "INFO") is None
    assert strip_level("x" * 200 + " WARN late", "WARN") is None  # past the header


def test_a_share_of_the_lines_loses_its_level_and_keeps_it_as_the_label(tmp_path: Path) -> None:
    raw = [
        f"081109 2036{i:02d} 148 {'WARN' if i % 4 == 0 else 'INFO'} dfs.DataNode: event {i}"
        for i in range(60)
    ]
    rows = "".join(f"{i},{'WARN' if i % 4 == 0 else 'INFO'},x\n" for i in range(60))
    _system(tmp_path, "HDFS", raw, "LineId,Level,Content\n" + rows)
    lines = load_loghub(tmp_path, {"HDFS": "storage"})
    hidden = [x for x in lines if not x.level_shown]
    assert 15 < len(hidden) < 45  # about STRIP_SHARE of 60
    for x, original in zip(lines, raw, strict=True):
        assert x.severity == ("warning" if " WARN " in original else "info")
        if not x.level_shown:
            assert " INFO " not in x.line and " WARN " not in x.line and x.line.endswith(original[-8:])
        else:
            assert x.line == original
    assert load_loghub(tmp_path, {"HDFS": "storage"}) == lines  # the same lines every time
    assert all(x.level_shown for x in load_loghub(tmp_path, {"HDFS": "storage"}, strip_share=0.0))


def test_the_severity_bench_scores_only_systems_never_trained_on() -> None:
    assert not set(SEVERITY_BENCH_SYSTEMS) & set(TRAIN_SYSTEMS)
    assert 0.0 < STRIP_SHARE < 1.0


def test_a_system_without_one_category_trains_severity_only(tmp_path: Path) -> None:
    _system(
        tmp_path,
        "Android",
        ["03-17 16:13:38.811  1702  2395 I WifiService: scan done"],
        "LineId,Level\n1,I\n",
    )
    (line,) = load_loghub(tmp_path, {"Android": TRAIN_SYSTEMS["Android"]}, strip_share=0.0)
    assert (line.severity, line.category) == ("info", None)
    tok = Tokenizer(train_tokenizer([line.line] * 20, tmp_path / "sp", 40, 1), 16)
    assert encode_logs(tok, [line]).known_mask().tolist() == [[1, 0, 0]]
