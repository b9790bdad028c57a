#!/usr/bin/env bash
# The full sweep (tests/sweep): every case of every op against ONNX Runtime, checked against the
# reviewed outcomes in tests/sweep/expected.txt; prints a table per op (cases, pass, scalar,
# refused, mismatch, unexpected) and exits non-zero on an unexpected outcome. CI runs a subset
# (ctest -R sweep_ci). About 7 minutes on 2 cores.
#
#   tools/sweep.sh [--write] [--build BUILD] [octet_sweep options: --filter TEXT, -v, --jobs N]
#
#   --write   rewrite tests/sweep/expected.txt with this run's outcomes (review the diff), then
#             regenerate docs/ops.md, whose sweep columns count them
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build"
WRITE=0
ARGS=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --write) WRITE=1; shift ;;
    --build) BUILD="$2"; shift 2 ;;
    *) ARGS+=("$1"); shift ;;
  esac
done
ninja -C "$BUILD" octet_sweep >/dev/null
EXPECT="$ROOT/tests/sweep/expected.txt"
if [[ $WRITE == 1 ]]; then
  "$BUILD/tests/sweep/octet_sweep" --jobs 2 --write-expect "$EXPECT" "${ARGS[@]}" || true
  "$ROOT/tools/catalogue.sh" "$BUILD"
  exit 0
fi
exec "$BUILD/tests/sweep/octet_sweep" --jobs 2 --expect "$EXPECT" "${ARGS[@]}"
