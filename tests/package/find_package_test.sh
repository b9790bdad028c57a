#!/usr/bin/env bash
# What a user of the C++ library does: install octet (the "library" component) into a fresh
# prefix, configure and build examples/classify_image as a separate project with
# find_package(octet), and classify the first Fashion-MNIST test images with the bundled TinyNet:
# each answer must be the image's label (TinyNet, 92.7% accurate, gets these 8 right), and bad
# input must fail with the library's one-line error. Given a PREFIX, uses octet as installed
# there (tests/install/deb_test.sh: the unpacked Debian package) instead.
#
#   find_package_test.sh SOURCE_DIR BUILD_DIR WORK_DIR [PREFIX]
set -euo pipefail
SRC="$1" BUILD="$2" WORK="$3" PREFIX="${4:-}"
FASHION=/usr/share/datasets/fashion-mnist
if [[ ! -f $FASHION/t10k-images-idx3-ubyte.gz ]]; then
  echo "SKIP: Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist)"
  exit 77
fi
rm -rf "$WORK"
mkdir -p "$WORK"
if [[ -z $PREFIX ]]; then
  PREFIX="$WORK/prefix"
  cmake --install "$BUILD" --prefix "$PREFIX" --component library > "$WORK/install.log"
fi
test -f "$PREFIX/include/octet/octet.h"
cmake -S "$SRC/examples/classify_image" -B "$WORK/example" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$PREFIX" > "$WORK/configure.log"
octet_dir="$(sed -n 's/^octet_DIR:PATH=//p' "$WORK/example/CMakeCache.txt")"
[[ $octet_dir == "$PREFIX"/* ]] || { echo "FAIL: find_package(octet) found $octet_dir, not the one in $PREFIX"; exit 1; }
cmake --build "$WORK/example" > "$WORK/build.log"
# The installed header must stand alone: no octet-internal header is reachable from it.
if grep -q '#include "' "$PREFIX/include/octet/octet.h"; then
  echo "FAIL: the installed header includes a project header"
  exit 1
fi

zcat "$FASHION/t10k-images-idx3-ubyte.gz" > "$WORK/images.idx"
zcat "$FASHION/t10k-labels-idx1-ubyte.gz" > "$WORK/labels.idx"
labels=$(head -c 16 "$WORK/labels.idx" | tail -c 8 | od -An -v -tu1)
read -r -a label <<< "$labels"
right=0
for i in $(seq 0 7); do
  pgm="$WORK/image$i.pgm"
  printf 'P5\n28 28\n255\n' > "$pgm"
  head -c $((16 + (i + 1) * 784)) "$WORK/images.idx" | tail -c 784 >> "$pgm"
  answer=$("$WORK/example/classify_image" "$SRC/models/tinynet.onnx" "$pgm" 0.2860 0.3530)
  echo "image $i (label ${label[$i]}): $answer"
  [[ $answer =~ ^class\ ([0-9]+)\  ]] || { echo "FAIL: unexpected output"; exit 1; }
  [[ ${BASH_REMATCH[1]} == "${label[$i]}" ]] && right=$((right + 1))
done
echo "$right of 8 classified as labelled"
# TinyNet is 92.7% accurate; these 8 images are all labelled correctly by octet's CLI as well.
[[ $right == 8 ]] || { echo "FAIL: expected all 8 first test images right"; exit 1; }
echo "a bad image answers with the library's error, exit 1"
printf 'P5\n28 28\n255\n' > "$WORK/short.pgm"
if "$WORK/example/classify_image" "$SRC/models/tinynet.onnx" "$WORK/short.pgm" 0.2860 0.3530; then
  echo "FAIL: a truncated image was accepted"; exit 1
fi
if out=$("$WORK/example/classify_image" "$WORK/missing.onnx" "$WORK/image0.pgm" 0.2860 0.3530 2>&1); then
  echo "FAIL: a missing model was accepted"; exit 1
fi
echo "$out"
[[ $out == classify_image:*missing.onnx* ]] || { echo "FAIL: the error does not name the file"; exit 1; }
echo "PASS"
