#!/usr/bin/env python3
"""bench/layer_vs_ort.py kept working: one short round on the bundled TinyNet and ResNet8, and on
ResNet8 quantized to QDQ INT8 by `octet quantize` (random calibration inputs). Not a timing test:
the markdown table has its nine columns, and in the JSON every octet step and every ONNX Runtime
node is in exactly one row, every step that names an ONNX node shares its row with ORT nodes (the
mapping found what ORT ran for it), and each row's figures add up. In the INT8 model each
QLinearConv step has a row of its own (ORT's QLinearConv "<Conv>_token_N" is matched to its Conv).

    check_layer_vs_ort.py --build BUILD_DIR     (exit 77: ONNX Runtime unavailable, a skip)
"""
import array
import json
import os
import random
import subprocess
import sys
import tempfile

from check_zoo_bench import build_dir_or_skip  # tests/tools/: the same --build and ONNX Runtime check

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLUMNS = ["node", "op", "output", "octet µs", "octet kernel", "ORT µs", "ORT kernel", "octet/ORT", "lost µs"]


def fail(msg):
    print(f"check_layer_vs_ort: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def check(build, model, batch, tmp, one_conv_a_row=False):
    js = os.path.join(tmp, "rows.json")
    cmd = [sys.executable, os.path.join(ROOT, "bench", "layer_vs_ort.py"), model, "--build", build, "--batch",
           str(batch), "--rounds", "2", "--runs", "3", "--warmup", "1", "--top", "0", "--json", js]
    out = subprocess.run(cmd, capture_output=True, text=True)
    name = f"{os.path.basename(model)} batch {batch}"
    if out.returncode != 0:
        fail(f"{name}: exit {out.returncode}: {out.stderr[-2000:]}")
    lines = [l for l in out.stdout.splitlines() if l.startswith("|")]
    if [c.strip() for c in lines[0].strip("|").split("|")] != COLUMNS:
        fail(f"{name}: header {lines[0]}")
    doc = json.load(open(js))
    rows = doc["rows"]
    if len(lines) != len(rows) + 2:
        fail(f"{name}: {len(lines) - 2} table rows, {len(rows)} in the JSON")
    for l in lines[2:]:
        if len(l.strip("|").split("|")) != len(COLUMNS):
            fail(f"{name}: row with a wrong column count: {l}")
    info = json.loads(subprocess.run([os.path.join(build, "apps", "octet"), "info", model, "--kernels", "--json",
                                      "--batch", str(batch)], capture_output=True, text=True, check=True).stdout)
    steps = [s["node"] for s in info["steps"]]
    seen = [s for r in rows for s in r["octet_steps"]]
    if sorted(seen) != sorted(steps):
        fail(f"{name}: steps in rows {sorted(seen)} != plan steps {sorted(steps)}")
    ort_seen = [n for r in rows for n in r["ort_nodes"]]
    if len(ort_seen) != len(set(ort_seen)) or not ort_seen:
        fail(f"{name}: ORT nodes repeated or none: {ort_seen}")
    for r in rows:
        if r["octet_steps"] and r["nodes"] and not r["ort_nodes"]:
            fail(f"{name}: octet step(s) {r['octet_steps']} (ONNX nodes {r['nodes']}) map to no ORT node")
        if r["ort_nodes"] and r["ort_us"] <= 0 or r["octet_steps"] and r["octet_us"] <= 0:
            fail(f"{name}: row {r['label']} without a time")
        if abs(r["lost_us"] - (r["octet_us"] - r["ort_us"])) > 1e-6:
            fail(f"{name}: row {r['label']}: lost µs is not octet - ORT")
    if [r["lost_us"] for r in rows] != sorted((r["lost_us"] for r in rows), reverse=True):
        fail(f"{name}: rows not sorted by time lost")
    if one_conv_a_row:
        conv_steps = {s["node"] for s in info["steps"] if s["op"] == "QLinearConv"}
        for r in rows:
            if len(conv_steps.intersection(r["octet_steps"])) > 1:
                fail(f"{name}: one row holds the QLinearConv steps {sorted(conv_steps.intersection(r['octet_steps']))}")
    print(f"{name}: {len(steps)} octet steps and {len(ort_seen)} ORT nodes in {len(rows)} rows")


def main():
    build = build_dir_or_skip("check_layer_vs_ort")
    if build is None:
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        check(build, os.path.join(ROOT, "models", "tinynet.onnx"), 1, tmp)
        check(build, os.path.join(ROOT, "models", "resnet8.onnx"), 4, tmp)
        check(build, quantized_resnet8(build, tmp), 1, tmp, one_conv_a_row=True)
    return 0


def quantized_resnet8(build, tmp):
    """models/resnet8.onnx as QDQ INT8, calibrated on 8 random inputs written as a float32 .npy."""
    calib = os.path.join(tmp, "calib.npy")
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (8, 1, 28, 28), }"
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    rng = random.Random(5)
    values = array.array("f", (rng.random() for _ in range(8 * 28 * 28)))
    with open(calib, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode("latin1"))
        f.write(values.tobytes())
    out = os.path.join(tmp, "resnet8_int8.onnx")
    subprocess.run([os.path.join(build, "apps", "octet"), "quantize", os.path.join(ROOT, "models", "resnet8.onnx"),
                    "-o", out, "--calib", f"npy:{calib}", "--calib-count", "8"], check=True, capture_output=True)
    return out


if __name__ == "__main__":
    sys.exit(main())
