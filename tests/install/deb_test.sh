#!/usr/bin/env bash
# What a Debian user gets from `cpack -G DEB` in this Release tree: the package's metadata (its
# Depends computed by dpkg-shlibdeps), its files where Debian keeps them, and, unpacked into a
# temporary root, the octet command and the Python module answering as the tree's own do
# (check_install.py), and a separate project (examples/classify_image) built against it with
# find_package(octet) (tests/package/find_package_test.sh).
#
#   deb_test.sh SOURCE_DIR BUILD_DIR WORK_DIR PYTHON
set -euo pipefail
SRC="$1" BUILD="$2" WORK="$3" PYTHON="$4"
rm -rf "$WORK"
mkdir -p "$WORK"
start=$SECONDS
cpack -G DEB --config "$BUILD/CPackConfig.cmake" -B "$WORK/cpack" > "$WORK/cpack.log" 2>&1 \
  || { cat "$WORK/cpack.log"; echo "FAIL: cpack"; exit 1; }
debs=("$WORK"/cpack/octet_*.deb)
deb="${debs[0]}"
echo "cpack: $(basename "$deb") in $((SECONDS - start)) s"
dpkg-deb -f "$deb" Package Version Architecture Section Maintainer Depends
depends="$(dpkg-deb -f "$deb" Depends)"
# The runtime libraries of the command, liboctet.so and the module, and what the module imports.
for lib in libprotobuf libonnx libfmt libcpuinfo libpthreadpool libcpp-httplib; do
  [[ $depends =~ (^|, )$lib[0-9] ]] || { echo "FAIL: Depends lacks $lib"; exit 1; }
done
[[ $depends == *python3-numpy* ]] || { echo "FAIL: Depends lacks python3-numpy"; exit 1; }
version="$(sed -n 's/^CMAKE_PROJECT_VERSION:[A-Z]*=//p' "$BUILD/CMakeCache.txt")"
[[ "$(dpkg-deb -f "$deb" Version)" == "$version" ]] || { echo "FAIL: the package's version is not $version"; exit 1; }

root="$WORK/root"
dpkg-deb -x "$deb" "$root"
for file in usr/bin/octet usr/include/octet/octet.h usr/lib/liboctet.so "usr/lib/liboctet.so.$version" \
            usr/lib/cmake/octet/octetConfig.cmake usr/lib/python3/dist-packages/octet/__init__.py; do
  [[ -e "$root/$file" ]] || { echo "FAIL: the package has no /$file"; exit 1; }
done
compgen -G "$root/usr/lib/python3/dist-packages/octet/_octet.*.so" > /dev/null \
  || { echo "FAIL: the package has no extension module"; exit 1; }
echo "files: $(dpkg-deb -c "$deb" | grep -vc '/$') (/usr/bin/octet, liboctet.so + header + CMake package, the module)"

"$PYTHON" "$SRC/tests/install/check_install.py" --build "$BUILD" --work "$WORK/check" --cli "$root/usr/bin/octet" \
  --python "$PYTHON" --pythonpath "$root/usr/lib/python3/dist-packages" \
  --package-under "$root/usr/lib/python3/dist-packages"

echo "find_package(octet) from the unpacked package:"
"$SRC/tests/package/find_package_test.sh" "$SRC" "$BUILD" "$WORK/consumer" "$root/usr" | tail -n 4
echo "PASS ($((SECONDS - start)) s)"
