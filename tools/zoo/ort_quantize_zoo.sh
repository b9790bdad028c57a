#!/usr/bin/env bash
# Quantizes every model of an exported zoo with ONNX Runtime's own tool (tools/ort/ort_quantize.py
# --preprocess: quant_pre_process, then quantize_static QDQ and QOperator and quantize_dynamic)
# into ZOO/NAME/ort_tool/, for ZooParity.OrtToolFilesIdenticalToOrt.
#
#   tools/zoo/ort_quantize_zoo.sh ZOO_DIR
#
# Needs the venv tools/setup.sh makes (third_party/ort-quantization/venv). A file the tool
# refuses to write is recorded as ZOO/NAME/ort_tool/<stem>.refused (its error, which the test
# reads as a gap zoo_gaps.txt must list); any other failure stops the script with its error (the
# log is ZOO/NAME/ort_tool.log).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
[[ $# -eq 1 && "$1" != -h && "$1" != --help ]] || { sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 2; }
zoo="$1"
python="${OCTET_ORT_QUANT_PYTHON:-$ROOT/third_party/ort-quantization/venv/bin/python}"
[[ -x "$python" ]] || { echo "ort_quantize_zoo.sh: no $python (run tools/setup.sh)" >&2; exit 1; }
for model in "$zoo"/*/model.onnx; do
  dir="$(dirname "$model")"
  name="$(basename "$dir")"
  rm -rf "$dir/ort_tool"
  if ! "$python" "$ROOT/tools/ort/ort_quantize.py" --preprocess --keep-going --model "$model" \
    --calib "$dir/calib.npy" --out "$dir/ort_tool" >"$dir/ort_tool.log" 2>&1; then
    tail -1 "$dir/ort_tool.log" >&2
    echo "ort_quantize_zoo.sh: ONNX Runtime's tool failed on $name (log: $dir/ort_tool.log)" >&2
    exit 1
  fi
  written=()
  for stem in static_qdq static_qoperator dynamic; do
    if [[ -f "$dir/ort_tool/$stem.refused" ]]; then
      written+=("$stem refused ($(cat "$dir/ort_tool/$stem.refused"))")
    else
      written+=("$stem")
    fi
  done
  echo "  $name: $(IFS=,; echo "${written[*]}" | sed 's/,/, /g')"
done
