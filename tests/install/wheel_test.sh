#!/usr/bin/env bash
# What a pip user gets: `pip wheel` on this source tree (pyproject.toml: scikit-build-core from
# PyPI in pip's isolated build environment, CMake, the tree's Debian libraries), the wheel's
# contents, and the wheel installed with NumPy from PyPI into a fresh venv without the system's
# site packages, whose `octet` command and `import octet` must answer as the build tree's do
# (check_install.py), run from outside the source tree.
#
#   wheel_test.sh [--from-scratch] SOURCE_DIR BUILD_DIR WORK_DIR
#
# --from-scratch (tools/install_check.sh): the wheel exactly as `pip install .` builds it for a
# user, pyproject.toml's settings only, in pip's temporary build tree: it compiles the whole
# engine (docs/usage.md says how long). Without it, the wheel reuses the tree's compiles through
# ccache: its CMake tree is configured as the build tree is (compilers, ccache launcher, unity
# build, bench/ on or off, which decides the module's peak loops) and lies next to it
# (BUILD_DIR-wheel), so that every path a compile command names, taken relative to
# CCACHE_BASEDIR, is the one the tree compiled with. tools/test.sh configures its Release tree
# that way; the count of compiles ccache did not answer is printed. One always misses: the
# module's, since pybind11 comes from PyPI here (Debian's in the tree): most of this test's time.
set -euo pipefail
scratch=0
if [[ ${1:-} == --from-scratch ]]; then scratch=1; shift; fi
SRC="$1" BUILD="$2" WORK="$3"
cache() { sed -n "s/^$1:[A-Z]*=//p" "$BUILD/CMakeCache.txt"; }
PYTHON="$(cache Python3_EXECUTABLE)"
VERSION="$(cache CMAKE_PROJECT_VERSION)"
WHEEL_BUILD="$BUILD-wheel"
rm -rf "$WORK"
((scratch == 1)) || rm -rf "$WHEEL_BUILD"
mkdir -p "$WORK"
start=$SECONDS

"$PYTHON" -m venv "$WORK/venv"
pip=("$WORK/venv/bin/python" -m pip --no-input --disable-pip-version-check)
settings=()
if ((scratch == 0)); then
  settings+=(--config-settings=build-dir="$WHEEL_BUILD")
  for var in CMAKE_C_COMPILER CMAKE_CXX_COMPILER CMAKE_C_COMPILER_LAUNCHER CMAKE_CXX_COMPILER_LAUNCHER \
             CMAKE_UNITY_BUILD OCTET_BUILD_BENCH; do
    settings+=(--config-settings="cmake.define.$var=$(cache "$var")")
  done
fi
export CCACHE_STATSLOG="$WORK/ccache-stats.log"
if ! "${pip[@]}" wheel "$SRC" --no-deps -w "$WORK/dist" ${settings[@]+"${settings[@]}"} > "$WORK/wheel.log" 2>&1; then
  tail -n 40 "$WORK/wheel.log"
  echo "FAIL: pip wheel"
  exit 1
fi
wheels=("$WORK"/dist/octet-"$VERSION"-*.whl)
[[ -f ${wheels[0]} ]] || { ls "$WORK/dist"; echo "FAIL: no octet-$VERSION wheel"; exit 1; }
wheel="${wheels[0]}"
built="pip wheel: $(basename "$wheel") in $((SECONDS - start)) s"
if ((scratch == 0)); then
  compiles=$(grep -c '^# ' "$CCACHE_STATSLOG" 2>/dev/null || true)
  misses=$(grep -c '^cache_miss' "$CCACHE_STATSLOG" 2>/dev/null || true)
  built+=", ${compiles:-0} compiles, ${misses:-0} of them not in ccache"
  if ((${misses:-0} > 5)); then
    built+=" (was the tree built through ccache with CCACHE_BASEDIR over the sources and both trees?)"
  fi
fi
echo "$built"

# The package, its extension and the command; not the C++ library's files.
contents="$("$WORK/venv/bin/python" -m zipfile -l "$wheel" | awk 'NR > 1 { print $1 }')"
echo "$contents" | sed 's/^/  /'
for want in '^octet/__init__\.py$' '^octet/_octet\..*\.so$' "^octet-$VERSION\\.data/scripts/octet$"; do
  grep -q "$want" <<< "$contents" || { echo "FAIL: the wheel has no $want"; exit 1; }
done
if grep -qE '(^|/)(include|lib|cmake)/' <<< "$contents"; then
  echo "FAIL: the wheel carries the C++ library's files"; exit 1
fi

step=$SECONDS
if ! "${pip[@]}" install "$wheel" > "$WORK/install.log" 2>&1; then
  cat "$WORK/install.log"; echo "FAIL: pip install"; exit 1
fi
echo "pip install: $(grep '^Successfully installed' "$WORK/install.log") in $((SECONDS - step)) s"
# On PATH as a user has it after `source venv/bin/activate`.
found="$(PATH="$WORK/venv/bin:$PATH" command -v octet)"
[[ $found == "$WORK/venv/bin/octet" ]] || { echo "FAIL: octet on PATH is $found"; exit 1; }
site="$("$WORK/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')"
"$PYTHON" "$SRC/tests/install/check_install.py" --build "$BUILD" --work "$WORK/check" --cli "$found" \
  --python "$WORK/venv/bin/python" --package-under "$site" --version "$VERSION"
echo "PASS ($((SECONDS - start)) s)"
