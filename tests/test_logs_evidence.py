"""Anomaly from evidence: stated levels, template history per source, warm-up, rate jumps, and
the history kept across restarts. Lines written for these tests; keyword labels (no bundle)."""

from __future__ import annotations

from pathlib import Path

from edge_agent.logs.config import LogsConfig
from edge_agent.logs.evidence import WARMUP_LINES, Evidence
from edge_agent.logs.service import LogService
from edge_agent.records.logs import LogLabel
from edge_agent.store import FileStore

ROUTINE = "2026-01-05 09:00:{s:02d} 0 [Note] InnoDB: Buffer pool {i} loaded"
FAILED = "Jan  5 09:00:{s:02d} gw sshd[{i}]: Failed password for root from 10.0.{i}.7 port 22 ssh2"


def _flags(svc: LogService, lines: list[str], source: str = "db") -> list[bool]:
    return [r.label.anomaly for r in svc.process(lines, source)]


def test_a_stated_level_wins_over_the_words() -> None:
    svc = LogService()
    warn, err = svc.process(
        [
            "2026-01-05 09:00:01 3 [Warning] Aborted connection 3 to db: 'unconnected' (closed normally)",
            "2026-01-05 09:00:01 3 [ERROR] Can't open the mysql.plugin table",
        ],
        "db",
    )
    assert (warn.label.severity, warn.label.anomaly) == ("warning", False)  # a start-up warning
    assert (err.label.severity, err.label.anomaly) == ("error", True)


def test_a_template_seen_often_becomes_routine() -> None:
    svc = LogService()
    flags = _flags(svc, [FAILED.format(s=i % 60, i=i) for i in range(40)], "sshd")
    assert flags[0] is True
    assert sum(flags) <= 3 and not any(flags[5:])


def test_info_lines_are_not_flagged() -> None:
    svc = LogService()
    assert not any(_flags(svc, [ROUTINE.format(s=i % 60, i=i) for i in range(300)]))


def test_history_is_per_source() -> None:
    svc = LogService()
    lines = [FAILED.format(s=i, i=i) for i in range(10)]
    _flags(svc, lines, "gw-1")
    assert _flags(svc, lines[:1], "gw-1") == [False]
    assert _flags(svc, lines[:1], "gw-2") == [True]  # new on this source


def test_new_warning_counts_only_once_the_source_is_warm() -> None:
    warning = "2026-01-05 09:10:00,001 WARN [main] Queue depth above watermark on topic orders"
    cold = LogService()
    assert _flags(cold, [warning]) == [False]
    warm = LogService()
    _flags(
        warm,
        [f"2026-01-05 09:0{i % 10}:00,001 INFO [main] Heartbeat {i} sent" for i in range(WARMUP_LINES + 1)],
    )
    assert _flags(warm, [warning]) == [True]


def test_a_rate_jump_is_flagged_once() -> None:
    svc = LogService()
    timeout = "2026-01-05 09:00:00,001 WARN [io] Read timed out on link {i}"
    background = [f"2026-01-05 09:00:00,001 INFO [main] Heartbeat {i} sent" for i in range(2000)]
    lines = []
    for i, line in enumerate(background):  # one timeout every 100 lines: routine after a while
        lines.append(line)
        if i % 100 == 0:
            lines.append(timeout.format(i=i))
    assert not any(_flags(svc, lines)[-1000:])
    burst = _flags(svc, [timeout.format(i=i) for i in range(30)])
    assert sum(burst) == 1  # flagged when the jump starts, not on every line of it


def test_history_survives_a_restart(tmp_path: Path) -> None:
    cfg = LogsConfig(state_dir=str(tmp_path))
    first = LogService(config=cfg)
    _flags(first, [FAILED.format(s=i, i=i) for i in range(20)], "sshd")
    first.save()
    again = LogService(config=cfg)
    assert _flags(again, [FAILED.format(s=1, i=99)], "sshd") == [False]
    assert again.evidence.sources["sshd"].lines == 21
    assert FileStore(tmp_path).load(cfg.state_key) is not None


def test_a_warning_in_the_words_counts_before_warm_up() -> None:
    """A model that scores a line 0.8: with no level stated, words that say warning let it count
    on a cold source; the same warning stated by a start-up waits for the warm-up."""
    label = LogLabel(severity="warning", category="storage", anomaly=False, score=0.8)
    cold_words = Evidence.score(label, None, seen=0, warm=False, jump=False, trouble="warning")
    cold_stated = Evidence.score(label, "warning", seen=0, warm=False, jump=False, trouble="warning")
    warm_stated = Evidence.score(label, "warning", seen=0, warm=True, jump=False, trouble="warning")
    assert cold_words >= 0.5 > cold_stated and warm_stated >= 0.5
    alone = Evidence.score(label, None, seen=0, warm=True, jump=False, trouble=None)
    assert alone < 0.5  # the model on its own does not flag


def test_a_stated_critical_failure_stays_flagged_while_it_repeats() -> None:
    """A FATAL line whose words name a failure is flagged each time; a FATAL line whose words name
    nothing (a register dump after the crash) is never an anomaly of its own: it joins the
    incident of the failure before it (incidents.py)."""
    svc = LogService()
    failure = "2026-01-05 09:00:{s:02d},001 FATAL [dma] Read failed on channel {i}: I/O error"
    dump = "2026-01-05 09:00:{s:02d},001 FATAL [dma] r{i:02d}=0x{i:08x} r{j:02d}=0x{j:08x}"
    lines = []
    for i in range(60):
        lines += [failure.format(s=i, i=i), dump.format(s=i, i=i % 32, j=(i + 1) % 32)]
    results = svc.process(lines, "node-7")
    assert all(r.label.anomaly for r in results[0::2])
    assert not any(r.label.anomaly for r in results[1::2])
    assert all(r.incident == results[0].incident for r in results) and results[0].opens
