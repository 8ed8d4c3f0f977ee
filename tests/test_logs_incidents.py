"""Incidents: one alert per failure, not per line (edge_agent/logs/incidents.py). Lines written for
these tests; keyword labels (no bundle), so what is tested is the incident logic and the words."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import jsonschema

from edge_agent.logs.config import LogsConfig
from edge_agent.logs.incidents import input_fault, is_dump, line_clock
from edge_agent.logs.parse import infer_severity
from edge_agent.logs.service import LogService
from edge_agent.records.logs import RawLine

ALERT = json.loads(resources.files("edge_agent").joinpath("schemas", "alert.schema.json").read_text("utf-8"))

# a kernel oops as a gateway's console prints it: the report, then its dump at the same priority
OOPS = [
    "<1>[ 5120.331201] BUG: unable to handle page fault for address: ffff8a4b00000010",
    "<1>[ 5120.331207] #PF: supervisor read access in kernel mode",
    "<1>[ 5120.331210] CPU: 1 PID: 2231 Comm: modbusd Not tainted 6.6.20 #1",
    "<1>[ 5120.331214] Hardware name: Acme GW-200/GW-200, BIOS 1.07 03/02/2025",
    "<1>[ 5120.331219] RIP: 0010:rs485_poll+0x3c/0x120 [gw_serial]",
    "<1>[ 5120.331223] RSP: 0018:ffffb1c2c0443d28 EFLAGS: 00010246",
    "<1>[ 5120.331227] RAX: 0000000000000000 RBX: ffff8a4b01c2e000 RCX: 0000000000000001",
    "<1>[ 5120.331231] Call Trace:",
    "<1>[ 5120.331234]  <TASK>",
    "<1>[ 5120.331238]  ? rs485_poll+0x3c/0x120 [gw_serial]",
    "<1>[ 5120.331241]  worker_thread+0x1d5/0x3c0",
    "<1>[ 5120.331245]  </TASK>",
]
ROUTINE = "Jan  5 10:00:{i:02d} gw telemetry[3]: published {i} samples to broker"


def _alerts(out: list[Any]) -> list[dict[str, Any]]:
    return [o.payload for o in out if o.topic_suffix.startswith("alert/")]


def test_the_dump_after_a_crash_report_joins_its_incident() -> None:
    svc = LogService(config=LogsConfig(window_s=3600))
    routine = [RawLine(ROUTINE.format(i=i)) for i in range(20)]
    out = svc.ingest("gw-kernel", routine + [RawLine(line) for line in OOPS] + routine, now=50.0)
    (alert,) = _alerts(out)  # at once, from the call that brought the report and its dump
    jsonschema.validate(alert, ALERT)
    assert alert["line"] == OOPS[0] and alert["severity"] == "critical"
    assert alert["joined"] == len(OOPS) - 1  # the dump, not the routine lines around it
    assert alert["headline"].endswith(f"(+{len(OOPS) - 1} lines)")
    results = LogService().process(OOPS, "gw-kernel")
    assert results[0].opens and results[0].label.anomaly
    assert {r.to_dict()["incident"] for r in results} == {1}
    # a dump line that only states the crash's level is context, not an anomaly of its own
    assert not any(r.label.anomaly for r in results[2:])


def test_lines_that_join_later_do_not_alert_again_and_the_summary_counts_them() -> None:
    svc = LogService(config=LogsConfig(window_s=3600, incident_gap_s=5))
    first = svc.ingest("gw-kernel", [RawLine(line) for line in OOPS[:4]], now=10.0)
    rest = svc.ingest("gw-kernel", [RawLine(line) for line in OOPS[4:]], now=11.0)
    assert [a["joined"] for a in _alerts(first)] == [3] and _alerts(rest) == []
    (summary,) = [o.payload for o in svc.flush(12.0) if o.topic_suffix.startswith("summary/")]
    opener = [a for a in summary["anomalies"] if a["line"] == OOPS[0]]
    assert opener and opener[0]["incident"] == 1 and opener[0]["joined"] == len(OOPS) - 1


def test_a_burst_of_one_fault_is_one_incident_and_a_later_one_another() -> None:
    svc = LogService(config=LogsConfig(window_s=3600, incident_gap_s=3, alert_cooldown_s=0))
    fault = "mce: CPU{n}: Machine Check: 0 Bank 4: b20000000007{n:04d}"
    burst = [RawLine(fault.format(n=i % 4), ts=1000.0 + i) for i in range(10)]
    later = [RawLine("watchdog: BUG: soft lockup - CPU#2 stuck for 23s! [modbusd:881]", ts=1100.0)]
    out = svc.ingest("cpu", burst, now=2000.0) + svc.ingest("cpu", later, now=2001.0)
    assert [a["joined"] for a in _alerts(out)] == [9, 0]  # the later fault was beyond the gap
    results = LogService(config=LogsConfig(incident_gap_s=3)).process(burst + later, "cpu")
    assert [r.to_dict().get("incident") for r in results] == [1] * 10 + [2]
    assert [r.opens for r in results].count(True) == 2


def test_a_request_failing_on_its_own_input_is_a_warning_of_its_party() -> None:
    job = "job {n} (user {u}): cannot open input /home/{u}/run.cfg: No such file or directory"
    svc = LogService(config=LogsConfig(input_fault_parties=5))
    (one,) = svc.process([job.format(n=100, u="alice")], "launcher")
    assert (one.label.severity, one.label.anomaly) == ("warning", False)
    assert one.incident is None
    # the same failure for many different users points at the system
    users = ["bob", "carol", "dave", "erin"]
    results = svc.process([job.format(n=101 + i, u=u) for i, u in enumerate(users)], "launcher")
    assert results[-1].label.anomaly and results[-1].label.severity == "error"


def test_a_system_failing_on_a_missing_file_is_not_an_input_fault() -> None:
    line = "mosquitto.service: Failed to execute command: No such file or directory"
    assert not input_fault(line)
    (result,) = LogService().process([line], "systemd")
    assert result.label.anomaly and result.label.severity == "error"


def test_hardware_faults_in_their_own_words_are_alerted() -> None:
    faults = [
        "mce: CPU3: Machine Check: 0 Bank 4: b200000000070005",
        "watchdog: BUG: soft lockup - CPU#2 stuck for 23s! [modbusd:881]",
        "EDAC MC0: 2 UE uncorrectable ECC on DIMM1 (channel:0 slot:1)",
    ]
    for line in faults:
        alerts = _alerts(LogService().ingest("gw-kernel", [RawLine(line)], now=1.0))
        assert [a["severity"] for a in alerts] == ["critical"], line
    assert infer_severity("igb eth0: Detected Tx Unit Hang") == "error"
    assert infer_severity("L2 cache parity error detected and corrected") == "warning"


def test_boot_inventory_naming_a_watchdog_is_not_critical() -> None:
    for line in (
        "NMI watchdog: Enabled. Permanently consumes one hw-PMU counter.",
        "bcm2835-wdt 3f100000.watchdog: initialized (heartbeat=15 sec, nowayout=0)",
    ):
        assert infer_severity(line) == "info", line
    assert infer_severity("watchdog: watchdog0: watchdog timer expired, resetting the board") == "critical"


def test_dump_lines_are_recognized_by_their_shape() -> None:
    for line in (
        "\tat com.acme.gw.Poller.run(Poller.java:88)",
        "Caused by: java.io.IOException: stream closed",
        "... 12 more",
        'File "/opt/gw/poll.py", line 41, in read',
        "RSP: 0018:ffffb1c2c0443d28 EFLAGS: 00010246",
        " ? rs485_poll+0x3c/0x120 [gw_serial]",
        "r00=0x00000000 r01=0x1fe00c2a r02=0x00000004",
    ):
        assert is_dump(line), line
    for line in ("published 12 samples to broker", "Started Modbus bridge.", "eth0: link up"):
        assert not is_dump(line), line


def test_classify_output_marks_the_incident_and_its_opening_line() -> None:
    results = LogService().process([ROUTINE.format(i=1), *OOPS[:3]], "gw-kernel")
    docs = [r.to_dict() for r in results]
    assert "incident" not in docs[0] and "alert" not in docs[0]
    assert docs[1]["alert"] is True and docs[1]["incident"] == 1
    assert docs[2]["incident"] == 1 and "alert" not in docs[2]


def test_a_line_hours_later_by_its_own_clock_does_not_join() -> None:
    crash = "Jun 18 02:23:10 gw kernel: Kernel panic - not syncing: Attempted to kill init!"
    later = "Jun 18 04:07:06 gw logrotate: ALERT exited abnormally with [1]"
    soon = "Jun 18 02:23:11 gw logrotate: ALERT exited abnormally with [1]"
    apart = LogService().process([crash, later], "gw")
    assert apart[1].incident is None or apart[1].opens  # two hours later: not the crash's
    close = LogService().process([crash, soon], "gw")
    assert close[1].incident is close[0].incident and not close[1].label.anomaly


def _gap(later: str, earlier: str) -> float:
    a, b = line_clock(later), line_clock(earlier)
    assert a is not None and b is not None
    return round(a - b, 6)


def test_line_clocks_compare_lines_of_one_source() -> None:
    assert _gap("Jun 18 02:23:11 gw x", "Jun 18 02:23:10 gw x") == 1.0
    assert _gap("2015-10-18 18:01:48,478 INFO x", "2015-10-18 18:01:47,978 INFO x") == 0.5
    assert _gap("081109 203616 148 INFO x", "081109 203615 148 INFO x") == 1.0
    assert _gap("Jun 19 00:00:01 gw x", "Jun 18 23:59:59 gw x") == 2.0
    assert line_clock("[Sun Dec 04 04:47:44 2005] [notice] x") is not None
    assert line_clock("<1>[ 5120.331201] BUG: x") == 5120.331201
    assert line_clock("published 12 samples to broker") is None
