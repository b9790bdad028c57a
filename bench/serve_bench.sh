#!/usr/bin/env bash
# Throughput and latency of `octet serve`'s KServe v2 endpoint with and without request batching:
# for each round, a server with --max-batch 1 and one with --max-batch N (interleaved, so both see
# the same machine), each loaded by wrk with C kept-alive connections sending binary-tensor
# requests of one random batch item. Prints each round and the medians as a Markdown table.
#
#   bench/serve_bench.sh [options] [model.onnx]      (default: models/tinynet.onnx)
#     --connections C   concurrent clients (default 32)
#     --seconds S       wrk's duration per server and round (default 5)
#     --rounds R        rounds (default 3)
#     --max-batch N     the batched server's --max-batch (default 8)
#     --version V       fp32, int8 or dynamic (default fp32)
#     --build DIR       the build tree (default build)
#     --serve-args "..."  more `octet serve` options for both servers (e.g. "--max-delay-us 500")
#
# Needs wrk (Debian: apt install wrk) and a build of `octet`. wrk and the server share the
# machine's cores: quote figures with the CPU and core count.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
serve_args="" connections=32 seconds=5 rounds=3 max_batch=8 version=fp32 build="$ROOT/build" model="$ROOT/models/tinynet.onnx"
while (($#)); do
  case "$1" in
    --connections) connections="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --max-batch) max_batch="$2"; shift 2 ;;
    --version) version="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --serve-args) serve_args="$2"; shift 2 ;;
    -h|--help) sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "serve_bench.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    *) model="$1"; shift ;;
  esac
done
command -v wrk >/dev/null || { echo "serve_bench.sh: needs wrk (apt install wrk)" >&2; exit 1; }
octet="$build/apps/octet"
[[ -x "$octet" ]] || { echo "serve_bench.sh: no $octet; build first (cmake --build $build)" >&2; exit 1; }
[[ -f "$model" ]] || { echo "serve_bench.sh: no model file '$model'" >&2; exit 1; }

work="$(mktemp -d)"
server_pid=""
cleanup() {
  if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# Starts a server and sets server_pid and port.
start_server() {
  local batch="$1"
  "$octet" serve "$model" --port 0 --max-batch "$batch" --speed-seconds 0 --samples 0 --no-progress \
    --default-version "$version" $serve_args >"$work/server.log" 2>&1 &
  server_pid=$!
  port=""
  for _ in $(seq 600); do
    port="$(grep -o 'http://127.0.0.1:[0-9]*' "$work/server.log" | head -1 | sed 's/.*://')" || true
    [[ -n "$port" ]] && curl -sf "http://127.0.0.1:$port/v2/health/ready" >/dev/null && return 0
    kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log" >&2; exit 1; }
    sleep 0.1
  done
  echo "serve_bench.sh: the server did not start" >&2; cat "$work/server.log" >&2; exit 1
}
stop_server() { kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""; }

# The request: the model's metadata gives the input; one batch item of random values.
start_server 1
name="$(basename "$model" .onnx)"
curl -sf "http://127.0.0.1:$port/v2/models/$name" >"$work/meta.json"
stop_server
python3 - "$work" "$version" <<'EOF'
import array, json, random, sys
work, version = sys.argv[1], sys.argv[2]
meta = json.load(open(f"{work}/meta.json"))
if len(meta["inputs"]) != 1:
    sys.exit("serve_bench.sh: the model takes several inputs; this benchmark sends one")
inp = meta["inputs"][0]
if inp["datatype"] != "FP32":
    sys.exit(f"serve_bench.sh: input datatype {inp['datatype']}; this benchmark sends FP32")
shape = [1 if d < 0 else d for d in inp["shape"]]
count = 1
for d in shape:
    count *= d
rng = random.Random(0)
data = array.array("f", (rng.random() for _ in range(count))).tobytes()
header = json.dumps({"inputs": [{"name": inp["name"], "shape": shape, "datatype": "FP32",
                                 "parameters": {"binary_data_size": len(data)}}],
                     "parameters": {"binary_data_output": True}}).encode()
open(f"{work}/body.bin", "wb").write(header + data)
lua = f'''wrk.method = "POST"
local f = io.open("{work}/body.bin", "rb"); wrk.body = f:read("*all"); f:close()
wrk.headers["Content-Type"] = "application/octet-stream"
wrk.headers["Inference-Header-Content-Length"] = "{len(header)}"
'''
open(f"{work}/request.lua", "w").write(lua)
EOF

echo "octet serve $name ($version), $connections connections, ${seconds} s a run, $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
results="$work/results.txt"
for r in $(seq "$rounds"); do
  for batch in 1 "$max_batch"; do
    start_server "$batch"
    wrk -t2 -c"$connections" -d"${seconds}s" --latency -s "$work/request.lua" \
      "http://127.0.0.1:$port/v2/models/$name/infer" >"$work/wrk.txt"
    stop_server
    rps="$(awk '/^Requests\/sec/ {print $2}' "$work/wrk.txt")"
    p50="$(awk '$1 == "50%" {print $2}' "$work/wrk.txt")"
    p99="$(awk '$1 == "99%" {print $2}' "$work/wrk.txt")"
    errors="$(awk '/Non-2xx|Socket errors/ {print}' "$work/wrk.txt" | tr '\n' ' ')"
    echo "round $r, --max-batch $batch: $rps requests/s, p50 $p50, p99 $p99 $errors"
    echo "$batch $rps $p50 $p99" >>"$results"
  done
done
python3 - "$results" "$max_batch" <<'EOF'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
def ms(v):
    for unit, f in (("us", 1e-3), ("ms", 1.0), ("s", 1e3)):
        if v.endswith(unit):
            return float(v[: -len(unit)]) * f
    return float(v)
print("\n| --max-batch | requests/s (median) | p50 ms | p99 ms |\n|---:|---:|---:|---:|")
med = {}
for b in ("1", sys.argv[2]):
    rs = [r for r in rows if r[0] == b]
    med[b] = statistics.median(float(r[1]) for r in rs)
    print(f"| {b} | {med[b]:.0f} | {statistics.median(ms(r[2]) for r in rs):.2f} | {statistics.median(ms(r[3]) for r in rs):.2f} |")
print(f"\nbatched / unbatched throughput: {med[sys.argv[2]] / med['1']:.2f}x")
EOF
