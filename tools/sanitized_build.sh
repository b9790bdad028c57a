#!/usr/bin/env bash
# Configures and builds octet's sanitizer tree: clang-14 with AddressSanitizer +
# UndefinedBehaviorSanitizer (and libFuzzer's coverage instrumentation, outside the kernels and the
# programs), -O1 with line tables.
# The test suites and the libFuzzer targets (tests/fuzz) share this one tree, so CI compiles
# the sources once for both (tools/test.sh runs the suites, tools/fuzz.sh the fuzzers).
#
#   tools/sanitized_build.sh DIR [TARGET...]   # every target when none is named
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
(($# >= 1)) || { echo "usage: tools/sanitized_build.sh DIR [TARGET...]" >&2; exit 2; }
BUILD="$1"
shift
command -v clang++-14 > /dev/null || { echo "sanitized_build: clang++-14 is missing: apt-get install clang-14 libclang-rt-14-dev" >&2; exit 1; }
FLAGS="-O1 -gline-tables-only -DNDEBUG"
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="$FLAGS" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$FLAGS" \
  -DOCTET_SANITIZE=ON -DOCTET_FUZZ=ON -DOCTET_BUILD_BENCH=OFF -DCMAKE_UNITY_BUILD=ON > /dev/null
if (($# > 0)); then
  cmake --build "$BUILD" -j "$(nproc)" --target "$@"
else
  cmake --build "$BUILD" -j "$(nproc)"
fi
