#!/usr/bin/env bash
# Whole models on AArch64 under qemu against the x86 build and ONNX Runtime: the bundled models'
# INT8 logits must be bit-identical on every Arm level, FP32 within the parity tolerance.
#
#   tools/arm/model_check.sh --x86-build DIR --arm-build DIR [--cpu MODEL]... [--work DIR] [--jobs N]
#
# The x86 octet (DIR/apps/octet) makes the references once:
#   - each bundled model (models/*.onnx with its card) quantized to QDQ, uint8 and int8
#     activations, static (calibrated on 64 training images of the card's dataset) and dynamic;
#   - random inputs in the models' normalized range, 8 images;
#   - the outputs of the x86 scalar kernels, and ONNX Runtime's on the same files (when Node and
#     onnxruntime-node are installed: tools/setup.sh).
# Then the cross-built octet (its build's qemu-aarch64-run, QEMU_CPU per model) runs every file
# at every level (scalar, neon, neondot, neoni8mm) under the first CPU model offering it, N runs
# at a time (--jobs, the processors by default); every CPU model is probed at every level, and
# a level the CPU lacks must be refused. `octet compare` checks:
#   INT8 static and dynamic:  Arm level == x86 scalar, tolerance 0 (bit-identical);
#   INT8 static:              x86 scalar == ORT, tolerance 0;
#   FP32:                     Arm level vs ORT (or x86 scalar), max|a-b| / max|b| <= 1e-5.
# Prints one line per check and exits 1 if any fails.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
X86_BUILD=""
ARM_BUILD=""
WORK=""
CPUS=()
JOBS="$(nproc)"

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }
die() { echo "[arm models] error: $*" >&2; exit 2; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --x86-build) [[ $# -ge 2 ]] || die "--x86-build needs a folder"; X86_BUILD="$(realpath -m "$2")"; shift 2 ;;
    --arm-build) [[ $# -ge 2 ]] || die "--arm-build needs a folder"; ARM_BUILD="$(realpath -m "$2")"; shift 2 ;;
    --work) [[ $# -ge 2 ]] || die "--work needs a folder"; WORK="$(realpath -m "$2")"; shift 2 ;;
    --cpu) [[ $# -ge 2 ]] || die "--cpu needs a model name"; CPUS+=("$2"); shift 2 ;;
    --jobs | -j) [[ $# -ge 2 ]] || die "--jobs needs a number"; JOBS="$2"; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[[ -n "$X86_BUILD" && -n "$ARM_BUILD" ]] || die "--x86-build and --arm-build are required (see --help)"
[[ ${#CPUS[@]} -gt 0 ]] || CPUS=(max)
X86="$X86_BUILD/apps/octet"
ARM_OCTET="$ARM_BUILD/apps/octet"
RUNNER="$ARM_BUILD/qemu-aarch64-run"
[[ -x "$X86" ]] || die "no x86 octet at $X86 (build it first: cmake --build $X86_BUILD --target octet)"
[[ -x "$ARM_OCTET" ]] || die "no AArch64 octet at $ARM_OCTET (tools/arm/test.sh --models builds it)"
[[ -x "$RUNNER" ]] || die "no qemu runner at $RUNNER (configure the build with cmake/aarch64-linux-gnu.cmake)"
[[ -n "$WORK" ]] || WORK="$ARM_BUILD/model-check"

source "$ROOT/tools/arm/cpu_levels.sh"
ORT_RUN="$ROOT/tools/ort/ort_run.mjs"
have_ort=0
if command -v node >/dev/null && node "$ORT_RUN" --version >/dev/null 2>&1; then have_ort=1; fi

failures=0
checks=0
# compare NAME GOT_DIR WANT_DIR TOLERANCE
compare() {
  local log
  checks=$((checks + 1))
  if log="$("$X86" compare "$2" "$3" --tolerance "$4" 2>&1)"; then
    echo "  ok    $1"
  else
    echo "  FAIL  $1"
    sed 's/^/        /' <<<"$log"
    failures=$((failures + 1))
  fi
}

rm -rf "$WORK"
mkdir -p "$WORK"
echo "== [arm models] references (x86 octet$( ((have_ort)) && echo " and ONNX Runtime"))"
((have_ort)) || echo "   ONNX Runtime is not installed (tools/setup.sh): x86 scalar is the only reference"

# Every variant: NAME MODEL_FILE INT8(0|1) TOLERANCE_VS_REFERENCE
variants=()
for model in "$ROOT"/models/*.onnx; do
  base="$(basename "$model" .onnx)"
  [[ -f "$ROOT/models/$base.json" ]] || continue
  dir="$WORK/$base"
  mkdir -p "$dir"
  "$X86" run "$model" --random --batch 8 --seed 7 --random-range -1 2 --save-inputs "$dir/inputs" \
    --output-dir "$dir/fp32.x86" --isa scalar >/dev/null
  variants+=("$base.fp32 $model 0")
  for act in uint8 int8; do
    "$X86" quantize "$model" -o "$dir/$act.onnx" --act "$act" --calib-count 64 --no-progress >/dev/null
    variants+=("$base.$act $dir/$act.onnx 1")
  done
  "$X86" quantize "$model" -o "$dir/dynamic.onnx" --mode dynamic --no-progress >/dev/null
  variants+=("$base.dynamic $dir/dynamic.onnx 1")
done
[[ ${#variants[@]} -gt 0 ]] || die "no bundled model with a card in $ROOT/models"

# split_variant VARIANT: sets name, file, int8, dir (the model's work folder) and kind (fp32,
# uint8, int8, dynamic) in the caller's scope.
split_variant() {
  read -r name file int8 <<<"$1"
  dir="$WORK/${name%%.*}"
  kind="${name#*.}"
}

inputs_of() {  # the --input arguments of a model's saved inputs, in the model's order
  local dir="$1"
  for f in "$dir"/inputs/*.npy; do printf '%s\n' --input "$f"; done
}

for v in "${variants[@]}"; do
  split_variant "$v"
  mapfile -t input_args < <(inputs_of "$dir")
  [[ "$kind" == fp32 ]] || "$X86" run "$file" "${input_args[@]}" --isa scalar --output-dir "$dir/$kind.x86" >/dev/null
  if ((have_ort)); then
    ort_inputs=()
    for f in "$dir"/inputs/*.npy; do ort_inputs+=(--input "$(basename "$f" .npy)=$f"); done
    node "$ORT_RUN" --model "$file" "${ort_inputs[@]}" --output-dir "$dir/$kind.ort" >/dev/null
    if [[ "$kind" == uint8 || "$kind" == int8 ]]; then
      compare "$name: x86 scalar == ONNX Runtime" "$dir/$kind.x86" "$dir/$kind.ort" 0
    fi
  fi
done

# run_variants CPU LEVEL: every variant under the emulated CPU at that level, JOBS at a time,
# then the comparisons (the x86 octet compares in a moment; the emulated runs are the time).
run_variants() {
  local cpu="$1" level="$2" v name file int8 dir kind out
  local pids=()
  for v in "${variants[@]}"; do
    split_variant "$v"
    out="$dir/$kind.arm-$cpu-$level"
    mapfile -t input_args < <(inputs_of "$dir")
    (QEMU_CPU="$cpu" "$RUNNER" "$ARM_OCTET" --isa "$level" run "$file" "${input_args[@]}" --output-dir "$out" \
      >"$out.log" 2>&1 || echo "exit status $?" >>"$out.log") &
    pids+=($!)
    if ((${#pids[@]} >= JOBS)); then
      wait "${pids[0]}"
      pids=("${pids[@]:1}")
    fi
  done
  wait
  for v in "${variants[@]}"; do
    split_variant "$v"
    out="$dir/$kind.arm-$cpu-$level"
    if grep -q "^exit status" "$out.log"; then
      checks=$((checks + 1))
      echo "  FAIL  $name at $level: the AArch64 octet failed"
      sed 's/^/        /' "$out.log"
      failures=$((failures + 1))
    elif ((int8)); then
      compare "$name at $level: == x86 scalar" "$out" "$dir/$kind.x86" 0
    elif ((have_ort)); then
      compare "$name at $level: vs ONNX Runtime" "$out" "$dir/$kind.ort" 1e-5
    else
      compare "$name at $level: vs x86 scalar" "$out" "$dir/$kind.x86" 1e-5
    fi
  done
}

# Each level's models run once, under the first CPU model offering it: the same instructions
# emulated again under a larger CPU model would prove nothing new. Every CPU model is still
# probed at every level, which checks that octet's detection follows the emulated CPU.
checked_levels=" "
for cpu in "${CPUS[@]}"; do
  echo "== [arm models] qemu-aarch64 -cpu $cpu"
  ran_levels=()
  for level in scalar neon neondot neoni8mm; do
    probe="$(QEMU_CPU="$cpu" "$RUNNER" "$ARM_OCTET" --isa "$level" info "$ROOT/models/tinynet.onnx" 2>&1 >/dev/null)" || {
      if grep -q "does not support" <<<"$probe"; then
        echo "  -     $level: refused (this CPU model lacks it)"
        continue
      fi
      die "the AArch64 octet failed under -cpu $cpu --isa $level: $probe"
    }
    ran_levels+=("$level")
    if [[ "$checked_levels" == *" $level "* ]]; then
      echo "  -     $level: its models ran under an earlier CPU model"
      continue
    fi
    run_variants "$cpu" "$level"
    checked_levels+="$level "
  done
  # The detection must follow the emulated CPU: what it offers, octet runs.
  want="$(arm_cpu_levels "$cpu")"
  checks=$((checks + 1))
  if [[ -n "$want" && "${ran_levels[*]}" != "$want" ]]; then
    echo "  FAIL  -cpu $cpu ran levels '${ran_levels[*]}', expected '$want'"
    failures=$((failures + 1))
  else
    echo "  ok    -cpu $cpu runs levels: ${ran_levels[*]}"
  fi
done

echo "== [arm models] $checks checks, $failures failed"
((failures == 0))
