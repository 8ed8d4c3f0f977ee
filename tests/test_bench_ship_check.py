"""bench/ship_check.py: the ship rule of docs/model.md over the benches' paired lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchload import load_bench

bench = load_bench("ship_check")

DEV_OUT = """\
== paired, per request: a = cand, b = shipped
  dev, in scope: a 970/1000, b 960/1000; only a right 15, only b right 5, p = 0.041
  dev, out of scope: a 10/12, b 10/12; only a right 0, only b right 0, p = 1.0
  inscope, in scope: a 100/110, b 101/110; only a right 1, only b right 2, p = 1.0
  oos, out of scope: a 160/175, b 168/175; only a right 0, only b right 8, p = 0.0078
  probe3_dev.jsonl, in scope: a 50/60, b 49/60; only a right 2, only b right 1, p = 1.0
  pooled over dev, probes 1-2, in scope: a 1/1, b 1/1; only a right 0, only b right 0, p = 1.0
  dev, slots per expected slot: a 900/950, b 899/950; only a right 38, only b right 37, p = 1.0
"""


def test_the_rule_sets_are_read_and_the_others_skipped() -> None:
    sets = {s.name: s for s in bench.parse_paired("intents_dev", DEV_OUT)}
    assert sorted(sets) == ["HA intent", "HA slots", "oos_dev.txt", "probe3 in scope"]
    ha = sets["HA intent"]
    assert (ha.a, ha.b, ha.n, ha.a_only, ha.b_only, ha.p) == (970, 960, 1000, 15, 5, 0.041)
    # the same label from another script is another set (real_dev prints "dev in scope")
    real = bench.parse_paired(
        "intents_real_dev", "  paired, dev in scope: a 9/10, b 8/10; only a right 1, only b right 0, p = 1.0"
    )
    assert [s.name for s in real] == ["real in scope"]


def test_a_set_the_candidate_loses_at_p_below_alpha_stops_it() -> None:
    sets = bench.parse_paired("intents_dev", DEV_OUT)
    real = [
        bench.Paired("real in scope", 92, 91, 100, 3, 2, 1.0),
        bench.Paired("real out of scope", 98, 98, 100, 0, 0, 1.0),
        bench.Paired("log error templates", 4, 4, 11, 0, 0, 1.0),
    ]
    verdict = bench.judge(sets + real, "HA intent", 0.10, 2.2, 0.17)
    assert verdict.target_improves and not verdict.bars_failed
    assert [s.name for s in verdict.worse] == ["oos_dev.txt"]
    assert not verdict.ships
    # the same loss at a stricter level is no longer significant: it ships
    assert bench.judge(sets + real, "HA intent", 0.005, 2.2, 0.17).ships
    report = "\n".join(bench.report(sets + real, verdict, 0.10))
    assert "oos_dev.txt" in report and "WORSE" in report and "does not ship" in report


def test_bars_and_the_target_are_checked() -> None:
    sets = [
        bench.Paired("HA intent", 960, 975, 1000, 5, 20, 0.2),  # 96.0% < 97%, and not significant
        bench.Paired("real in scope", 92, 91, 100, 3, 2, 1.0),
        bench.Paired("real out of scope", 98, 98, 100, 0, 0, 1.0),
    ]
    verdict = bench.judge(sets, "real out of scope", 0.10, 3.5, None)
    assert not verdict.target_improves  # level is not an improvement
    assert any(f.startswith("HA intent 96.00%") for f in verdict.bars_failed)
    assert any("loghub flags" in f for f in verdict.bars_failed)
    assert any("error/critical" in f for f in verdict.bars_failed)
    assert verdict.worse == []
    assert "log error templates not measured" in verdict.bars_failed
    assert not bench.judge(sets, "no such set", 0.10, 1.0, 0.1).target_improves


def _sev_dump(path: Path, rows: list[tuple[str, str, str, str]]) -> Path:
    keys = ("system", "event", "stated", "predicted")
    path.write_text("".join(json.dumps(dict(zip(keys, r, strict=True))) + "\n" for r in rows))
    return path


def test_error_templates_are_counted_once_by_their_lines_majority(tmp_path: Path) -> None:
    rows = [
        ("Apache", "E1", "error", "info"),  # one template of many lines, read as info by most
        ("Apache", "E1", "error", "info"),
        ("Apache", "E1", "error", "error"),
        ("Apache", "E2", "error", "warning"),
        ("Apache", "E3", "notice", "info"),  # not an error template
        ("Zookeeper", "E1", "critical", "critical"),  # same id, another system
    ]
    shipped_rows = [(s, e, st, "error" if st != "notice" else p) for s, e, st, p in rows]
    cand = _sev_dump(tmp_path / "c.jsonl", rows)
    ship = _sev_dump(tmp_path / "s.jsonl", shipped_rows)
    got = bench.template_set(cand, ship)
    assert (got.name, got.n, got.a, got.b, got.a_only, got.b_only) == ("log error templates", 3, 2, 3, 0, 1)
    others = [
        bench.Paired("HA intent", 980, 975, 1000, 10, 5, 0.3),
        bench.Paired("real in scope", 92, 91, 100, 3, 2, 1.0),
        bench.Paired("real out of scope", 98, 98, 100, 0, 0, 1.0),
    ]
    verdict = bench.judge([*others, got], "HA intent", 0.10, 1.0, 0.1)
    assert verdict.bars_failed == ["log error templates 2 < 3 of the shipped bundle"]
    assert not verdict.ships
    level = bench.template_set(ship, ship)
    assert bench.judge([*others, level], "HA intent", 0.10, 1.0, 0.1).ships


def _dump(path: Path, rows: list[tuple[str, str, bool]]) -> Path:
    path.write_text("".join(json.dumps({"key": k, "group": g, "ok": ok}) + "\n" for k, g, ok in rows))
    return path


def test_custom_headline_pools_the_uncovered_groups_and_leaves_out_other(tmp_path: Path) -> None:
    case = "SGD test"
    a = _dump(
        tmp_path / "a",
        [
            (f"{case}:0", f"{case} custom", True),
            (f"{case}:1", f"{case} custom", True),
            (f"{case}:2", f"{case} SGD, other services", False),
            (f"{case}:3", f"{case} SGD, our services", True),
            (f"{case}:4", f"{case} other: a loaded service's other intent", False),
        ],
    )
    b = _dump(
        tmp_path / "b",
        [
            (f"{case}:0", f"{case} custom", False),
            (f"{case}:1", f"{case} custom", True),
            (f"{case}:2", f"{case} SGD, other services", True),
            (f"{case}:3", f"{case} SGD, our services", True),
            (f"{case}:4", f"{case} other: a loaded service's other intent", True),
        ],
    )
    sets = {s.name: s for s in bench.custom_sets(a, b)}
    assert sorted(sets) == ["custom SGD test left alone", "custom SGD test recognized"]
    rec, alone = sets["custom SGD test recognized"], sets["custom SGD test left alone"]
    assert (rec.a, rec.b, rec.n, rec.a_only, rec.b_only) == (2, 1, 2, 1, 0)
    assert (alone.a, alone.b, alone.n, alone.a_only, alone.b_only) == (1, 2, 2, 0, 1)


def test_dumps_of_different_lines_are_refused(tmp_path: Path) -> None:
    a = _dump(tmp_path / "a", [("c:0", "c custom", True)])
    b = _dump(tmp_path / "b", [("c:1", "c custom", True)])
    with pytest.raises(SystemExit, match="different lines"):
        bench.custom_sets(a, b)


def test_last_share_reads_the_figure_of_a_summary_line() -> None:
    text = "Mac    2000   44   2.20 %\nloghub worst           2.20 %\nlocal overall  10091  0.17%  0.06%\n"
    assert bench.last_share(text, "loghub worst") == 2.2
    assert bench.last_share(text, "local overall", 0) == 0.17
    assert bench.last_share(text, "missing") is None
