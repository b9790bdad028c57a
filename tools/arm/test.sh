#!/usr/bin/env bash
# Cross-builds octet for AArch64 and runs its tests under qemu-user, one pass per CPU model.
#
#   tools/arm/test.sh [--cpu MODEL]... [--kernels-only] [--models X86_BUILD] [--clang] [--build DIR]
#                     [--jobs N] [--build-only] [-- CTEST_ARGS...]
#
#   --kernels-only builds only the microkernel tests (tests/simd: every kernel of every level
#   the CPU model runs against the scalar reference) and runs only them: minutes instead of
#   the whole tree's half hour.
#   --models X86_BUILD also builds the AArch64 octet (with --kernels-only its minimal form: info,
#   run and compare, -DOCTET_CLI_MINIMAL=ON) and runs tools/arm/model_check.sh under each
#   CPU model: the bundled models in FP32, static INT8 (uint8 / int8) and dynamic INT8 at every
#   Arm level the CPU offers, INT8 bit-identical to the x86 build's scalar kernels (X86_BUILD,
#   already built) and to ONNX Runtime.
#   --build-only stops after the build (tools/test.sh starts it early, in the background).
#   --clang also builds the microkernel tests with clang++-14 for the same target (DIR-clang; the
#   compiler of macOS and Android, which cannot be run here) and runs them under the last --cpu
#   (about 5 more minutes from scratch, so CI leaves it out).
#   tools/test.sh (CI) runs
#     --kernels-only --models build --cpu cortex-a72 --cpu cortex-a76 --cpu max
#   where a CPU model after a lesser one tests only the kernels of the levels that one lacked
#   (OCTET_TEST_LEVELS_ABOVE) and the models run at each level once. With OCTET_JUNIT_DIR set,
#   each CPU model's ctest writes OCTET_JUNIT_DIR/arm-MODEL.xml for tools/ci_tally.py.
#   tools/arm/test.sh                                  # -cpu max (NEON + dotprod + i8mm)
#   tools/arm/test.sh --cpu cortex-a72 --cpu max       # NEON only, then everything
#   tools/arm/test.sh --cpu cortex-a76 -- -R simd      # dotprod without i8mm, SIMD tests only
#
# Steps: the arm64 sysroot (tools/arm/sysroot.sh, nothing installed into the system), configure
# with cmake/aarch64-linux-gnu.cmake, build, then ctest per model (QEMU_CPU picks the model for
# the build's emulator script: nothing is rebuilt). Needs g++-aarch64-linux-gnu and qemu-user. bench/ is
# not built (its peak loops are x86 assembly). Each step's time is printed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="$ROOT/build-arm"
JOBS="$(nproc)"
CPUS=()
CTEST_ARGS=()
KERNELS_ONLY=0
MODELS_X86=""
CLANG=0
BUILD_ONLY=0

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }
die() { echo "[arm test] error: $*" >&2; exit 2; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --cpu) [[ $# -ge 2 ]] || die "--cpu needs a model name"; CPUS+=("$2"); shift 2 ;;
    --cpu=*) CPUS+=("${1#--cpu=}"); shift ;;
    --build) [[ $# -ge 2 ]] || die "--build needs a folder"; BUILD="$(realpath -m "$2")"; shift 2 ;;
    --jobs | -j) [[ $# -ge 2 ]] || die "--jobs needs a number"; JOBS="$2"; shift 2 ;;
    --kernels-only) KERNELS_ONLY=1; shift ;;
    --clang) CLANG=1; shift ;;
    --build-only) BUILD_ONLY=1; shift ;;
    --models) [[ $# -ge 2 ]] || die "--models needs the x86 build folder"; MODELS_X86="$(realpath -m "$2")"; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    --) shift; CTEST_ARGS=("$@"); break ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[[ ${#CPUS[@]} -gt 0 ]] || CPUS=(max)

for tool in aarch64-linux-gnu-g++ qemu-aarch64 cmake ninja protoc; do
  command -v "$tool" >/dev/null ||
    die "$tool not found (Debian: apt-get install g++-aarch64-linux-gnu qemu-user cmake ninja-build protobuf-compiler)"
done
known_cpus="$(qemu-aarch64 -cpu help 2>/dev/null | awk 'NR > 1 {print $1}' || true)"
for cpu in "${CPUS[@]}"; do
  grep -qx -- "$cpu" <<<"$known_cpus" || die "qemu-aarch64 has no CPU model '$cpu'; it has: $(echo $known_cpus)"
done

step_start=0
step() { step_start=$(date +%s); echo "== [arm] $*"; }
step_done() { echo "== [arm] $1: $(($(date +%s) - step_start)) s"; }

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)

step "arm64 sysroot"
"$ROOT/tools/arm/sysroot.sh" "$BUILD/sysroot"
step_done "sysroot"

# --kernels-only builds the minimal octet (info, run and compare: -DOCTET_CLI_MINIMAL=ON), all
# the model check runs; the whole tree's tests need the whole CLI.
minimal=OFF
((KERNELS_ONLY == 0)) || minimal=ON
step "configure ($BUILD)"
cmake -S "$ROOT" -B "$BUILD" -G Ninja --toolchain "$ROOT/cmake/aarch64-linux-gnu.cmake" \
  -DCMAKE_BUILD_TYPE=Release -DOCTET_BUILD_BENCH=OFF -DOCTET_ARM_SYSROOT="$BUILD/sysroot" \
  -DOCTET_QEMU_CPU="${CPUS[0]}" -DCMAKE_UNITY_BUILD=ON -DOCTET_CLI_MINIMAL=$minimal "${launcher[@]}" >/dev/null
step_done "configure"

TEST_DIR="$BUILD"
TARGETS=()
if ((KERNELS_ONLY)); then
  TEST_DIR="$BUILD/tests/simd"
  TARGETS=(--target octet_simd_tests)
  [[ -z "$MODELS_X86" ]] || TARGETS+=(octet)
fi
step "build (-j $JOBS)"
cmake --build "$BUILD" -j "$JOBS" "${TARGETS[@]}"
step_done "build"
((BUILD_ONLY == 0)) || exit 0

source "$ROOT/tools/arm/cpu_levels.sh"

status=0
tested_up_to=""
tested_count=0
for cpu in "${CPUS[@]}"; do
  step "tests under qemu-aarch64 -cpu $cpu"
  # A CPU model after a lesser one tests only the kernels of the levels that one lacked
  # (tests/simd/simd_test_util.h: untested_reason); the same instructions emulated again
  # would prove nothing new. The suite's other tests run under every model. "Lesser": its
  # level list (tools/arm/cpu_levels.sh) is shorter, the levels forming one chain.
  levels=($(arm_cpu_levels "$cpu"))
  levels_above=""
  if [[ -n "$tested_up_to" ]] && ((${#levels[@]} > tested_count)); then
    levels_above="$tested_up_to"
    echo "   kernels of the levels $tested_up_to includes were tested under the previous CPU model"
  fi
  if ((${#levels[@]} > 0)); then
    tested_up_to="${levels[-1]}"
    tested_count=${#levels[@]}
  fi
  junit=()
  [[ -z "${OCTET_JUNIT_DIR:-}" ]] ||
    junit=(--output-junit "$OCTET_JUNIT_DIR/arm-$cpu.xml" --test-output-size-passed 1048576)
  if ! OCTET_TEST_LEVELS_ABOVE="$levels_above" QEMU_CPU="$cpu" \
    ctest --test-dir "$TEST_DIR" --output-on-failure -j "$JOBS" "${junit[@]}" "${CTEST_ARGS[@]}"; then
    echo "== [arm] tests FAILED under -cpu $cpu"
    status=1
  fi
  step_done "tests (-cpu $cpu)"
done

if ((CLANG)); then
  command -v clang++-14 >/dev/null || die "--clang needs clang++-14 (Debian: apt-get install clang-14)"
  cpu="${CPUS[${#CPUS[@]}-1]}"
  step "clang++-14 build of the microkernel tests ($BUILD-clang), run under -cpu $cpu"
  cmake -S "$ROOT" -B "$BUILD-clang" -G Ninja --toolchain "$ROOT/cmake/aarch64-linux-gnu.cmake" \
    -DOCTET_ARM_CLANG=clang++-14 -DCMAKE_BUILD_TYPE=Release -DOCTET_BUILD_BENCH=OFF \
    -DOCTET_ARM_SYSROOT="$BUILD/sysroot" -DOCTET_QEMU_CPU="$cpu" "${launcher[@]}" >/dev/null
  cmake --build "$BUILD-clang" -j "$JOBS" --target octet_simd_tests
  if ! ctest --test-dir "$BUILD-clang/tests/simd" --output-on-failure -j "$JOBS" "${CTEST_ARGS[@]}"; then
    echo "== [arm] clang-built tests FAILED under -cpu $cpu"
    status=1
  fi
  step_done "clang build and tests"
fi

if [[ -n "$MODELS_X86" ]]; then
  step "whole models under qemu (${CPUS[*]})"
  cpu_args=()
  for cpu in "${CPUS[@]}"; do cpu_args+=(--cpu "$cpu"); done
  if ! "$ROOT/tools/arm/model_check.sh" --x86-build "$MODELS_X86" --arm-build "$BUILD" --jobs "$JOBS" "${cpu_args[@]}"; then
    echo "== [arm] model checks FAILED"
    status=1
  fi
  step_done "whole models"
fi
exit $status
