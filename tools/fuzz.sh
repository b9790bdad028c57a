#!/usr/bin/env bash
# Builds octet's libFuzzer targets with clang (address + undefined sanitizers, tests/fuzz; in
# build-san, the tree tools/test.sh runs the sanitizer suites in: tools/sanitized_build.sh), writes
# their seed corpora and runs each for a bounded time: the ONNX loader + planner, the .npy
# decoder, the CIFAR-10 / IDX readers and the image-folder decoder. A crash, sanitizer report,
# timeout or memory blow-up fails the run and leaves the input in out/fuzz/findings/.
#
#   tools/fuzz.sh [--seconds S | --runs N] [--only TARGET,...] [--jobs J] [--build DIR]
#
# --seconds is per target (default 60); --runs N instead runs N inputs per target from a fixed
# seed (-seed=1), the same inputs on every machine (tools/test.sh, hence CI, uses this), the targets
# side by side, one per core. Corpora grow in out/fuzz/corpus/<target> between runs
# (a long run: tools/fuzz.sh --seconds 3600). Per input: at most 10 s and 1 GB of memory. Prints
# executions per target and in total. --jobs J (with --seconds) runs J processes per target on
# the shared corpus (libFuzzer's fork mode) to use every core in a long run. Needs clang-14 and libclang-rt-14-dev (tools/setup.sh).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECONDS_EACH=60
RUNS=""
ONLY=""
JOBS=1
BUILD="$ROOT/build-san"
die() { echo "fuzz: $*" >&2; exit 1; }
while (($#)); do
  case "$1" in
    --seconds) SECONDS_EACH="$2"; shift 2 ;;
    --runs) RUNS="$2"; shift 2 ;;
    --only) ONLY="$2"; shift 2 ;;
    --jobs) JOBS="$2"; shift 2 ;;
    --build) BUILD="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[[ "$SECONDS_EACH" =~ ^[1-9][0-9]*$ ]] || die "--seconds must be a positive integer, got '$SECONDS_EACH'"
[[ -z "$RUNS" || "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "--runs must be a positive integer, got '$RUNS'"
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || die "--jobs must be a positive integer, got '$JOBS'"
[[ "$JOBS" == 1 || -z "$RUNS" ]] || die "--jobs needs --seconds (a fixed --runs is one process from one seed)"
LIMIT=(-max_total_time="$SECONDS_EACH")
[[ -n "$RUNS" ]] && LIMIT=(-runs="$RUNS" -seed=1)
((JOBS > 1)) && LIMIT+=(-fork="$JOBS")

TARGETS=(fuzz_loader fuzz_npy fuzz_datasets fuzz_images)
if [[ -n "$ONLY" ]]; then IFS=',' read -r -a TARGETS <<< "$ONLY"; fi

OUT="$ROOT/out/fuzz"
SEEDS="$OUT/seeds"
corpus_of() {  # target -> its seed folder
  case "$1" in
    fuzz_loader) echo "$SEEDS/loader" ;;
    fuzz_npy) echo "$SEEDS/npy" ;;
    fuzz_datasets) echo "$SEEDS/datasets" ;;
    fuzz_images) echo "$SEEDS/images" ;;
    *) die "unknown target '$1' (fuzz_loader, fuzz_npy, fuzz_datasets, fuzz_images)" ;;
  esac
}
for t in "${TARGETS[@]}"; do corpus_of "$t" > /dev/null; done  # unknown names stop here, before the build

mkdir -p "$BUILD"
BUILD_LOG="$BUILD/fuzz-build.log"
echo "fuzz: building in $BUILD (clang-14, -fsanitize=fuzzer,address,undefined)" >&2
"$ROOT/tools/sanitized_build.sh" "$BUILD" "${TARGETS[@]}" fuzz_seeds > "$BUILD_LOG" 2>&1 ||
  { grep -m5 -A5 "error" "$BUILD_LOG" || tail -n 3 "$BUILD_LOG"; die "build failed (see $BUILD_LOG)"; }

mkdir -p "$OUT/findings"
"$BUILD/tests/fuzz/fuzz_seeds" "$SEEDS" > /dev/null
cp "$ROOT"/models/*.onnx "$SEEDS/loader/"

# One target's run; its exit status goes to $OUT/<target>.status.
run_target() {
  local t="$1" status=0
  local corpus="$OUT/corpus/$t"
  mkdir -p "$corpus"
  "$BUILD/tests/fuzz/$t" "$corpus" "$(corpus_of "$t")" "${LIMIT[@]}" -timeout=10 -rss_limit_mb=1024 \
    -max_len=1048576 -artifact_prefix="$OUT/findings/$t-" -print_final_stats=1 > "$OUT/$t.log" 2>&1 || status=$?
  echo "$status" > "$OUT/$t.status"
}

# A fixed --runs is one process per target: the targets then run side by side, one per core.
parallel=1
[[ -n "$RUNS" ]] && parallel=$(nproc)
running=0
for t in "${TARGETS[@]}"; do
  if [[ -n "$RUNS" ]]; then echo "fuzz: $t, $RUNS runs" >&2; else echo "fuzz: $t, ${SECONDS_EACH} s" >&2; fi
  rm -f "$OUT/$t.status"
  run_target "$t" &
  running=$((running + 1))
  if ((running >= parallel)); then
    wait -n || true
    running=$((running - 1))
  fi
done
wait || true

total=0
failed=()
for t in "${TARGETS[@]}"; do
  log="$OUT/$t.log"
  status=$(cat "$OUT/$t.status" 2>/dev/null || echo "no status")
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  # Fork mode prints no final stats: its last "#N:" status line counts every job's executions.
  ((JOBS > 1)) && execs=$(sed -n 's/^#\([0-9]*\): cov:.*/\1/p' "$log" | tail -n 1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | sed 's/cov: //')
  execs=${execs:-0}
  total=$((total + execs))
  echo "  $t: ${execs} executions, coverage ${cov:-?} edges, corpus $(ls "$OUT/corpus/$t" | wc -l) inputs, exit $status" >&2
  if [[ "$status" != 0 ]]; then
    failed+=("$t")
    grep -m20 -E "ERROR|SUMMARY|==[0-9]+==|Test unit written" "$log" >&2 || true
  fi
done
echo "fuzz: ${total} executions in all; findings in $OUT/findings" >&2
if ((${#failed[@]})); then
  die "${#failed[@]} target(s) failed: ${failed[*]} (logs in $OUT)"
fi
