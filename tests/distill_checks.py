"""Distillation targets and losses: the student sees the teacher's intent and log outputs as soft
targets, which pull it towards the teacher, and hard slot tags.

Run by tests/test_distill.py in a child process: TensorFlow must not be loaded into the pytest
process, whose tflite-runtime interpreters clash with it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run by runpy: the helpers beside it
from childcheck import run_checks

from firmware_tools.model.dataset import INTENT_LABELS, SLOT_TAGS, IntentArrays, LogArrays
from firmware_tools.model.network import NetConfig, Network, build_network
from firmware_tools.model.train import KD, SentenceTargets, _sigmoid_kd, _softmax_kd, make_targets

L, N_TAGS = 6, len(SLOT_TAGS)
N_CLASSES = {"intent": len(INTENT_LABELS), "severity": 6, "category": 12, "anomaly": 1}


def _arrays(rng: np.random.Generator) -> tuple[IntentArrays, LogArrays]:
    ids = np.array([[5, 6, 7, 0, 0, 0], [8, 9, 0, 0, 0, 0], [4, 4, 4, 4, 0, 0]], np.int32)
    tags = rng.integers(0, N_TAGS, size=ids.shape).astype(np.int32) * (ids != 0)
    intents = IntentArrays(ids, np.array([0, 3, len(INTENT_LABELS) - 1], np.int32), tags, [], [])
    log_ids = np.array([[11, 12, 13, 14, 0, 0], [15, 0, 0, 0, 0, 0]], np.int32)
    sev, cat = np.array([1, 2], np.int32), np.array([0, 5], np.int32)
    logs = LogArrays(log_ids, sev, cat, np.array([0.0, 1.0], np.float32), [])
    return intents, logs


def _teacher(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    out = {k: rng.normal(size=(n, c)).astype(np.float32) for k, c in N_CLASSES.items()}
    out["slots"] = rng.normal(size=(n, L, N_TAGS)).astype(np.float32)
    return out


def _tiny_network(name: str) -> Network:
    """A one-conv-block student of width 8 with every head, for the loss and optimizer checks."""
    cfg = NetConfig(
        vocab=16, max_len=L, d_model=8, block_kinds=("conv",), n_heads=1, d_ff=8,
        n_intents=len(INTENT_LABELS), n_tags=N_TAGS, n_severity=6, n_category=12, dropout=0.0,
    )  # fmt: skip
    return build_network(cfg, name)


def check_slot_targets_are_hard_tags_with_or_without_a_teacher() -> None:
    rng = np.random.default_rng(0)
    intents, logs = _arrays(rng)
    hard = make_targets(intents, logs, None, N_CLASSES)
    assert hard.y["slots"].shape == (5, L, 2)
    soft = make_targets(intents, logs, _teacher(rng, 5), N_CLASSES)
    slots = soft.y["slots"]
    # the teacher's per-token tags are not soft targets (train.make_targets says why)
    np.testing.assert_array_equal(slots, hard.y["slots"])
    # weights: real tokens of intent rows only; log rows never train the slot head
    np.testing.assert_array_equal(slots[:3, :, 0], (intents.ids != 0).astype(np.float32))
    assert not slots[3:, :, 0].any()
    np.testing.assert_array_equal(slots[:3, :, 1], intents.tags)
    assert soft.y["intent"].shape == (5, 2 + N_CLASSES["intent"])


def check_slot_loss_counts_real_intent_tokens_only() -> None:
    rng = np.random.default_rng(1)
    intents, logs = _arrays(rng)
    y = make_targets(intents, logs, _teacher(rng, 5), N_CLASSES).y["slots"]
    hard = _softmax_kd(KD(alpha=1.0))
    logits = rng.normal(size=(5, L, N_TAGS)).astype(np.float32)
    right = np.full((5, L, N_TAGS), -8.0, np.float32)
    np.put_along_axis(right, y[..., 1:2].astype(np.int64), 8.0, axis=-1)
    assert float(hard(y, right)) < 1e-3 < float(hard(y, logits))
    # padding and log rows do not count: changing their logits changes nothing
    moved = logits.copy()
    moved[3:] += 100.0
    moved[:3][intents.ids == 0] -= 100.0
    assert float(hard(y, moved)) == pytest.approx(float(hard(y, logits)), rel=1e-5)


def check_row_heads_still_distil() -> None:
    rng = np.random.default_rng(2)
    intents, logs = _arrays(rng)
    teacher = _teacher(rng, 5)
    y = make_targets(intents, logs, teacher, N_CLASSES).y
    soft = _softmax_kd(KD(alpha=0.0))
    assert float(soft(y["intent"], teacher["intent"])) == pytest.approx(0.0, abs=1e-4)
    assert float(soft(y["intent"], -teacher["intent"])) > 0.1
    anomaly = _sigmoid_kd(KD(alpha=0.0))
    near, far = anomaly(y["anomaly"], teacher["anomaly"]), anomaly(y["anomaly"], -teacher["anomaly"])
    assert float(near) < float(far)


def check_moving_average_replaces_the_last_weights() -> None:
    """With ``ema`` the weights after ``fit`` are the moving average of the weights after each
    step (keras' first step starts the average at the weights themselves), not the last step's."""
    import keras

    from firmware_tools.model.train import compile_heads

    rng = np.random.default_rng(3)
    intents, logs = _arrays(rng)
    data = make_targets(intents, logs, _teacher(rng, 5), N_CLASSES)
    net = _tiny_network("ema")
    momentum, steps = 0.8, 6
    compile_heads(net.model, lr=0.05, steps=steps, kd=KD(alpha=0.5), log_weight=0.5, ema=momentum)
    seen: list[list[np.ndarray]] = []

    class Record(keras.callbacks.Callback):
        def on_train_batch_end(self, batch: int, logs: object = None) -> None:
            seen.append([np.array(w) for w in net.model.trainable_weights])

    net.model.fit(
        data.ids, data.y, batch_size=5, epochs=steps, shuffle=False, verbose=0, callbacks=[Record()]
    )
    average = seen[0]
    for weights in seen[1:]:
        average = [momentum * a + (1 - momentum) * w for a, w in zip(average, weights, strict=True)]
    final = [np.array(w) for w in net.model.trainable_weights]
    assert len(seen) == steps
    for got, want in zip(final, average, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    assert max(float(np.abs(g - x).max()) for g, x in zip(final, seen[-1], strict=True)) > 1e-3


def check_unlabelled_extra_rows_learn_the_teachers_intent_only_when_given() -> None:
    rng = np.random.default_rng(4)
    intents, logs = _arrays(rng)
    teacher = _teacher(rng, 5)
    extra_ids = np.array([[21, 22, 0, 0, 0, 0], [23, 24, 25, 0, 0, 0]], np.int32)
    dim = 4
    rows, extra = rng.normal(size=(3, dim)), rng.normal(size=(2, dim))
    plain = make_targets(intents, logs, teacher, N_CLASSES, SentenceTargets(rows, extra_ids, extra))
    # without the teachers' labels of the extra texts they train the sentence head alone
    assert plain.ids.shape == (7, L) and not plain.y["intent"][5:, 0].any()
    labels = rng.normal(size=(2, N_CLASSES["intent"])).astype(np.float32)
    labels[0, 7] = labels[1, 2] = 9.0
    kd = make_targets(intents, logs, teacher, N_CLASSES, SentenceTargets(rows, extra_ids, extra, labels))
    y = kd.y["intent"]
    np.testing.assert_array_equal(y[5:, 0], [1.0, 1.0])  # weighed as an intent row
    np.testing.assert_array_equal(y[5:, 1], [7.0, 2.0])  # the teachers' argmax as the hard label
    np.testing.assert_array_equal(y[5:, 2:], labels)  # their logits as the soft one
    np.testing.assert_array_equal(y[:5], plain.y["intent"][:5])  # the other rows as before
    for head in ("slots", "severity", "category", "anomaly"):
        np.testing.assert_array_equal(kd.y[head], plain.y[head])
    soft = _softmax_kd(KD(alpha=0.5, temperature=2.0))
    # the loss now pulls the extra rows toward the teachers' answer
    far = np.concatenate([teacher["intent"][:5], -labels])
    near = np.concatenate([teacher["intent"][:5], labels])
    assert float(soft(y, near)) < float(soft(y, far))
    with pytest.raises(ValueError, match="extra_intent"):
        make_targets(intents, logs, teacher, N_CLASSES, SentenceTargets(rows, extra_ids, extra, labels[:1]))


def check_only_the_named_extra_rows_learn_the_teachers_intent() -> None:
    """``extra_intent_rows``: SGD's texts (sentence only) and substituted texts (intent too) in
    one set of extra rows; the unnamed rows keep weight 0 on the intent head."""
    rng = np.random.default_rng(5)
    intents, logs = _arrays(rng)
    teacher = _teacher(rng, 5)
    extra_ids = np.array([[21, 22, 0, 0, 0, 0], [23, 24, 25, 0, 0, 0], [26, 0, 0, 0, 0, 0]], np.int32)
    rows, extra = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    labels = rng.normal(size=(3, N_CLASSES["intent"])).astype(np.float32)
    named = np.array([False, True, True])
    sent = SentenceTargets(rows, extra_ids, extra, labels, named, np.array(["sgd", "clinc", "gen"], object))
    y = make_targets(intents, logs, teacher, N_CLASSES, sent).y["intent"]
    np.testing.assert_array_equal(y[5:, 0], [0.0, 1.0, 1.0])
    assert not y[5, 1:].any()
    np.testing.assert_array_equal(y[6:, 1], labels[1:].argmax(axis=1))
    np.testing.assert_array_equal(y[6:, 2:], labels[1:])
    # every extra row still trains the sentence head
    sentence = make_targets(intents, logs, teacher, N_CLASSES, sent).y["sentence"]
    np.testing.assert_array_equal(sentence[5:, 0], [1.0, 1.0, 1.0])


def check_the_intent_head_takes_its_own_mix_of_hard_and_soft_labels() -> None:
    """``intent_kd`` (``--intent-soft``) sets the intent head's loss alone; the log heads keep
    ``kd``, and without it the intent head does too."""
    from firmware_tools.model.train import compile_heads

    rng = np.random.default_rng(6)
    intents, logs = _arrays(rng)
    data = make_targets(intents, logs, _teacher(rng, 5), N_CLASSES)
    half, mostly_soft = KD(alpha=0.5), KD(alpha=0.1)
    y_int, y_cat = data.y["intent"], data.y["category"]
    z_int = rng.normal(size=(5, N_CLASSES["intent"])).astype(np.float32)
    z_cat = rng.normal(size=(5, N_CLASSES["category"])).astype(np.float32)

    def losses(intent_kd: KD | None) -> tuple[float, float]:
        net = _tiny_network("mix")
        compile_heads(net.model, lr=0.01, steps=1, kd=half, log_weight=0.5, intent_kd=intent_kd)
        loss = net.model.loss
        return float(loss["intent"](y_int, z_int)), float(loss["category"](y_cat, z_cat))

    want_half = float(_softmax_kd(half)(y_int, z_int)), float(_softmax_kd(half)(y_cat, z_cat))
    want_soft = float(_softmax_kd(mostly_soft)(y_int, z_int))
    assert abs(want_soft - want_half[0]) > 1e-3  # the two mixes tell apart on these rows
    np.testing.assert_allclose(losses(None), want_half, rtol=1e-6)
    np.testing.assert_allclose(losses(mostly_soft), (want_soft, want_half[1]), rtol=1e-6)


def check_each_intent_row_takes_its_own_share_of_hard_labels() -> None:
    """``intent_hard`` (``--intent-soft-generated``): a share column in the intent targets; each
    row's loss is the plain mix at its own share, the extra rows take ``extra_hard``."""
    import dataclasses
    from types import SimpleNamespace

    from firmware_tools.model.build import intent_hard_shares, plan_for
    from firmware_tools.model.train import _row_share_kd, compile_heads

    rng = np.random.default_rng(7)
    intents, logs = _arrays(rng)
    teacher = _teacher(rng, 5)
    plain = make_targets(intents, logs, teacher, N_CLASSES)
    rows = make_targets(intents, logs, teacher, N_CLASSES, None, np.array([0.0, 1.0, 0.3]), 0.8)
    y = rows.y["intent"]
    assert rows.intent_rows and not plain.intent_rows
    np.testing.assert_allclose(y[:, 2], [0.0, 1.0, 0.3, 0.8, 0.8])
    np.testing.assert_array_equal(np.delete(y, 2, axis=1), plain.y["intent"])
    for head in ("slots", "severity", "category", "anomaly"):
        np.testing.assert_array_equal(rows.y[head], plain.y[head])
    z = rng.normal(size=(5, N_CLASSES["intent"])).astype(np.float32)
    loss = _row_share_kd(2.0)
    for i, share in enumerate((0.0, 1.0, 0.3)):
        want = float(_softmax_kd(KD(alpha=share, temperature=2.0))(plain.y["intent"][[i]], z[[i]]))
        np.testing.assert_allclose(float(loss(y[[i]], z[[i]])), want, rtol=1e-5)
    # one share on every row is the plain mix, and compile_heads picks the row loss when asked
    same = make_targets(intents, logs, teacher, N_CLASSES, None, np.full(3, 0.5), 0.5).y["intent"]
    want_all = float(_softmax_kd(KD(alpha=0.5))(plain.y["intent"], z))
    net = _tiny_network("rows")
    compile_heads(net.model, lr=0.01, steps=1, kd=KD(alpha=0.5), log_weight=0.5, intent_rows=True)
    np.testing.assert_allclose(float(net.model.loss["intent"](same, z)), want_all, rtol=1e-5)
    assert abs(float(loss(y, z)) - want_all) > 1e-3  # the shares tell apart on these rows
    # fit trains on the share column (a step moves the intent head's weights)
    from firmware_tools.model.train import fit

    before = [w.copy() for w in net.model.get_weights()]
    fit(net, rows, epochs=1, batch=5, lr=0.05, kd=KD(alpha=0.5), seed=0, desc="rows", jit_compile=False)
    after = net.model.get_weights()
    assert all(np.isfinite(w).all() for w in after)
    assert max(float(np.abs(a - b).max()) for a, b in zip(after, before, strict=True)) > 1e-4
    # the extra texts that train the intent head carry the other rows' share
    extra_ids = np.array([[21, 22, 0, 0, 0, 0]], np.int32)
    labels = rng.normal(size=(1, N_CLASSES["intent"])).astype(np.float32)
    sent = SentenceTargets(rng.normal(size=(3, 4)), extra_ids, rng.normal(size=(1, 4)), labels)
    ext = make_targets(intents, logs, teacher, N_CLASSES, sent, np.zeros(3), 0.1).y["intent"]
    np.testing.assert_allclose(ext[5], [1.0, labels.argmax(), 0.1, *labels[0]], rtol=1e-6)
    for bad in (np.zeros(2), np.array([0.0, 1.5, 0.0])):
        with pytest.raises(ValueError, match="intent_hard"):
            make_targets(intents, logs, teacher, N_CLASSES, None, bad)
    # the build's shares: the generator's rows (the first ones) on their own share
    data: Any = SimpleNamespace(it_tr=SimpleNamespace(ids=np.zeros((5, L))), n_generated=2)
    soft = dataclasses.replace(plan_for(False), intent_soft=0.9)
    assert intent_hard_shares(soft, data) == (None, pytest.approx(0.1))
    shares, rest = intent_hard_shares(dataclasses.replace(soft, intent_soft_generated=0.0), data)
    assert shares is not None and rest == pytest.approx(0.1)
    np.testing.assert_allclose(shares, [1.0, 1.0, 0.1, 0.1, 0.1])


def check_in_scope_rows_learn_no_out_of_scope_doubt_when_asked() -> None:
    """``scope_class`` (``--soft-keeps-scope``): on rows labelled in scope the teacher's
    out-of-scope logit falls to the row's least; the out-of-scope rows, the other classes and the
    log rows keep the teacher's own."""
    import dataclasses

    from firmware_tools.model.build import plan_for, scope_class
    from firmware_tools.model.metrics import scope_doubt

    rng = np.random.default_rng(3)
    intents, logs = _arrays(rng)  # labels: two in scope, then one out of scope
    teacher = _teacher(rng, 5)
    oos = len(INTENT_LABELS) - 1
    teacher["intent"][:, oos] = 4.0  # the teacher's strongest doubt on every row
    plain = make_targets(intents, logs, teacher, N_CLASSES).y["intent"]
    kept = make_targets(intents, logs, teacher, N_CLASSES, scope_class=oos).y["intent"]
    soft_plain, soft_kept = plain[:, 2:], kept[:, 2:]
    for row in (0, 1):
        assert soft_kept[row, oos] == soft_kept[row].min() < soft_plain[row, oos]
        np.testing.assert_array_equal(np.delete(soft_kept[row], oos), np.delete(soft_plain[row], oos))
    np.testing.assert_array_equal(soft_kept[2:], soft_plain[2:])  # out of scope and log rows
    np.testing.assert_array_equal(kept[:, :2], plain[:, :2])  # weights and hard labels
    assert teacher["intent"][0, oos] == 4.0  # the teacher's own array is left as it was
    # what the build logs of it: the out-of-scope mass and rank on the in-scope rows alone
    mass, ranked = scope_doubt(teacher["intent"], intents.intent, oos)
    z = teacher["intent"][:2] / 2.0
    p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    assert mass == pytest.approx(p[:, oos].mean()) and ranked == 1.0
    assert scope_doubt(soft_kept, intents.intent, oos) == (pytest.approx(0.0, abs=0.05), 0.0)
    # the build passes the out-of-scope label only when the plan asks for it
    assert scope_class(plan_for(False)) is None
    assert scope_class(dataclasses.replace(plan_for(False), soft_keeps_scope=True)) == oos


def check_joined_students_average_their_outputs_in_keras_and_in_int8() -> None:
    """``join_networks``: two students side by side answer with the mean of their outputs (Keras,
    exactly), and its int8 segments, each twice as wide between segments, with nearly the same
    (quantization error only)."""
    import tempfile

    import tensorflow as tf

    from firmware_tools.model.convert import convert_segments
    from firmware_tools.model.network import join_networks

    tf.keras.utils.set_random_seed(5)
    a, b = _tiny_network("a"), _tiny_network("b")
    joined = join_networks([a, b], "joined")
    assert joined.cfg.members == 2 and joined.cfg.width == 16 and a.cfg.width == 8
    rng = np.random.default_rng(7)
    ids = rng.integers(1, 16, size=(64, L)).astype(np.int32)
    ids[:, 4:] *= rng.integers(0, 2, size=(64, 1)).astype(np.int32)  # some padded rows
    out = {name: net.model.predict(ids, verbose=0) for name, net in (("a", a), ("b", b), ("j", joined))}
    for head, value in out["j"].items():
        np.testing.assert_allclose(value, (out["a"][head] + out["b"][head]) / 2, atol=1e-5)
    assert not np.allclose(out["a"]["intent"], out["b"]["intent"], atol=1e-2)  # two starts differ
    with tempfile.TemporaryDirectory() as tmp:
        segs, _ = convert_segments(joined, ids, Path(tmp))
        widths = {s.name: [p["shape"][-1] for p in s.inputs] for s in segs}
        assert widths["block0"] == [16] and widths["intent_head"] == [16, L]
        env: dict[str, np.ndarray] = {"ids": ids[:1]}
        for seg in segs:  # the default variant: float at every segment boundary
            interp = tf.lite.Interpreter(model_path=str(Path(tmp) / seg.file))
            interp.allocate_tensors()
            index = {d["name"]: d["index"] for d in interp.get_input_details() + interp.get_output_details()}
            for port in seg.inputs:
                interp.set_tensor(index[port["tensor"]], env[port["name"]].astype(port["dtype"]))
            interp.invoke()
            env.update({port["name"]: interp.get_tensor(index[port["tensor"]]) for port in seg.outputs})
    spread = float(np.ptp(out["j"]["intent"][0]))
    assert float(np.abs(env["intent_logits"][0] - out["j"]["intent"][0]).max()) < 0.1 * spread


if __name__ == "__main__":
    sys.exit(run_checks(globals()))
