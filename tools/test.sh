#!/usr/bin/env bash
# Sets up the machine, builds octet and runs every test: first a Release build, then the
# same suite built by clang with AddressSanitizer + UndefinedBehaviorSanitizer (build-san,
# tools/sanitized_build.sh), whose tree also holds the fuzz targets of the last stage.
#
#   tools/test.sh                      # everything (what CI runs)
#   OCTET_SKIP_SANITIZE=1 tools/test.sh  # Release build only
#   OCTET_SKIP_FUZZ=1 tools/test.sh      # without the fuzz stage
#   OCTET_SKIP_ARM=1 tools/test.sh       # without the AArch64 kernel stage
#   OCTET_SKIP_ZOO=1 tools/test.sh       # without exporting the zoo's small variants
#
# The AArch64 stage cross-builds the microkernel tests and octet (tools/arm/test.sh) and runs
# them under qemu-aarch64 as three CPUs: cortex-a72 (NEON only), cortex-a76 (+ dot product) and
# max (+ I8MM), so each Arm kernel is checked against the scalar reference as the x86 ones are,
# a kernel using an instruction its level lacks dies of SIGILL on the CPU without it, and the
# bundled models' INT8 logits at every Arm level are checked bit-identical to this Release
# build's scalar kernels and to ONNX Runtime (tools/arm/model_check.sh).
#
# The last stage builds the libFuzzer targets with clang and runs a fixed number of inputs
# from a fixed seed through each (tools/fuzz.sh --runs; a long run: tools/fuzz.sh --seconds 3600).
#
# Every tree is a unity build (-DCMAKE_UNITY_BUILD=ON: CMake compiles each target's sources in
# batches of 8 per translation unit, so the headers are parsed once a batch): CI builds three
# trees from nothing and most of a file's compile time is its headers. Microkernels, which carry
# per-file ISA flags, are compiled alone. A plain `cmake -B build` keeps one file per unit, which
# is what incremental work wants.
#
# Every ctest stage writes JUnit (build/ci-tally/); at the end (or when a stage fails)
# tools/ci_tally.py prints passed / failed / skipped per stage with every skip listed, and the
# ISA levels this CPU lacks as "not tested on this machine". A skip fails CI: what a test needs,
# tools/setup.sh installs (a kernel level the CPU lacks is not a skip, tests/util/skip_reasons.h).
#
# The sanitizer pass limits the ResNet8 parity test to OCTET_PARITY_LIMIT images (64 by
# default) because the reference kernels run ~15x slower under ASan, and the bundled models'
# octet-vs-ORT eval test to OCTET_EVAL_LIMIT images (256; 2000 in Release): 8 s instead of 44.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JOBS="$(nproc)"

"$ROOT/tools/setup.sh"

TALLY="$ROOT/build/ci-tally"
rm -rf "$TALLY"
mkdir -p "$TALLY"
tally=()
print_tally() { ((${#tally[@]} == 0)) || python3 "$ROOT/tools/ci_tally.py" "${tally[@]}"; }
arm_build_pid=""
stop_arm_build() { [[ -z "$arm_build_pid" ]] || kill -- "-$arm_build_pid" 2>/dev/null || true; }
trap 'rc=$?; stop_arm_build; rm -f "${times_file:-}"; if ((rc != 0)); then print_tally || true; fi' EXIT
# Passed tests' output in full (ctest keeps 1 KiB by default): the tally reads the microkernels
# each sweep left out.
CTEST_TALLY=(--test-output-size-passed 1048576)

stage_start=0  # SECONDS counts from the start of this script, setup included
# CPU seconds (user + system) of the child processes waited for so far: on 2 cores the stages
# compete for CPU, so each stage's CPU says what it costs. The AArch64 build, which runs behind
# the tests, counts in the AArch64 stage, where it is waited for. `times` must run in this shell
# (a subshell starts its children's count at zero), hence the file.
times_file="$(mktemp)"
stage_cpu=0
stage_done() {
  local cpu
  times > "$times_file"
  cpu=$(awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); t += a[1] * 60 + a[2] } printf "%d", t }' "$times_file")
  echo "== $1: $(((SECONDS - stage_start) / 60)) min $(((SECONDS - stage_start) % 60)) s (CPU $((cpu - stage_cpu)) s)"
  stage_start=$SECONDS
  stage_cpu=$cpu
}
stage_done "setup"

# The zoo's small variants (tools/zoo/export.py --small: a model of each torchvision family the
# zoo covers that exports in seconds; --timm --small: timm's 35 families at 64 px, with timm from
# the venv setup made; ONNX Runtime's outputs with each), exported before configuring so that
# ZooParity.* are ctest entries (tests/parity/CMakeLists.txt), then quantized by the build below.
ZOO="$ROOT/build/zoo"
if [[ "${OCTET_SKIP_ZOO:-0}" != 1 ]]; then
  echo "== the zoo's small variants (torch export and ONNX Runtime's outputs) into $ZOO"
  /usr/bin/python3 "$ROOT/tools/zoo/export.py" --small --out "$ZOO" --calib-count 8
  "$ROOT/third_party/timm/venv/bin/python" "$ROOT/tools/zoo/export.py" --timm --small --out "$ZOO" --calib-count 8
  export OCTET_ZOO_DIR="$ZOO"
  stage_done "zoo export"
fi

echo "== Release build and tests"
# Through ccache, as the AArch64 stage's tree: ctest's Install.PipWheel then builds the pip wheel
# from these compiles, recompiling only the module (tests/install/wheel_test.sh), which needs the paths
# ccache hashes taken relative to the checkout. Depend mode: a compile ccache has not seen costs
# no extra preprocessor run.
export CCACHE_BASEDIR="$ROOT" CCACHE_DEPEND=1
cmake -S "$ROOT" -B "$ROOT/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD=ON \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache >/dev/null
# ONNX Runtime's own quantization tool writes its files for the zoo meanwhile (one Python
# process at a time, beside the compiler jobs), checked by ZooParity.OrtToolFilesIdenticalToOrt.
ort_tool_pid=""
if [[ "${OCTET_SKIP_ZOO:-0}" != 1 ]]; then
  "$ROOT/tools/zoo/ort_quantize_zoo.sh" "$ZOO" >"$ROOT/build/ort-tool.log" 2>&1 &
  ort_tool_pid=$!
fi
cmake --build "$ROOT/build" -j "$JOBS"
if [[ -n "$ort_tool_pid" ]] && ! wait "$ort_tool_pid"; then
  cat "$ROOT/build/ort-tool.log"
  echo "== ONNX Runtime's quantization tool failed on a zoo model (its log is above)"
  exit 1
fi
if [[ "${OCTET_SKIP_ZOO:-0}" != 1 ]]; then
  for model in "$ZOO"/*/model.onnx; do
    dir="$(dirname "$model")"
    "$ROOT/build/apps/octet" quantize "$model" -o "$dir/model_int8.onnx" --calib "npy:$dir/calib.npy" >/dev/null
  done
fi
stage_done "Release build"

# The AArch64 cross-build starts now, in the background at a low priority: it takes the CPU the
# test stages below leave idle (servers waiting on sockets, ONNX Runtime starting) and is
# waited for at the AArch64 stage, which then only runs the tests.
ARM_ARGS=(--kernels-only --models "$ROOT/build" --cpu cortex-a72 --cpu cortex-a76 --cpu max --jobs "$JOBS")
if [[ "${OCTET_SKIP_ARM:-0}" != 1 ]]; then
  # Its own process group (setsid), so that an early exit stops the whole build (stop_arm_build).
  setsid nice -n 15 "$ROOT/tools/arm/test.sh" "${ARM_ARGS[@]}" --build-only >"$ROOT/build/arm-build.log" 2>&1 &
  arm_build_pid=$!
fi
tally+=("Release tests=$TALLY/release.xml")
ctest --test-dir "$ROOT/build" --output-on-failure -j "$JOBS" "${CTEST_TALLY[@]}" --output-junit "$TALLY/release.xml"
stage_done "Release tests"
unset OCTET_ZOO_DIR  # the zoo is checked in Release only

SAN="$ROOT/build-san"
if [[ "${OCTET_SKIP_SANITIZE:-0}" != 1 ]]; then
  echo "== AddressSanitizer + UndefinedBehaviorSanitizer build (clang-14) and tests"
  "$ROOT/tools/sanitized_build.sh" "$SAN"
  stage_done "sanitizer build"
  tally+=("sanitizer tests=$TALLY/sanitizer.xml")
  OCTET_PARITY_LIMIT="${OCTET_PARITY_LIMIT:-64}" OCTET_EVAL_LIMIT="${OCTET_EVAL_LIMIT:-256}" \
    ctest --test-dir "$SAN" --output-on-failure -j "$JOBS" "${CTEST_TALLY[@]}" --output-junit "$TALLY/sanitizer.xml"
  stage_done "sanitizer tests"
fi
if [[ "${OCTET_SKIP_FUZZ:-0}" != 1 ]]; then
  echo "== fuzz targets (clang, libFuzzer + ASan + UBSan), ${OCTET_FUZZ_RUNS:-5000} inputs each"
  "$ROOT/tools/fuzz.sh" --build "$SAN" --runs "${OCTET_FUZZ_RUNS:-5000}"
  tally+=(--note "fuzz: ${OCTET_FUZZ_RUNS:-5000} inputs through each target of tools/fuzz.sh, none failed")
  stage_done "fuzz"
fi
if [[ "${OCTET_SKIP_ARM:-0}" != 1 ]]; then
  echo "== AArch64 microkernels and bundled models, cross-built, under qemu-aarch64"
  for cpu in cortex-a72 cortex-a76 max; do tally+=("AArch64 -cpu $cpu=$TALLY/arm-$cpu.xml"); done
  build_ok=1
  wait "$arm_build_pid" || build_ok=0
  arm_build_pid=""
  if ((build_ok == 0)); then
    cat "$ROOT/build/arm-build.log"
    echo "== the AArch64 cross-build failed (its log is above)"
    exit 1
  fi
  grep '^== \[arm\]' "$ROOT/build/arm-build.log" | sed 's/^/   (background) /'
  OCTET_JUNIT_DIR="$TALLY" "$ROOT/tools/arm/test.sh" "${ARM_ARGS[@]}"
  tally+=(--note "AArch64 models: tools/arm/model_check.sh passed")
  stage_done "AArch64"
fi
trap - EXIT
rm -f "$times_file"
if ! print_tally; then
  echo "== CI FAILED after $((SECONDS / 60)) min $((SECONDS % 60)) s: see the tally above"
  exit 1
fi
echo "== all tests passed in $((SECONDS / 60)) min $((SECONDS % 60)) s"
