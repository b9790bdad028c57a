#!/usr/bin/env bash
# The issue-5 whole-model table: octet vs ONNX Runtime, FP32 and INT8 (QDQ, minmax,
# per-channel, uint8 activations), batch 1 and 128, one thread, pinned, interleaved rounds.
# INT8 models are quantized into out/bench-models/ first (kept between runs).
#
#   bench/run_model_bench.sh [build-dir] [extra model_bench options, e.g. --rounds 9]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
shift || true
OCTET="$BUILD/apps/octet"
BENCH="$BUILD/bench/model_bench"
OUT="$ROOT/out/bench-models"
SHARED="$ROOT/../shared"
mkdir -p "$OUT"
for f in "$OCTET" "$BENCH"; do
  [[ -x "$f" ]] || { echo "run_model_bench: $f is missing; build first (cmake --build $BUILD)" >&2; exit 1; }
done

quantize() {  # model output [octet quantize options]
  local model="$1" out="$2"
  shift 2
  [[ -f "$out" ]] && return 0
  echo "quantizing $model -> $out" >&2
  "$OCTET" quantize "$model" -o "$out" --no-progress "$@" > /dev/null
}

models_fp32=("$ROOT/models/tinynet.onnx" "$ROOT/models/resnet8.onnx")
models_int8=("$OUT/tinynet_int8.onnx" "$OUT/resnet8_int8.onnx")
quantize "$ROOT/models/tinynet.onnx" "$OUT/tinynet_int8.onnx"
quantize "$ROOT/models/resnet8.onnx" "$OUT/resnet8_int8.onnx"
MLPERF="$SHARED/models/resnet8_cifar10_fp32.onnx"
if [[ -f "$MLPERF" ]]; then
  quantize "$MLPERF" "$OUT/resnet8_mlperf_int8.onnx" --calib "cifar10:$SHARED/data/cifar10/calib_subset.bin"
  models_fp32+=("$MLPERF")
  models_int8+=("$OUT/resnet8_mlperf_int8.onnx")
else
  echo "run_model_bench: $MLPERF not found; the MLPerf ResNet8 rows are skipped" >&2
fi

for batch in 1 128; do
  iters=200
  ((batch > 1)) && iters=10
  echo "== batch $batch"
  "$BENCH" "${models_fp32[@]}" "${models_int8[@]}" --batch "$batch" --iters "$iters" --json "$OUT/model_bench_b$batch.json" "$@"
done
