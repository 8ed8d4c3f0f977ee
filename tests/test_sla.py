"""The SLA ladder (edge_agent/runtime/sla.py): pure state machine, thermal sensor, config checks.

No timing here: the clock is a number the test moves, latencies are numbers the test feeds."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog
from structlog.testing import capture_logs

from edge_agent.config import parse
from edge_agent.errors import ConfigError
from edge_agent.runtime.sla import (
    DEFAULT_THERMAL,
    EMPTY_GRACE_S,
    LADDERS,
    NORMAL,
    RULES_ONLY,
    SHORT_INPUT,
    SMALL_MODEL,
    Ladder,
    SlaConfig,
    SlaMonitor,
    ThermalSensor,
    ladder_steps,
    p95,
)


def cfg(**kw: Any) -> SlaConfig:
    base: dict[str, Any] = {
        "intents_p95_ms": 100,
        "logs_p95_ms": 100,
        "window": 20,
        "min_samples": 10,
        "latency_hysteresis": 0.5,
        "dwell_s": 1,
        "recover_after_s": 10,
        "thermal_path": None,
    }
    base.update(kw)
    return SlaConfig.model_validate(base)


def feed(ladder: Ladder, ms: float, n: int = 20) -> None:
    for _ in range(n):
        ladder.observe(ms)


def test_p95_is_nearest_rank() -> None:
    assert p95([float(i) for i in range(1, 101)]) == 95.0
    assert p95([3.0]) == 3.0


def test_ladder_steps_down_one_step_per_measured_window_then_stops_at_the_bottom() -> None:
    ladder = Ladder("logs", LADDERS["logs"], cfg())
    seen = []
    now = 0.0
    for _ in range(5):
        feed(ladder, 500.0)
        now += 2.0
        moved = ladder.decide(now, None)
        seen.append(None if moved is None else moved[1])
    assert seen == [SHORT_INPUT, SMALL_MODEL, RULES_ONLY, None, None]
    assert ladder.step == RULES_ONLY


def test_ladder_waits_for_enough_samples_and_the_dwell() -> None:
    ladder = Ladder("intents", LADDERS["intents"], cfg())
    feed(ladder, 500.0, n=9)  # min_samples is 10
    assert ladder.decide(5.0, None) is None
    ladder.observe(500.0)
    moved = ladder.decide(5.0, None)
    assert moved is not None and moved[:2] == (NORMAL, SHORT_INPUT)
    assert "p95 500.0 ms > budget 100 ms" in moved[2]
    feed(ladder, 500.0)
    assert ladder.decide(5.5, None) is None  # dwell_s 1: too soon after the switch
    assert ladder.decide(6.1, None) is not None


def test_ladder_recovers_only_under_budget_less_hysteresis_after_recover_after_s() -> None:
    ladder = Ladder("intents", LADDERS["intents"], cfg())
    feed(ladder, 500.0)
    assert ladder.decide(1.0, None) is not None
    feed(ladder, 70.0)  # under budget, not under 100 * (1 - 0.5)
    assert ladder.decide(30.0, None) is None
    feed(ladder, 40.0, n=20)
    assert ladder.decide(5.0, None) is None  # held 4 s < recover_after_s 10
    moved = ladder.decide(12.0, None)
    assert moved is not None and moved[:2] == (SHORT_INPUT, NORMAL)
    assert "< 50 ms" in moved[2]


def test_a_step_is_measured_afresh_after_each_switch() -> None:
    ladder = Ladder("intents", LADDERS["intents"], cfg())
    feed(ladder, 500.0)
    assert ladder.decide(2.0, None) is not None
    assert ladder.p95() is None and not ladder.samples


def test_hot_steps_down_without_latencies_and_blocks_recovery() -> None:
    ladder = Ladder("intents", LADDERS["intents"], cfg())
    moved = ladder.decide(2.0, "temperature 90.0 C >= limit 80 C")
    assert moved == (NORMAL, SHORT_INPUT, "temperature 90.0 C >= limit 80 C")
    assert ladder.decide(100.0, "still hot") == (SHORT_INPUT, SMALL_MODEL, "still hot")
    assert ladder.decide(200.0, "still hot") is None  # bottom of the intents ladder
    moved = ladder.decide(300.0, None)  # no latencies yet: cool is enough to step back up
    assert moved is not None and moved[:2] == (SMALL_MODEL, SHORT_INPUT)
    assert "too few latencies to judge" in moved[2]


def test_ladder_without_small_variant_skips_that_step() -> None:
    assert ladder_steps("intents", has_small=False) == (NORMAL, SHORT_INPUT)
    assert ladder_steps("logs", has_small=False) == (NORMAL, SHORT_INPUT, RULES_ONLY)
    assert ladder_steps("logs", has_small=True) == LADDERS["logs"]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_monitor_thermal_switch_and_recovery_with_hysteresis(tmp_path: Path) -> None:
    temp = tmp_path / "temp"
    temp.write_text("45000\n")
    clock = Clock()
    mon = SlaMonitor(
        cfg(
            thermal_path=temp, thermal_limit_c=70, thermal_hysteresis_c=5, thermal_poll_s=0, recover_after_s=1
        ),
        {"intents": LADDERS["intents"]},
        clock=clock,
        wall=clock,
    )
    clock.now = 2.0
    assert mon.step("intents") == NORMAL and mon.mode() == "normal"
    temp.write_text("71500\n")
    assert mon.step("intents") == SHORT_INPUT and mon.mode() == "degraded"
    temp.write_text("67000\n")  # below the limit, not below limit - hysteresis
    clock.now = 10.0
    assert mon.step("intents") == SMALL_MODEL
    temp.write_text("64000\n")
    clock.now = 20.0
    assert mon.step("intents") == SHORT_INPUT
    clock.now = 30.0
    assert mon.step("intents") == NORMAL and mon.mode() == "normal"
    stats = mon.stats()
    assert stats["switches"] == 4 and stats["temperature_c"] == 64.0
    assert [(s["from"], s["to"]) for s in stats["recent"]] == [
        (NORMAL, SHORT_INPUT),
        (SHORT_INPUT, SMALL_MODEL),
        (SMALL_MODEL, SHORT_INPUT),
        (SHORT_INPUT, NORMAL),
    ]
    assert "71.5 C >= limit 70 C" in stats["recent"][0]["reason"]
    assert "not yet below 65 C" in stats["recent"][1]["reason"]
    json.dumps(stats)


def test_monitor_disabled_never_moves() -> None:
    clock = Clock()
    mon = SlaMonitor(cfg(enabled=False), {"intents": LADDERS["intents"]}, clock=clock)
    for _ in range(50):
        mon.observe("intents", 10_000.0)
    clock.now = 100.0
    assert mon.step("intents") == NORMAL
    assert mon.step("other") == NORMAL


def test_missing_or_garbled_thermal_file_turns_the_check_off(tmp_path: Path) -> None:
    missing = ThermalSensor(tmp_path / "nope", poll_s=0)
    assert missing.read_c() is None and missing.path is None
    garbled = tmp_path / "garbled"
    garbled.write_text("hot\n")
    sensor = ThermalSensor(garbled, poll_s=0)
    assert sensor.read_c() is None
    garbled.write_text("99000\n")
    assert sensor.read_c() is None  # off for good: logged once, never re-read


def test_thermal_file_caught_mid_rewrite_keeps_the_last_reading(tmp_path: Path) -> None:
    temp = tmp_path / "temp"
    temp.write_text("91000\n")
    sensor = ThermalSensor(temp, poll_s=0)
    assert sensor.read_c() == 91.0
    temp.write_text("")  # a writer truncated the file and has not written yet
    with capture_logs() as logs:
        assert sensor.read_c() == 91.0 and sensor.path == temp
    assert _thermal_events(logs) == []
    temp.write_text("67000\n")
    assert sensor.read_c() == 67.0


def test_thermal_file_left_empty_turns_the_check_off_after_the_grace(tmp_path: Path) -> None:
    temp = tmp_path / "temp"
    temp.write_text("91000\n")
    clock = Clock()
    sensor = ThermalSensor(temp, poll_s=0, clock=clock)
    assert sensor.read_c() == 91.0
    temp.write_text("")
    assert sensor.read_c() == 91.0
    clock.now = EMPTY_GRACE_S - 0.1
    assert sensor.read_c() == 91.0
    clock.now = EMPTY_GRACE_S  # the writer never came back: a stale reading must not stand
    with capture_logs() as logs:
        assert sensor.read_c() is None and sensor.path is None
    [(level, reason)] = _thermal_events(logs)
    assert level == "warning" and "invalid literal" in reason


@pytest.fixture
def all_levels() -> Iterator[None]:
    """Debug events reach ``capture_logs`` even after a test of this process configured the
    agent's logging (which filters below INFO); the configuration is restored afterwards."""
    before = structlog.get_config()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG))
    yield
    structlog.configure(wrapper_class=before["wrapper_class"])


def _thermal_events(logs: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(e["log_level"], e.get("reason", "")) for e in logs if e["event"] == "sla.thermal_off"]


@pytest.mark.usefixtures("all_levels")
def test_default_thermal_path_missing_on_this_host_is_a_debug_line(tmp_path: Path) -> None:
    with capture_logs() as logs:
        sensor = ThermalSensor(tmp_path / "no_zone", poll_s=0, missing_is_normal=True)
        assert sensor.read_c() is None and sensor.path is None
    assert _thermal_events(logs) == [("debug", "no thermal zone on this host")]


def test_configured_thermal_path_that_is_missing_is_a_warning(tmp_path: Path) -> None:
    with capture_logs() as logs:
        sensor = ThermalSensor(tmp_path / "typo", poll_s=0)
        assert sensor.read_c() is None and sensor.path is None
    [(level, reason)] = _thermal_events(logs)
    assert level == "warning" and "No such file" in reason


@pytest.mark.parametrize("missing_is_normal", [True, False])
def test_thermal_file_that_disappears_after_a_read_is_a_warning(
    tmp_path: Path, missing_is_normal: bool
) -> None:
    temp = tmp_path / "temp"
    temp.write_text("45000\n")
    sensor = ThermalSensor(temp, poll_s=0, missing_is_normal=missing_is_normal)
    assert sensor.read_c() == 45.0
    temp.unlink()
    with capture_logs() as logs:
        assert sensor.read_c() is None and sensor.path is None
    [(level, reason)] = _thermal_events(logs)
    assert level == "warning" and "No such file" in reason


def test_garbled_thermal_file_is_a_warning_even_at_the_default_path(tmp_path: Path) -> None:
    garbled = tmp_path / "garbled"
    garbled.write_text("hot\n")
    with capture_logs() as logs:
        assert ThermalSensor(garbled, poll_s=0, missing_is_normal=True).read_c() is None
    assert [level for level, _ in _thermal_events(logs)] == ["warning"]


def test_monitor_treats_only_the_default_thermal_path_as_optional(tmp_path: Path) -> None:
    steps = {"intents": LADDERS["intents"]}
    assert SlaMonitor(parse({}).sla, steps).thermal.missing_is_normal
    assert SlaMonitor(SlaConfig(thermal_path=DEFAULT_THERMAL), steps).thermal.missing_is_normal
    assert not SlaMonitor(cfg(thermal_path=str(tmp_path / "zone")), steps).thermal.missing_is_normal


def test_thermal_file_is_read_at_most_every_poll_s(tmp_path: Path) -> None:
    temp = tmp_path / "temp"
    temp.write_text("50000")
    clock = Clock()
    sensor = ThermalSensor(temp, poll_s=5, clock=clock)
    assert sensor.read_c() == 50.0
    temp.write_text("90000")
    clock.now = 4.0
    assert sensor.read_c() == 50.0
    clock.now = 5.0
    assert sensor.read_c() == 90.0


def test_default_sla_does_not_degrade_an_unloaded_run() -> None:
    config = parse({}).sla
    assert config.enabled and config.intents_p95_ms >= 100 and config.logs_p95_ms >= 1000
    clock = Clock()
    mon = SlaMonitor(config.model_copy(update={"thermal_path": None}), dict(LADDERS), clock=clock)
    for i in range(500):
        mon.observe("intents", 5.0)
        mon.observe("logs", 30.0)
        clock.now = float(i)
        assert mon.step("intents") == NORMAL and mon.step("logs") == NORMAL


@pytest.mark.parametrize(
    ("data", "field", "fix"),
    [
        ({"sla": {"intents_p95_ms": 0}}, "sla.intents_p95_ms", "greater than 0"),
        ({"sla": {"window": 10, "min_samples": 50}}, "sla.min_samples", "raise sla.window"),
        (
            {"sla": {"thermal_limit_c": 60, "thermal_hysteresis_c": 60}},
            "sla.thermal_hysteresis_c",
            "< thermal_limit_c",
        ),
        ({"sla": {"latency_hysteresis": 1.5}}, "sla.latency_hysteresis", "less than 1"),
        ({"sla": {"p95_ms": 10}}, "sla.p95_ms", "allowed keys here: dwell_s, enabled, intents_p95_ms"),
    ],
)
def test_bad_sla_config_names_the_field_and_the_fix(data: dict[str, Any], field: str, fix: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse(data)
    assert f"{field}: " in str(err.value) and fix in str(err.value)


def test_thermal_null_is_accepted() -> None:
    assert parse({"sla": {"thermal_path": None}}).sla.thermal_path is None
