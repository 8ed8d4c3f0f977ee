"""How long the README's test command spends in pytest: wall and CPU time of the whole suite.

    nice -n 10 .venv/bin/python bench/test_suite_time.py [--runs 3] [--workers auto|N|0] [PATH ...]

Runs pytest as ``scripts/test.sh`` does (``-n auto --dist loadfile --no-loadscope-reorder``: a
worker per core, each test file on one worker, in name order) after ``scripts/test.sh`` has
installed everything (ruff and mypy are not timed). ``--workers 0`` runs the suite in one process,
as before the suite ran in parallel. Each run prints its wall time, the CPU time of pytest and
every process it waited for (``wait4``: workers, agents, brokers, builds), and the load average
before and after, since a shared machine's other work lengthens the wall time; then the median.
Target (issue 28): the median at most 300 s on a 2-core machine.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET_S = 300.0
# the pytest options of scripts/test.sh (checked against the script, so the two cannot drift)
DIST = ["--dist", "loadfile", "--no-loadscope-reorder"]


def pytest_command(workers: str) -> list[str]:
    script = (REPO / "scripts" / "test.sh").read_text(encoding="utf-8")
    if " ".join(DIST) not in script:
        raise SystemExit(f"scripts/test.sh no longer runs pytest with {' '.join(DIST)}: update this bench")
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", workers, *DIST]


def run_once(cmd: list[str]) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds, pytest's last line) of one run; exits when a test fails."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.stdout is not None
    output = proc.stdout.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    lines = [line for line in output.splitlines() if line.strip()]
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n" + "\n".join(lines[-30:]))
    return wall, usage.ru_utime + usage.ru_stime, re.sub(r"=+", "", lines[-1]).strip()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=1, help="runs to take the median of (default 1)")
    parser.add_argument("--workers", default="auto", help="pytest-xdist workers: auto (default), N, or 0")
    parser.add_argument("paths", nargs="*", help="test files or directories (default: the whole suite)")
    args = parser.parse_args()
    cmd = pytest_command(args.workers) + args.paths
    print(f"{' '.join(cmd[1:])}  ({os.cpu_count()} cores)")
    walls: list[float] = []
    cpus: list[float] = []
    for i in range(args.runs):
        before = os.getloadavg()[0]
        wall, cpu, summary = run_once(cmd)
        walls.append(wall)
        cpus.append(cpu)
        print(f"  run {i + 1}: {wall:6.1f} s wall, {cpu:6.1f} s cpu, load {before:.2f} -> "
              f"{os.getloadavg()[0]:.2f}  ({summary})", flush=True)
    wall_m, cpu_m = statistics.median(walls), statistics.median(cpus)
    line = f"median of {args.runs}: {wall_m:.1f} s wall, {cpu_m:.1f} s cpu"
    if not args.paths:  # the target is for the whole suite
        line += f"; target <= {TARGET_S:.0f} s: {'met' if wall_m <= TARGET_S else 'NOT met'}"
    print(line)


if __name__ == "__main__":
    main()
