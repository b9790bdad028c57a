#!/usr/bin/env bash
# The dynamic quantization table: for each model, its FP32 file, octet's static INT8 export (QDQ,
# minmax, per-channel weights) and its dynamic export (`octet quantize --mode dynamic`, the graph
# onnxruntime's quantize_dynamic writes), each run by octet and by ONNX Runtime (build/bench/
# model_bench: interleaved rounds, one thread, pinned), batch 1 and 64; then octet's per-layer
# split of the dynamic time (`octet run --profile`: range pass, quantize pass, integer GEMM with
# its float epilogue). Writes bench/dynamic_results.md (or --out) and prints it.
#
#   bench/run_dynamic_bench.sh [--build DIR] [--rounds N] [--batches 1,64] [--out FILE]
#
# Models: the MLPerf Tiny ResNet8 (../shared/models, calibrated on ../shared/data/cifar10's
# calibration subset), the bundled TinyNet (Fashion-MNIST training images) and the zoo's
# mobilenet_v2_035_cifar (out/zoo, tools/zoo/export.py; calib.npy). A model whose files are
# missing is skipped with a message. About 3 minutes with the defaults. Files: out/dynamic-bench/.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build"
ROUNDS=3
BATCHES="1,64"
OUT_MD="$ROOT/bench/dynamic_results.md"
SHARED="$ROOT/../shared"
PY="${PYTHON:-python3}"

die() { echo "run_dynamic_bench: $*" >&2; exit 1; }
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }
while (($#)); do
  case "$1" in
    --build) BUILD="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --batches) BATCHES="$2"; shift 2 ;;
    --out) OUT_MD="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
  esac
done
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "--rounds must be a positive integer, got '$ROUNDS'"
[[ "$BATCHES" =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "--batches must be positive integers separated by commas"
OCTET="$BUILD/apps/octet"
BENCH="$BUILD/bench/model_bench"
for f in "$OCTET" "$BENCH"; do
  [[ -x "$f" ]] || die "$f is missing: build first (cmake -S $ROOT -B $BUILD -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build $BUILD)"
done
RUN_DIR="$ROOT/out/dynamic-bench"
mkdir -p "$RUN_DIR"
LOG="$RUN_DIR/run.log"
: > "$LOG"
IFS=',' read -r -a BATCH_LIST <<< "$BATCHES"

# name | FP32 model | static calibration spec
MODELS=(
  "resnet8|$SHARED/models/resnet8_cifar10_fp32.onnx|cifar10:$SHARED/data/cifar10/calib_subset.bin"
  "tinynet|$ROOT/models/tinynet.onnx|fashion-mnist:train"
  "mobilenet_v2_035_cifar|$ROOT/out/zoo/mobilenet_v2_035_cifar/model.onnx|npy:$ROOT/out/zoo/mobilenet_v2_035_cifar/calib.npy"
)
DONE=()
start=$SECONDS
for entry in "${MODELS[@]}"; do
  IFS='|' read -r name fp32 calib <<< "$entry"
  if [[ ! -f "$fp32" ]]; then
    echo "run_dynamic_bench: skipping $name: $fp32 is missing" >&2
    continue
  fi
  echo "[$name] quantizing (static and dynamic)" >&2
  static="$RUN_DIR/${name}_static.onnx"
  dynamic="$RUN_DIR/${name}_dynamic.onnx"
  "$OCTET" quantize "$fp32" -o "$static" --calib "$calib" --calib-count 256 --no-progress > "$RUN_DIR/${name}_static.txt" 2>&1 ||
    die "static quantization of $name failed: $(tail -n 1 "$RUN_DIR/${name}_static.txt")"
  "$OCTET" quantize "$fp32" -o "$dynamic" --mode dynamic --no-progress > "$RUN_DIR/${name}_dynamic.txt" 2>&1 ||
    die "dynamic quantization of $name failed: $(tail -n 1 "$RUN_DIR/${name}_dynamic.txt")"
  for batch in "${BATCH_LIST[@]}"; do
    iters=$((batch == 1 ? 200 : 10))
    echo "[$name] batch $batch: model_bench, $ROUNDS rounds x $iters runs" >&2
    "$BENCH" "$fp32" "$static" "$dynamic" --batch "$batch" --iters "$iters" --rounds "$ROUNDS" --threads 1 \
      --json "$RUN_DIR/${name}_b${batch}.json" >> "$LOG" 2>&1 || die "model_bench failed on $name (see $LOG)"
  done
  "$OCTET" run "$dynamic" --random --profile > "$RUN_DIR/${name}_profile.txt" 2>&1 || die "octet run --profile failed on $name"
  DONE+=("$name")
done
((${#DONE[@]})) || die "no model to run"

header=$(grep -m1 '^octet (' "$LOG" | sed 's/ — .*//' || true)
cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1)
"$PY" - "$OUT_MD" "$RUN_DIR" "$ROUNDS" "$BATCHES" "$header" "$(date -u +%Y-%m-%d)" "$(nproc) x ${cpu:-unknown CPU}" "${DONE[@]}" <<'EOF'
import json, os, re, sys
out, run_dir, rounds, batches, header, day, cpus = sys.argv[1:8]
names = sys.argv[8:]
lines = [f"# Dynamic quantization: octet vs ONNX Runtime ({day})", "",
         f"`bench/run_dynamic_bench.sh --rounds {rounds} --batches {batches}`: {header or 'model_bench'}, pinned, on {cpus}. "
         "Median ms per image over the rounds. *static*: octet's QDQ export (minmax, per-channel int8 weights, uint8 "
         "activations, 256 calibration images); *dynamic*: `octet quantize --mode dynamic` (DynamicQuantizeLinear + "
         "ConvInteger / MatMulInteger + Cast + Mul + Add, per-tensor int8 weights: the graph of onnxruntime's "
         "quantize_dynamic). ORT runs the same three files.", "",
         "| model | batch | octet FP32 | octet static | octet dynamic | ORT FP32 | ORT static | ORT dynamic | "
         "dynamic octet/ORT | octet dynamic/FP32 | octet dynamic/static |",
         "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
for name in names:
    for batch in batches.split(","):
        path = os.path.join(run_dir, f"{name}_b{batch}.json")
        if not os.path.exists(path):
            continue
        rows = json.load(open(path))
        kind = lambda r: "dynamic" if r["model"].endswith("_dynamic.onnx") else "static" if r["model"].endswith("_static.onnx") else "fp32"
        by = {kind(r): r for r in rows}
        o = {k: by[k]["median_octet_ms"] for k in by}
        t = {k: by[k]["median_ort_ms"] for k in by}
        lines.append(f"| {name} | {batch} | {o['fp32']:.3f} | {o['static']:.3f} | {o['dynamic']:.3f} | {t['fp32']:.3f} | "
                     f"{t['static']:.3f} | {t['dynamic']:.3f} | **{by['dynamic']['median_ratio']:.3f}** | "
                     f"**{o['dynamic'] / o['fp32']:.2f}** | {o['dynamic'] / o['static']:.2f} |")
lines += ["", "## Where octet's dynamic time goes (batch 1, `octet run M_dynamic.onnx --random --profile`)", "",
          "The range and quantize passes are the DynamicQuantizeLinear feeding each layer (counted once where "
          "several layers read one); the GEMM column includes the int32 -> float epilogue fused into its store.", "",
          "| model | range us | quantize us | GEMM + float epilogue us | total us | range + quantize share |",
          "|---|---:|---:|---:|---:|---:|"]
for name in names:
    text = open(os.path.join(run_dir, f"{name}_profile.txt")).read()
    m = re.search(r"^\s*all layers\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)%", text, re.M)
    if m:
        lines.append(f"| {name} | {m.group(1)} | {m.group(2)} | {m.group(3)} | {m.group(4)} | {m.group(5)}% |")
text = "\n".join(lines) + "\n"
tmp = out + ".tmp"
with open(tmp, "w") as f:
    f.write(text)
os.replace(tmp, out)
print(text)
EOF
echo "run_dynamic_bench: wrote $OUT_MD ($(((SECONDS - start) / 60)) min $(((SECONDS - start) % 60)) s)" >&2
