"""The whole model build: data -> tokenizer -> teacher -> distilled student -> int8 segments
-> calibration -> bundle. Deterministic from a seed (up to TensorFlow's CPU nondeterminism)."""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import os
import random
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from tqdm.auto import tqdm

from edge_agent.logs.labels import CATEGORIES, SEVERITIES
from edge_agent.runtime.bundle import FORMAT_NAME, FORMAT_VERSION, MANIFEST, file_entry, load_bundle
from edge_agent.runtime.tokenizer import Tokenizer
from firmware_tools.data import logs as log_data
from firmware_tools.model.cross_source import choose_calibration, extra_origins, fold_metrics, trained_extra
from firmware_tools.model.dataset import (
    INTENT_LABELS,
    SLOT_TAGS,
    IntentArrays,
    LogArrays,
    bundle_labels,
    encode_intents,
    encode_logs,
    train_tokenizer,
)
from firmware_tools.model.metrics import (
    OOS_INDEX,
    OOS_TARGET,
    calibrate,
    calibrated_figures,
    intent_metrics,
    log_metrics,
    paired_test,
    per_example_correct,
    scope_doubt,
    softmax,
)
from firmware_tools.model.pretrained import Checkpoint, WordPieces, default_zip, load_checkpoint
from firmware_tools.model.subword import SAMPLING
from firmware_tools.model.teacher_plan import TeacherPlan
from firmware_tools.model.transfer import augment, restyle

if TYPE_CHECKING:
    from firmware_tools.model.teacher import Teacher

__all__ = ["STAGES", "BuildPlan", "build", "plan_for", "runtime_logits"]

MODEL_ID = "edge-intents-logs"
MODEL_VERSION = "1.0.0"
# the student's loss, part of its cache key (train.fit: KD on intents and log heads, hard slot
# tags weighed STUDENT_SLOT_WEIGHT against the intent loss)
STUDENT_SLOT_WEIGHT = 3.0
STUDENT_LOSS = f"kd-a0.5-t2/slots-hard-w{STUDENT_SLOT_WEIGHT:g}/aug-gold-tags/sentence-cos"


@dataclass(frozen=True)
class BuildPlan:
    n_intents: int
    n_logs: int
    n_heldout: int
    vocab: int
    max_len: int
    student_epochs: int
    batch: int
    n_calib: int
    student: dict[str, Any]
    # the pretrained teacher: frozen lower layers, fine-tuned top layers (teacher.TeacherPlan)
    teacher: TeacherPlan = field(default_factory=TeacherPlan)
    # augmented utterances in the transfer set (labelled by the teacher)
    n_augment: int = 0
    # at most this many out-of-scope rows from the real training data (they outnumber the rest)
    max_real_oos: int = 12000
    # at most this many real utterances and real log lines (None: all; the tiny build caps them)
    max_real: int | None = None
    # smaller students distilled from the same teacher outputs, shipped as bundle variants (the
    # SLA ladder's smaller model): name -> student shape, trained for ``variant_epochs``
    variants: dict[str, dict[str, Any]] = field(default_factory=dict)
    variant_epochs: int = 0
    # restyled copies of labelled utterances (transfer.restyle: how people talk to a speaker),
    # keeping their gold labels; the teacher learns from them too
    n_restyle: int = 0
    # the student's sentence embedding (width of the pretrained encoder's, which it learns to
    # reproduce, cosine loss weighed ``sentence_weight``); 0: none
    sentence_dim: int = 0
    sentence_weight: float = 1.0
    sentence_source: str = "pooled"
    # choose the temperature and out-of-scope bar on students trained without one source and
    # scored on it (cross_source.py), instead of on the calibration split (needs --data-dir)
    cross_source: bool = False
    # share of the intent head's soft labels taken from the second teacher, a linear head on frozen
    # all-mpnet-base-v2 embeddings (build(mpnet_dir=...)); the rest from the fine-tuned teacher
    mpnet_weight: float = 0.5
    # XLA-compile the students' training step (keras' jit_compile "auto"); the tiny build's few
    # steps do not pay back the compilation (about 20 s of its student stage on 2 cores)
    student_jit: bool | str = "auto"
    # momentum of the moving average of the students' weights that replaces them after training
    # (train.fit); None: the last step's weights (the tiny build's few steps leave no average)
    student_ema: float | None = None
    # the unlabelled extra texts (SGD's training split, which trains only the sentence embedding)
    # also train the intent head, on the teachers' soft labels and argmax (as augmented rows do)
    distil_extra: bool = False
    # the students' token embedding starts from the pretrained encoder's embedding of each piece
    # (lexicon.py), not from random values
    lexical_init: bool = False
    # with ``lexical_init``: the share of the table's width that starts from the lexicon (the
    # rest keeps its random values: pieces alike start close on those coordinates only)
    lexical_width: float = 1.0
    # texts made from the labelled rows by swapping some of their words for words the pretrained
    # encoder finds alike (transfer.substitute, lexicon.word_neighbours), labelled by the teachers
    # as the extra texts are: they train the intent head and the sentence embedding, not the slots
    n_substitute: int = 0
    # share of the students' intent loss taken from the teachers' soft labels (the rest from the
    # hard labels); the log heads keep half and half
    intent_soft: float = 0.5
    # the same share on the generator's own rows, whose labels are right by construction (the
    # real, restyled and augmented rows keep ``intent_soft``); None: ``intent_soft`` on every row
    intent_soft_generated: float | None = None
    # on rows labelled in scope, the teachers' soft labels give the out-of-scope class no more than
    # the row's least likely intent (train.in_scope_soft): their doubt between intents is taught,
    # not their doubt whether a request of known intent is one at all
    soft_keeps_scope: bool = False
    # more starts of the student (``--student-seed`` values): the bundle's student is the build's
    # own and one more per seed, each trained alike, joined side by side in one graph whose heads
    # average theirs (network.join_networks); the variants stay single
    ensemble_seeds: tuple[int, ...] = ()
    # weight of the students' slot-tag loss against the intent loss (hard tags: the soft share of
    # the intent loss leaves the tagging to them)
    slot_weight: float = STUDENT_SLOT_WEIGHT
    # the share of the calibration split's out-of-scope rows the per-intent thresholds must reject
    # (metrics.calibrate); the students do not depend on it, so a rerun on --work recalibrates only
    oos_target: float = OOS_TARGET


def plan_for(tiny: bool) -> BuildPlan:
    if tiny:
        return BuildPlan(
            n_intents=800,
            n_logs=400,
            n_heldout=300,
            vocab=400,
            max_len=32,
            student_epochs=1,
            batch=64,
            n_calib=32,
            student=dict(d_model=16, block_kinds=("conv", "attn"), n_heads=1, d_ff=32),
            teacher=TeacherPlan(trainable_layers=1, epochs=1, batch=64),
            n_augment=200,
            n_restyle=150,
            sentence_dim=384,
            sentence_source="embed",
            max_real=300,
            variants={"small": dict(d_model=8, block_kinds=("conv",), n_heads=1, d_ff=16)},
            variant_epochs=1,
            student_jit=False,
        )
    return BuildPlan(
        n_intents=40000,
        n_logs=20000,
        n_heldout=4000,
        vocab=8000,
        max_len=32,
        student_epochs=14,
        batch=128,
        n_calib=300,
        # build 10's 4-block d128 student was no better than its 2-block d64 variant on intents
        # (real dev 90.78% against 90.09% in scope) and worse on slots, at twice the invoke time
        student=dict(d_model=64, block_kinds=("conv", "attn"), n_heads=1, d_ff=128),
        teacher=TeacherPlan(trainable_layers=2, epochs=3, batch=64, lr=2e-4),
        n_augment=15000,
        n_restyle=15000,
        sentence_dim=384,
        # its own conv path from the token embeddings, weighed 4: with 5 student epochs on build
        # 16's stages, against the shared path at weight 1, custom intents recognized on CLINC
        # (at 93% of its out-of-scope lines left alone) 54% -> 71% (own path, weight 2), on SGD
        # episodes 62% -> 74%, the real dev split in scope 89.9% -> 90.8% (docs/model.md)
        sentence_source="embed",
        sentence_weight=4.0,
        cross_source=True,
        variants={"small": dict(d_model=32, block_kinds=("conv",), n_heads=1, d_ff=64)},
        variant_epochs=4,
        # about 2,000 steps (1.9 epochs) of the last, low-rate part of the cosine schedule: one
        # training's last batches move a fold's figure by several points (build 18's SGD fold
        # trained twice: 75.57% and 79.22% in scope); the average damps that
        student_ema=0.9995,
    )


@dataclasses.dataclass(frozen=True)
class StudentOptions:
    """The build's options that shape its students (``build``'s arguments of the same names): put
    into the plan by ``apply``, written into the manifest's build record by ``record`` (the
    options not at their defaults) and read back from it by ``from_record``, so that the
    cross-source folds train a build's students again as the build did."""

    lexical_init: bool = False
    lexical_width: float = 1.0
    substitute: int = 0
    intent_soft: float = 0.5
    intent_soft_generated: float | None = None
    soft_keeps_scope: bool = False
    ensemble_seeds: tuple[int, ...] = ()
    slot_weight: float | None = None

    def apply(self, plan: BuildPlan) -> BuildPlan:
        """``plan`` with these options in its fields; an option at its default leaves the field
        as the plan has it."""
        if self.lexical_init:
            plan = dataclasses.replace(plan, lexical_init=True, lexical_width=self.lexical_width)
        if self.substitute:
            plan = dataclasses.replace(plan, n_substitute=self.substitute)
        if self.intent_soft != plan.intent_soft:
            plan = dataclasses.replace(plan, intent_soft=self.intent_soft)
        if self.intent_soft_generated is not None:
            plan = dataclasses.replace(plan, intent_soft_generated=self.intent_soft_generated)
        if self.soft_keeps_scope:
            plan = dataclasses.replace(plan, soft_keeps_scope=True)
        if self.ensemble_seeds:
            plan = dataclasses.replace(plan, ensemble_seeds=self.ensemble_seeds)
        if self.slot_weight is not None:
            plan = dataclasses.replace(plan, slot_weight=self.slot_weight)
        return plan

    def record(self) -> dict[str, Any]:
        """The options not at their defaults, as JSON values (seeds as a list)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value != f.default:
                out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_record(cls, built: Mapping[str, Any]) -> StudentOptions:
        """The options a build record (``manifest["build"]``) names; the others at their defaults."""
        named = [f for f in dataclasses.fields(cls) if built.get(f.name) is not None]
        return cls(**{f.name: _as_field(f, built[f.name]) for f in named})


def _as_field(f: dataclasses.Field[Any], value: Any) -> Any:
    """A recorded JSON value as ``StudentOptions`` field ``f`` holds it: seeds as a tuple of ints,
    a field whose default is None (a share, a weight) as a float, the others as their default's
    type."""
    if isinstance(f.default, tuple):
        return tuple(int(x) for x in value)
    return (float if f.default is None else type(f.default))(value)


def build_environment() -> dict[str, str]:
    """What a build's figures depend on besides its inputs and seeds: the Python, TensorFlow,
    Keras and NumPy versions and the CPU (its model name and the vector extensions float kernels
    choose between). On one host a build repeats itself byte for byte; two sessions' runs of one
    command have differed by 3.6 points on a test set (docs/model.md, build 92o)."""
    import platform

    import keras
    import tensorflow as tf

    cpu, flags = "", ""
    try:
        info = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        info = ""
    for line in info.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name" and not cpu:
            cpu = value.strip()
        elif key.strip() == "flags" and not flags:
            flags = " ".join(sorted(f for f in value.split() if f.startswith(("avx", "amx", "fma"))))
    return {
        "python": platform.python_version(),
        "tensorflow": tf.__version__,
        "keras": keras.__version__,
        "numpy": np.__version__,
        "cpu": cpu or platform.machine(),
        "cpu_flags": flags,
    }


def _intent_examples(seed: int, n: int) -> list[Any]:
    from firmware_tools.data import intents as intent_data

    return list(intent_data.generate(seed, n))


def build(
    out: Path,
    *,
    tiny: bool = False,
    seed: int = 7,
    log: Any = print,
    data_dir: Path | None = None,
    log_dir: Path | None = None,
    encoder: Path | None = None,
    work: Path | None = None,
    redo: Sequence[str] = (),
    cross_source: bool = True,
    mpnet_dir: Path | None = None,
    student_seed: int | None = None,
    distil_students: Sequence[int] = (),
    distil_teacher_share: float = 0.0,
    distil_extra: bool = False,
    lexical_init: bool = False,
    lexical_width: float = 1.0,
    substitute: int = 0,
    intent_soft: float = 0.5,
    intent_soft_generated: float | None = None,
    soft_keeps_scope: bool = False,
    ensemble_seeds: Sequence[int] = (),
    slot_weight: float | None = None,
    distil_slot_weight: float | None = None,
    oos_target: float = OOS_TARGET,
    distil_mix: str = "logits",
) -> dict[str, Any]:
    """Build the bundle into ``out`` (replaced only when the build succeeded). Returns the manifest.

    ``data_dir`` holds the real training data (CLINC150, Snips 2017; without it the generator
    alone is used), ``log_dir`` real log lines (loghub 2k samples, ``firmware_tools/data/loghub.py``
    says which systems are read), ``encoder`` the teacher's pretrained zip (default: the installed package).
    ``work`` keeps each stage's output (teacher weights, teacher outputs) so that a stage can be
    run again alone: an existing output is reused unless its stage is named in ``redo``.
    ``cross_source=False`` leaves out the plan's cross-source folds (two more students, about 40
    minutes of the full build): the calibration is then chosen on the calibration split.
    ``mpnet_dir`` (an unpacked all-mpnet-base-v2 folder, ``mpnet.py``) adds a second teacher for
    the intent head: a linear head on its frozen sentence embeddings, fitted on the rows with gold
    labels, whose probabilities are mixed into the teacher's (``BuildPlan.mpnet_weight``).
    ``student_seed`` seeds the students' initial weights and batch order alone (the data and
    teacher stages keep ``seed``); without it they follow ``seed`` as before.
    ``distil_students`` (student seeds): the shipped students learn, in place of the teachers'
    soft labels, the mean logits of the student the build would ship without it and of one
    student per seed (each trained as ``student_seed`` would train it, kept in ``work``);
    ``distil_teacher_share`` of each logit is kept from the teachers' (0: the students' mean alone;
    0.5: the log-mean of the teachers' and the students' probabilities, up to normalization).
    ``distil_extra``: the unlabelled texts that train only the sentence embedding (SGD's training
    split) also train the intent head on the teachers' labels (``BuildPlan.distil_extra``).
    ``lexical_init``: the students' token embedding starts from the pretrained encoder's
    embedding of each piece (``BuildPlan.lexical_init``, ``lexicon.py``), on ``lexical_width`` of
    its width (``BuildPlan.lexical_width``).
    ``substitute``: that many texts with words swapped for the encoder's neighbours train the
    students' intent head on the teachers' labels (``BuildPlan.n_substitute``).
    ``intent_soft``: the share of the students' intent loss taken from the teachers' soft labels
    (``BuildPlan.intent_soft``; the rest from the hard labels); ``intent_soft_generated`` the
    same share on the generator's rows alone (``BuildPlan.intent_soft_generated``).
    ``soft_keeps_scope``: the soft labels of rows labelled in scope carry no out-of-scope doubt
    (``BuildPlan.soft_keeps_scope``).
    ``ensemble_seeds``: the shipped student is its own start's and one per seed listed, averaged
    inside one graph (``BuildPlan.ensemble_seeds``); the bundle's graphs grow by as much.
    ``slot_weight``: the students' slot-tag loss weight (``BuildPlan.slot_weight``; None: the plan's).
    ``distil_slot_weight``: with ``distil_students``, the slot-tag loss weight of the distilled
    students alone (the students whose mean they learn keep ``slot_weight``; None: the same).
    ``oos_target``: the share of the calibration split's out-of-scope rows that the per-intent
    thresholds must reject (``BuildPlan.oos_target``; ignored where the folds choose the decision).
    ``distil_mix``: how ``distil_teacher_share`` mixes the teachers into the distilled targets,
    "logits" (``mix_logits``) or "probabilities" (``mix_probabilities``).
    """
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    t0, cpu0 = time.time(), time.process_time()
    options = StudentOptions(
        lexical_init=lexical_init,
        lexical_width=lexical_width,
        substitute=substitute,
        intent_soft=intent_soft,
        intent_soft_generated=intent_soft_generated,
        soft_keeps_scope=soft_keeps_scope,
        ensemble_seeds=tuple(ensemble_seeds),
        slot_weight=slot_weight,
    )
    plan = plan_for(tiny)
    if not cross_source:
        plan = dataclasses.replace(plan, cross_source=False)
    if distil_extra:
        plan = dataclasses.replace(plan, distil_extra=True)
    if oos_target != OOS_TARGET:
        plan = dataclasses.replace(plan, oos_target=oos_target)
    plan = options.apply(plan)
    tmp = Path(tempfile.mkdtemp(prefix="edge-fw-build-"))
    try:
        stage = tmp / "bundle"
        stage.mkdir()
        cache = _StageCache(work or tmp / "work", redo, log)
        manifest = _build_into(
            stage,
            plan,
            seed,
            log,
            (data_dir, log_dir),
            encoder,
            cache,
            mpnet_dir,
            student_seed,
            tuple(distil_students),
            distil_teacher_share,
            distil_slot_weight,
            distil_mix,
        )
        manifest["build"] = {
            "seconds": round(time.time() - t0, 1),
            "cpu_seconds": round(time.process_time() - cpu0, 1),
            "stages": manifest.pop("build_stages", {}),
            "environment": build_environment(),
            "seed": seed,
            **({"student_seed": student_seed} if student_seed is not None else {}),
            **({"distil_students": list(distil_students)} if distil_students else {}),
            **(
                {"distil_teacher_share": distil_teacher_share}
                if distil_students and distil_teacher_share
                else {}
            ),
            **(
                {"distil_slot_weight": distil_slot_weight}
                if distil_students and distil_slot_weight is not None
                else {}
            ),
            **({"oos_target": oos_target} if oos_target != OOS_TARGET else {}),
            **(
                {"distil_mix": distil_mix}
                if distil_students and distil_teacher_share and distil_mix != "logits"
                else {}
            ),
            **({"distil_extra": True} if distil_extra else {}),
            **options.record(),
            "tiny": tiny,
            "real_data": data_dir is not None,
            "real_logs": log_dir is not None,
            # whether the folds ran (they also need sgd/ in the data directory)
            "cross_source": "cross_source" in manifest["metrics"],
        }
        _write_manifest(stage, manifest)
        load_bundle(stage)  # verify before it replaces anything
        _replace_dir(stage, out)
        log(f"bundle written to {out} in {time.time() - t0:.0f}s")
        return manifest
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _fingerprint(plan: BuildPlan, seed: int, encoder: Path, examples: Sequence[Sequence[Any]]) -> str:
    """What the cached stage outputs depend on: the plan's data and teacher fields, seed, encoder,
    how segmentations are sampled, and every example with its labels (a changed generator or data
    directory runs them again)."""
    teacher_side = {k: repr(getattr(plan, k)) for k in _DATA_FIELDS}
    keyed = {"plan": teacher_side, "seed": seed, "encoder": _encoder_id(encoder), "sampling": SAMPLING}
    h = hashlib.sha256(json.dumps(keyed).encode())
    for group in examples:
        for ex in group:
            h.update(repr(_labelled(ex)).encode() + b"\n")
    return h.hexdigest()[:16]


def _encoder_id(path: Path | str) -> str:
    """An encoder as the work directory's keys know it: a file by its name and size, a folder (the
    second teacher's) by its name, never by its path, so a build and a bench run from different
    checkouts or environments find the same stages."""
    p = Path(path)
    return f"{p.name}:{p.stat().st_size}" if p.is_file() else p.name


# the plan's fields that the data, the tokenizer and the teacher depend on
_DATA_FIELDS = (
    "n_intents",
    "n_logs",
    "n_heldout",
    "vocab",
    "max_len",
    "teacher",
    "n_augment",
    "max_real_oos",
    "n_restyle",
)


def _labelled(ex: Any) -> tuple[Any, ...]:
    """An example's text and labels (an utterance's or a log line's)."""
    if hasattr(ex, "line"):
        return (ex.line, ex.severity, ex.category, ex.anomaly, getattr(ex, "anomaly_known", True))
    return (ex.text, ex.intent, tuple(ex.spans), getattr(ex, "spans_known", True))


# the stages whose outputs the work directory keeps, in order
STAGES = ("data", "teacher", "teacher_outputs", "student")
# what the students' cache key gains when the extra texts train the intent head
EXTRA_TAG = "extra-kd"
# the teacher's and the students' heads
N_CLASSES = {
    "intent": len(INTENT_LABELS),
    "slots": len(SLOT_TAGS),
    "severity": len(SEVERITIES),
    "category": len(CATEGORIES),
    "anomaly": 1,
}


class _StageCache:
    """Stage outputs kept in a work directory, keyed by the build's fingerprint."""

    def __init__(self, root: Path, redo: Sequence[str], log: Any) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.dir = root
        # a stage run again makes every later stage run again
        first = min((STAGES.index(s) for s in redo), default=len(STAGES))
        self.redo = set(STAGES[first:])
        self.log = log

    def key(self, fingerprint: str) -> None:
        self.dir = self.root / fingerprint
        self.dir.mkdir(parents=True, exist_ok=True)
        self.log(f"stage outputs kept in {self.dir}")

    def path(self, stage: str, name: str) -> Path | None:
        """The cached file when it may be reused, else None (the stage then writes it)."""
        p = self.dir / name
        if stage in self.redo or not p.exists():
            return None
        self.log(f"stage {stage}: reusing {p}")
        return p

    def target(self, name: str) -> Path:
        return self.dir / name


@dataclass
class _Data:
    """Everything the stages read: examples, student encodings, the teacher's word pieces."""

    tok: Tokenizer
    it_tr: IntentArrays  # generated + real + augmented (the transfer set's intent rows)
    it_ho: IntentArrays  # generated held-out
    it_dev: IntentArrays | None  # real development split (never trained on)
    lg_tr: LogArrays
    lg_ho: LogArrays
    n_labelled: int  # the first rows of it_tr carry gold labels; the rest are augmented
    n_generated: int  # the first rows of it_tr are the generator's (then real, restyled, augmented)
    spans_known: np.ndarray  # per it_tr row: gold slot spans are reliable
    calib_examples: list[Any]  # real validation split for calibration (may be empty)
    sentence_extra: list[str]  # texts that train only the sentence embedding (SGD train)
    data_dir: Path | None = None


def _load_data(
    stage: Path,
    plan: BuildPlan,
    seed: int,
    dirs: tuple[Path | None, Path | None],
    log: Any,
    cache: _StageCache,
    encoder: Path | None,
) -> _Data:
    data_dir, log_dir = dirs
    gen = _intent_examples(seed, plan.n_intents)
    real, dev, val = _real_examples(data_dir, plan, seed)
    labelled = gen + real
    labelled += restyle(labelled, plan.n_restyle, seed + 11)
    aug = augment(labelled, plan.n_augment, seed + 7)
    transfer = labelled + aug
    logs_train, logs_held = log_lines(seed, plan.n_logs, plan.n_heldout, log_dir, plan.max_real)
    extra = _sentence_extra(data_dir, plan, seed)
    log(
        f"data: {len(gen)} generated, {len(real)} real, {len(labelled) - len(gen) - len(real)} restyled, "
        f"{len(aug)} augmented utterances, {len(logs_train)} log lines, "
        f"{len(extra)} texts for the sentence embedding only"
    )
    encoder = encoder or default_zip()
    cache.key(_fingerprint(plan, seed, encoder, (transfer, logs_train, dev, val)))
    tok, enc = _student_encodings(stage, plan, seed, cache, transfer, logs_train)
    log(f"tokenizer: {tok.vocab_size} pieces, max_len {plan.max_len}")
    return _Data(
        tok=tok,
        it_tr=enc[0],
        it_ho=encode_intents(tok, _heldout_intents(plan, seed)),
        it_dev=encode_intents(tok, dev) if dev else None,
        lg_tr=enc[1],
        lg_ho=encode_logs(tok, logs_held),
        n_labelled=len(labelled),
        n_generated=len(gen),
        spans_known=np.array([getattr(e, "spans_known", True) for e in transfer], bool),
        calib_examples=val,
        sentence_extra=extra,
        data_dir=data_dir,
    )


def log_lines(
    seed: int, n_logs: int, n_heldout: int, log_dir: Path | None, max_real: int | None = None
) -> tuple[list[Any], list[Any]]:
    """The log heads' lines: (training: ``n_logs`` generated and, with ``log_dir``, the loghub
    lines of the training systems, at most ``max_real`` of them; held out: ``n_heldout``
    generated from another seed). ``edge-fw refit-logs`` reads the same (log_refit.py)."""
    logs_train: list[Any] = list(log_data.generate(seed, n_logs))
    if log_dir is not None:
        from firmware_tools.data.loghub import load_loghub

        real_logs = load_loghub(log_dir)
        if max_real is not None and len(real_logs) > max_real:
            real_logs = random.Random(seed).sample(real_logs, max_real)
        logs_train += real_logs
    return logs_train, list(log_data.generate(seed + 1000, n_heldout))


def _sentence_extra(data_dir: Path | None, plan: BuildPlan, seed: int) -> list[str]:
    """Unlabelled texts for the sentence embedding only: SGD's training split when present."""
    if data_dir is None or not plan.sentence_dim:
        return []
    from firmware_tools.data.sgd import sgd_texts

    texts = sgd_texts(data_dir, "train")
    if plan.max_real is not None and len(texts) > plan.max_real:
        texts = random.Random(seed).sample(texts, plan.max_real)
    return texts


def _student_encodings(
    stage: Path, plan: BuildPlan, seed: int, cache: _StageCache, transfer: list[Any], logs: list[Any]
) -> tuple[Tokenizer, tuple[IntentArrays, LogArrays]]:
    """The student's tokenizer and training encodings, or the work directory's copies (the
    cached teacher outputs are aligned to these very tokens). Both repeat with the seed: the
    sampled segmentations come from the build's own generator (``subword.py``)."""
    model_file = stage / "tokenizer.model"
    kept_model, kept = cache.path("data", "tokenizer.model"), cache.path("data", "encodings.npz")
    if kept_model is not None and kept is not None:
        shutil.copyfile(kept_model, model_file)
        tok = Tokenizer(model_file, plan.max_len)
        with np.load(kept) as z:
            it = IntentArrays(z["it_ids"], z["it_intent"], z["it_tags"], [e.text for e in transfer], transfer)
            it.offsets = [[(int(a), int(b)) for a, b in row if a >= 0] for row in z["it_offsets"]]
            lg = LogArrays(
                z["lg_ids"], z["lg_sev"], z["lg_cat"], z["lg_anom"], [e.line for e in logs], z["lg_known"]
            )
        return tok, (it, lg)
    corpus = [e.text for e in transfer] + [e.line for e in logs]
    train_tokenizer(corpus, stage / "tokenizer", plan.vocab, seed)
    tok = Tokenizer(model_file, plan.max_len)
    # subword regularization on every other training row: unseen words split into pieces the
    # model has learnt to read (names in real homes are not in the generator's lexicon)
    it = encode_intents(tok, transfer, sample_every=2, seed=seed)
    lg = encode_logs(tok, logs, sample_every=3, seed=seed + 1)
    offsets = np.full((len(it.ids), plan.max_len, 2), -1, np.int32)
    for i, row in enumerate(it.offsets or []):
        if row:
            offsets[i, : len(row)] = row
    shutil.copyfile(model_file, cache.target("tokenizer.model"))
    np.savez(
        cache.target("encodings.npz"),
        it_ids=it.ids,
        it_intent=it.intent,
        it_tags=it.tags,
        it_offsets=offsets,
        lg_ids=lg.ids,
        lg_sev=lg.severity,
        lg_cat=lg.category,
        lg_anom=lg.anomaly,
        lg_known=lg.known_mask(),
    )
    return tok, (it, lg)


def calibration_examples(
    plan: BuildPlan, seed: int, data_dir: Path | None
) -> tuple[list[Any], list[Any], list[Any]]:
    """The utterances a build of ``plan`` and ``seed`` chooses its temperature and thresholds
    on (the first half of the generated held-out split, then with ``data_dir`` the real
    validation split), and those it reports the chosen calibration on (the other half; the real
    development split): ``_int8_metrics_and_calibration``."""
    held = _heldout_intents(plan, seed)
    _, dev, val = _real_examples(data_dir, plan, seed)
    half = len(held) // 2
    return held[:half] + val, held[half:], dev


def _heldout_intents(plan: BuildPlan, seed: int) -> list[Any]:
    """The generated held-out split (``_Data.it_ho``), which the calibration splits in half."""
    return _intent_examples(seed + 1000, plan.n_heldout)


def _real_examples(
    data_dir: Path | None, plan: BuildPlan, seed: int
) -> tuple[list[Any], list[Any], list[Any]]:
    """(train, dev, val) real utterances; empty without a data directory."""
    if data_dir is None:
        return [], [], []
    from firmware_tools.data.real import load_real

    train = load_real(data_dir, "train")
    oos = [e for e in train if e.intent is None]
    if len(oos) > plan.max_real_oos:
        keep = set(map(id, random.Random(seed).sample(oos, plan.max_real_oos)))
        train = [e for e in train if e.intent is not None or id(e) in keep]
    dev, val = load_real(data_dir, "dev"), load_real(data_dir, "val")
    if plan.max_real is not None:
        rng = random.Random(seed)
        train, dev, val = (rng.sample(x, min(len(x), plan.max_real)) for x in (train, dev, val))
    return train, dev, val


def _build_into(
    stage: Path,
    plan: BuildPlan,
    seed: int,
    log: Any,
    dirs: tuple[Path | None, Path | None],
    encoder: Path | None,
    cache: _StageCache,
    mpnet_dir: Path | None = None,
    student_seed: int | None = None,
    distil_students: tuple[int, ...] = (),
    distil_teacher_share: float = 0.0,
    distil_slot_weight: float | None = None,
    distil_mix: str = "logits",
) -> dict[str, Any]:
    import tensorflow as tf

    if mpnet_dir is not None:  # imported now: a later edit of the files does not change this build
        import firmware_tools.model.linear
        import firmware_tools.model.mpnet  # noqa: F401

    from firmware_tools.model.convert import convert_segments
    from firmware_tools.model.fuse import add_fused_graphs
    from firmware_tools.model.train import make_targets, predict_logits

    tf.keras.utils.set_random_seed(seed)
    clock = _StageClock(log)
    data = _load_data(stage, plan, seed, dirs, log, cache, encoder)
    clock.stage("data")

    n_classes = dict(N_CLASSES)
    ckpt = load_checkpoint(encoder or default_zip())
    tv = _teacher_views(ckpt, data, plan, cache)
    teacher = _teacher_stage(ckpt, tv, data, plan, n_classes, seed, cache, log)
    clock.stage("teacher")
    metrics, teacher_right = _teacher_eval(teacher, tv, data)
    log("teacher        " + "  ".join(f"{k}={v:.4f}" for k, v in metrics["teacher"].items()))
    t_logits = _teacher_outputs(teacher, tv, data, cache)
    clock.stage("teacher_outputs")
    soft_tag: tuple[Any, ...] = ()
    second: SecondTeacher | None = None
    teacher_intent = t_logits["intent"]  # the fine-tuned teacher's own, for the folds
    if mpnet_dir is not None:
        second = SecondTeacher(_mpnet_embeddings(mpnet_dir, data, cache, log), plan.mpnet_weight)
        t_logits = {**t_logits, "intent": second.mixed(teacher_intent, data, log=log)}
        soft_tag = second.tag
        clock.stage("second_teacher")
    _relabel_from_teacher(data, t_logits)

    base = student_base(plan, data.tok.vocab_size)
    sentence = _sentence_targets(ckpt, data, plan, cache) if plan.sentence_dim else None
    if plan.distil_extra and sentence is not None and len(sentence.extra_ids):
        sentence.extra_intent = _extra_intent_logits(ckpt, teacher, plan, data, cache, second, mpnet_dir, log)
        soft_tag = (*soft_tag, EXTRA_TAG)
    if plan.n_substitute and sentence is not None:
        add_substituted(sentence, ckpt, teacher, plan, data, cache, second, mpnet_dir, seed, log)
        soft_tag = (*soft_tag, substitute_tag(plan))
    shares = intent_hard_shares(plan, data)
    doubt, second_choice = scope_doubt(t_logits["intent"], data.it_tr.intent)
    log(
        f"teachers' soft labels of the in-scope rows (T 2): out of scope {doubt:.4f} on average, first or "
        f"second choice on {second_choice:.2%}"
        + (" (taken out: --soft-keeps-scope)" if plan.soft_keeps_scope else "")
    )
    targets = make_targets(data.it_tr, data.lg_tr, t_logits, n_classes, sentence, *shares, scope_class(plan))
    lexicon = _piece_vectors(ckpt, data.tok, cache) if plan.lexical_init else None
    train = _StudentTrainer(base, targets, plan, seed, cache, soft_tag, student_seed, lexicon)
    if distil_students:
        mean = _students_mean(train, distil_students, data, t_logits, log)
        if distil_teacher_share:
            mean = DISTIL_MIXES[distil_mix](t_logits, mean, distil_teacher_share)
            log(f"the distilled targets keep {distil_teacher_share:g} of the teachers' {distil_mix}")
        targets = make_targets(
            data.it_tr, data.lg_tr, {**t_logits, **mean}, n_classes, sentence, *shares, scope_class(plan)
        )
        tag = (
            f"distil{','.join(map(str, distil_students))}"
            + (f"t{distil_teacher_share:g}" if distil_teacher_share else "")
            + ("p" if distil_mix == "probabilities" else "")
        )
        dplan = plan
        if distil_slot_weight is not None:  # the members above keep the plan's
            dplan = dataclasses.replace(plan, slot_weight=distil_slot_weight)
        train = _StudentTrainer(base, targets, dplan, seed, cache, (*soft_tag, tag), student_seed, lexicon)
    student = train.joined("student", plan.student, plan.student_epochs, log)
    variants = {name: train(name, cfg, plan.variant_epochs) for name, cfg in plan.variants.items()}
    del targets
    clock.stage("student")
    folds = _cross_source_folds(
        data,
        {**t_logits, "intent": teacher_intent},
        sentence,
        plan,
        base,
        cache,
        seed,
        log,
        second,
        student_seed,
        lexicon,
    )
    del t_logits
    if folds:
        clock.stage("cross_source")
    metrics["student_float"], student_right = _keras_eval(student, data.it_ho, data.lg_ho, predict_logits)
    if data.it_dev is not None:
        pd = predict_logits(student, data.it_dev.ids)
        metrics["student_float"].update(_dev_metrics(pd["intent"], data.it_dev))
    paired = {k: paired_test(teacher_right[k], student_right[k]) for k in teacher_right}
    for k, v in paired.items():
        log(
            f"teacher vs student on {k}: {v['a_only']} only the teacher right, "
            f"{v['b_only']} only the student, p={v['p']}"
        )
    rng = np.random.default_rng(seed)
    calib_ids = np.concatenate(
        [
            data.it_tr.ids[rng.choice(data.n_labelled, plan.n_calib, replace=False)],
            data.lg_tr.ids[rng.choice(len(data.lg_tr.ids), plan.n_calib // 2, replace=False)],
        ]
    )
    n_segs = 3 + student.cfg.n_blocks
    with tqdm(total=2 * n_segs, desc="convert int8", unit="segment") as bar:
        segs, _ = convert_segments(student, calib_ids, stage, progress=bar)
        tpu_segs, blocked = convert_segments(student, calib_ids, stage, edgetpu=True, progress=bar)

    teacher_cfg = _teacher_cfg(ckpt, plan, mpnet_dir)
    manifest = _manifest(stage, data.tok, plan, segs, tpu_segs, blocked, student.cfg.to_dict(), teacher_cfg)
    add_fused_graphs(stage, manifest)
    for name, net in variants.items():
        manifest["variants"][name] = _variant_entry(name, net, calib_ids, stage, predict_logits, data)
    _write_manifest(stage, manifest)
    fixed = choose_calibration(folds) if folds else None
    metrics["student_int8"], calibration = _int8_metrics_and_calibration(
        stage, data, fixed=fixed, oos_target=plan.oos_target
    )
    if folds:
        assert fixed is not None
        metrics["cross_source"] = {
            "argmax": {r.source: fold_metrics(r) for r in folds},
            "calibrated": {r.source: fold_metrics(r, *fixed) for r in folds},
        }
    for name in variants:
        entry = manifest["variants"][name]
        entry["metrics"]["student_int8"], entry["calibration"] = _int8_metrics_and_calibration(
            stage, data, name, oos_target=plan.oos_target
        )
    if plan.sentence_dim:
        metrics["student_float"]["sentence_cosine"] = _sentence_cosine(student, ckpt, data, cache)
        calibration["custom_intents"], m = _custom_calibration(stage, data, seed)
        metrics["student_int8"].update(m)
        for name in variants:
            entry = manifest["variants"][name]
            entry["calibration"]["custom_intents"], m = _custom_calibration(stage, data, seed, name)
            entry["metrics"]["student_int8"].update(m)
    clock.stage("convert")
    manifest["calibration"] = calibration
    manifest["metrics"] = metrics
    # paired exact test on the held-out split: a = teacher, b = float student
    manifest["teacher_vs_student"] = paired
    manifest["build_stages"] = clock.stages
    _log_metrics(metrics, log)
    return manifest


def _log_metrics(metrics: dict[str, Any], log: Any) -> None:
    """One line per model's figures; the folds' figures (per rule, per source) one line each."""

    def figures(m: dict[str, float]) -> str:
        return "  ".join(f"{k}={v:.4f}" for k, v in m.items())

    for name, m in metrics.items():
        if name != "cross_source":
            log(f"{name:14s} {figures(m)}")
            continue
        for rule, per_source in m.items():
            for source, fm in per_source.items():
                log(f"left out {source} ({rule}) {figures(fm)}")


def _students_mean(
    own: _StudentTrainer,
    seeds: Sequence[int],
    data: _Data,
    t_logits: dict[str, np.ndarray],
    log: Any,
) -> dict[str, np.ndarray]:
    """Mean logits over the training rows (intent rows, then log rows, as ``t_logits``) of the
    student ``own`` trains and of one student per seed, each trained on the same targets."""
    from firmware_tools.model.train import predict_logits

    plan = own.plan
    trainers = [own] + [
        _StudentTrainer(own.base, own.targets, plan, own.seed, own.cache, own.soft_tag, s) for s in seeds
    ]
    ids = np.concatenate([data.it_tr.ids, data.lg_tr.ids])
    heads = [h for h in ("intent", "severity", "category", "anomaly") if h in t_logits]
    total = {h: np.zeros(t_logits[h].shape, np.float64) for h in heads}
    for trainer in trainers:
        out = predict_logits(trainer("student", plan.student, plan.student_epochs), ids)
        for h in heads:
            total[h] += out[h].reshape(t_logits[h].shape)
    log(f"distilling the mean of {len(trainers)} students (the build's own start and seeds {list(seeds)})")
    return {h: (v / len(trainers)).astype(np.float32) for h, v in total.items()}


def mix_logits(
    teachers: Mapping[str, np.ndarray], students: Mapping[str, np.ndarray], share: float
) -> dict[str, np.ndarray]:
    """Per head of ``students``, ``share`` of the teachers' logits and the rest of the students'
    (a weighted log-mean of their probabilities, up to each row's normalization)."""
    return {
        h: (share * teachers[h].reshape(v.shape) + (1.0 - share) * v).astype(np.float32)
        for h, v in students.items()
    }


def mix_probabilities(
    teachers: Mapping[str, np.ndarray], students: Mapping[str, np.ndarray], share: float
) -> dict[str, np.ndarray]:
    """Per head of ``students``, the logits of ``share`` of the teachers' probabilities plus the
    rest of the students' (an arithmetic mixture). Where ``mix_logits``'s log-mean keeps a class
    likely only when both sides give it weight, this keeps the teachers' doubt whatever the
    students say: a class the teachers give 0.1 keeps at least ``share`` x 0.1. A head of one
    logit (anomaly) is mixed through its sigmoid."""
    out: dict[str, np.ndarray] = {}
    for h, v in students.items():
        t = np.asarray(teachers[h], np.float64).reshape(v.shape)
        s = np.asarray(v, np.float64)
        if v.ndim == 1 or v.shape[-1] == 1:
            p = share / (1.0 + np.exp(-t)) + (1.0 - share) / (1.0 + np.exp(-s))
            p = np.clip(p, 1e-7, 1.0 - 1e-7)
            out[h] = np.log(p / (1.0 - p)).astype(np.float32)
        else:
            p = share * softmax(t) + (1.0 - share) * softmax(s)
            out[h] = np.log(np.maximum(p, 1e-12)).astype(np.float32)
    return out


DISTIL_MIXES = {"logits": mix_logits, "probabilities": mix_probabilities}


def _sentence_targets(ckpt: Checkpoint, data: _Data, plan: BuildPlan, cache: _StageCache) -> Any:
    """The pretrained encoder's sentence embeddings of the transfer rows and of the extra texts
    (kept in the work directory under the encoder and the texts), and the extra texts' ids."""
    from firmware_tools.model.train import SentenceTargets

    rows = _encoder_sentences(ckpt, data.it_tr.texts, cache)
    extra = _encoder_sentences(ckpt, data.sentence_extra, cache)
    L = data.it_tr.ids.shape[1]
    extra_ids = (
        np.stack([data.tok.encode(t).ids for t in data.sentence_extra]).astype(np.int32)
        if data.sentence_extra
        else np.zeros((0, L), np.int32)
    )
    origin = np.full(len(extra_ids), "sgd", dtype=object)
    return SentenceTargets(rows.astype(np.float32), extra_ids, extra.astype(np.float32), extra_origin=origin)


# a substituted text is kept when the encoder's sentence embedding of it is at least this close
# to its row's (cosine): of 300 drawn from generated rows about a quarter fell below it
SUBSTITUTE_MIN_COS = 0.8


def substitute_tag(plan: BuildPlan) -> str:
    """The students' key's mark of substituted texts (``BuildPlan.n_substitute``)."""
    return f"subst{plan.n_substitute}"


def substituted_texts(
    ckpt: Checkpoint, data: _Data, plan: BuildPlan, cache: _StageCache, rows: np.ndarray, seed: int, log: Any
) -> tuple[list[str], list[str], np.ndarray]:
    """Up to ``plan.n_substitute`` texts made from the labelled transfer rows by
    ``transfer.substitute``, each word's neighbours taken among the pretrained encoder's whole
    words (each embedded alone), and checked by the encoder: a text is kept only if its sentence
    embedding is within ``SUBSTITUTE_MIN_COS`` of its row's (``rows``, the transfer rows'), which
    drops most of the swaps that make no sense ("olive the lights"); half again as many are drawn.
    Returns the texts, the origin of the row each came from, and their sentence embeddings."""
    from firmware_tools.model.lexicon import encoder_words, word_neighbours
    from firmware_tools.model.transfer import substitutable_words, substitute

    labelled = data.it_tr.examples[: data.n_labelled]
    words = encoder_words(ckpt.tokenizer_json)
    vectors = _encoder_sentences(ckpt, words, cache, max_len=16).astype(np.float32)
    near = word_neighbours(words, vectors, substitutable_words(labelled))
    drawn = substitute(labelled, plan.n_substitute * 3 // 2, seed + 13, near)
    emb = _encoder_sentences(ckpt, [t for _, t in drawn], cache).astype(np.float32)
    src = np.array([i for i, _ in drawn], np.int64)
    close = np.flatnonzero(np.einsum("ij,ij->i", emb, rows[src]) >= SUBSTITUTE_MIN_COS)[: plan.n_substitute]
    log(
        f"substitution: {len(near)} words with neighbours; {len(drawn)} texts drawn, "
        f"{len(close)} kept (sentence embedding within {SUBSTITUTE_MIN_COS} of their row's)"
    )
    texts = [drawn[k][1] for k in close]
    origins = [str(getattr(labelled[src[k]], "origin", "gen")) for k in close]
    return texts, origins, emb[close]


def add_substituted(
    sentence: Any,
    ckpt: Checkpoint,
    teacher: Teacher,
    plan: BuildPlan,
    data: _Data,
    cache: _StageCache,
    second: SecondTeacher | None,
    mpnet_dir: Path | None,
    seed: int,
    log: Any,
) -> None:
    """Append the substituted texts (``substituted_texts``) to ``sentence``'s extra rows with
    their sentence targets and the teachers' intent logits; the extra rows already there keep
    what they trained (the intent head only with ``--distil-extra``)."""
    texts, origins, emb = substituted_texts(ckpt, data, plan, cache, sentence.rows, seed, log)
    logits = _extra_intent_logits(ckpt, teacher, plan, data, cache, second, mpnet_dir, log, texts)
    ids = np.stack([data.tok.encode(t).ids for t in texts]).astype(np.int32)
    trained, origin = trained_extra(sentence), extra_origins(sentence)
    before = sentence.extra_intent
    if before is None:
        before = np.zeros((len(sentence.extra_ids), logits.shape[1]), np.float32)
    sentence.extra_ids = np.concatenate([sentence.extra_ids, ids])
    sentence.extra = np.concatenate([sentence.extra, emb])
    sentence.extra_intent = np.concatenate([before, logits])
    sentence.extra_intent_rows = np.concatenate([trained, np.ones(len(ids), bool)])
    sentence.extra_origin = np.concatenate([origin, np.array(origins, dtype=object)])


def _extra_intent_logits(
    ckpt: Checkpoint,
    teacher: Teacher,
    plan: BuildPlan,
    data: _Data,
    cache: _StageCache,
    second: SecondTeacher | None,
    mpnet_dir: Path | None,
    log: Any,
    texts: Sequence[str] | None = None,
) -> np.ndarray:
    """The teachers' intent logits of the extra texts (``data.sentence_extra``, SGD's unlabelled
    training texts, unless ``texts`` are given): the fine-tuned teacher's, with the second
    teacher's head mixed in as for the transfer rows. Kept beside the teacher's weights under the
    texts and the mixture."""
    texts = data.sentence_extra if texts is None else texts
    mix = ("mpnet", plan.mpnet_weight) if second is not None else ()
    key = hashlib.sha256(repr(("extra-intent", mix)).encode())
    for t in texts:
        key.update(t.encode("utf-8", "replace") + b"\n")
    name = f"extra-intent-{key.hexdigest()[:16]}.npy"
    cached = cache.path("teacher_outputs", name)
    if cached is not None:
        return np.asarray(np.load(cached), np.float32)
    t0 = time.time()
    out = teacher_text_logits(ckpt, teacher, plan, texts)["intent"].astype(np.float32)
    if second is not None:
        assert mpnet_dir is not None
        mix_intent_logits(
            out, second.logits_of(_mpnet_texts(mpnet_dir, texts, cache, log), data), second.weight
        )
    np.save(cache.target(name), out)
    log(f"teachers' intent labels of {len(texts)} unlabelled texts in {time.time() - t0:.0f}s")
    return out


def _lexicon_tag(width: float) -> str:
    """The student key's mark of a lexical start (keys of full-width starts stay as they were)."""
    return "lexinit" if width == 1.0 else f"lexinit{width:g}"


def _piece_vectors(ckpt: Checkpoint, tok: Tokenizer, cache: _StageCache) -> np.ndarray:
    """The pretrained encoder's embedding of each piece of the student's tokenizer
    (``lexicon.piece_vectors``), kept in the work directory as every sentence embedding is."""
    from firmware_tools.model.lexicon import piece_texts, piece_vectors

    return piece_vectors(piece_texts(tok), lambda texts: _encoder_sentences(ckpt, texts, cache))


def _encoder_sentences(
    ckpt: Checkpoint, texts: Sequence[str], cache: _StageCache, max_len: int = 64
) -> np.ndarray:
    from firmware_tools.model.teacher import sentence_embeddings

    if not texts:
        return np.zeros((0, ckpt.config.width), np.float16)
    key = hashlib.sha256(repr((_encoder_id(ckpt.source), "sentence", max_len)).encode())
    for t in texts:
        key.update(t.encode("utf-8", "replace") + b"\n")
    path = cache.root / f"sentences-{key.hexdigest()[:16]}.npy"
    if path.exists():
        return np.load(path)
    out = sentence_embeddings(ckpt, list(texts), max_len=max_len)
    np.save(path, out)
    return out


def student_base(plan: BuildPlan, vocab: int) -> dict[str, Any]:
    """The student's shape fields that every variant shares."""
    return dict(
        vocab=vocab,
        max_len=plan.max_len,
        n_intents=len(INTENT_LABELS),
        n_tags=len(SLOT_TAGS),
        n_severity=len(SEVERITIES),
        n_category=len(CATEGORIES),
        sentence_dim=plan.sentence_dim,
        sentence_source=plan.sentence_source,
    )


def _cross_source_folds(
    data: _Data,
    t_logits: dict[str, np.ndarray],
    sentence: Any,
    plan: BuildPlan,
    base: dict[str, Any],
    cache: _StageCache,
    seed: int,
    log: Any,
    second: SecondTeacher | None = None,
    student_seed: int | None = None,
    lexicon: np.ndarray | None = None,
) -> list[Any]:
    """The student again without CLINC150, then without Snips, each scored on its own held-out
    split, and the full student on SGD's (``cross_source.py``); none without the data.
    ``t_logits`` holds the fine-tuned teacher's own intent logits: a second teacher's head is
    fitted again for each fold without the left-out source."""
    if not plan.cross_source or data.data_dir is None:
        return []
    if not (data.data_dir / "sgd" / "test.jsonl").is_file():
        log("cross-source calibration skipped: the data directory has no sgd/")
        return []
    from firmware_tools.model.cross_source import train_folds

    return train_folds(
        data,
        t_logits,
        sentence,
        plan,
        base,
        cache,
        seed,
        log=log,
        second=second,
        student_seed=student_seed,
        lexicon=lexicon,
    )


def _sentence_cosine(net: Any, ckpt: Checkpoint, data: _Data, cache: _StageCache) -> float:
    """Mean cosine between the float student's sentence embedding and the pretrained encoder's
    on the generated held-out utterances."""
    from firmware_tools.model.train import predict_logits

    pred = predict_logits(net, data.it_ho.ids)["sentence"]
    pred /= np.maximum(np.linalg.norm(pred, axis=1, keepdims=True), 1e-12)
    target = _encoder_sentences(ckpt, data.it_ho.texts, cache).astype(np.float32)
    return float((pred * target).sum(axis=1).mean())


def _custom_calibration(
    stage: Path, data: _Data, seed: int, variant: str = "default"
) -> tuple[dict[str, float], dict[str, float]]:
    """Custom-intent threshold and confidence map of a variant, through the int8 runtime
    (``custom_calib.py`` says on what)."""
    from firmware_tools.model.custom_calib import calibrate_bundle, episodes_from_examples, sgd_episodes

    if data.data_dir is not None and (data.data_dir / "sgd" / "dev.jsonl").is_file():
        episodes = sgd_episodes(data.data_dir, seed)
    else:
        episodes = episodes_from_examples(data.it_ho.examples, seed)
    return calibrate_bundle(stage, episodes, variant)


@dataclass
class _TeacherViews:
    """The teacher's word pieces and frozen-layer features of every row it reads."""

    it_tr: WordPieces
    lg_tr: WordPieces
    it_ho: WordPieces
    lg_ho: WordPieces
    it_dev: WordPieces | None
    feats: dict[str, np.ndarray]


def _teacher_views(ckpt: Checkpoint, data: _Data, plan: BuildPlan, cache: _StageCache) -> _TeacherViews:
    """Word pieces of every row and the frozen layers' features (kept in the work directory under
    the encoder, the frozen depth and the texts, so a rerun with other plan fields reuses them)."""
    from firmware_tools.model.teacher import FrozenEncoder

    L = plan.teacher.max_len
    views = {
        "it_tr": ckpt.tokenize(data.it_tr.texts, L),
        "lg_tr": ckpt.tokenize(data.lg_tr.lines, L),
        "it_ho": ckpt.tokenize(data.it_ho.texts, L),
        "lg_ho": ckpt.tokenize(data.lg_ho.lines, L),
    }
    if data.it_dev is not None:
        views["it_dev"] = ckpt.tokenize(data.it_dev.texts, L)
    frozen = ckpt.config.layers - plan.teacher.trainable_layers
    encode = FrozenEncoder(ckpt, frozen)
    texts = {
        "it_tr": data.it_tr.texts,
        "lg_tr": data.lg_tr.lines,
        "it_ho": data.it_ho.texts,
        "lg_ho": data.lg_ho.lines,
        "it_dev": data.it_dev.texts if data.it_dev is not None else [],
    }
    feats = {}
    for k, wp in tqdm(views.items(), desc="frozen encoder"):
        key = hashlib.sha256(repr((_encoder_id(ckpt.source), frozen, L)).encode())
        for t in texts[k]:
            key.update(t.encode("utf-8", "replace") + b"\n")
        path = cache.root / f"features-{k}-{key.hexdigest()[:16]}.npy"
        if path.exists():
            feats[k] = np.load(path)
            continue
        feats[k] = encode(wp)
        np.save(path, feats[k])
    return _TeacherViews(
        feats=feats, it_dev=views.get("it_dev"), **{k: views[k] for k in ("it_tr", "lg_tr", "it_ho", "lg_ho")}
    )


def teacher_text_logits(
    ckpt: Checkpoint, teacher: Teacher, plan: BuildPlan, texts: Sequence[str], chunk: int = 4096
) -> dict[str, np.ndarray]:
    """The fine-tuned teacher's logits of ``texts``, every head; its frozen layers run on
    ``chunk`` rows at a time (float16 features, about 100 MB per 4,096 rows)."""
    from firmware_tools.model.teacher import FrozenEncoder

    encode = FrozenEncoder(ckpt, ckpt.config.layers - plan.teacher.trainable_layers)
    parts = []
    for s in range(0, len(texts), chunk):
        wp = ckpt.tokenize(list(texts[s : s + chunk]), plan.teacher.max_len)
        parts.append(teacher.logits(encode(wp), wp.mask))
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]} if parts else {}


def teacher_from_work(ckpt: Checkpoint, plan: BuildPlan, cache: _StageCache) -> Teacher:
    """The fine-tuned teacher a finished build kept in its work directory (``cache`` keyed)."""
    from firmware_tools.model.teacher import build_teacher

    weights = cache.path("teacher", "teacher.weights.h5")
    if weights is None:
        raise FileNotFoundError(f"{cache.dir}: no teacher weights (run edge-fw build-model --work first)")
    teacher = build_teacher(ckpt, plan.teacher, N_CLASSES)
    teacher.model.load_weights(weights)
    return teacher


def _teacher_stage(
    ckpt: Checkpoint,
    tv: _TeacherViews,
    data: _Data,
    plan: BuildPlan,
    n_classes: dict[str, int],
    seed: int,
    cache: _StageCache,
    log: Any,
) -> Teacher:
    from firmware_tools.model.align import wordpiece_tags
    from firmware_tools.model.teacher import build_teacher, fit_teacher

    teacher = build_teacher(ckpt, plan.teacher, n_classes)
    cached = cache.path("teacher", "teacher.weights.h5")
    if cached is not None:
        teacher.model.load_weights(cached)
        return teacher
    n = data.n_labelled
    it_tags = np.stack(
        [wordpiece_tags(tv.it_tr.offsets[i], e.spans) for i, e in enumerate(data.it_tr.examples[:n])]
    )
    slot_w = tv.it_tr.mask[:n] * data.spans_known[:n, None]
    y = _teacher_targets(data, it_tags, slot_w, tv.lg_tr.mask.shape, n_classes)
    fit_teacher(
        teacher,
        np.concatenate([tv.feats["it_tr"][:n], tv.feats["lg_tr"]]),
        np.concatenate([tv.it_tr.mask[:n], tv.lg_tr.mask]),
        y,
        seed=seed,
    )
    teacher.model.save_weights(cache.target("teacher.weights.h5"))
    return teacher


def _teacher_targets(
    data: _Data,
    it_tags: np.ndarray,
    slot_w: np.ndarray,
    log_shape: tuple[int, ...],
    n_classes: dict[str, int],
) -> dict[str, np.ndarray]:
    """Packed hard targets ``[weight, label]`` of the labelled intent rows then the log rows."""
    n, nl = len(it_tags), log_shape[0]
    w_int = np.concatenate([np.ones(n), np.zeros(nl)]).astype(np.float32)
    w_log = 1.0 - w_int

    def pack(w: np.ndarray, label: np.ndarray) -> np.ndarray:
        return np.stack([w, label.astype(np.float32)], axis=1)

    zi, zl = np.zeros(n), np.zeros(nl)
    slots = np.stack(
        [
            np.concatenate([slot_w, np.zeros(log_shape, np.float32)]),
            np.concatenate([it_tags, np.zeros(log_shape, np.int32)]).astype(np.float32),
        ],
        axis=-1,
    )
    known = np.concatenate([np.ones((n, 3), np.float32), data.lg_tr.known_mask()])
    return {
        "intent": pack(w_int, np.concatenate([data.it_tr.intent[:n], zl])),
        "slots": slots,
        "severity": pack(w_log * known[:, 0], np.concatenate([zi, data.lg_tr.severity])),
        "category": pack(w_log * known[:, 1], np.concatenate([zi, data.lg_tr.category])),
        "anomaly": pack(w_log * known[:, 2], np.concatenate([zi, data.lg_tr.anomaly])),
    }


def _teacher_eval(
    teacher: Teacher, tv: _TeacherViews, data: _Data
) -> tuple[dict[str, dict[str, float]], dict[str, np.ndarray]]:
    """The teacher's held-out metrics (its own word pieces, so its own gold tags)."""
    from firmware_tools.model.align import wordpiece_tags

    pi = teacher.logits(tv.feats["it_ho"], tv.it_ho.mask)
    pl = teacher.logits(tv.feats["lg_ho"], tv.lg_ho.mask)
    tags = np.stack([wordpiece_tags(tv.it_ho.offsets[i], e.spans) for i, e in enumerate(data.it_ho.examples)])
    ids = tv.it_ho.ids * (tv.it_ho.offsets[:, :, 1] > tv.it_ho.offsets[:, :, 0])  # specials count as pads
    lg, it = data.lg_ho, data.it_ho
    m = {
        **intent_metrics(pi["intent"], pi["slots"], it.intent, tags, ids),
        **log_metrics(pl["severity"], pl["category"], pl["anomaly"], lg.severity, lg.category, lg.anomaly),
    }
    if data.it_dev is not None and tv.it_dev is not None:
        m.update(_dev_metrics(teacher.logits(tv.feats["it_dev"], tv.it_dev.mask)["intent"], data.it_dev))
    gold_log = {"severity": lg.severity, "category": lg.category, "anomaly": lg.anomaly}
    return {"teacher": m}, per_example_correct(pi, pl, it.intent, tags, ids, gold_log)


def _dev_metrics(intent_logits: np.ndarray, dev: IntentArrays) -> dict[str, float]:
    """In-scope accuracy and out-of-scope rejection on the real development split (argmax)."""
    m = intent_metrics(intent_logits, np.zeros((*dev.ids.shape, 1)), dev.intent, dev.tags * 0, dev.ids)
    return {"dev_in_scope_accuracy": m["in_scope_accuracy"], "dev_oos_rejection": m["oos_rejection"]}


def _teacher_outputs(
    teacher: Teacher, tv: _TeacherViews, data: _Data, cache: _StageCache
) -> dict[str, np.ndarray]:
    """The teacher's logits on every transfer row, slot tags moved onto the student's tokens."""
    from firmware_tools.model.align import align_slot_logits

    cached = cache.path("teacher_outputs", "teacher_outputs.npz")
    if cached is not None:
        with np.load(cached) as z:
            return {k: z[k] for k in z.files}
    pi = teacher.logits(tv.feats["it_tr"], tv.it_tr.mask)
    pl = teacher.logits(tv.feats["lg_tr"], tv.lg_tr.mask)
    L = data.it_tr.ids.shape[1]
    assert data.it_tr.offsets is not None
    slots = align_slot_logits(pi["slots"], tv.it_tr.offsets, data.it_tr.offsets, L)
    out = {
        "intent": np.concatenate([pi["intent"], pl["intent"]]),
        "slots": np.concatenate([slots, np.zeros((len(pl["intent"]), L, slots.shape[-1]), np.float32)]),
        **{k: np.concatenate([pi[k], pl[k]]) for k in ("severity", "category", "anomaly")},
    }
    np.savez(cache.target("teacher_outputs.npz"), **out)
    return out


def _mpnet_embeddings(folder: Path, data: _Data, cache: _StageCache, log: Any) -> np.ndarray:
    """Frozen all-mpnet-base-v2 sentence embeddings of every transfer row (kept in the work
    directory under the folder's name and the texts)."""
    return _mpnet_texts(folder, data.it_tr.texts, cache, log)


def _mpnet_texts(folder: Path, texts: Sequence[str], cache: _StageCache, log: Any) -> np.ndarray:
    """Frozen all-mpnet-base-v2 sentence embeddings of ``texts`` (kept in the work directory under
    the folder's name and the texts)."""
    from firmware_tools.model.mpnet import MPNetEmbedder

    key = hashlib.sha256(repr((_encoder_id(folder), "mpnet-sentence", 64)).encode())
    for t in texts:
        key.update(t.encode("utf-8", "replace") + b"\n")
    path = cache.root / f"mpnet-{key.hexdigest()[:16]}.npy"
    if path.exists():
        log(f"second teacher: reusing {path}")
        return np.asarray(np.load(path), np.float32)
    t0 = time.time()
    emb = MPNetEmbedder(Path(folder))(list(texts)).astype(np.float16)
    np.save(path, emb)
    log(f"second teacher: {len(texts)} rows embedded in {time.time() - t0:.0f}s")
    # what a later build reads back: the build that embeds and the builds that reuse the work
    # directory fit the second teacher's head on the same numbers (before 5 December 2026 the first
    # fitted it on float32 and the others on float16: a full build's students and a students-only
    # rerun's learnt different soft labels)
    return emb.astype(np.float32)


@dataclass
class SecondTeacher:
    """A linear head on a frozen encoder's embeddings of the transfer rows (``emb``), fitted on
    the rows with gold labels; ``weight`` of the intent head's soft labels come from it."""

    emb: np.ndarray
    weight: float
    # fitted heads and their logits of the transfer rows, by the rows they were fitted on (the
    # build and a fold that keeps every row fit the same head)
    _fits: dict[bytes, np.ndarray] = field(default_factory=dict, repr=False)
    _heads: dict[bytes, Any] = field(default_factory=dict, repr=False)

    @property
    def tag(self) -> tuple[Any, ...]:
        """What the students' cached weights depend on besides the fine-tuned teacher."""
        return ("mpnet", self.weight)

    def _head(self, data: _Data, keep: np.ndarray | None) -> tuple[bytes, np.ndarray]:
        """(key, rows) of the head fitted on the labelled rows in ``keep``, fitted once."""
        from firmware_tools.model.linear import fit_softmax

        fit_rows = np.arange(len(self.emb)) < data.n_labelled
        if keep is not None:
            fit_rows &= keep
        key = np.packbits(fit_rows).tobytes()
        if key not in self._heads:
            labels = data.it_tr.intent[fit_rows]
            self._heads[key] = fit_softmax(self.emb[fit_rows], labels, len(INTENT_LABELS))
        return key, fit_rows

    def logits(self, data: _Data, keep: np.ndarray | None = None, log: Any = None) -> np.ndarray:
        """Intent logits of every transfer row from a head fitted on the labelled rows in
        ``keep`` (default: all of them)."""
        from firmware_tools.model.linear import softmax_logits

        key, fit_rows = self._head(data, keep)
        if key not in self._fits:
            self._fits[key] = softmax_logits(self._heads[key], self.emb)
        out = self._fits[key]
        if log is not None:
            agree = float(np.mean(out[fit_rows].argmax(-1) == data.it_tr.intent[fit_rows]))
            log(f"second teacher: its head agrees with the gold label on {agree:.4f} of its rows")
        return out

    def logits_of(self, emb: np.ndarray, data: _Data, keep: np.ndarray | None = None) -> np.ndarray:
        """Intent logits of other texts' embeddings ``emb`` from the head ``logits`` fits."""
        from firmware_tools.model.linear import softmax_logits

        key, _ = self._head(data, keep)
        out: np.ndarray = softmax_logits(self._heads[key], emb)
        return out

    def mixed(
        self, teacher: np.ndarray, data: _Data, keep: np.ndarray | None = None, log: Any = None
    ) -> np.ndarray:
        """``teacher``'s intent logits (transfer rows, then log lines) with this head's mixed in."""
        out = teacher.copy()
        mix_intent_logits(out, self.logits(data, keep, log), self.weight)
        return out


def mix_intent_logits(teacher: np.ndarray, second: np.ndarray, weight: float) -> None:
    """Replace the first ``len(second)`` rows of ``teacher`` (intent logits, in place) by the log of
    ``(1 - weight)`` times its probabilities plus ``weight`` times the second teacher's."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"mpnet_weight must lie in [0, 1], got {weight}")
    n = len(second)
    p = (1.0 - weight) * softmax(teacher[:n].astype(np.float64))
    p += weight * softmax(second.astype(np.float64))
    teacher[:n] = np.log(np.maximum(p, 1e-12)).astype(teacher.dtype)


def intent_hard_shares(plan: BuildPlan, data: _Data) -> tuple[np.ndarray | None, float]:
    """``make_targets``' ``intent_hard`` and ``extra_hard``: each transfer row's share of the
    intent loss taken from its hard label where the generator's rows take their own
    (``BuildPlan.intent_soft_generated``), else None; and every other row's share."""
    rest = 1.0 - plan.intent_soft
    if plan.intent_soft_generated is None:
        return None, rest
    share = np.full(len(data.it_tr.ids), rest, np.float32)
    share[: data.n_generated] = 1.0 - plan.intent_soft_generated
    return share, rest


def scope_class(plan: BuildPlan) -> int | None:
    """``make_targets``' ``scope_class``: the out-of-scope label where ``BuildPlan.soft_keeps_scope``."""
    return OOS_INDEX if plan.soft_keeps_scope else None


def _relabel_from_teacher(data: _Data, t_logits: dict[str, np.ndarray]) -> None:
    """Augmented rows take the teacher's intent; rows without gold spans its tags; log
    lines without a known severity or anomaly (real lines) the teacher's."""
    n_it = len(data.it_tr.ids)
    aug = np.arange(n_it) >= data.n_labelled
    data.it_tr.intent[aug] = t_logits["intent"][:n_it][aug].argmax(-1)
    # augmentation never edits inside a span and moves the spans with the words, so an augmented
    # row keeps its source's gold tags; only rows without gold spans take the teacher's
    no_spans = ~data.spans_known
    tags = t_logits["slots"][:n_it].argmax(-1) * (data.it_tr.ids != 0)
    data.it_tr.tags[no_spans] = tags[no_spans]
    lg = data.lg_tr
    known = lg.known_mask() > 0
    sev = t_logits["severity"][n_it:].argmax(-1)
    cat = t_logits["category"][n_it:].argmax(-1)
    anom = (t_logits["anomaly"][n_it:].reshape(-1) > 0).astype(np.float32)
    lg.severity[~known[:, 0]] = sev[~known[:, 0]]
    lg.category[~known[:, 1]] = cat[~known[:, 1]]
    lg.anomaly[~known[:, 2]] = anom[~known[:, 2]]
    lg.known = np.ones_like(known, np.float32)


def _teacher_cfg(ckpt: Checkpoint, plan: BuildPlan, mpnet_dir: Path | None = None) -> dict[str, Any]:
    c = ckpt.config
    second = {}
    if mpnet_dir is not None:
        second["intent_second_teacher"] = {
            "kind": "linear head on frozen sentence embeddings",
            "source": Path(mpnet_dir).name,
            "weight": plan.mpnet_weight,
        }
    return {
        **second,
        "kind": "pretrained",
        "source": Path(ckpt.source).name,
        "layers": c.layers,
        "width": c.width,
        "heads": c.heads,
        "trainable_layers": plan.teacher.trainable_layers,
        "epochs": plan.teacher.epochs,
        "max_len": plan.teacher.max_len,
    }


class _StudentTrainer:
    """Trains a student shape on the distillation targets; its weights are kept in the work
    directory under the shape, epochs and the teacher's fingerprint, so a rerun reuses them."""

    def __init__(
        self,
        base: dict[str, Any],
        targets: Any,
        plan: BuildPlan,
        seed: int,
        cache: _StageCache,
        soft_tag: tuple[Any, ...] = (),
        student_seed: int | None = None,
        lexicon: np.ndarray | None = None,
    ):
        self.base, self.targets, self.plan, self.seed, self.cache = base, targets, plan, seed, cache
        self.soft_tag = soft_tag  # what besides the teacher made the soft labels (part of the key)
        # None: the initial weights come from wherever the build's random state stands and the
        # batch order from ``seed`` (as every build before this option); else both from it
        self.student_seed = student_seed
        # the pretrained encoder's vectors of the tokenizer's pieces: the token embedding starts
        # from them (lexicon.initial_table); None: from random values
        self.lexicon = lexicon

    def __call__(self, name: str, shape: dict[str, Any], epochs: int) -> Any:
        from firmware_tools.model.network import NetConfig, build_network
        from firmware_tools.model.train import KD, fit

        if self.student_seed is not None:
            import tensorflow as tf

            tf.keras.utils.set_random_seed(self.student_seed)
        net = build_network(NetConfig(**self.base, **shape), name)
        if self.lexicon is not None:
            from firmware_tools.model.lexicon import initial_table

            table = net.embed.tok.embeddings
            table.assign(initial_table(self.lexicon, np.asarray(table.numpy()), self.plan.lexical_width))
        spec = (
            sorted(shape.items()),
            epochs,
            self.plan.batch,
            STUDENT_LOSS,
            self.plan.sentence_dim,
            self.plan.sentence_weight,
            # (keys of students whose sentence path is the shared one stay as they were)
            *((self.plan.sentence_source,) if self.plan.sentence_source != "pooled" else ()),
            *self.soft_tag,
            # (keys of students trained without the moving average stay as they were)
            *((f"ema{self.plan.student_ema:g}",) if self.plan.student_ema is not None else ()),
            # (keys of students seeded by the build's own random state stay as they were)
            *((f"sseed{self.student_seed}",) if self.student_seed is not None else ()),
            *((_lexicon_tag(self.plan.lexical_width),) if self.lexicon is not None else ()),
            # (keys of students with the default half-and-half intent loss stay as they were)
            *((f"isoft{self.plan.intent_soft:g}",) if self.plan.intent_soft != 0.5 else ()),
            *(_generated_tag(self.plan.intent_soft_generated)),
            *(("keepscope",) if self.plan.soft_keeps_scope else ()),
            # (keys of students with the default slot weight stay as they were)
            *((f"slotw{self.plan.slot_weight:g}",) if self.plan.slot_weight != STUDENT_SLOT_WEIGHT else ()),
        )
        key = hashlib.sha256(repr(spec).encode()).hexdigest()[:12]
        cached = self.cache.path("student", f"{name}-{key}.weights.h5")
        if cached is not None:
            net.model.load_weights(cached)
            return net
        fit(
            net,
            self.targets,
            epochs=epochs,
            batch=self.plan.batch,
            lr=2e-3,
            kd=KD(alpha=0.5, temperature=2.0),
            seed=(self.seed if self.student_seed is None else self.student_seed) + 1,
            desc=f"{name} (distill)",
            slot_weight=self.plan.slot_weight,
            sentence_weight=self.plan.sentence_weight,
            jit_compile=self.plan.student_jit,
            ema=self.plan.student_ema,
            intent_kd=KD(alpha=1.0 - self.plan.intent_soft, temperature=2.0),
        )
        net.model.save_weights(self.cache.target(f"{name}-{key}.weights.h5"))
        return net

    def joined(self, name: str, shape: dict[str, Any], epochs: int, log: Any = None) -> Any:
        """The student of ``shape`` from this trainer's start and, with ``plan.ensemble_seeds``,
        one more from each of those starts (each kept as ``--student-seed`` would keep it), joined
        into one network that averages their outputs (``network.join_networks``)."""
        first = self(name, shape, epochs)
        if not self.plan.ensemble_seeds:
            return first
        from firmware_tools.model.network import join_networks

        others = [copy.copy(self) for _ in self.plan.ensemble_seeds]
        for trainer, start in zip(others, self.plan.ensemble_seeds, strict=True):
            trainer.student_seed = start
        if log is not None:
            own = "the build's" if self.student_seed is None else str(self.student_seed)
            starts = ", ".join(map(str, self.plan.ensemble_seeds))
            log(f"{name}: the mean of {1 + len(others)} students (starts {own}, {starts})")
        return join_networks([first, *(t(name, shape, epochs) for t in others)], name)


def _generated_tag(share: float | None) -> tuple[str, ...]:
    """The student key's part for ``BuildPlan.intent_soft_generated`` (none when unset)."""
    return () if share is None else (f"isoftgen{share:g}",)


def _variant_entry(
    name: str, net: Any, calib_ids: np.ndarray, stage: Path, predict: Any, data: _Data
) -> dict[str, Any]:
    """A smaller student's int8 segments (files ``<name>.<segment>.tflite``, the default's segment
    names) and its manifest entry; the int8 metrics and calibration are added once it is written."""
    from firmware_tools.model.convert import convert_segments

    segs, _ = convert_segments(net, calib_ids, stage, prefix=f"{name}.")
    blocks = [f"block{i}" for i in range(net.cfg.n_blocks)]
    float_metrics, _ = _keras_eval(net, data.it_ho, data.lg_ho, predict)
    return {
        "segments": [
            {"name": s.name, "file": s.file, "inputs": s.inputs, "outputs": s.outputs} for s in segs
        ],
        "graphs": {"intents": ["embed", *blocks, "intent_head"], "logs": ["embed", *blocks, "logs_head"]},
        "io": "float32",
        "architecture": net.cfg.to_dict(),
        "note": "a smaller student distilled from the same teacher outputs (the SLA ladder's smaller model)",
        "metrics": {"student_float": float_metrics},
        "calibration": {},
    }


class _StageClock:
    """Wall and CPU seconds (all threads of this process) per build stage."""

    def __init__(self, log: Any) -> None:
        self.log = log
        self.stages: dict[str, dict[str, float]] = {}
        self._wall, self._cpu = time.time(), time.process_time()

    def stage(self, name: str) -> None:
        wall, cpu = time.time(), time.process_time()
        self.stages[name] = {"wall_s": round(wall - self._wall, 1), "cpu_s": round(cpu - self._cpu, 1)}
        self.log(f"stage {name}: {wall - self._wall:.0f}s wall, {cpu - self._cpu:.0f}s cpu")
        self._wall, self._cpu = wall, cpu


def _keras_eval(
    net: Any, it: IntentArrays, lg: LogArrays, predict: Any
) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """Held-out metrics of a Keras network, and which examples it gets right per head."""
    pi, pl = predict(net, it.ids), predict(net, lg.ids)
    metrics = {
        **intent_metrics(pi["intent"], pi["slots"], it.intent, it.tags, it.ids),
        **log_metrics(pl["severity"], pl["category"], pl["anomaly"], lg.severity, lg.category, lg.anomaly),
    }
    gold_log = {"severity": lg.severity, "category": lg.category, "anomaly": lg.anomaly}
    return metrics, per_example_correct(pi, pl, it.intent, it.tags, it.ids, gold_log)


def runtime_logits(
    bundle_dir: Path,
    ids_intents: np.ndarray,
    ids_logs: np.ndarray,
    backend: str = "auto",
    variant: str = "default",
) -> dict[str, np.ndarray]:
    """Run held-out ids through the int8 segments with the edge runtime (what devices run)."""
    from edge_agent.runtime.model import Model

    model = Model(load_bundle(bundle_dir), backend=backend, threads=2, variant=variant)
    intent, slots = model.run_intents(ids_intents)
    sev, cat, anom = model.run_logs(ids_logs)
    model.close()
    return {"intent": intent, "slots": slots, "severity": sev, "category": cat, "anomaly": anom}


def _int8_metrics_and_calibration(
    stage: Path,
    data: _Data,
    variant: str = "default",
    fixed: tuple[float, float] | None = None,
    oos_target: float = OOS_TARGET,
) -> tuple[dict[str, float], dict[str, Any]]:
    """Int8 metrics, and the temperature and per-intent thresholds chosen on calibration data:
    half of the generated held-out split plus, with real data, its validation split. The other
    half and the real development split are reported with that calibration. ``fixed``: the
    temperature and out-of-scope bar chosen on left-out sources instead (no thresholds);
    ``oos_target``: the share of the calibration rows out of scope that the thresholds reject."""
    it, lg = data.it_ho, data.lg_ho
    out = runtime_logits(stage, it.ids, lg.ids, variant=variant)
    half = len(it.ids) // 2
    cal_logits, cal_gold = out["intent"][:half], it.intent[:half]
    if data.calib_examples:
        val = encode_intents(data.tok, data.calib_examples)
        val_logits = runtime_logits(stage, val.ids, lg.ids[:1], variant=variant)["intent"]
        cal_logits = np.concatenate([cal_logits, val_logits])
        cal_gold = np.concatenate([cal_gold, val.intent])
    oos_bar = 0.0
    if fixed is None:
        temperature, thresholds = calibrate(cal_logits, cal_gold, oos_target)
    else:
        (temperature, oos_bar), thresholds = fixed, {}
    metrics = {
        **intent_metrics(out["intent"], out["slots"], it.intent, it.tags, it.ids),
        **log_metrics(out["severity"], out["category"], out["anomaly"], lg.severity, lg.category, lg.anomaly),
        **calibrated_figures(
            "calibrated_", out["intent"][half:], it.intent[half:], temperature, thresholds, oos_bar
        ),
    }
    if data.it_dev is not None:
        dev = data.it_dev
        dev_logits = runtime_logits(stage, dev.ids, lg.ids[:1], variant=variant)["intent"]
        metrics.update(_dev_metrics(dev_logits, dev))
        metrics.update(
            calibrated_figures("calibrated_dev_", dev_logits, dev.intent, temperature, thresholds, oos_bar)
        )
    calibration = {"temperature": temperature, "intent_thresholds": thresholds, "anomaly_threshold": 0.5}
    if fixed is not None:
        calibration["oos_bar"] = oos_bar
    return metrics, calibration


def _manifest(
    stage: Path,
    tok: Tokenizer,
    plan: BuildPlan,
    segs: list[Any],
    tpu_segs: list[Any],
    blocked: dict[str, str],
    student_cfg: dict[str, Any],
    teacher_cfg: dict[str, Any],
) -> dict[str, Any]:
    import tensorflow as tf

    blocks = [f"block{i}" for i in range(len(student_cfg["block_kinds"]))]
    seg_table = [{"name": s.name, "file": s.file, "inputs": s.inputs, "outputs": s.outputs} for s in segs]
    variants: dict[str, Any] = {}
    if not blocked:
        variants["edgetpu"] = {
            "segments": [
                {"name": s.name, "file": s.file, "inputs": s.inputs, "outputs": s.outputs} for s in tpu_segs
            ],
            "io": "int8",
            "note": "full-integer int8 (TFLITE_BUILTINS_INT8 only); "
            "compile with edgetpu_compiler on the build host",
            "blocked": {},
        }
    return {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "model": {"id": MODEL_ID, "version": MODEL_VERSION},
        "converter": {
            "tensorflow": tf.__version__,
            "quantization": "int8, per-channel weights, calibrated activations",
            "io": "float32 at segment boundaries (default variant)",
        },
        "tokenizer": {
            "file": "tokenizer.model",
            "type": "sentencepiece-unigram",
            "max_len": plan.max_len,
            "vocab_size": tok.vocab_size,
            "normalization": "nmt_nfkc_cf",
            "pad_id": 0,
            "unk_id": 1,
        },
        "architecture": {"student": student_cfg, "teacher": teacher_cfg},
        "segments": seg_table,
        "graphs": {"intents": ["embed", *blocks, "intent_head"], "logs": ["embed", *blocks, "logs_head"]},
        "labels": bundle_labels(),
        "calibration": {"temperature": 1.0, "intent_thresholds": {}, "anomaly_threshold": 0.5},
        "metrics": {},
        "variants": variants,
        "edgetpu_blocked": blocked,
        "files": {},
    }


def _write_manifest(stage: Path, manifest: dict[str, Any]) -> None:
    for extra in stage.glob("tokenizer.vocab"):
        extra.unlink()
    files = sorted(p.name for p in stage.iterdir() if p.is_file() and p.name != MANIFEST)
    manifest["files"] = {name: file_entry(stage / name) for name in files}
    (stage / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=False) + "\n", encoding="utf-8")


def _replace_dir(stage: Path, out: Path) -> None:
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".new")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(stage, tmp)
    old = out.with_name(out.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if out.exists():
        os.replace(out, old)
    os.replace(tmp, out)
    shutil.rmtree(old, ignore_errors=True)
