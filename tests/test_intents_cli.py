"""``edge-agent intents`` contract: one valid JSON object per input line, whatever the line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(stdin: bytes, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "edge_agent", "intents", *args],
        input=stdin,
        capture_output=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )


def _check_result(obj: dict) -> None:
    assert set(obj) >= {"text", "intent", "confidence", "slots"}
    assert obj["intent"] is None or isinstance(obj["intent"], str)
    assert 0.0 <= obj["confidence"] <= 1.0
    assert isinstance(obj["slots"], dict)
    for slot in obj["slots"].values():
        assert set(slot) == {"value", "raw", "start", "end", "confidence"}
        if slot["start"] >= 0:
            assert obj["text"][slot["start"] : slot["end"]] == slot["raw"]


def test_bad_input_gives_one_json_line_each() -> None:
    lines = [
        b"turn on the kitchen lights",
        b"",
        b"   ",
        b"\xff\xfe\xfa not utf-8",
        "emoji only 🙂🔥🏠".encode(),
        ("x" * 100_000).encode(),
        b'{"text": "set the lamp to red", "context": {"area": "Kitchen"}}',
        b'{"text": 5}',
        b"{broken json",
        b"last line without newline",
    ]
    proc = _run(b"\n".join(lines))
    assert proc.returncode == 0, proc.stderr.decode()
    out = proc.stdout.decode("utf-8").splitlines()
    assert len(out) == len(lines)
    results = [json.loads(line) for line in out]
    for r in results:
        _check_result(r)
    assert results[0]["text"] == "turn on the kitchen lights"
    assert results[1] == {"text": "", "intent": None, "confidence": 0.0, "slots": {}}
    assert "\ufffd" in results[3]["text"]
    assert results[5].get("truncated") is True and len(results[5]["text"]) == 100_000
    assert "truncated" not in results[0]
    assert results[6]["text"] == "set the lamp to red"
    assert results[7]["text"] == '{"text": 5}'  # not a request object: taken as text
    assert results[9]["text"] == "last line without newline"


def test_crlf_lines_are_stripped() -> None:
    proc = _run(b"what time is it\r\npause the music\r\n")
    results = [json.loads(x) for x in proc.stdout.decode().splitlines()]
    assert [r["text"] for r in results] == ["what time is it", "pause the music"]


def test_missing_bundle_is_a_clear_error(tmp_path: Path) -> None:
    proc = _run(b"hello\n", "--bundle", str(tmp_path / "nope"))
    assert proc.returncode == 2
    assert b"is not a directory" in proc.stderr
    assert proc.stdout == b""


@pytest.mark.parametrize("backend", ["litert", "tflite-runtime"])
def test_both_backends_from_the_cli(backend: str) -> None:
    proc = _run(b"turn off the bedroom light\nstart a timer for 5 minutes\n", "--backend", backend)
    assert proc.returncode == 0, proc.stderr.decode()
    results = [json.loads(x) for x in proc.stdout.decode().splitlines()]
    assert len(results) == 2
    for r in results:
        _check_result(r)


def test_home_file_is_used(tmp_path: Path) -> None:
    home = tmp_path / "home.yaml"
    home.write_text(
        "areas: [Kitchen, Bedroom]\nentities:\n  - {name: Ceiling Light, domain: light, area: Kitchen}\n"
    )
    proc = _run(b"turn on the ceiling light\n", "--home", str(home))
    assert proc.returncode == 0, proc.stderr.decode()
    _check_result(json.loads(proc.stdout))
    bad = tmp_path / "bad.yaml"
    bad.write_text("areas: 5\n")
    proc = _run(b"x\n", "--home", str(bad))
    assert proc.returncode == 2 and proc.stderr


# Modules the intents command must not load: the service/log side, and libraries whose import alone
# costs megabytes of RSS and milliseconds of start-up on every run (protobuf came with
# sentencepiece's proto output, importlib.metadata with a version look-up, yaml without --home).
_NOT_ON_THE_INTENTS_PATH = (
    "edge_agent.app", "edge_agent.logs", "edge_agent.pipeline", "edge_agent.transport",
    "edge_agent.store", "edge_agent.bridges", "edge_agent.engines", "edge_agent.hotswap", "edge_agent.config",
    "paho", "pydantic", "drain3", "structlog", "cryptography",
    "google.protobuf", "sentencepiece.sentencepiece_pb2", "importlib.metadata", "yaml",
    "hassil", "edge_agent.nlu.custom",  # custom intents: only with --custom-sentences
)  # fmt: skip


@pytest.mark.parametrize("backend", ["litert", "tflite-runtime"])
def test_intents_command_loads_only_its_own_path_on_one_thread(backend: str, tmp_path: Path) -> None:
    listing = tmp_path / "modules.txt"
    code = (
        "import os, sys\n"
        "from edge_agent.cli import main\n"
        f"rc = main(['intents', '--backend', {backend!r}])\n"
        "threads = len(os.listdir('/proc/self/task'))\n"
        "ssl = int('libcrypto' in open('/proc/self/maps').read())\n"
        f"open({str(listing)!r}, 'w').write('\\n'.join([str(threads), str(ssl), *sorted(sys.modules)]))\n"
        "sys.exit(rc)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], input=b"turn off the bedroom light\n",
        capture_output=True, cwd=ROOT, timeout=120, check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert json.loads(proc.stdout)["intent"] == "HassTurnOff"
    threads, ssl, *loaded = listing.read_text().split()
    assert "edge_agent.nlu.slots" in loaded and "sentencepiece" in loaded  # the listing is real
    unwanted = [m for m in loaded if m.startswith(_NOT_ON_THE_INTENTS_PATH)]
    assert unwanted == []
    assert threads == "1"  # --threads 1 and no OpenBLAS worker pool (OPENBLAS_NUM_THREADS=1)
    assert ssl == "0"  # OpenSSL's libcrypto (reached through numpy -> hmac -> _hashlib) is not mapped


def test_minimal_slot_rules_give_the_taggers_own_spans() -> None:
    # every slot of a minimal run is a span of the text (no slot filled from untagged words or
    # from the satellite), and an unknown value of --slot-rules is refused
    text = b"turn on the kitchen lights\nset the bedroom lamp to 40 percent"
    proc = _run(text, "--slot-rules", "minimal")
    assert proc.returncode == 0, proc.stderr.decode()
    results = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    assert [r["intent"] for r in results] == ["HassTurnOn", "HassLightSet"]
    for r in results:
        _check_result(r)
        assert all(s["start"] >= 0 for s in r["slots"].values())
    assert _run(text, "--slot-rules", "none").returncode == 2
