"""Fused graphs: one .tflite per task, equal to its segment chain bit for bit, checked like any
other bundle file, used by resident runs only, and addable to an old bundle by ``edge-fw``."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from edge_agent.errors import BundleError, InferenceError
from edge_agent.runtime.backend import load_backend
from edge_agent.runtime.bundle import MANIFEST, Bundle, default_bundle_path, load_bundle
from edge_agent.runtime.model import Model, SegmentChain
from edge_agent.runtime.runner import SegmentRunner
from edge_agent.runtime.segments import SegmentExecutor

ROOT = Path(__file__).resolve().parent.parent
TEXTS = ["turn on the kitchen light", "set a timer for five minutes", "what is the meaning of life",
         "", "kernel: usb 1-1: device descriptor read/64, error -71", "x" * 400]  # fmt: skip


@pytest.fixture(scope="module")
def bundle() -> Bundle:
    return load_bundle(default_bundle_path())


def _chain(bundle: Bundle, backend: str, task: str) -> SegmentChain:
    """The graph's segments one by one (what the fused file replaces)."""
    be = load_backend(backend)
    specs = [bundle.segments()[n] for n in bundle.graph(task)]
    return SegmentChain([SegmentRunner(s, be.make_interpreter(bundle.path / s.file, 1)) for s in specs])


def _ids(bundle: Bundle) -> list[np.ndarray]:
    model = Model(bundle, backend="litert", tasks=())
    rows = [model.tokenizer.encode(t).ids[None] for t in TEXTS]
    rng = np.random.default_rng(3)
    noise = rng.integers(0, model.tokenizer.vocab_size, size=(20, 1, model.max_len)).astype(np.int32)
    return rows + list(noise)


@pytest.mark.parametrize("backend", ["litert", "tflite-runtime"])
@pytest.mark.parametrize("task", ["intents", "logs"])
def test_fused_graph_equals_its_segment_chain_bit_for_bit(bundle: Bundle, backend: str, task: str) -> None:
    fused = bundle.fused(task)
    assert fused is not None and bundle.manifest["fused"][task]["segments"] == bundle.graph(task)
    chain = _chain(bundle, backend, task)
    interpreter = load_backend(backend).make_interpreter(bundle.path / fused.file, 1)
    one = SegmentChain([SegmentRunner(fused, interpreter)])
    outputs = [p["name"] for p in bundle.segments()[bundle.graph(task)[-1]].outputs]
    for ids in _ids(bundle):
        want, got = chain.run({"ids": ids}), one.run({"ids": ids})
        for name in outputs:
            assert got[name].dtype == want[name].dtype and np.array_equal(got[name], want[name]), name


def test_resident_model_runs_one_interpreter_per_task_and_only_the_tasks_asked(bundle: Bundle) -> None:
    model = Model(bundle, backend="litert", tasks=("intents",))
    assert list(model._runners) == ["intents_fused"]  # one interpreter, not five
    intent, slots = model.run_intents(model.tokenizer.encode("turn off the fan").ids[None])
    assert model.labels["intents"][int(intent.argmax())] == "HassTurnOff" and slots.shape[0] == 1
    with pytest.raises(InferenceError, match="without its logs graph"):
        model.run_logs(np.zeros((1, model.max_len), np.int32))
    # streaming needs the segments: the fused file is for resident runs only
    streamed = Model(bundle, backend="litert", residency="stream")
    assert "intents_fused" not in streamed._runners
    ids = model.tokenizer.encode("dim the lights to 20 percent").ids[None]
    for a, b in zip(model.run_intents(ids), streamed.run_intents(ids), strict=True):
        assert np.array_equal(a, b)


def test_segment_executor_uses_fused_graphs_when_resident(bundle: Bundle) -> None:
    be = load_backend("litert")
    resident = SegmentExecutor(bundle, lambda p: be.make_interpreter(p, 1), residency="resident")
    assert resident.resident_names == {"intents_fused", "logs_fused"}
    streamed = SegmentExecutor(bundle, lambda p: be.make_interpreter(p, 1), residency="stream")
    ids = _ids(bundle)[0]
    for task in ("intents", "logs"):
        want = streamed.run(task, {"ids": ids})
        got = resident.run(task, {"ids": ids})
        assert set(got) == set(want)
        assert all(np.array_equal(got[k], want[k]) for k in want)
    assert resident.stats.invokes == 2 and resident.stats.loads == 2
    resident.close()
    streamed.close()


def _copy(tmp_path: Path) -> Path:
    dst = tmp_path / "bundle"
    shutil.copytree(default_bundle_path(), dst)
    return dst


def _edit(root: Path, change: Any) -> None:
    manifest = json.loads((root / MANIFEST).read_text())
    change(manifest)
    (root / MANIFEST).write_text(json.dumps(manifest))


def test_a_corrupt_fused_file_is_refused_like_any_segment(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    data = bytearray((root / "intents.fused.tflite").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (root / "intents.fused.tflite").write_bytes(bytes(data))
    with pytest.raises(BundleError, match=r"intents\.fused\.tflite sha256 mismatch"):
        load_bundle(root)


def test_a_fused_entry_that_no_longer_matches_its_graph_is_refused(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    _edit(root, lambda m: m["fused"]["logs"].update(segments=["embed", "logs_head"]))
    with pytest.raises(BundleError, match=r"fused graph 'logs' joins .* rebuild it with edge-fw fuse-graphs"):
        load_bundle(root)


def _edge_fw(*args: str) -> subprocess.CompletedProcess[str]:
    code = "import sys; from firmware_tools.cli import main; sys.exit(main())"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=300, check=False)  # fmt: skip


def test_fuse_graphs_adds_them_to_a_bundle_built_without(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    for name in ("intents.fused.tflite", "logs.fused.tflite"):
        (root / name).unlink()

    def strip(m: dict[str, Any]) -> None:
        del m["fused"]
        for name in ("intents.fused.tflite", "logs.fused.tflite"):
            del m["files"][name]

    _edit(root, strip)
    old = load_bundle(root)
    assert old.fused("intents") is None
    assert list(Model(old, backend="litert", tasks=("intents",))._runners) == list(old.graph("intents"))
    proc = _edge_fw("fuse-graphs", str(root))
    assert proc.returncode == 0, proc.stderr
    assert "intents: intents.fused.tflite" in proc.stdout
    new = load_bundle(root)
    shipped = load_bundle(default_bundle_path())
    assert new.manifest["fused"] == shipped.manifest["fused"]
    for name in ("intents.fused.tflite", "logs.fused.tflite"):  # the same bytes as the shipped files
        assert new.manifest["files"][name] == shipped.manifest["files"][name]

    (root / "manifest.sig").write_text("{}")
    proc = _edge_fw("fuse-graphs", str(root))
    assert proc.returncode == 2 and "is signed" in proc.stderr
