"""Real log lines for the log heads (firmware_tools/data/loghub.py) on a folder the test writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from edge_agent.runtime.tokenizer import Tokenizer
from firmware_tools.data.loghub import TRAIN_SYSTEMS, load_loghub
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
