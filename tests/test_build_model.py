"""A miniature ``edge-fw build-model --tiny`` run, end to end, so the pipeline cannot rot."""

from __future__ import annotations

import importlib.metadata
import json
import platform
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tiny_build import LOGHUB_LINES, TinyBuild, edge_fw, on_the_tiny_build

from edge_agent.runtime.bundle import MANIFEST, load_bundle
from edge_agent.runtime.model import Model


@on_the_tiny_build
def test_tiny_build_makes_a_loadable_bundle(tiny_build: TinyBuild) -> None:
    proc, out = tiny_build.proc, tiny_build.out
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "reusing" not in proc.stdout
    assert "teacher (fine-tune)" in proc.stderr  # tqdm progress bars go to stderr
    # what the build costs and reads is said before it starts
    said = proc.stderr.index("edge-fw build-model: tiny smoke build, seed 3 -> ")
    assert said < proc.stderr.index("teacher (fine-tune)") and "  time:      2-3 min" in proc.stderr
    assert "  out of scope decided on the calibration split (the cross-source folds need" in proc.stderr
    bundle = load_bundle(out)
    manifest = bundle.manifest
    assert manifest["build"]["tiny"] is True and manifest["build"]["cross_source"] is False
    stages = manifest["build"]["stages"]
    assert list(stages) == ["data", "teacher", "teacher_outputs", "student", "convert"]
    assert 0 < sum(st["wall_s"] for st in stages.values()) <= manifest["build"]["seconds"]
    assert manifest["build"]["cpu_seconds"] >= stages["teacher"]["cpu_s"] > 0
    # what else the figures depend on: the versions that trained it and the CPU
    env = manifest["build"]["environment"]
    assert env["tensorflow"] == importlib.metadata.version("tensorflow-cpu")
    assert env["keras"] == importlib.metadata.version("keras") and env["numpy"] == np.__version__
    assert env["python"] == platform.python_version() and env["cpu"]
    assert set(manifest["metrics"]) == {"teacher", "student_float", "student_int8"}
    _check_int8_accuracy_is_the_models(bundle, seed=3)
    assert manifest["calibration"]["temperature"] > 0
    assert set(manifest["calibration"]["intent_thresholds"]) == set(manifest["labels"]["intents"][:-1])
    assert "edgetpu" in manifest["variants"]
    paired = manifest["teacher_vs_student"]
    assert set(paired) == {
        "intent_accuracy",
        "oos_rejection",
        "slot_exact",
        "severity_accuracy",
        "category_accuracy",
        "anomaly",
    }
    assert all(0.0 <= v["p"] <= 1.0 and v["a_only"] >= 0 and v["b_only"] >= 0 for v in paired.values())
    assert {t: e["segments"] for t, e in manifest["fused"].items()} == manifest["graphs"]
    for backend in ("litert", "tflite-runtime"):
        model = Model(bundle, backend=backend)
        intent, slots = model.run_intents(model.tokenizer.encode("turn on the light").ids[None])
        assert intent.shape == (1, len(manifest["labels"]["intents"])) and np.isfinite(slots).all()
        model.close()

    small = manifest["variants"]["small"]
    assert small["graphs"]["intents"] == ["embed", "block0", "intent_head"]
    assert (
        set(small["metrics"]) == {"student_float", "student_int8"} and small["calibration"]["temperature"] > 0
    )
    model = Model(bundle, backend="litert", variant="small")
    intent, _ = model.run_intents(model.tokenizer.encode("turn on the light").ids[None])
    assert intent.shape == (1, len(manifest["labels"]["intents"]))
    model.close()

    _check_sentence_embedding(bundle)


@on_the_tiny_build
def test_tiny_bundle_evaluates(tiny_build: TinyBuild) -> None:
    assert tiny_build.proc.returncode == 0, tiny_build.proc.stderr[-3000:]
    proc = edge_fw("eval", "--bundle", str(tiny_build.out), "-n", "40")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "student_int8" in proc.stdout and "int8_fresh" in proc.stdout
    assert "only teacher right" in proc.stdout and "severity_accuracy" in proc.stdout
    assert "s cpu), seed 3, tiny=True" in proc.stdout and "  teacher: " in proc.stdout


def _args_over(tiny_build: TinyBuild, work: Path) -> list[str]:
    """The shared build's arguments with ``work`` as its work directory."""
    return [a if a != str(tiny_build.work) else str(work) for a in tiny_build.args]


def _own_work(tiny_build: TinyBuild, tmp_path: Path) -> list[str]:
    """The shared build's arguments over a copy of its work directory (the same stage outputs;
    the shared ones stay as built)."""
    work = tmp_path / "work"
    shutil.copytree(tiny_build.work, work)
    return _args_over(tiny_build, work)


@on_the_tiny_build
def test_a_rerun_reuses_every_stage_and_redo_runs_one_again(tiny_build: TinyBuild, tmp_path: Path) -> None:
    assert tiny_build.proc.returncode == 0, tiny_build.proc.stderr[-3000:]
    again = tmp_path / "again"
    args = _own_work(tiny_build, tmp_path)
    # a rerun over the same work directory reuses every stage's output; --redo runs one again
    proc = edge_fw(*args, "--out", str(again))
    assert proc.returncode == 0, proc.stderr[-3000:]
    reused = {line.split(":")[0] for line in proc.stdout.splitlines() if ": reusing " in line}
    assert reused == {"stage data", "stage teacher", "stage teacher_outputs", "stage student"}
    # a stricter out-of-scope target is calibration alone: every stage reused, no threshold lower
    # (the tiny student's leaks are too sure for any threshold to reach: test_metrics raises them)
    strict = tmp_path / "strict"
    proc = edge_fw(*args, "--out", str(strict), "--oos-target", "0.999")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "thresholds reject 0.999 of the calibration split's out-of-scope rows" in proc.stderr
    assert {line.split(":")[0] for line in proc.stdout.splitlines() if ": reusing " in line} == reused
    base, hi = load_bundle(again).manifest, load_bundle(strict).manifest
    assert hi["build"]["oos_target"] == 0.999 and "oos_target" not in base["build"]
    low, high = base["calibration"]["intent_thresholds"], hi["calibration"]["intent_thresholds"]
    assert set(high) == set(low) and all(high[k] >= low[k] for k in low)
    proc = edge_fw(*args, "--out", str(tmp_path / "no"), "--oos-target", "0")
    assert proc.returncode == 2 and "the share must be in (0, 1], got 0" in proc.stderr
    proc = edge_fw(*args, "--out", str(again), "--redo", "student")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "stage student: reusing" not in proc.stdout and "stage teacher: reusing" in proc.stdout


@on_the_tiny_build
def test_a_student_seed_trains_the_same_students_from_another_start(
    tiny_build: TinyBuild, tmp_path: Path
) -> None:
    assert tiny_build.proc.returncode == 0, tiny_build.proc.stderr[-3000:]
    args = _own_work(tiny_build, tmp_path)
    first, again = tmp_path / "first", tmp_path / "again"
    proc = edge_fw(*args, "--out", str(first), "--student-seed", "11")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "seed 3, students' seed 11 -> " in proc.stderr
    # the data and teachers are the build's own; only the students are trained again
    assert "stage teacher_outputs: reusing" in proc.stdout and "stage student: reusing" not in proc.stdout
    built = load_bundle(first).manifest["build"]
    assert (built["seed"], built["student_seed"]) == (3, 11)
    assert "student_seed" not in load_bundle(tiny_build.out).manifest["build"]
    graph = "intents.fused.tflite"
    assert (first / graph).read_bytes() != (tiny_build.out / graph).read_bytes()
    # the students of a seed are kept under it: the same seed reuses them
    proc = edge_fw(*args, "--out", str(again), "--student-seed", "11")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "stage student: reusing" in proc.stdout
    assert (again / graph).read_bytes() == (first / graph).read_bytes()


@on_the_tiny_build
def test_the_soft_label_shares_train_other_students_and_are_recorded(
    tiny_build: TinyBuild, tmp_path: Path
) -> None:
    """--intent-soft, --intent-soft-generated and --soft-keeps-scope: students only, on the
    build's own stages."""
    assert tiny_build.proc.returncode == 0, tiny_build.proc.stderr[-3000:]
    args = _own_work(tiny_build, tmp_path)
    out = tmp_path / "shares"
    proc = edge_fw(
        *args,
        "--out",
        str(out),
        "--intent-soft",
        "0.9",
        "--intent-soft-generated",
        "0",
        "--soft-keeps-scope",
        "--slot-weight",
        "5",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "0.9 of the intent loss from soft labels (0 on the generator's rows)" in proc.stderr
    assert "no out-of-scope doubt in the soft labels of in-scope rows, slot loss weight 5" in proc.stderr
    assert "stage teacher_outputs: reusing" in proc.stdout and "stage student: reusing" not in proc.stdout
    built = load_bundle(out).manifest["build"]
    assert (built["intent_soft"], built["intent_soft_generated"]) == (0.9, 0.0) and built["soft_keeps_scope"]
    assert built["slot_weight"] == 5.0
    tiny_built = load_bundle(tiny_build.out).manifest["build"]
    assert not {"intent_soft_generated", "soft_keeps_scope", "slot_weight"} & set(tiny_built)
    graph = "intents.fused.tflite"
    assert (out / graph).read_bytes() != (tiny_build.out / graph).read_bytes()


@on_the_tiny_build
def test_distilled_students_learn_the_mean_of_several_starts(tiny_build: TinyBuild, tmp_path: Path) -> None:
    assert tiny_build.proc.returncode == 0, tiny_build.proc.stderr[-3000:]
    args = _own_work(tiny_build, tmp_path)
    out, member = tmp_path / "distilled", tmp_path / "member"
    proc = edge_fw(*args, "--out", str(out), "--distil-students", "11")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "distilled from the students of seeds [11] and its own" in proc.stderr
    assert "distilling the mean of 2 students" in proc.stdout
    assert load_bundle(out).manifest["build"]["distil_students"] == [11]
    graph = "intents.fused.tflite"
    assert (out / graph).read_bytes() != (tiny_build.out / graph).read_bytes()
    # the member of seed 11 is the student --student-seed 11 trains: kept, so reused
    proc = edge_fw(*args, "--out", str(member), "--student-seed", "11")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "stage student: reusing" in proc.stdout
    assert (member / graph).read_bytes() != (out / graph).read_bytes()
    # half of the teachers' logits kept: other targets, so another student, recorded
    mixed = tmp_path / "mixed"
    proc = edge_fw(*args, "--out", str(mixed), "--distil-students", "11", "--distil-teacher-share", "0.5")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "(0.5 of the teachers' logits kept)" in proc.stderr
    assert "the distilled targets keep 0.5 of the teachers' logits" in proc.stdout
    assert load_bundle(mixed).manifest["build"]["distil_teacher_share"] == 0.5
    assert "distil_teacher_share" not in load_bundle(out).manifest["build"]
    assert (mixed / graph).read_bytes() != (out / graph).read_bytes()
    # the same share mixed as probabilities: the members are reused, the distilled student is new
    prob = tmp_path / "prob"
    proc = edge_fw(
        *args,
        "--out",
        str(prob),
        "--distil-students",
        "11",
        "--distil-teacher-share",
        "0.5",
        "--distil-mix",
        "probabilities",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "(0.5 of the teachers' probabilities kept)" in proc.stderr
    assert "the distilled targets keep 0.5 of the teachers' probabilities" in proc.stdout
    assert proc.stdout.count("stage student: reusing") == 2, proc.stdout[-3000:]
    assert load_bundle(prob).manifest["build"]["distil_mix"] == "probabilities"
    assert "distil_mix" not in load_bundle(mixed).manifest["build"]
    assert (prob / graph).read_bytes() != (mixed / graph).read_bytes()
    # the distilled student's own slot weight: the members (the build's own start and seed 11)
    # are reused at theirs, the distilled student trains again, recorded
    slotw = tmp_path / "slotw"
    proc = edge_fw(*args, "--out", str(slotw), "--distil-students", "11", "--distil-slot-weight", "5")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "the distilled students' slot loss weight 5" in proc.stderr
    assert proc.stdout.count("stage student: reusing") == 2, proc.stdout[-3000:]
    built = load_bundle(slotw).manifest["build"]
    assert built["distil_slot_weight"] == 5.0 and "slot_weight" not in built
    assert (slotw / graph).read_bytes() != (out / graph).read_bytes()
    proc = edge_fw("build-model", "--tiny", "--out", str(tmp_path / "no"), "--distil-slot-weight", "5")
    assert proc.returncode != 0 and "--distil-slot-weight needs --distil-students" in proc.stderr
    proc = edge_fw("build-model", "--tiny", "--out", str(tmp_path / "no"), "--distil-teacher-share", "0.5")
    no_tiny = ("build-model", "--tiny", "--out", str(tmp_path / "no"))
    assert proc.returncode != 0 and "--distil-teacher-share needs --distil-students" in proc.stderr
    proc = edge_fw(*no_tiny, "--distil-students", "11", "--distil-mix", "probabilities")
    assert proc.returncode != 0 and "--distil-mix needs --distil-teacher-share" in proc.stderr
    proc = edge_fw("build-model", "--tiny", "--out", str(tmp_path / "no"), "--distil-students", "5,5")
    assert proc.returncode == 2 and "give one or more different seeds" in proc.stderr
    proc = edge_fw(*args, "--out", str(tmp_path / "no"), "--student-seed", "11", "--distil-students", "11")
    assert proc.returncode != 0 and "is the build's own --student-seed" in proc.stderr
    no = ("build-model", "--tiny", "--out", str(tmp_path / "no"))
    proc = edge_fw(*no, "--lexical-init", "--lexical-width", "0")
    assert proc.returncode == 2 and "the share must be in (0, 1], got 0" in proc.stderr
    proc = edge_fw(*no, "--lexical-width", "0.5")
    assert proc.returncode != 0 and "--lexical-width needs --lexical-init" in proc.stderr
    proc = edge_fw(*no, "--substitute", "-5")
    assert proc.returncode == 2 and "the number must be >= 0, got -5" in proc.stderr
    proc = edge_fw(*no, "--intent-soft", "1.5")
    assert proc.returncode == 2 and "the share must be in (0, 1], got 1.5" in proc.stderr
    proc = edge_fw(*no, "--slot-weight", "0")
    assert proc.returncode == 2 and "the weight must be > 0, got 0" in proc.stderr
    proc = edge_fw(*no, "--intent-soft-generated", "-0.1")
    assert proc.returncode == 2 and "the share must be in [0, 1], got -0.1" in proc.stderr
    assert not (tmp_path / "no").exists()


@on_the_tiny_build
def test_ensemble_seeds_join_several_students_in_one_graph(tiny_build: TinyBuild, tmp_path: Path) -> None:
    """--ensemble-seeds: the build's student and one per seed, side by side in the same segments
    (twice as wide between them), run by the runtime as any bundle."""
    assert tiny_build.proc.returncode == 0, tiny_build.proc.stderr[-3000:]
    args = _own_work(tiny_build, tmp_path)
    out = tmp_path / "pair"
    proc = edge_fw(*args, "--out", str(out), "--ensemble-seeds", "11")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "the mean of its own student and those of seeds [11]" in proc.stderr
    assert "student: the mean of 2 students (starts the build's, 11)" in proc.stdout
    manifest = load_bundle(out).manifest
    one = load_bundle(tiny_build.out).manifest
    assert manifest["build"]["ensemble_seeds"] == [11] and "ensemble_seeds" not in one["build"]
    student = manifest["architecture"]["student"]
    assert (student["members"], one["architecture"]["student"]["members"]) == (2, 1)
    width = {s["name"]: s["inputs"][0]["shape"][-1] for s in manifest["segments"]}
    assert width["block0"] == 2 * student["d_model"] == 2 * one["architecture"]["student"]["d_model"]
    assert manifest["graphs"] == one["graphs"] and "edgetpu" in manifest["variants"]
    # the small variant stays one student
    assert manifest["variants"]["small"]["architecture"]["members"] == 1
    graph = "intents.fused.tflite"
    assert (out / graph).stat().st_size > 1.5 * (tiny_build.out / graph).stat().st_size
    model = Model(load_bundle(out))
    intent, slots = model.run_intents(model.tokenizer.encode("turn on the light").ids[None])
    sev, _, _ = model.run_logs(model.log_tokenizer.encode("disk sda1 failed").ids[None])
    assert np.isfinite(intent).all() and np.isfinite(slots).all() and np.isfinite(sev).all()
    model.close()
    proc = edge_fw(*args, "--out", str(tmp_path / "no"), "--student-seed", "11", "--ensemble-seeds", "11")
    assert proc.returncode != 0 and "is the build's own --student-seed" in proc.stderr


@on_the_tiny_build
def test_a_second_build_of_the_same_seed_makes_the_same_bundle(tiny_build: TinyBuild, tmp_path: Path) -> None:
    """From an empty work directory elsewhere: the same tokenizer and graphs byte for byte, the
    same manifest but for the stages' timings (sampled segmentations come from the build's own
    generator, the tokenizer records no path)."""
    assert tiny_build.proc.returncode == 0, tiny_build.proc.stderr[-3000:]
    work, out = tmp_path / "elsewhere" / "work", tmp_path / "elsewhere" / "bundle"
    proc = edge_fw(*_args_over(tiny_build, work), "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert ": reusing " not in proc.stdout
    files = sorted(p.name for p in tiny_build.out.iterdir())
    assert files == sorted(p.name for p in out.iterdir()) and "tokenizer.model" in files
    same = [n for n in files if (out / n).read_bytes() == (tiny_build.out / n).read_bytes()]
    assert set(files) - set(same) <= {MANIFEST}

    def untimed(bundle: Path) -> dict[str, Any]:
        manifest = json.loads((bundle / MANIFEST).read_text(encoding="utf-8"))
        for key in ("seconds", "cpu_seconds", "stages"):
            manifest["build"].pop(key, None)
        return manifest

    assert untimed(out) == untimed(tiny_build.out)


@on_the_tiny_build
def test_log_dir_reaches_the_build(tiny_build: TinyBuild) -> None:
    """Real log lines: the shared build's --log-dir (a folder per training system) reaches it."""
    from firmware_tools.data.loghub import TRAIN_SYSTEMS

    assert tiny_build.proc.returncode == 0, tiny_build.proc.stderr[-3000:]
    # generated + the real lines of every system
    assert f"{400 + LOGHUB_LINES * len(TRAIN_SYSTEMS)} log lines" in tiny_build.proc.stdout
    assert load_bundle(tiny_build.out).manifest["build"]["real_logs"] is True


@on_the_tiny_build
def test_refused_builds_leave_the_bundle_as_it_was(tiny_build: TinyBuild, tmp_path: Path) -> None:
    assert tiny_build.proc.returncode == 0, tiny_build.proc.stderr[-3000:]
    out = tmp_path / "bundle"
    shutil.copytree(tiny_build.out, out)
    before = json.loads((out / "manifest.json").read_text())
    proc = edge_fw("build-model", "--tiny", "--out", str(out), "--redo", "teachers")
    assert proc.returncode != 0 and "unknown stage 'teachers'" in proc.stderr
    proc = edge_fw("build-model", "--tiny", "--seed", "-1", "--out", str(out))
    assert proc.returncode == 2 and "seed must be >= 0" in proc.stderr
    assert json.loads((out / "manifest.json").read_text()) == before


def _check_int8_accuracy_is_the_models(bundle: Any, seed: int) -> None:
    """The manifest's int8 intent accuracy is what the shipped segments do on the held-out split
    (regenerated here from its seed: the build's held-out utterances are seed + 1000)."""
    from firmware_tools.data.intents import generate
    from firmware_tools.model.build import plan_for
    from firmware_tools.model.dataset import INTENT_LABELS

    held = list(generate(seed + 1000, plan_for(tiny=True).n_heldout))
    model = Model(bundle, backend="litert", threads=2)
    ids = np.stack([model.tokenizer.encode(e.text).ids for e in held]).astype(np.int32)
    logits, _ = model.run_intents(ids)
    model.close()
    gold = np.array([INTENT_LABELS.index(e.intent or "__none__") for e in held])
    measured = float((logits.argmax(axis=1) == gold).mean())
    assert bundle.manifest["metrics"]["student_int8"]["intent_accuracy"] == pytest.approx(measured, abs=1e-9)


def _check_sentence_embedding(bundle: Any) -> None:
    """Both variants' intent graphs write a unit sentence embedding in the same run as the
    logits, and the build calibrated custom intents for each."""
    for variant in ("default", "small"):
        model = Model(bundle, backend="litert", variant=variant)
        assert model.has_sentence_embedding
        ids = np.stack([model.tokenizer.encode(t).ids for t in ("turn on the light", "what time is it")])
        out = model.run_intent_outputs(ids.astype(np.int32))
        assert out.embedding is not None and out.embedding.shape == (2, 384)
        assert np.allclose(np.linalg.norm(out.embedding, axis=1), 1.0, atol=1e-5)
        intent, _ = model.run_intents(ids.astype(np.int32))
        assert np.array_equal(intent, out.intent_logits)
        model.close()
        entry = bundle.manifest if variant == "default" else bundle.manifest["variants"][variant]
        cal = entry["calibration"]["custom_intents"]
        assert -1.0 <= cal["threshold"] <= 1.0 and cal["top_k"] >= 1
    assert 0.0 < bundle.manifest["metrics"]["student_float"]["sentence_cosine"] <= 1.0


def test_the_plan_says_where_the_out_of_scope_decision_is_chosen(tmp_path: Path) -> None:
    """A full build with --data-dir chooses it on cross-source folds unless --no-cross-source."""
    from firmware_tools.cli import build_parser
    from firmware_tools.commands.build_model import plan_lines

    data = tmp_path / "data"
    (data / "clinc150").mkdir(parents=True)
    parser = build_parser()
    full = parser.parse_args(["build-model", "--data-dir", str(data)])
    fast = parser.parse_args(["build-model", "--data-dir", str(data), "--no-cross-source"])
    assert full.cross_source is True and fast.cross_source is False
    assert any("cross-source folds" in line for line in plan_lines(full, tmp_path / "enc.zip"))
    assert any("--no-cross-source" in line for line in plan_lines(fast, tmp_path / "enc.zip"))
    soft = parser.parse_args(["build-model", "--data-dir", str(data), "--intent-soft", "0.9"])
    assert full.intent_soft == 0.5 and soft.intent_soft == 0.9
    assert "of the intent loss" not in plan_lines(full, tmp_path / "enc.zip")[0]
    assert "0.9 of the intent loss from soft labels" in plan_lines(soft, tmp_path / "enc.zip")[0]
    assert full.intent_soft_generated is None and full.soft_keeps_scope is False
    assert "out-of-scope doubt" not in plan_lines(full, tmp_path / "enc.zip")[0]
    assert "generator's rows" not in plan_lines(soft, tmp_path / "enc.zip")[0]
    hard_gen = parser.parse_args(["build-model", "--data-dir", str(data), "--intent-soft-generated", "0"])
    assert hard_gen.intent_soft_generated == 0.0
    line = plan_lines(hard_gen, tmp_path / "enc.zip")[0]
    assert "0.5 of the intent loss from soft labels (0 on the generator's rows)" in line


def test_the_build_logs_the_folds_figures_with_the_others() -> None:
    """A build with folds records them per rule and source; its closing log lines read them (it
    once failed there, after every stage had run)."""
    from firmware_tools.model.build import _log_metrics

    fold = {"in_scope_accuracy": 0.876, "false_rejection": 0.068, "ece": 0.0644}
    lines: list[str] = []
    metrics = {
        "student_int8": {"intent_accuracy": 0.967},
        "cross_source": {"argmax": {"clinc": fold}, "calibrated": {"clinc": fold, "sgd": fold}},
    }
    _log_metrics(metrics, lines.append)
    assert lines[0].startswith("student_int8") and "intent_accuracy=0.9670" in lines[0]
    assert lines[1].startswith("left out clinc (argmax)") and "in_scope_accuracy=0.8760" in lines[1]
    assert [line.split(" (")[0] for line in lines[2:]] == ["left out clinc", "left out sgd"]
    assert all("(calibrated)" in line and "ece=0.0644" in line for line in lines[2:])


def test_the_work_directory_knows_the_encoder_by_name_and_size_not_by_path(tmp_path: Path) -> None:
    # a build run from one checkout's environment and a bench run from another's find one stage
    from firmware_tools.model.build import _encoder_id

    a, b = tmp_path / "a" / "model.zip", tmp_path / "b" / "model.zip"
    for p in (a, b):
        p.parent.mkdir()
        p.write_bytes(b"weights")
    assert _encoder_id(a) == _encoder_id(b) == "model.zip:7"
    b.write_bytes(b"other weights")
    assert _encoder_id(a) != _encoder_id(b)


def test_mixed_distillation_targets_are_the_weighted_mean_of_the_logits() -> None:
    import numpy as np

    from firmware_tools.model.build import mix_logits

    teachers = {"intent": np.array([[2.0, 0.0, -2.0]]), "severity": np.zeros((1, 2, 1))}
    students = {"intent": np.array([[0.0, 4.0, 0.0]], np.float32)}
    mixed = mix_logits(teachers, students, 0.25)
    assert set(mixed) == {"intent"} and mixed["intent"].dtype == np.float32
    np.testing.assert_allclose(mixed["intent"], [[0.5, 3.0, -0.5]])

    # the mixed softmax is the normalized weighted geometric mean of the two softmaxes
    def softmax(z: np.ndarray) -> np.ndarray:
        e = np.exp(z - z.max())
        return e / e.sum()

    geo = softmax(teachers["intent"][0]) ** 0.25 * softmax(students["intent"][0]) ** 0.75
    np.testing.assert_allclose(softmax(mixed["intent"][0]), geo / geo.sum(), rtol=1e-6)
    np.testing.assert_allclose(mix_logits(teachers, students, 0.0)["intent"], students["intent"])


def test_distillation_targets_mixed_as_probabilities_keep_the_teachers_doubt() -> None:
    import numpy as np

    from firmware_tools.model.build import mix_logits, mix_probabilities
    from firmware_tools.model.metrics import softmax

    # the teachers give the last class (out of scope) 0.2; the students are sure of the first
    teachers = {"intent": np.log(np.array([[0.7, 0.1, 0.2]])), "anomaly": np.array([[0.0]])}
    students = {"intent": np.array([[12.0, 0.0, 0.0]], np.float32), "anomaly": np.array([[4.0]], np.float32)}
    mixed = mix_probabilities(teachers, students, 0.5)
    assert mixed["intent"].dtype == np.float32 and mixed["intent"].shape == (1, 3)
    p = softmax(mixed["intent"].astype(np.float64))[0]
    want = 0.5 * np.array([0.7, 0.1, 0.2]) + 0.5 * softmax(students["intent"].astype(np.float64))[0]
    np.testing.assert_allclose(p, want, rtol=1e-5)
    assert p[2] > 0.099  # half the teachers' doubt survives ...
    assert softmax(mix_logits(teachers, students, 0.5)["intent"])[0, 2] < 0.01  # ... the log-mean's does not
    # a one-logit head through its sigmoid: 0.5 x 0.5 + 0.5 x sigmoid(4)
    anomaly = 1.0 / (1.0 + np.exp(-float(mixed["anomaly"][0, 0])))
    assert abs(anomaly - (0.25 + 0.5 / (1.0 + np.exp(-4.0)))) < 1e-5
    np.testing.assert_allclose(
        softmax(mix_probabilities(teachers, students, 1.0)["intent"])[0], [0.7, 0.1, 0.2], rtol=1e-5
    )


def test_student_options_go_into_the_plan_and_the_record_and_back() -> None:
    from firmware_tools.model.build import StudentOptions, plan_for

    assert StudentOptions().record() == {}
    assert StudentOptions().apply(plan_for(False)) == plan_for(False)
    options = StudentOptions(
        intent_soft=0.9, intent_soft_generated=0.0, ensemble_seeds=(310,), slot_weight=5.0, substitute=200
    )
    record = options.record()
    assert record == {
        "intent_soft": 0.9,
        "intent_soft_generated": 0.0,
        "ensemble_seeds": [310],
        "slot_weight": 5.0,
        "substitute": 200,
    }
    # a manifest's build record holds other keys too; they are not options
    assert StudentOptions.from_record({"seed": 8, "tiny": False, **record}) == options
    plan = options.apply(plan_for(False))
    assert (plan.intent_soft, plan.intent_soft_generated, plan.ensemble_seeds) == (0.9, 0.0, (310,))
    assert (plan.slot_weight, plan.n_substitute, plan.lexical_init) == (5.0, 200, False)
    wide = StudentOptions(lexical_init=True, lexical_width=0.5)
    assert wide.apply(plan_for(False)).lexical_width == 0.5
    assert StudentOptions.from_record(wide.record()) == wide


@on_the_tiny_build
def test_calibrate_intents_chooses_the_builds_thresholds_again(tiny_build: TinyBuild, tmp_path: Path) -> None:
    assert tiny_build.proc.returncode == 0, tiny_build.proc.stderr[-3000:]
    bundle = tmp_path / "bundle"
    shutil.copytree(tiny_build.out, bundle)
    built = json.loads((tiny_build.out / MANIFEST).read_text())
    # at the build's own target, on the build's own calibration split: the build's choice again
    proc = edge_fw("calibrate-intents", str(bundle))
    assert proc.returncode == 0, proc.stderr[-3000:]
    again = load_bundle(bundle).manifest
    assert again["calibration"] == built["calibration"] and again["metrics"] == built["metrics"]
    assert again["variants"] == built["variants"] and "oos_target" not in again["build"]
    # a stricter target: recorded, no threshold lower, every other part of the manifest as it was
    proc = edge_fw("calibrate-intents", str(bundle), "--oos-target", "0.999")
    assert proc.returncode == 0, proc.stderr[-3000:]
    strict = load_bundle(bundle).manifest
    assert strict["build"]["oos_target"] == 0.999
    low, high = built["calibration"]["intent_thresholds"], strict["calibration"]["intent_thresholds"]
    assert set(high) == set(low) and all(high[k] >= low[k] for k in low)
    assert (
        strict["metrics"]["student_int8"]["calibrated_oos_rejection"]
        >= (built["metrics"]["student_int8"]["calibrated_oos_rejection"])
    )
    kept = ("calibration", "build", "variants", "metrics")
    assert {k: v for k, v in strict.items() if k not in kept} == {
        k: v for k, v in built.items() if k not in kept
    }
    # refused, the manifest untouched: a decision chosen on folds, a build of real data without it
    for key, value, says in (
        ("calibration", {**built["calibration"], "oos_bar": 0.5}, "chosen on cross-source folds"),
        ("build", {**built["build"], "real_data": True}, "pass --data-dir"),
    ):
        (bundle / MANIFEST).write_text(json.dumps({**built, key: value}))
        before = (bundle / MANIFEST).read_bytes()
        proc = edge_fw("calibrate-intents", str(bundle))
        assert proc.returncode == 2 and says in proc.stderr, proc.stderr[-2000:]
        assert (bundle / MANIFEST).read_bytes() == before
