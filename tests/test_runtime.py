"""Runtime core on the shipped bundle through the real interpreters (both backends)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from edge_agent.errors import BackendUnavailable, BundleError, InferenceError
from edge_agent.nlu.recognizer import IntentRecognizer
from edge_agent.runtime.backend import available_backends, load_backend
from edge_agent.runtime.bundle import MANIFEST, default_bundle_path, load_bundle
from edge_agent.runtime.model import Model
from edge_agent.runtime.tokenizer import Tokenizer

GOLDEN = json.loads((Path(__file__).parent / "golden" / "default_bundle.json").read_text())
BACKENDS = ("litert", "tflite-runtime")


@pytest.fixture(scope="module")
def bundle():  # type: ignore[no-untyped-def]
    return load_bundle(default_bundle_path())


@pytest.fixture(scope="module", params=BACKENDS)
def model(request, bundle):  # type: ignore[no-untyped-def]
    m = Model(bundle, backend=request.param)
    yield m
    m.close()


def test_both_backends_are_installed() -> None:
    assert set(BACKENDS) <= set(available_backends())
    assert load_backend("auto").name in BACKENDS


@pytest.mark.parametrize(
    ("name", "dist"), [("litert", "ai-edge-litert"), ("tflite-runtime", "tflite-runtime")]
)
def test_backend_reports_the_installed_version(name: str, dist: str) -> None:
    from importlib import metadata

    assert load_backend(name).version == metadata.version(dist)


def test_unknown_backend_is_a_clear_error() -> None:
    with pytest.raises(BackendUnavailable, match="unknown backend 'onnx'"):
        load_backend("onnx")


def test_golden_manifest_checksum(bundle) -> None:  # type: ignore[no-untyped-def]
    digest = hashlib.sha256((bundle.path / MANIFEST).read_bytes()).hexdigest()
    assert digest == GOLDEN["manifest_sha256"], "bundle changed: rerun tests/golden/make_golden.py and review"


def test_golden_outputs(model: Model) -> None:
    golden = GOLDEN["backends"][model.backend.name]
    rec = IntentRecognizer(model)
    for case in golden["intents"]:
        ids = model.tokenizer.encode(case["text"]).ids[None]
        assert ids[0].tolist() == case["ids"]
        logits, _ = model.run_intents(ids)
        np.testing.assert_allclose(logits[0], case["intent_logits"], atol=2e-4)
        assert rec.recognize([case["text"]])[0].intent == case["intent"]
    for case in golden["logs"]:
        sev, cat, anom = model.run_logs(model.tokenizer.encode(case["line"]).ids[None])
        np.testing.assert_allclose(sev[0], case["severity_logits"], atol=2e-4)
        np.testing.assert_allclose(cat[0], case["category_logits"], atol=2e-4)
        assert abs(float(anom[0]) - case["anomaly_logit"]) < 2e-4


def test_output_shapes_follow_the_manifest(model: Model) -> None:
    texts = ["turn off the fan", "what time is it", ""]
    ids = np.stack([model.tokenizer.encode(t).ids for t in texts])
    intent, slots = model.run_intents(ids)
    n_int, n_tags = len(model.labels["intents"]), len(model.labels["slot_tags"])
    assert intent.shape == (3, n_int) and slots.shape == (3, model.max_len, n_tags)
    sev, cat, anom = model.run_logs(ids)
    assert sev.shape == (3, len(model.labels["severity"])) and cat.shape == (3, len(model.labels["category"]))
    assert anom.shape == (3,)
    assert np.isfinite(intent).all() and np.isfinite(slots).all()
    # a batch equals its rows run one by one
    one, _ = model.run_intents(ids[1:2])
    np.testing.assert_allclose(one[0], intent[1], atol=1e-6)


def test_sentence_embeddings_are_unit_rows_one_at_a_time_or_batched(model: Model) -> None:
    texts = ["turn off the fan", "what time is it", ""]
    ids = np.stack([model.tokenizer.encode(t).ids for t in texts])
    batch = model.run_intent_outputs(ids).embedding
    assert batch is not None and batch.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-5)
    for i in range(len(texts)):
        one = model.run_intent_outputs(ids[i : i + 1]).embedding
        assert one is not None and one.dtype == np.float32
        np.testing.assert_allclose(one[0], batch[i], atol=1e-6)


def test_backends_agree_on_the_decision(bundle) -> None:  # type: ignore[no-untyped-def]
    a, b = Model(bundle, backend="litert"), Model(bundle, backend="tflite-runtime")
    texts = [
        "turn on the lights in the kitchen",
        "pause the music",
        "tell me a joke",
        "set a timer for 5 minutes",
    ]
    ids = np.stack([a.tokenizer.encode(t).ids for t in texts])
    la, _ = a.run_intents(ids)
    lb, _ = b.run_intents(ids)
    assert np.abs(la - lb).max() < 0.25 * max(1.0, float(np.abs(la).max()))  # int8 kernels round differently


def test_edgetpu_variant_runs(bundle) -> None:  # type: ignore[no-untyped-def]
    if not bundle.has_variant("edgetpu"):
        pytest.fail("shipped bundle must carry the edgetpu variant")
    tpu = Model(bundle, backend="litert", variant="edgetpu")
    ref = Model(bundle, backend="litert")
    ids = ref.tokenizer.encode("turn on the kitchen lights").ids[None]
    specs = bundle.segments("edgetpu")
    assert all(p["dtype"] == "int8" for s in specs.values() for p in s.outputs)
    ti, _ = tpu.run_intents(ids)
    ri, _ = ref.run_intents(ids)
    assert ti.shape == ri.shape and np.isfinite(ti).all()


def test_wrong_ids_shape_is_an_inference_error(model: Model) -> None:
    with pytest.raises(InferenceError, match="ids must have shape"):
        model.run_intents(np.zeros((1, model.max_len + 1), np.int32))


def test_unknown_residency_is_refused(bundle) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(BundleError, match="unknown residency 'swap'"):
        Model(bundle, residency="swap")


def test_tokenizer_offsets_and_truncation(bundle) -> None:  # type: ignore[no-untyped-def]
    tok = Tokenizer(bundle.tokenizer_path, 32)
    text = "Turn ON the Living-Room lamp 🙂"
    enc = tok.encode(text)
    assert not enc.truncated and enc.ids.shape == (32,) and enc.ids.dtype == np.int32
    assert enc.length == int((enc.ids != 0).sum())
    for start, end in enc.offsets:
        assert 0 <= start <= end <= len(text)
    covered = "".join(text[s:e] for s, e in enc.offsets)
    assert covered.replace(" ", "") == text.replace(" ", "")
    long = tok.encode("sensor " * 20000)
    assert long.truncated and long.length == 32
    bad = tok.encode("caf\udce9 ok")  # lone surrogate from undecodable input
    assert bad.length > 0


def test_decode_spans_bio_rules() -> None:
    from edge_agent.nlu.recognizer import decode_spans
    from edge_agent.runtime.tokenizer import Encoded

    tags = ["O", "B-name", "I-name", "B-area", "I-area"]
    text = "turn on kitchen ceiling light in living room"
    words = [(0, 4), (5, 7), (8, 15), (16, 23), (24, 29), (30, 32), (33, 39), (40, 44)]
    seq = ["O", "O", "B-name", "I-name", "I-name", "O", "I-area", "I-area"]  # I- without B- starts a span
    # logits (as the slot head writes them): each token's tag at ln 36 against 0 for the other four,
    # i.e. a softmax probability of 36 / (36 + 4) = 0.9; two more rows for padding, never read
    logits = np.zeros((len(words) + 2, len(tags)), np.float32)
    for i, t in enumerate(seq):
        logits[i, tags.index(t)] = np.log(36.0)
    logits[len(words) :, tags.index("B-area")] = 50.0
    enc = Encoded(np.ones(len(words), np.int32), words, False)
    spans = decode_spans(enc, logits, tags)
    assert [(text[s.start : s.end], s.slot) for s in spans] == [
        ("kitchen ceiling light", "name"),
        ("living room", "area"),
    ]
    assert all(abs(s.confidence - 0.9) < 1e-6 for s in spans)


def test_thresholds_reject_low_confidence(bundle) -> None:  # type: ignore[no-untyped-def]
    model = Model(bundle)
    rec = IntentRecognizer(model)
    text = "turn on the kitchen lights"
    assert rec.recognize([text])[0].intent == "HassTurnOn"
    rec.thresholds[:] = 1.01  # nothing can be that sure: everything is rejected
    result = rec.recognize([text])[0]
    assert result.intent is None and result.slots == {}
    assert rec.recognize([]) == []


def test_a_backend_imports_its_interpreter_extension_at_first_use() -> None:
    """Choosing LiteRT maps nothing of its Python extension (the weight cache path never needs it)."""
    code = (
        "import sys; from edge_agent.runtime.backend import load_backend; b = load_backend('litert'); "
        "before = 'ai_edge_litert.interpreter' in sys.modules; b.module; "
        "print(before, 'ai_edge_litert.interpreter' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["False", "True"]
