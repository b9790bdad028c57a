#!/usr/bin/env bash
# Sets up the machine, builds octet (Release) and runs the main job: `octet info` and
# `octet eval --precision both --compare-ort` of the bundled TinyNet: calibrated on 1000
# Fashion-MNIST training images, FP32 and INT8 evaluated on the 10,000 test images, with ONNX
# Runtime running the same FP32 and QDQ models side by side (accuracy, agreement, latency).
#
#   tools/quickstart.sh                  # TinyNet on Fashion-MNIST
#   tools/quickstart.sh models/resnet8.onnx
#   tools/quickstart.sh my.onnx --data images:my_pictures/ --calib images:my_calibration/
#                                        # any extra flags go to octet eval
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/tools/setup.sh"
cmake -S "$ROOT" -B "$ROOT/build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$ROOT/build" -j "$(nproc)" --target octet
OCTET="$ROOT/build/apps/octet"

default="$ROOT/models/tinynet.onnx"
[[ -f "$default" ]] || default="$ROOT/models/resnet8.onnx"
model="${1:-$default}"
shift || true

echo "== octet info $model"
"$OCTET" info "$model"
echo
echo "== octet eval $model --precision both --compare-ort $*"
"$OCTET" eval "$model" --precision both --compare-ort "$@"
