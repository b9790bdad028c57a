#!/usr/bin/env bash
# Regenerates docs/ops.md, the operator catalogue, from the engine (tools/catalogue/): builds
# octet_catalogue in BUILD (default build/, configured with the tests) and writes the file.
# ctest -R ops_catalogue fails while the committed file differs from what this writes.
#
#   tools/catalogue.sh [BUILD]          write docs/ops.md
#   tools/catalogue.sh --here [BUILD]   print the catalogue probed at every level this CPU runs
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HERE=0
if [[ "${1:-}" == "--here" ]]; then HERE=1; shift; fi
BUILD="${1:-$ROOT/build}"
ninja -C "$BUILD" octet_catalogue >/dev/null
BIN="$BUILD/tests/catalogue_tool/octet_catalogue"
if [[ $HERE == 1 ]]; then
  exec "$BIN" --here --sweep-expect "$ROOT/tests/sweep/expected.txt"
fi
"$BIN" -o "$ROOT/docs/ops.md" --sweep-expect "$ROOT/tests/sweep/expected.txt"
echo "wrote docs/ops.md (review the diff: git diff docs/ops.md)"
