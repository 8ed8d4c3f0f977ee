"""A/B bundle installation: verification, warm-up through the real runtime, atomic swap, rollback.

The bundles here are real: a sentencepiece tokenizer and two small .tflite graphs built with
TensorFlow at test time, loaded by ``edge_agent.runtime.model.Model`` through the interpreter.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from edge_agent.cli import main as edge_agent
from edge_agent.errors import BundleError
from edge_agent.logs.labels import CATEGORIES, SEVERITIES
from edge_agent.nlu.schema import INTENTS
from edge_agent.runtime.bundle import FORMAT_NAME, FORMAT_VERSION, MANIFEST, file_entry, load_bundle
from edge_agent.runtime.install import BundleInstaller
from edge_agent.runtime.signing import TrustStore, generate_keypair, load_private_key, sign_bundle

REPO = Path(__file__).resolve().parent.parent
MAX_LEN = 16
SLOT_TAGS = ["O", "B-name", "I-name", "B-area", "I-area"]
_CORPUS = [
    "turn on the kitchen light",
    "set the thermostat to 21 degrees",
    "kernel eth0 link down",
    "what time is it",
    "open the garage door",
    "wifi disconnected from access point",
]


def build_tiny_bundle(
    out: Path, *, model_version: str = "1", seed: int = 0, severity_width: int = 0, embedding: int = 0
) -> Path:
    """A small but real bundle. ``severity_width`` != 0 gives a severity head of the wrong width;
    ``embedding`` > 0 adds a ``sentence_embedding`` output of that width to the intent graph."""
    import sentencepiece as spm
    import tensorflow as tf
    from ai_edge_litert.interpreter import Interpreter

    out.mkdir(parents=True)
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(_CORPUS * 20), model_writer=buf, vocab_size=40,
        pad_id=0, unk_id=1, bos_id=-1, eos_id=-1, minloglevel=2,
    )  # fmt: skip
    (out / "tokenizer.model").write_bytes(buf.getvalue())
    intents = [*INTENTS, "out_of_scope"]
    widths = {
        "intent_logits": len(intents),
        "slot_logits": len(SLOT_TAGS),
        "severity_logits": severity_width or len(SEVERITIES),
        "category_logits": len(CATEGORIES),
        "anomaly_logit": 1,
        **({"sentence_embedding": embedding} if embedding else {}),
    }
    tf.random.set_seed(seed)
    emb = tf.Variable(tf.random.normal([40, 8]))
    heads = {name: tf.Variable(tf.random.normal([8, k])) for name, k in widths.items()}
    spec = tf.TensorSpec([1, MAX_LEN], tf.int32, name="ids")

    @tf.function(input_signature=[spec])
    def intents_fn(ids: Any) -> dict[str, Any]:
        h = tf.gather(emb, ids)
        out = {
            "intent_logits": tf.reduce_mean(h, axis=1) @ heads["intent_logits"],
            "slot_logits": tf.einsum("bld,dk->blk", h, heads["slot_logits"]),
        }
        if embedding:  # the mean over the real tokens: two texts differ unless their pieces do not
            mask = tf.cast(ids > 0, tf.float32)[:, :, None]
            pooled = tf.reduce_sum(h * mask, axis=1) / tf.maximum(tf.reduce_sum(mask, axis=1), 1.0)
            out["sentence_embedding"] = pooled @ heads["sentence_embedding"]
        return out

    @tf.function(input_signature=[spec])
    def logs_fn(ids: Any) -> dict[str, Any]:
        pooled = tf.reduce_mean(tf.gather(emb, ids), axis=1)
        return {n: pooled @ heads[n] for n in ("severity_logits", "category_logits", "anomaly_logit")}

    segments = []
    for name, fn in (("intents", intents_fn), ("logs", logs_fn)):
        concrete = fn.get_concrete_function()
        blob = tf.lite.TFLiteConverter.from_concrete_functions([concrete], fn).convert()
        (out / f"{name}.tflite").write_bytes(blob)
        interp = Interpreter(model_content=blob)
        shapes = {k: tuple(v.shape) for k, v in concrete.structured_outputs.items()}
        outputs = []
        for d in interp.get_output_details():
            (key,) = [k for k, shape in shapes.items() if shape == tuple(d["shape"])]
            outputs.append(_port(key, d))
        inputs = [_port("ids", d) for d in interp.get_input_details()]
        segments.append({"name": name, "file": f"{name}.tflite", "inputs": inputs, "outputs": outputs})
    manifest = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "model": {"id": "tiny-test", "version": model_version},
        "converter": {"tensorflow": tf.__version__},
        "tokenizer": {"file": "tokenizer.model", "max_len": MAX_LEN, "vocab_size": 40},
        "files": {f: file_entry(out / f) for f in ("tokenizer.model", "intents.tflite", "logs.tflite")},
        "segments": segments,
        "graphs": {"intents": ["intents"], "logs": ["logs"]},
        "labels": {
            "intents": intents,
            "slot_tags": SLOT_TAGS,
            "severity": list(SEVERITIES),
            "category": list(CATEGORIES),
        },
        "calibration": {
            "temperature": 1.0,
            "intent_thresholds": {},
            # custom intents of a random model: only a user's own sentence, word for word, matches
            **({"custom_intents": {"threshold": 0.999, "steal": 0.999, "k": 1}} if embedding else {}),
        },
        "metrics": {},
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1))
    return out


def _port(name: str, detail: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": name,
        "tensor": detail["name"],
        "dtype": str(np.dtype(detail["dtype"])),
        "shape": [int(x) for x in detail["shape"]],
    }


def _rehash(bundle_dir: Path) -> None:
    """Refresh the manifest's sizes/hashes after editing a file (a well-formed but bad bundle)."""
    manifest = json.loads((bundle_dir / MANIFEST).read_text())
    manifest["files"] = {rel: file_entry(bundle_dir / rel) for rel in manifest["files"]}
    (bundle_dir / MANIFEST).write_text(json.dumps(manifest, indent=1))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """v1 and v2 good bundles, one with a wrong-width head, one with a corrupt model; keys; trust."""
    root = tmp_path_factory.mktemp("bundles")
    priv, pub = generate_keypair(root / "keys")
    trust = root / "trust"
    trust.mkdir()
    shutil.copy(pub, trust / pub.name)
    key = load_private_key(priv)
    out = {"key": priv, "trust": trust}
    out["v1"] = build_tiny_bundle(root / "v1", model_version="1", seed=1)
    out["v2"] = build_tiny_bundle(root / "v2", model_version="2", seed=2)
    out["wrong_head"] = build_tiny_bundle(root / "wrong_head", model_version="3", severity_width=4)
    corrupt = root / "corrupt_model"
    shutil.copytree(out["v2"], corrupt)
    (corrupt / "logs.tflite").write_bytes(b"TFL3 this is not a flatbuffer" * 20)
    _rehash(corrupt)
    out["corrupt_model"] = corrupt
    for name in ("v1", "v2", "wrong_head", "corrupt_model"):
        sign_bundle(out[name], key)
    return out


def _installer(state: Path, built: dict[str, Path]) -> BundleInstaller:
    return BundleInstaller(state, TrustStore.load(built["trust"]))


def _active_model(state: Path, built: dict[str, Path]) -> str:
    bundle = _installer(state, built).load_active()
    assert bundle is not None
    return bundle.model_id


def test_install_activates_then_alternates_slots(tmp_path: Path, built: dict[str, Path]) -> None:
    inst = _installer(tmp_path, built)
    assert inst.active_slot() is None and inst.load_active() is None
    first = inst.install(built["v1"])
    assert first.slot == "a" and first.bundle.model_id == "tiny-test@1"
    intent, _ = first.model.run_intents(np.zeros((1, MAX_LEN), dtype=np.int32))
    assert intent.shape == (1, len(INTENTS) + 1)
    pointer = tmp_path / "bundles" / "active"
    assert pointer.is_symlink() and os.readlink(pointer) == "a"
    second = inst.install(built["v2"])
    assert second.slot == "b" and os.readlink(pointer) == "b"
    assert _active_model(tmp_path, built) == "tiny-test@2"
    status = inst.status()
    assert status["active"]["model"] == "tiny-test@2" and status["previous_slot"] == "a"
    assert status["active"]["key_id"] == first.key_id


@pytest.mark.parametrize(
    ("bad", "reason"),
    [("wrong_head", "warm-up severity_logits has shape"), ("corrupt_model", "cannot load")],
)
def test_bundle_failing_warm_up_is_rolled_back(
    tmp_path: Path, built: dict[str, Path], bad: str, reason: str
) -> None:
    inst = _installer(tmp_path, built)
    inst.install(built["v1"])
    with pytest.raises(BundleError, match=reason):
        inst.install(built[bad])
    assert inst.active_slot() == "a"
    assert _active_model(tmp_path, built) == "tiny-test@1"
    attempt = inst.status()["last_attempt"]
    assert attempt["ok"] is False and reason.split()[0] in attempt["error"]


def test_tampered_and_unsigned_bundles_never_become_active(tmp_path: Path, built: dict[str, Path]) -> None:
    inst = _installer(tmp_path, built)
    inst.install(built["v1"])
    tampered = tmp_path / "tampered"
    shutil.copytree(built["v2"], tampered)
    with (tampered / "intents.tflite").open("r+b") as fh:
        fh.seek(100)
        fh.write(b"\xff\xfe")
    with pytest.raises(BundleError, match="sha256 mismatch"):
        inst.install(tampered)
    unsigned = tmp_path / "unsigned"
    shutil.copytree(built["v2"], unsigned)
    (unsigned / "manifest.sig").unlink()
    with pytest.raises(BundleError, match="not signed"):
        inst.install(unsigned)
    resigned = tmp_path / "resigned"
    shutil.copytree(built["v2"], resigned)
    _rehash(resigned)  # same content, re-serialized manifest: the old signature no longer matches
    (resigned / MANIFEST).write_text((resigned / MANIFEST).read_text() + "\n")
    with pytest.raises(BundleError, match="signature does not match"):
        inst.install(resigned)
    assert _active_model(tmp_path, built) == "tiny-test@1"


def test_rollback_reactivates_previous_slot(tmp_path: Path, built: dict[str, Path]) -> None:
    inst = _installer(tmp_path, built)
    with pytest.raises(BundleError, match="nothing to roll back"):
        inst.rollback()
    inst.install(built["v1"])
    inst.install(built["v2"])
    back = inst.rollback()
    assert back.slot == "a" and back.bundle.model_id == "tiny-test@1"
    assert _active_model(tmp_path, built) == "tiny-test@1"


def test_active_bundle_modified_on_disk_is_detected(tmp_path: Path, built: dict[str, Path]) -> None:
    inst = _installer(tmp_path, built)
    inst.install(built["v1"])
    seg = tmp_path / "bundles" / "a" / "logs.tflite"
    data = bytearray(seg.read_bytes())
    data[-1] ^= 1
    seg.write_bytes(bytes(data))
    with pytest.raises(BundleError, match="sha256 mismatch"):
        inst.load_active()


def test_leftovers_of_an_interrupted_install_are_ignored(tmp_path: Path, built: dict[str, Path]) -> None:
    inst = _installer(tmp_path, built)
    inst.install(built["v1"])
    root = tmp_path / "bundles"
    (root / ".b.staging").mkdir()
    (root / ".b.staging" / "half-copied.tflite").write_bytes(b"x" * 10)
    os.symlink("b", root / ".active.99999")
    result = inst.install(built["v2"])
    assert result.slot == "b"
    assert not (root / ".b.staging").exists()
    assert sorted(p.name for p in (root / "b").iterdir()) == sorted(p.name for p in built["v2"].iterdir())


def test_install_killed_at_any_moment_leaves_a_verified_active_bundle(
    tmp_path: Path, built: dict[str, Path]
) -> None:
    """SIGKILL the CLI installer at increasing delays; the pointer always names a good bundle."""
    inst = _installer(tmp_path, built)
    inst.install(built["v1"])
    cmd = [
        sys.executable, "-m", "edge_agent", "bundle", "install", str(built["v2"]),
        "--state-dir", str(tmp_path), "--trust-store", str(built["trust"]),
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    seen = set()
    for delay in (0.05, 0.2, 0.4, 0.6, 0.8, 1.0, 1.5):
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        seen.add(_active_model(tmp_path, built))
        if seen == {"tiny-test@2"}:
            inst.install(built["v1"])  # go back so later kills race a real swap again
    assert seen <= {"tiny-test@1", "tiny-test@2"}
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["model"] == "tiny-test@2"


def test_bundle_cli_install_status_and_refusal(
    tmp_path: Path, built: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["--state-dir", str(tmp_path), "--trust-store", str(built["trust"])]
    assert edge_agent(["bundle", "install", str(built["v1"]), *common]) == 0
    assert json.loads(capsys.readouterr().out)["active_slot"] == "a"
    assert edge_agent(["bundle", "install", str(built["wrong_head"]), *common]) == 2
    assert "refused" in capsys.readouterr().err
    assert edge_agent(["bundle", "status", "--state-dir", str(tmp_path)]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["active_slot"] == "a" and status["last_attempt"]["ok"] is False
    # without a trust store, unsigned installs are refused unless explicitly allowed
    assert edge_agent(["bundle", "install", str(built["v2"]), "--state-dir", str(tmp_path)]) == 2
    assert "refusing unsigned" in capsys.readouterr().err
    unsigned = tmp_path / "unsigned"
    shutil.copytree(built["v2"], unsigned)
    (unsigned / "manifest.sig").unlink()
    args = ["bundle", "install", str(unsigned), "--state-dir", str(tmp_path), "--allow-unsigned"]
    assert edge_agent(args) == 0
    assert load_bundle(tmp_path / "bundles" / "active").model_id == "tiny-test@2"


def test_mqtt_command_installs_signed_bundle_into_the_running_agent(
    broker: Any, tmp_path: Path, agents: list[Any]
) -> None:
    """``{prefix}/{site}/bundle/install`` on a real agent: a signed bundle is activated and serves the
    next intents; a tampered one and a path outside ``install_from`` are refused; after a restart
    the agent starts on the installed bundle."""
    from broker import AgentProcess, Collector, password, publish_wait, unique
    from conftest import agent_config

    from edge_agent.runtime.bundle import default_bundle_path

    priv, pub = generate_keypair(tmp_path / "keys")
    trust = tmp_path / "trust"
    trust.mkdir()
    shutil.copy(pub, trust / pub.name)
    key = load_private_key(priv)
    shipped = tmp_path / "shipped"
    shutil.copytree(default_bundle_path(), shipped)
    sign_bundle(shipped, key)
    incoming = tmp_path / "incoming"
    v2 = incoming / "v2"
    shutil.copytree(default_bundle_path(), v2)
    manifest = json.loads((v2 / MANIFEST).read_text())
    manifest["model"]["version"] = "test-2"
    (v2 / MANIFEST).write_text(json.dumps(manifest, indent=1))
    sign_bundle(v2, key)
    bad = incoming / "bad"
    shutil.copytree(v2, bad)
    seg = bad / manifest["segments"][0]["file"]
    data = bytearray(seg.read_bytes())
    data[len(data) // 2] ^= 0xFF
    seg.write_bytes(bytes(data))
    site = unique("bi")
    config = agent_config(
        broker, site, model={"bundle": str(shipped)}, pipeline={"stats_interval_s": 0},
        reliability={"state_dir": str(tmp_path / "state"),
                     "bundles": {"trust_store": str(trust), "install_from": [str(incoming)]}},
    )  # fmt: skip
    client = broker.client()
    collect = Collector(client, f"edge/{site}/#")
    agent = AgentProcess(config, tmp_path, engine="real").start()
    agents.append(agent)
    collect.wait_for(lambda _m: collect.on(f"edge/{site}/status")[-1:] == [b"online"], timeout=90)

    def intent_model(n: int) -> str:
        publish_wait(client, f"edge/{site}/transcript", "turn on the kitchen light")
        return str(json.loads(collect.wait_count(f"edge/{site}/intent", n, timeout=60)[-1])["model"])

    def command(n: int, body: dict[str, Any]) -> dict[str, Any]:
        publish_wait(client, f"edge/{site}/bundle/install", json.dumps(body))
        return dict(json.loads(collect.wait_count(f"edge/{site}/bundle/reply", n, timeout=120)[-1]))

    old_model = intent_model(1)
    assert old_model.endswith(f"@{json.loads((shipped / MANIFEST).read_text())['model']['version']}")
    reply = command(1, {"id": "b1", "path": str(v2)})
    assert reply["ok"] is True and reply["id"] == "b1" and reply["model"].endswith("@test-2")
    assert intent_model(2).endswith("@test-2")
    refused = command(2, {"id": "b2", "path": str(bad)})
    assert refused["ok"] is False and "sha256 mismatch" in refused["error"]
    outside = command(3, {"id": "b3", "path": str(shipped)})
    assert outside["ok"] is False and "outside" in outside["error"]
    assert intent_model(3).endswith("@test-2")  # the good bundle kept serving
    assert agent.terminate(timeout=60) == 0
    restarted = AgentProcess(config, tmp_path, engine="real").start()
    agents.append(restarted)
    collect.wait_for(lambda _m: collect.on(f"edge/{site}/status")[-1:] == [b"online"], timeout=90)
    assert intent_model(4).endswith("@test-2")
    for proc in (agent, restarted):  # the MQTT password never reaches the log
        assert password("agent") not in proc.log()
    client.disconnect()
    client.loop_stop()
