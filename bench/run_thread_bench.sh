#!/usr/bin/env bash
# 1 vs 2 threads over the zoo, FP32, static INT8 and dynamic INT8, batch 1: whole-run times and,
# per model, the steps that lose the most time at 2 threads (bench/thread_bench.py). With
# --before, a second octet binary (e.g. main's) is timed in the same rounds, so the before and
# after columns see the same machine load. Writes bench/threads_results.md (or --out).
#
#   bench/run_thread_bench.sh [--build DIR] [--zoo DIR] [--before OCTET] [--only a,b] [--rounds N]
#                             [--threads N] [--precisions fp32,int8,dynamic] [--out FILE]
#
# About 10 s per model and precision per binary with 5 rounds (~10 min for the zoo, 2 binaries).
# JSON: out/thread-bench.json. The zoo (default out/zoo, else BUILD/zoo): tools/zoo/export.py (model.onnx, model_int8.onnx,
# model_dynamic.onnx per model).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build"
ZOO=""
BEFORE=""
ONLY=""
ROUNDS=5
THREADS=2
OUT="$ROOT/bench/threads_results.md"
PRECISIONS="fp32,int8,dynamic"
PY="${PYTHON:-python3}"

die() { echo "run_thread_bench: $*" >&2; exit 1; }
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }

while (($#)); do
  case "$1" in
    --build) BUILD="$2"; shift 2 ;;
    --zoo) ZOO="$2"; shift 2 ;;
    --before) BEFORE="$2"; shift 2 ;;
    --only) ONLY="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --threads) THREADS="$2"; shift 2 ;;
    --precisions) PRECISIONS="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
  esac
done
if [[ -z "$ZOO" ]]; then  # tools/zoo/export.py's out/zoo, else a zoo next to the build
  ZOO="$ROOT/out/zoo"
  [[ -f "$ZOO/zoo.json" ]] || ZOO="$BUILD/zoo"
fi
[[ -x "$BUILD/apps/octet" ]] || die "$BUILD/apps/octet is missing: build the octet target first"
[[ -f "$ZOO/zoo.json" ]] || die "$ZOO/zoo.json is missing: run tools/zoo/export.py first (or pass --zoo)"
args=(--zoo "$ZOO" --rounds "$ROUNDS" --threads "$THREADS" --precisions "$PRECISIONS" --json "$ROOT/out/thread-bench.json")
mkdir -p "$ROOT/out"
[[ -n "$ONLY" ]] && args+=(--only "$ONLY")
if [[ -n "$BEFORE" ]]; then
  [[ -x "$BEFORE" ]] || die "--before $BEFORE is not an executable octet binary"
  args+=(--octet "before=$BEFORE")
fi
args+=(--octet "after=$BUILD/apps/octet")
body=$("$PY" "$ROOT/bench/thread_bench.py" "${args[@]}")
{
  echo "# octet on 1 vs $THREADS threads over the zoo"
  echo
  echo "Written by \`bench/run_thread_bench.sh${BEFORE:+ --before OCTET} --rounds $ROUNDS${ONLY:+ --only $ONLY} --precisions $PRECISIONS\`."
  echo
  echo "$body"
} > "$OUT"
cat "$OUT"
