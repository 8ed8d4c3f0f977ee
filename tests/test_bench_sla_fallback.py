"""bench/sla_fallback.py's verdict: a transcript left unanswered counts against the run, never as
a fast answer, so a run that answers nothing cannot meet the target."""

from __future__ import annotations

import math

from benchload import load_bench

bench = load_bench("sla_fallback")
Run = bench.RunResult


def _all_answered(ms: float, n: int = 200) -> object:
    return Run(n, tuple([ms] * n))


def test_a_run_that_answers_nothing_misses() -> None:
    met, why = bench.verdict(_all_answered(40.0), Run(200, ()))
    assert not met and why == "the run with the fallback answered 0/200"
    assert Run(200, ()).percentiles() == {"p50": math.inf, "p95": math.inf, "p99": math.inf}


def test_missing_answers_count_even_when_the_answers_were_fast() -> None:
    fast_but_few = Run(200, tuple([1.0] * 199))  # 1 ms each, one never answered
    met, why = bench.verdict(_all_answered(40.0), fast_but_few)
    assert not met and "199/200" in why
    # three of 200 missing (more than 1%): the p99 over everything sent is infinite, not 1 ms
    assert Run(200, tuple([1.0] * 197)).percentiles()["p99"] == math.inf


def test_an_unloaded_run_without_answers_is_no_baseline() -> None:
    met, why = bench.verdict(Run(200, ()), _all_answered(5.0))
    assert not met and why.startswith("the unloaded run answered 0/200")
    met, why = bench.verdict(Run(0, ()), _all_answered(5.0))
    assert not met and why == "the unloaded run sent nothing"


def test_every_answer_within_twice_the_unloaded_p99_meets_the_target() -> None:
    unloaded = Run(100, tuple(float(i) for i in range(1, 101)))  # p99 99 ms
    assert unloaded.percentiles()["p99"] == 99.0
    assert bench.verdict(unloaded, _all_answered(198.0)) == (True, "p99 198.0 ms <= 198.0 ms")
    met, why = bench.verdict(unloaded, _all_answered(198.5))
    assert not met and why == "p99 198.5 ms > 198.0 ms"
