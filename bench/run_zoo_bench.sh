#!/usr/bin/env bash
# The zoo table: octet vs ONNX Runtime on every model of out/zoo (tools/zoo/export.py), FP32 and
# INT8 (octet's own QDQ export: minmax, per-channel int8 weights, uint8 activations, calibrated on
# the zoo's calib.npy), batch 1 and 64, one thread, pinned, interleaved rounds (build/bench/model_bench).
# Quantizes a model first when its model_int8.onnx is missing. Writes the markdown table to
# bench/zoo_results.md (or --out) and prints it; progress on stderr.
#
#   bench/run_zoo_bench.sh [--build DIR] [--zoo DIR] [--only NAME,...] [--rounds N] [--batches 1,64]
#                          [--out FILE] [--isa LEVEL]
#
# Timed runs per round are chosen per model from its MACs (octet info): one timed block of ~0.6 s
# at batch 1 and ~3 s at batch 64 at 50 GMAC/s (octet's FP32 on one Zen 4 core: 40-60), at most
# 200 MB of repeated input for ORT's runner; model_bench adds 5 warm-up runs per engine and round.
# Estimated ~25 min for the whole zoo with the default 5 rounds on this project's 2-vCPU VMs
# (resnet50 at batch 64 alone ~6 min): run it on a quiet machine. JSON and logs: out/zoo-bench/.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build"
ZOO="$ROOT/out/zoo"
ONLY=""
ROUNDS=5
BATCHES="1,64"
OUT_MD="$ROOT/bench/zoo_results.md"
ISA=""
PY="${PYTHON:-python3}"

die() { echo "run_zoo_bench: $*" >&2; exit 1; }
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }

while (($#)); do
  case "$1" in
    --build) BUILD="$2"; shift 2 ;;
    --zoo) ZOO="$2"; shift 2 ;;
    --only) ONLY="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --batches) BATCHES="$2"; shift 2 ;;
    --out) OUT_MD="$2"; shift 2 ;;
    --isa) ISA="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
  esac
done
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "--rounds must be a positive integer, got '$ROUNDS'"
[[ "$BATCHES" =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "--batches must be positive integers separated by commas, got '$BATCHES'"
command -v "$PY" > /dev/null || die "$PY not found (needed to read zoo.json and model_bench's JSON)"

OCTET="$BUILD/apps/octet"
BENCH="$BUILD/bench/model_bench"
MANIFEST="$ZOO/zoo.json"
[[ -f "$MANIFEST" ]] || die "$MANIFEST is missing: run /usr/bin/python3 tools/zoo/export.py first"
for f in "$OCTET" "$BENCH"; do
  [[ -x "$f" ]] || die "$f is missing: build first (cmake -S $ROOT -B $BUILD -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build $BUILD)"
done

# The models of the manifest, in its order, filtered by --only (unknown names are an error).
names=$("$PY" - "$MANIFEST" "$ONLY" <<'EOF'
import json, sys
names = [m["name"] for m in json.load(open(sys.argv[1]))["models"]]
only = [n for n in sys.argv[2].split(",") if n]
unknown = [n for n in only if n not in names]
if unknown:
    sys.exit(f"run_zoo_bench: not in the zoo: {', '.join(unknown)} (zoo.json has {', '.join(names)})")
print("\n".join(n for n in names if not only or n in only))
EOF
) || exit 1
mapfile -t MODELS <<< "$names"
((${#MODELS[@]})) || die "no model to run"
IFS=',' read -r -a BATCH_LIST <<< "$BATCHES"

RUN_DIR="$(dirname "$ZOO")/$(basename "$ZOO")-bench"
mkdir -p "$RUN_DIR"
LOG="$RUN_DIR/run.log"
: > "$LOG"
echo "run_zoo_bench: ${#MODELS[@]} model(s), batches ${BATCHES}, $ROUNDS round(s); JSON and logs in $RUN_DIR" >&2

# Timed runs per engine and round for a model of MACS multiply-adds per image at batch B, with
# IMAGE_BYTES per float32 input image (model_bench hands ORT's runner iters x batch images).
iters_for() {  # macs batch image_bytes
  "$PY" -c '
import sys
macs, batch, image_bytes = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
est_ms = max(macs / 50e6, 0.02) * batch          # ~50 GMAC/s, one thread
target_ms = 600 if batch == 1 else 3000
cap = min(200 if batch == 1 else 20, max(1, int(200e6 // (batch * image_bytes))))
print(max(1, min(cap, round(target_ms / est_ms))))' "$1" "$2" "$3"
}

ISA_ARGS=()
[[ -n "$ISA" ]] && ISA_ARGS=(--isa "$ISA")
FAILED=()
start=$SECONDS
for i in "${!MODELS[@]}"; do
  name="${MODELS[$i]}"
  dir="$ZOO/$name"
  fp32="$dir/model.onnx"
  int8="$dir/model_int8.onnx"
  echo "[$((i + 1))/${#MODELS[@]}] $name ($(((SECONDS - start) / 60)) min so far)" >&2
  [[ -f "$fp32" ]] || die "$fp32 is missing: run /usr/bin/python3 tools/zoo/export.py --only $name"
  models=("$fp32")
  if [[ ! -f "$int8" ]]; then
    [[ -f "$dir/calib.npy" ]] || die "$dir/calib.npy is missing: run /usr/bin/python3 tools/zoo/export.py --calib-only --only $name"
    echo "  quantizing -> $int8" >&2
    if ! "$OCTET" quantize "$fp32" -o "$int8" --calib "npy:$dir/calib.npy" --calib-count 32 --no-progress \
        > "$RUN_DIR/${name}_quantize.txt" 2>&1; then
      echo "  quantize failed: $(tail -n 1 "$RUN_DIR/${name}_quantize.txt"); INT8 rows skipped" >&2
      FAILED+=("$name: quantize: $(tail -n 1 "$RUN_DIR/${name}_quantize.txt")")
    fi
  fi
  [[ -f "$int8" ]] && models+=("$int8")
  read -r macs image_bytes < <("$OCTET" info "$fp32" --json | "$PY" -c '
import json, math, sys
j = json.load(sys.stdin)
print(j["total_macs"], 4 * math.prod(int(d) for d in j["inputs"][0]["shape"][1:]))')
  for batch in "${BATCH_LIST[@]}"; do
    iters=$(iters_for "$macs" "$batch" "$image_bytes")
    json="$RUN_DIR/${name}_b${batch}.json"
    rm -f "$json"
    echo "  batch $batch: $iters timed runs per engine and round" >&2
    if ! "$BENCH" "${models[@]}" --batch "$batch" --iters "$iters" --rounds "$ROUNDS" --threads 1 "${ISA_ARGS[@]}" \
        --json "$json" 2>&1 >> "$LOG" | tee -a "$LOG" | sed 's/^/    /' >&2; then
      echo "  model_bench failed at batch $batch (see $LOG)" >&2
      FAILED+=("$name: model_bench at batch $batch failed (see $LOG)")
    fi
  done
done

# The table, from every JSON of this run.
header=$(grep -m1 '^octet (' "$LOG" | sed 's/ — .*//' || true)
cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1)
"$PY" - "$OUT_MD" "$RUN_DIR" "$ROUNDS" "$header" "$(date -u +%Y-%m-%d)" "$(nproc) x ${cpu:-unknown CPU}" "${BATCHES}" \
    "${MODELS[@]}" <<'EOF'
import json, os, sys
out, run_dir, rounds, header, day, cpus, batches = sys.argv[1:8]
models = sys.argv[8:]
rows = []
for name in models:
    for batch in batches.split(","):
        path = os.path.join(run_dir, f"{name}_b{batch}.json")
        if not os.path.exists(path):
            continue
        for r in json.load(open(path)):
            precision = "INT8" if r["model"].endswith("_int8.onnx") else "FP32"
            lo, hi = min(r["ratio"]), max(r["ratio"])
            rows.append(f"| {name} | {precision} | {r['batch']} | {r['median_octet_ms']:.3f} | {r['median_ort_ms']:.3f} | "
                        f"**{r['median_ratio']:.3f}** ({lo:.3f}–{hi:.3f}) |")
lines = [f"# octet vs ONNX Runtime on the zoo ({day})", "",
         f"`bench/run_zoo_bench.sh --rounds {rounds} --batches {batches}`: {header or 'model_bench'}, pinned, "
         f"on {cpus}. Median ms per image over {rounds} interleaved round(s); the ratio is octet/ORT "
         "(median of the per-round ratios, range in brackets; < 1: octet faster). INT8 is octet's own QDQ export "
         "(minmax, per-channel int8 weights, uint8 activations, 32 calib.npy images); ORT runs the same file.", "",
         "| model | precision | batch | octet ms/image | ORT ms/image | ratio (range) |",
         "|---|---|---:|---:|---:|---:|"] + rows
text = "\n".join(lines) + "\n"
tmp = out + ".tmp"
with open(tmp, "w") as f:
    f.write(text)
os.replace(tmp, out)
print(text)
EOF
if ((${#FAILED[@]})); then
  echo "run_zoo_bench: ${#FAILED[@]} problem(s):" >&2
  printf '  %s\n' "${FAILED[@]}" >&2
fi
echo "run_zoo_bench: wrote $OUT_MD ($(((SECONDS - start) / 60)) min $(((SECONDS - start) % 60)) s)" >&2
((${#FAILED[@]} == 0))
