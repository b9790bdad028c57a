#!/usr/bin/env bash
# The pip install a user makes, from nothing: `pip wheel` on this source tree with pyproject.toml's
# settings alone (scikit-build-core from PyPI, the whole engine compiled in pip's temporary build
# tree, minutes on 2 cores), the wheel installed into a fresh venv with NumPy from PyPI,
# and its `octet` command and `import octet` checked against a Release build tree's
# (tests/install/wheel_test.sh --from-scratch). CI runs the same check on a wheel built from the
# Release tree's ccache (ctest -R Install.PipWheel); this one also covers pyproject.toml's own
# CMake settings (no tests, no benchmarks).
#
#   tools/install_check.sh [BUILD_DIR]   # default: build (a configured and built Release tree)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
case "${1:-}" in
  -h|--help) sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
BUILD="$(cd "${1:-$ROOT/build}" && pwd)"
[[ -x $BUILD/apps/octet && -d $BUILD/python/octet ]] \
  || { echo "install_check.sh: $BUILD is not a built tree with the Python module (cmake --build $BUILD)" >&2; exit 1; }
exec "$ROOT/tests/install/wheel_test.sh" --from-scratch "$ROOT" "$BUILD" "$BUILD/install_check"
