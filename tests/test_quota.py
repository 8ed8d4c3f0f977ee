"""CPU quota: cgroup v2 limits, thread and affinity choices, and the duty-cycle governor."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from edge_agent.errors import ConfigError
from edge_agent.runtime.quota import (
    CpuGovernor,
    apply_affinity,
    cgroup_cpu_limit,
    effective_quota,
    governor_from_config,
    interpreter_threads,
)


def _cgroup_tree(tmp_path: Path, limits: dict[str, str]) -> tuple[Path, Path]:
    root = tmp_path / "cgroup"
    for rel, value in limits.items():
        d = root / rel
        d.mkdir(parents=True, exist_ok=True)
        (d / "cpu.max").write_text(value + "\n")
    proc = tmp_path / "proc_self_cgroup"
    proc.write_text("0::/system.slice/edge-agent.service\n")
    (root / "system.slice" / "edge-agent.service").mkdir(parents=True, exist_ok=True)
    return root, proc


def test_cgroup_limit_is_the_tightest_ancestor(tmp_path: Path) -> None:
    root, proc = _cgroup_tree(
        tmp_path,
        {
            "": "max 100000",
            "system.slice": "150000 100000",
            "system.slice/edge-agent.service": "50000 100000",
        },
    )
    assert cgroup_cpu_limit(root, proc) == pytest.approx(0.5)
    (root / "system.slice" / "cpu.max").write_text("25000 100000\n")
    assert cgroup_cpu_limit(root, proc) == pytest.approx(0.25)


def test_cgroup_without_limit_or_v2_is_none(tmp_path: Path) -> None:
    root, proc = _cgroup_tree(tmp_path, {"system.slice/edge-agent.service": "max 100000"})
    assert cgroup_cpu_limit(root, proc) is None
    v1 = tmp_path / "v1"
    v1.write_text("4:memory:/x\n1:cpu:/\n")
    assert cgroup_cpu_limit(root, v1) is None
    assert cgroup_cpu_limit(root, tmp_path / "missing") is None


def test_effective_quota_never_exceeds_the_cgroup() -> None:
    assert effective_quota(0.5, None) == 0.5
    assert effective_quota(0.5, 0.25) == 0.25
    assert effective_quota(0.5, 2.0) == 0.5
    assert effective_quota(None, 0.3) == 0.3
    assert effective_quota(None, None) is None


def test_governor_from_config_follows_the_cgroup() -> None:
    gov = governor_from_config(0.5, cgroup_limit=lambda: 0.2)
    assert gov is not None and gov.quota == pytest.approx(0.2)
    assert governor_from_config(None, cgroup_limit=lambda: 0.2) is None


def test_interpreter_threads_under_quota() -> None:
    assert interpreter_threads(4, 0.5) == 1
    assert interpreter_threads(4, 1.5) == 2
    assert interpreter_threads(2, 8.0) == 2
    assert interpreter_threads(3, None) == 3


def test_affinity_refuses_cpus_the_process_cannot_use() -> None:
    allowed = sorted(os.sched_getaffinity(0))
    with pytest.raises(ConfigError, match="not available"):
        apply_affinity([max(allowed) + 100])
    try:
        assert apply_affinity(allowed[:1]) == set(allowed[:1])
        assert os.sched_getaffinity(0) == set(allowed[:1])
    finally:
        os.sched_setaffinity(0, set(allowed))


class _SimClock:
    """Wall and CPU clocks that only move when the simulated workload says so."""

    def __init__(self) -> None:
        self.wall = 0.0
        self.cpu = 0.0

    def work(self, seconds: float, cores: float = 1.0) -> None:
        self.wall += seconds
        self.cpu += seconds * cores

    def sleep(self, seconds: float) -> None:
        self.wall += seconds


@pytest.mark.parametrize("quota", [0.25, 0.5, 1.5])
def test_governor_keeps_average_use_at_quota_under_a_flood(quota: float) -> None:
    clock = _SimClock()
    gov = CpuGovernor(quota, cpu_time=lambda: clock.cpu, now=lambda: clock.wall, sleep=clock.sleep)
    windows = []
    for _ in range(6):  # six 10 s windows of endless batch work, 20 ms units on two busy cores
        w0, c0 = clock.wall, clock.cpu
        while clock.wall - w0 < 10.0:
            gov.throttle()
            clock.work(0.02, cores=2.0)
        windows.append((clock.cpu - c0) / (clock.wall - w0))
    for used in windows[1:]:
        assert used == pytest.approx(quota, rel=0.10)


def test_governor_charges_interactive_cpu_to_batch_work() -> None:
    clock = _SimClock()
    gov = CpuGovernor(0.5, cpu_time=lambda: clock.cpu, now=lambda: clock.wall, sleep=clock.sleep)
    batch_cpu = 0.0
    w0 = clock.wall
    while clock.wall - w0 < 20.0:
        clock.work(0.01, cores=0.2 * 1)  # interactive work, never throttled: 0.2 cores when it runs
        gov.throttle()
        clock.work(0.01)
        batch_cpu += 0.01
    total = clock.cpu / (clock.wall - w0)
    assert total == pytest.approx(0.5, rel=0.1)
    assert batch_cpu / (clock.wall - w0) < 0.5  # batch got what interactive left


def test_batch_waits_while_interactive_work_is_in_flight() -> None:
    gov = CpuGovernor(4.0)
    done = threading.Event()

    def batch() -> None:
        gov.throttle()
        done.set()

    with gov.interactive():
        t = threading.Thread(target=batch)
        t.start()
        assert not done.wait(0.2)
    assert done.wait(5)
    t.join()
    assert gov.throttled_s > 0


def test_governor_really_limits_a_busy_thread() -> None:
    quota = 0.3
    gov = CpuGovernor(quota, burst_s=0.05)
    stop = time.monotonic() + 1.5
    c0, w0 = time.process_time(), time.monotonic()
    while time.monotonic() < stop:
        gov.throttle()
        end = time.perf_counter() + 0.005
        while time.perf_counter() < end:
            pass
    used = (time.process_time() - c0) / (time.monotonic() - w0)
    assert used < 0.6  # unthrottled this loop uses a whole core
    assert gov.throttled_s > 0


def test_quota_must_be_positive() -> None:
    with pytest.raises(ConfigError):
        CpuGovernor(0)
