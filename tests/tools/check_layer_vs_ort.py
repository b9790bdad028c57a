#!/usr/bin/env python3
"""bench/layer_vs_ort.py kept working: one short round on the bundled TinyNet and ResNet8, and on
ResNet8 quantized to QDQ INT8 by `octet quantize` (random calibration inputs). Not a timing test:
the markdown table has its nine columns, and in the JSON every octet step and every ONNX Runtime
node is in exactly one row, every step that names an ONNX node shares its row with ORT nodes (the
mapping found what ORT ran for it), and each row's figures add up. In the INT8 model each
QLinearConv step has a row of its own (ORT's QLinearConv "<Conv>_token_N" is matched to its Conv).
In a MatMul + bias + GELU (torch's Erf form, written with python3-onnx) ORT's Gelu or BiasGelu,
a node named by its op type alone, shares the MatMul's row.

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


def check(build, model, batch, tmp, one_conv_a_row=False, fused_with=None):
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
    if fused_with:  # (octet op, ORT ops): one of the ORT ops in the row of the octet op's step
        op, ort_ops = fused_with
        step_rows = [r for r in rows if any(s["op"] == op and s["node"] in r["octet_steps"] for s in info["steps"])]
        if not step_rows or any(not set(ort_ops) & set(r["ort_kernel"].split("+")) for r in step_rows):
            fail(f"{name}: none of ORT's {ort_ops} in the row of the {op} step: "
                 f"{[(r['label'], r['ort_kernel']) for r in rows]}")
    print(f"{name}: {len(steps)} octet steps and {len(ort_seen)} ORT nodes in {len(rows)} rows")


def main():
    build = build_dir_or_skip("check_layer_vs_ort")
    if build is None:
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        check(build, os.path.join(ROOT, "models", "tinynet.onnx"), 1, tmp)
        check(build, os.path.join(ROOT, "models", "resnet8.onnx"), 4, tmp)
        check(build, quantized_resnet8(build, tmp), 1, tmp, one_conv_a_row=True)
        check(build, gelu_mlp(tmp), 1, tmp, fused_with=("MatMul", ("Gelu", "BiasGelu")))
    return 0


def gelu_mlp(tmp):
    """x [1, 8, 8, 32] -> MatMul [32, 64] -> Add bias -> GELU as torch exports it (Div, Erf, Add,
    Mul, Mul), ConvNeXt's MLP: ORT fuses the GELU into a node named "Gelu" (with the bias,
    "BiasGelu", in ConvNeXt), the MatMul and its bias into "fc/MatMulAddFusion" here."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(3)
    init = [numpy_helper.from_array(rng.standard_normal((32, 64)).astype(np.float32) * 0.2, "w"),
            numpy_helper.from_array(rng.standard_normal(64).astype(np.float32) * 0.1, "b"),
            numpy_helper.from_array(np.array(1.4142135, np.float32), "sqrt2"),
            numpy_helper.from_array(np.array(1.0, np.float32), "one"),
            numpy_helper.from_array(np.array(0.5, np.float32), "half")]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["mm"], name="fc"),
             helper.make_node("Add", ["mm", "b"], ["h"], name="bias"),
             helper.make_node("Div", ["h", "sqrt2"], ["d"], name="div"),
             helper.make_node("Erf", ["d"], ["e"], name="erf"),
             helper.make_node("Add", ["e", "one"], ["e1"], name="add1"),
             helper.make_node("Mul", ["h", "e1"], ["m"], name="mul"),
             helper.make_node("Mul", ["m", "half"], ["y"], name="half_mul")]
    graph = helper.make_graph(nodes, "gelu_mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 8, 32])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 8, 64])], init)
    path = os.path.join(tmp, "gelu_mlp.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


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
