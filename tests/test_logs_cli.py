"""``edge-agent logs classify|summarize`` as a user runs them (subprocess, real files, stdin)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def _run(args: list[str], data: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "edge_agent", "logs", *args],
        input=data,
        capture_output=True,
        timeout=120,
        check=False,
    )


def test_classify_one_json_per_line_even_for_garbage() -> None:
    lines = [
        b"Mar  2 08:15:01 hub dnsmasq[901]: DHCPACK(br0) 192.168.1.23 aa:bb:cc:dd:ee:ff sensor-3",
        b"",
        b"\xff\xfe\x00\x01 binary \x80",
        b"x" * 100_000,
        b'{"msg": "door opened", "level": "info"}',
    ]
    proc = _run(["classify", "--no-model", "-"], b"\n".join(lines) + b"\n")
    assert proc.returncode == 0, proc.stderr
    out = [json.loads(x) for x in proc.stdout.splitlines()]
    assert len(out) == len(lines)
    for doc in out:
        assert {"line", "severity", "category", "anomaly", "score", "template", "template_id"} <= set(doc)
    assert out[2].get("invalid_utf8") is True
    assert out[3].get("truncated") is True and len(out[3]["line"]) < 100_000
    assert out[4]["severity"] == "info" and out[4]["template"] == "door opened"


def test_classify_with_the_shipped_model_reads_a_file(tmp_path: Path) -> None:
    f = tmp_path / "gw.log"
    f.write_bytes(
        b"Jan  1 00:00:01 gw kernel: eth0: link down\r\nJan  1 00:00:05 gw kernel: eth0: link down\r\n"
    )
    proc = _run(["classify", str(f)], b"")
    assert proc.returncode == 0, proc.stderr
    a, b = (json.loads(x) for x in proc.stdout.splitlines())
    assert a["template_id"] == b["template_id"] and not a["line"].endswith("\r")


def test_summarize_windows_by_lines(tmp_path: Path) -> None:
    f = tmp_path / "dev.log"
    f.write_text(
        "".join(f"Jan  1 00:00:{i % 60:02d} gw telemetry[3]: published {i} samples\n" for i in range(25))
    )
    proc = _run(["summarize", "--no-model", "--window-lines", "10", str(f)], b"")
    assert proc.returncode == 0, proc.stderr
    docs = [json.loads(x) for x in proc.stdout.splitlines()]
    assert [d["window"]["lines"] for d in docs] == [10, 10, 5]
    assert {d["source"] for d in docs} == {"dev.log"}
    assert docs[0]["top_templates"][0]["template"] == "published <*> samples"


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    proc = _run(["classify", "--no-model", str(tmp_path / "nope.log")], b"")
    assert proc.returncode == 2 and b"nope.log" in proc.stderr


def test_summarize_source_name_is_made_a_valid_topic_level() -> None:
    proc = _run(["summarize", "--no-model", "--source", "gw/kernel#1", "-"], b"eth0 up\n")
    assert proc.returncode == 0, proc.stderr
    (doc,) = (json.loads(x) for x in proc.stdout.splitlines())
    assert doc["source"] == "gw_kernel_1"
