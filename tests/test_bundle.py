"""Bundle verification: the shipped bundle loads; damaged copies fail with a precise message."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from edge_agent.errors import BundleError
from edge_agent.runtime.bundle import FORMAT_VERSION, MANIFEST, default_bundle_path, load_bundle


@pytest.fixture
def bundle_copy(tmp_path: Path) -> Path:
    dst = tmp_path / "bundle"
    shutil.copytree(default_bundle_path(), dst)
    return dst


def _manifest(path: Path) -> dict:
    return json.loads((path / MANIFEST).read_text())


def test_shipped_bundle_verifies_and_is_small() -> None:
    bundle = load_bundle(default_bundle_path())
    total = sum(p.stat().st_size for p in bundle.path.iterdir() if p.is_file())
    assert total <= 8_000_000  # issue 16: the shipped bundle <= 8 MB (build 10: 4.5 MB with `small`)
    assert bundle.graph("intents")[0] == "embed"
    assert bundle.graph("intents")[-1] == "intent_head"
    assert bundle.graph("logs")[-1] == "logs_head"
    for name in bundle.graph("intents") + bundle.graph("logs"):
        assert name in bundle.segments()
    assert "__none__" in bundle.labels("intents")
    assert bundle.labels("slot_tags")[0] == "O"


def test_every_file_is_listed_with_size_and_hash(bundle_copy: Path) -> None:
    files = _manifest(bundle_copy)["files"]
    on_disk = {p.name for p in bundle_copy.iterdir() if p.is_file() and p.name != MANIFEST}
    assert on_disk == set(files)
    for entry in files.values():
        assert len(entry["sha256"]) == 64 and entry["size"] > 0


def test_wrong_hash_is_refused(bundle_copy: Path) -> None:
    seg = bundle_copy / "block0.tflite"
    data = bytearray(seg.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size, different content
    seg.write_bytes(bytes(data))
    with pytest.raises(BundleError, match=r"block0\.tflite sha256 mismatch"):
        load_bundle(bundle_copy)


def test_truncated_segment_is_refused(bundle_copy: Path) -> None:
    seg = bundle_copy / "intent_head.tflite"
    seg.write_bytes(seg.read_bytes()[:-100])
    with pytest.raises(
        BundleError, match=r"intent_head\.tflite is \d+ bytes, manifest says \d+ \(truncated\?\)"
    ):
        load_bundle(bundle_copy)


def test_unknown_format_version_is_refused(bundle_copy: Path) -> None:
    manifest = _manifest(bundle_copy)
    manifest["format_version"] = FORMAT_VERSION + 1
    (bundle_copy / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(BundleError, match="unknown bundle format_version"):
        load_bundle(bundle_copy)


def test_missing_segment_file_is_refused(bundle_copy: Path) -> None:
    (bundle_copy / "embed.tflite").unlink()
    with pytest.raises(BundleError, match=r"embed\.tflite is listed in the manifest but missing"):
        load_bundle(bundle_copy)


def test_segment_not_listed_is_refused(bundle_copy: Path) -> None:
    manifest = _manifest(bundle_copy)
    del manifest["files"]["logs_head.tflite"]
    (bundle_copy / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(BundleError, match=r"not listed in manifest: logs_head\.tflite"):
        load_bundle(bundle_copy)


def test_not_a_bundle(tmp_path: Path) -> None:
    with pytest.raises(BundleError, match=r"has no manifest\.json"):
        load_bundle(tmp_path)
    (tmp_path / MANIFEST).write_text("{not json")
    with pytest.raises(BundleError, match="cannot read manifest"):
        load_bundle(tmp_path)


def test_a_log_task_may_read_its_own_tokenizer(bundle_copy: Path) -> None:
    """``task_tokenizers.logs`` (a teacher's bundle carrying a student's log graph): the log
    graph reads that tokenizer's pieces, the intent graph the main one; both files are verified."""
    from edge_agent.runtime.model import Model

    shutil.copyfile(bundle_copy / "tokenizer.model", bundle_copy / "logs_tokenizer.model")
    manifest = _manifest(bundle_copy)
    manifest["task_tokenizers"] = {"logs": {**manifest["tokenizer"], "file": "logs_tokenizer.model"}}
    (bundle_copy / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(BundleError, match=r"not listed in manifest: logs_tokenizer\.model"):
        load_bundle(bundle_copy)
    manifest["files"]["logs_tokenizer.model"] = dict(manifest["files"]["tokenizer.model"])
    (bundle_copy / MANIFEST).write_text(json.dumps(manifest))
    bundle = load_bundle(bundle_copy)
    assert bundle.tokenizer_entry("logs")["file"] == "logs_tokenizer.model"
    assert bundle.tokenizer_entry("intents")["file"] == "tokenizer.model"
    model = Model(bundle, tasks=("intents", "logs"))
    plain = Model(load_bundle(default_bundle_path()), tasks=("logs",))
    try:
        assert model.log_tokenizer is not model.tokenizer and plain.log_tokenizer is plain.tokenizer
        line = "kernel: EXT4-fs error (device sda1): unable to read inode block"
        ids = model.log_tokenizer.encode(line).ids[None]
        assert all((a == b).all() for a, b in zip(model.run_logs(ids), plain.run_logs(ids), strict=True))
    finally:
        model.close()
        plain.close()
    # the runtime chain's warm-up ids stay inside each task's own vocabulary
    from edge_agent.runtime.chain import warmup_feeds

    manifest["task_tokenizers"]["logs"]["vocab_size"] = 50
    (bundle_copy / MANIFEST).write_text(json.dumps(manifest))
    feeds = warmup_feeds(load_bundle(bundle_copy))
    assert int(feeds["logs"]["ids"].max()) < 50 <= int(feeds["intents"]["ids"].max())
    manifest["task_tokenizers"] = {"logs": {"type": "sentencepiece-unigram"}}
    (bundle_copy / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(BundleError, match=r"task_tokenizers\['logs'\] needs a file and a max_len"):
        load_bundle(bundle_copy)
