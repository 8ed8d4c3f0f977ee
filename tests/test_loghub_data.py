"""Real log lines for the log heads (firmware_tools/data/loghub.py) on a folder the test writes,
and the hand-labelled category of each template (``loghub_categories.tsv``) against the loghub 2k
samples of the training systems when they are on this machine (``../shared/eval/logs``)."""

from __future__ import annotations

import csv
import re
from collections import Counter
from pathlib import Path

import pytest

from edge_agent.logs.labels import CATEGORIES
from edge_agent.runtime.tokenizer import Tokenizer
from firmware_tools.data.loghub import (
    CATEGORY_FILE,
    SEVERITY_BENCH_SYSTEMS,
    STRIP_SHARE,
    TRAIN_SYSTEMS,
    load_loghub,
    read_system,
    strip_level,
    template_categories,
)
from firmware_tools.model.dataset import encode_logs, train_tokenizer

ROOT = Path(__file__).resolve().parents[1]
LOGHUB = ROOT.parent / "shared" / "eval" / "logs"  # the loghub 2k samples, outside the repository

RAW = [
    "081109 203615 148 INFO dfs.DataNode: Receiving block blk_1 src: /10.0.0.1:5000",
    "081109 203616 149 WARN dfs.DataNode: Slow BlockReceiver write packet to mirror took 400ms",
]
STRUCTURED = "LineId,Level,Content,EventId\n1,INFO,Receiving block,E13\n2,WARN,Slow BlockReceiver,E11\n"


def _system(root: Path, name: str, raw: list[str], structured: str) -> None:
    (root / name).mkdir(parents=True)
    (root / name / f"{name}_2k.log").write_text("\n".join(raw) + "\n", encoding="utf-8")
    (root / name / f"{name}_2k.log_structured.csv").write_text(structured, encoding="utf-8")


def test_stated_levels_and_the_template_category_are_known_anomaly_is_not(tmp_path: Path) -> None:
    _system(tmp_path, "HDFS", RAW, STRUCTURED)
    _system(
        tmp_path,
        "Proxifier",
        ["[10.30 16:49:06] chrome.exe - host:443 open through proxy"],
        "LineId,Content,EventId\n1,x,E2\n",
    )
    lines = load_loghub(tmp_path, ("HDFS", "Proxifier"))
    assert [(x.severity, x.category) for x in lines] == [
        ("info", "storage"),
        ("warning", "storage"),
        (None, "network"),
    ]
    assert load_loghub(tmp_path, {"HDFS": "storage"}) == lines[:2]  # a dict names systems by its keys
    assert not any(x.anomaly_known for x in lines)
    tok = Tokenizer(train_tokenizer([x.line for x in lines] * 20, tmp_path / "sp", 60, 1), 16)
    arrays = encode_logs(tok, lines)
    assert arrays.known_mask().tolist() == [[1, 1, 0], [1, 1, 0], [0, 1, 0]]


def test_a_system_whose_files_disagree_is_refused(tmp_path: Path) -> None:
    _system(tmp_path, "HDFS", RAW[:1], STRUCTURED)
    with pytest.raises(ValueError, match="1 lines but 2 structured rows"):
        load_loghub(tmp_path, ["HDFS"])
    with pytest.raises(FileNotFoundError, match="Spark"):
        load_loghub(tmp_path, ["Spark"])


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
    rows = "".join(f"{i},{'WARN' if i % 4 == 0 else 'INFO'},x,E9\n" for i in range(60))
    _system(tmp_path, "HDFS", raw, "LineId,Level,Content,EventId\n" + rows)
    lines = load_loghub(tmp_path, ["HDFS"])
    hidden = [x for x in lines if not x.level_shown]
    assert 15 < len(hidden) < 45  # about STRIP_SHARE of 60
    for x, original in zip(lines, raw, strict=True):
        assert x.severity == ("warning" if " WARN " in original else "info")
        if not x.level_shown:
            assert " INFO " not in x.line and " WARN " not in x.line and x.line.endswith(original[-8:])
        else:
            assert x.line == original
    assert load_loghub(tmp_path, ["HDFS"]) == lines  # the same lines every time
    assert all(x.level_shown for x in load_loghub(tmp_path, ["HDFS"], strip_share=0.0))


def test_the_severity_bench_scores_only_systems_never_trained_on() -> None:
    assert not set(SEVERITY_BENCH_SYSTEMS) & set(TRAIN_SYSTEMS)
    assert 0.0 < STRIP_SHARE < 1.0


def test_lines_of_one_system_take_the_category_of_their_template(tmp_path: Path) -> None:
    labels = template_categories()
    _system(
        tmp_path,
        "Spark",
        [f"17/06/09 20:10:4{i} INFO executor.Executor: line {i}" for i in range(3)],
        "LineId,Level,Content,EventId\n1,INFO,x,E24\n2,INFO,x,E4\n3,INFO,x,E2\n",
    )
    lines = load_loghub(tmp_path, ["Spark"], strip_share=0.0)
    assert [x.category for x in lines] == [labels["Spark", e] for e in ("E24", "E4", "E2")]
    assert [x.category for x in lines] == ["application", "auth", "storage"]
    tok = Tokenizer(train_tokenizer([x.line for x in lines] * 20, tmp_path / "sp", 40, 1), 16)
    assert encode_logs(tok, lines).known_mask().tolist() == [[1, 1, 0]] * 3


def test_a_line_whose_template_has_no_category_is_refused(tmp_path: Path) -> None:
    raw = ["03-17 16:13:38.811  1702  2395 I WifiService: scan done"]
    _system(tmp_path, "Android", raw, "LineId,Level,EventId\n1,I,E999\n")
    with pytest.raises(ValueError, match=r"Android: no category in loghub_categories\.tsv for EventId E999"):
        load_loghub(tmp_path, ["Android"])
    _system(tmp_path, "HealthApp", raw, "LineId,Level\n1,I\n")  # no EventId column at all
    with pytest.raises(ValueError, match=r"HealthApp: .* EventId \(none\)"):
        load_loghub(tmp_path, ["HealthApp"])


def test_the_category_file_labels_templates_of_the_training_systems_only() -> None:
    rows = [
        ln.split("\t")
        for ln in CATEGORY_FILE.read_text(encoding="utf-8").splitlines()
        if ln.strip() and not ln.startswith("#")
    ]
    assert rows and all(len(row) == 3 for row in rows)
    # System, EventId, category and nothing else: no loghub text
    assert {system for system, _, _ in rows} == set(TRAIN_SYSTEMS)
    assert all(re.fullmatch(r"E\d+", event) for _, event, _ in rows)
    assert {category for _, _, category in rows} <= set(CATEGORIES)
    assert len(template_categories()) == len(rows)  # no template labelled twice


def _event_ids(path: Path) -> set[str]:
    with path.open(encoding="utf-8", errors="replace", newline="") as fh:
        return {row["EventId"].strip() for row in csv.DictReader(fh)}


@pytest.mark.skipif(not LOGHUB.is_dir(), reason=f"the loghub 2k samples are not on this machine ({LOGHUB})")
def test_every_template_of_the_training_systems_has_a_category() -> None:
    labels = template_categories()
    for system in TRAIN_SYSTEMS:
        folder = LOGHUB / system
        templates = _event_ids(folder / f"{system}_2k.log_templates.csv")
        used = _event_ids(folder / f"{system}_2k.log_structured.csv")
        labelled = {event for s, event in labels if s == system}
        assert used <= templates
        assert not templates - labelled, f"{system}: templates without a category"
        assert not labelled - templates, f"{system}: rows for templates loghub does not have"
    lines = load_loghub(LOGHUB, strip_share=0.0)  # lines of TRAIN_SYSTEMS, system after system
    sizes = [len(read_system(LOGHUB, system)) for system in TRAIN_SYSTEMS]
    assert len(lines) == sum(sizes)
    per_system: dict[str, Counter[str | None]] = {}
    at = 0
    for system, n in zip(TRAIN_SYSTEMS, sizes, strict=True):
        per_system[system] = Counter(x.category for x in lines[at : at + n])
        at += n
    assert all(None not in counts for counts in per_system.values())
    mixed = {system for system, counts in per_system.items() if len(counts) > 1}
    # a system's lines are about several parts (HDFS's are all blocks, Proxifier's all connections)
    assert mixed == set(TRAIN_SYSTEMS) - {"HDFS", "Proxifier"}, per_system
