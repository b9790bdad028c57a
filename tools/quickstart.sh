#!/usr/bin/env bash
# Sets up the machine, builds octet (Release) and runs the main job on the default model:
# `octet info` and an FP32 `octet run`, checked against ONNX Runtime on the same input.
#
# Default model: the MLPerf Tiny ResNet8 in ../shared/models when it is there (with a batch
# of real CIFAR-10 test images); otherwise a CNN from the ONNX test suite (libonnx-testdata)
# on random input. Pass a model path to use your own: tools/quickstart.sh model.onnx
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/tools/setup.sh"
cmake -S "$ROOT" -B "$ROOT/build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$ROOT/build" -j "$(nproc)" --target octet
OCTET="$ROOT/build/tools/octet"

model="${1:-}"
random_range=(0 1)
if [[ -z "$model" ]]; then
  if [[ -f "$ROOT/../shared/models/resnet8_cifar10_fp32.onnx" ]]; then
    model="$ROOT/../shared/models/resnet8_cifar10_fp32.onnx"
    random_range=(0 255)  # this model takes raw pixel values
  else
    model=/usr/share/libonnx-testdata/data/pytorch-converted/test_Conv2d_groups/model.onnx
  fi
fi

echo "== octet info $model"
"$OCTET" info "$model"

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
echo
echo "== octet run (batch 4, random input, seed 1)"
"$OCTET" run "$model" --random --random-range "${random_range[@]}" --batch 4 --top 3 \
  --save-inputs "$out/in" --output-dir "$out/octet"

echo
echo "== the same input through ONNX Runtime"
args=()
for f in "$out"/in/*.npy; do args+=(--input "$(basename "$f" .npy)=$f"); done
node "$ROOT/tools/ort/ort_run.mjs" --model "$model" "${args[@]}" --output-dir "$out/ort"
"$OCTET" compare "$out/octet" "$out/ort"
