"""Parsing real-shaped log lines (written for these tests): syslog 5424 / 3164, JSON, plain text
with headers of many formats, and garbage."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edge_agent.logs.masking import mask
from edge_agent.logs.parse import clean_text, decode_line, display_message, infer_severity, parse_line
from edge_agent.records.logs import RawLine


def test_rfc5424_with_structured_data() -> None:
    p = parse_line(
        '<11>1 2026-03-02T08:15:00.250Z gw-01 zigbee2mqtt 812 ZB01 [meta@32473 dev="plug"] '
        "Coordinator stopped responding"
    )
    assert p.format == "rfc5424"
    assert p.message == "Coordinator stopped responding"
    assert p.level == "error"  # PRI 11 = user.err
    assert p.host == "gw-01" and p.app == "zigbee2mqtt"
    assert p.ts == pytest.approx(1772439300.25)


def test_rfc5424_nil_values() -> None:
    p = parse_line("<190>1 - - - - - - fan curve reloaded")
    assert p.format == "rfc5424"
    assert p.message == "fan curve reloaded"
    assert p.host is None and p.app is None and p.ts is None
    assert p.level == "info"


def test_rfc3164_with_and_without_pri() -> None:
    p = parse_line("<28>Mar  2 08:15:01 hub-kitchen dnsmasq[901]: failed to access /etc/hosts.d")
    assert (p.format, p.level, p.host, p.app) == ("rfc3164", "warning", "hub-kitchen", "dnsmasq")
    assert p.message == "failed to access /etc/hosts.d"
    q = parse_line("Mar 12 23:59:59 hub-kitchen kernel: usb 1-1: USB disconnect, device number 4")
    assert (q.format, q.level, q.app) == ("rfc3164", None, "kernel")
    assert q.message == "usb 1-1: USB disconnect, device number 4"


def test_rfc3164_level_after_tag() -> None:
    p = parse_line("Apr  9 06:00:00 gw modbusd[77]: ERROR register 40001 read timed out")
    assert p.level == "error"
    assert p.message == "register 40001 read timed out"


@pytest.mark.parametrize(
    ("line", "message", "level"),
    [
        ('{"msg": "battery at 12%", "level": "warning", "ts": 1767225600}', "battery at 12%", "warning"),
        ('{"message": "door sensor paired", "ts": "2026-01-01T00:00:00Z"}', "door sensor paired", None),
        ('{"line": "relay 3 stuck", "level": 3}', "relay 3 stuck", "error"),
    ],
)
def test_json_lines(line: str, message: str, level: str | None) -> None:
    p = parse_line(line)
    assert p.format == "json"
    assert p.message == message
    assert p.level == level


def test_json_timestamp_is_kept() -> None:
    assert parse_line('{"msg": "x", "ts": "2026-01-01T00:00:00Z"}').ts == pytest.approx(1767225600.0)
    assert parse_line('{"msg": "x", "ts": 1767225600123}').ts == pytest.approx(1767225600.123)


def test_raw_line_fields_win() -> None:
    p = parse_line(RawLine(text="INFO pump started", ts=5.0, level="crit"))
    assert p.ts == 5.0 and p.level == "critical"
    assert p.message == "pump started"


@pytest.mark.parametrize(
    ("line", "message", "level"),
    [
        (
            "2026-02-11 10:00:01,532 WARN [poller-3] io.edge.bridge.ModbusPoller: slave 4 did not answer",
            "slave 4 did not answer",
            "warning",
        ),
        (
            "02-11 10:00:01.532  1402  1533 E SensorService: accelerometer read failed",
            "accelerometer read failed",
            "error",
        ),
        (
            "[Wed Feb 11 10:00:01 2026] [error] mod_proxy: upstream closed connection",
            "upstream closed connection",
            "error",
        ),
        ("20260211-10:00:01:532|HeatPump|4211|compressor cycle done", "compressor cycle done", None),
        (
            "2026-02-11 10:00:01,532 - INFO  [main:Broker@88] - listening on port 1883",
            "listening on port 1883",
            "info",
        ),
        (
            "[02.11 10:00:01] hvac.exe - connection to controller closed",
            "connection to controller closed",
            None,
        ),
        ("260211 100001 77 INFO storage.Flusher: flushed 12 blocks", "flushed 12 blocks", "info"),
        ("plain message without any header", "plain message without any header", None),
    ],
)
def test_unknown_headers_are_stripped(line: str, message: str, level: str | None) -> None:
    p = parse_line(line)
    assert p.message == message
    assert p.level == level


def test_severity_inferred_from_words() -> None:
    assert infer_severity("Kernel panic - not syncing") == "critical"
    assert infer_severity("failed to open /dev/ttyUSB0") == "error"
    assert infer_severity("retrying in 5 s") == "warning"
    assert infer_severity("bridge online") == "info"


def test_garbage_never_raises() -> None:
    binary = bytes(range(256)) * 4
    text, invalid = decode_line(binary)
    assert invalid
    p = parse_line(text)
    assert "\x00" not in p.text and "\x1b" not in p.text
    huge = "A" * 1_000_000
    q = parse_line(huge, max_chars=8192)
    assert q.truncated and len(q.text) == 8192
    r = parse_line("")
    assert r.message == "" and not r.truncated


def test_clean_text_strips_line_endings() -> None:
    assert clean_text("abc\r\n") == ("abc", False)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=400))
def test_any_text_parses_and_masks(text: str) -> None:
    p = parse_line(text)
    assert p.message in p.text or p.format in ("json", "rfc5424", "rfc3164")
    tokens = mask(p.message)
    assert all(tok and not any(c.isspace() for c in tok) for tok in tokens)


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_give_a_line(raw: bytes) -> None:
    text, _ = decode_line(raw)
    assert isinstance(parse_line(text).message, str)


def test_sentence_starting_with_a_level_word_is_message() -> None:
    p = parse_line("Failure to open /dev/ttyUSB0")
    assert p.message == "Failure to open /dev/ttyUSB0" and p.level is None
    q = parse_line("ERROR: failed to open /dev/ttyUSB0")
    assert q.message == "failed to open /dev/ttyUSB0" and q.level == "error"


@pytest.mark.parametrize(
    ("line", "level", "message"),
    [
        ("2026-01-05 09:00:01 0 [Note] InnoDB: Buffer pool(s) load completed", "notice",
         "Buffer pool(s) load completed"),
        ("2026-01-05 09:00:01 12 [Warning] Access denied for user 'svc'@'localhost'", "warning",
         "Access denied for user 'svc'@'localhost'"),
        ("2026-01-05 09:00:01 0 [ERROR] mysqld: Table 'events' is marked as crashed", "error",
         "Table 'events' is marked as crashed"),
        ("2026-01-05 09:00:02.120 UTC [811] LOG:  checkpoint starting: time", "info",
         "checkpoint starting: time"),
        ("2026-01-05 09:00:02.120 UTC [811] FATAL:  role \"grafana\" does not exist", "critical",
         "role \"grafana\" does not exist"),
        ("2026-01-05 09:00:02.120 UTC [811] WARNING:  worker took too long to start", "warning",
         "worker took too long to start"),
        ("901:M 05 Jan 2026 09:00:03.400 * Background saving started by pid 977", "notice",
         "Background saving started by pid 977"),
        ("901:M 05 Jan 2026 09:00:03.400 # Server initialized", "warning", "Server initialized"),
        ("Jan  5 09:00:04 gw NetworkManager[640]: <warn>  [1767603604.2210] dhcp4 (wlan0): request timed out",
         "warning", "dhcp4 (wlan0): request timed out"),
        ("2026-01-05 09:00:05.000113+00:00 [info] <0.614.0> Ready to start client connection listeners",
         "info", "Ready to start client connection listeners"),
        ("2026-01-05 09:00:05.000113+00:00 [warning] <0.614.0> Free disk space is low", "warning",
         "Free disk space is low"),
        ("01-05 09:00:06.512  1702  2395 W PowerManager: wake lock held too long", "warning",
         "wake lock held too long"),
        ("W/BluetoothAdapter( 2212): scan stopped", "warning", "scan stopped"),
        ("2026-01-05 09:00:07,120 WARN [main] org.example.Broker: queue nearly full", "warning",
         "queue nearly full"),
        ("<3>[   12.045871] mmc0: timeout waiting for hardware interrupt", "error",
         "timeout waiting for hardware interrupt"),
        ('ts=2026-01-05T09:00:08Z level=error msg="upload failed" attempt=3', "error", "upload failed"),
        ("[114] 2026/01/05 09:00:09.884796 [WRN] Slow consumer detected", "warning",
         "Slow consumer detected"),
    ],
)
def test_stated_levels_in_common_shapes(line: str, level: str, message: str) -> None:
    p = parse_line(line)
    assert (p.level, p.message) == (level, message)


def test_dmesg_timestamp_is_a_header_without_a_level() -> None:
    p = parse_line("[    0.144120] Tasks RCU enabled.")
    assert (p.level, p.message) == (None, "Tasks RCU enabled.")


@pytest.mark.parametrize(
    ("line", "message", "app"),
    [
        # a bare first word after the stamp is the message's subject, not a header field
        ("[    0.100000] RDSEED32 is broken. Disabling the corresponding CPUID bit.",
         "RDSEED32 is broken. Disabling the corresponding CPUID bit.", None),
        # "(vda1):" after a word is no "host program:" of syslog
        ("[    5.120000] EXT4-fs (vda1): mounted filesystem", "EXT4-fs (vda1): mounted filesystem", None),
        ("[    0.031200] ACPI: Early table checksum verification disabled",
         "Early table checksum verification disabled", "ACPI"),  # a subsystem tag, as before
        ("[    0.000000] gw kernel: Linux version 6.1.0", "Linux version 6.1.0", "kernel"),  # short-monotonic
    ],
)
def test_a_kernel_stamp_is_followed_by_the_message(line: str, message: str, app: str | None) -> None:
    p = parse_line(line)
    assert (p.message, p.app, p.level) == (message, app, None)


def test_journald_entry_as_a_line() -> None:
    p = parse_line('{"MESSAGE": "Started Session 2.", "PRIORITY": "6", "SYSLOG_IDENTIFIER": "systemd",'
                   ' "_HOSTNAME": "gw", "__REALTIME_TIMESTAMP": "1767603600500000"}')
    assert (p.message, p.level, p.app, p.host) == ("Started Session 2.", "info", "systemd", "gw")
    assert p.ts == 1767603600.5


def test_a_pipe_separated_line_keeps_its_last_field_as_message() -> None:
    p = parse_line("20260105-09:00:10:120|Step_Counter|30002312|setTotalSteps=1767603610000##7007##548")
    assert p.message == "setTotalSteps=1767603610000##7007##548"
    p = parse_line("20260105-09:00:10:125|Step_Counter|30002312|onExtend:1767603610000 14 0 4")
    assert p.message == "onExtend:1767603610000 14 0 4"


def test_settings_are_not_words_of_trouble() -> None:
    assert infer_severity("Kernel command line: panic=1 quiet") == "info"
    assert infer_severity("kernel panic") == "critical"


def test_json_escaped_lone_surrogates_become_replacement_characters() -> None:
    p = parse_line('{"text": "\\ud868 fan stalled", "app": "\\udc00"}')
    assert p.message.endswith(" fan stalled") and "\ud868" not in p.message
    p.message.encode("utf-8")  # publishable text
    assert p.app is not None and "\udc00" not in p.app


@pytest.mark.parametrize("digit", ["²", "³", "①"])  # str.isdigit() is true for these, int() fails
def test_a_level_or_timestamp_of_non_ascii_digits_is_no_level_and_no_time(digit: str) -> None:
    p = parse_line(RawLine(text="disk full", level=digit))
    assert (p.message, p.level) == ("disk full", None)
    p = parse_line(json.dumps({"MESSAGE": "Started.", "PRIORITY": digit, "__REALTIME_TIMESTAMP": digit}))
    assert (p.message, p.level, p.ts) == ("Started.", None, None)


@pytest.mark.parametrize(
    ("message", "shown"),
    [
        ("[86412.118402] mmc0: Timeout waiting", "mmc0: Timeout waiting"),  # kernel uptime stamp
        ("[ 5.1] usb 1-1: new device", "usb 1-1: new device"),
        ("warning  z2m: Device x did not respond", "z2m: Device x did not respond"),  # before a tag
        ("[ERROR] Plugin failed", "Plugin failed"),
        ("error: disk full", "disk full"),
        ("WARN low memory", "low memory"),
        ("Error opening file /x", "Error opening file /x"),  # a word of the sentence, kept
        ("I could not open it", "I could not open it"),  # a level letter is not a level word
        ("3 devices found", "3 devices found"),  # nor is a syslog number
        ("info", "info"),  # nothing would be left
        ("a   b\tc", "a b c"),
    ],
)
def test_display_message_drops_what_the_headline_says_already(message: str, shown: str) -> None:
    assert display_message(message) == shown
