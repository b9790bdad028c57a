#!/usr/bin/env python3
"""bench/zoo_bench.py kept working: one round on the bundled TinyNet and on a file octet cannot
load. Not a timing test: TinyNet's six cells (FP32, static and dynamic INT8 at batch 1 and 16)
must each have octet and ORT times, a ratio, its accuracy figure and a scalar count, in the JSON
and in every column of the markdown table; the broken file's cells must say it fails, and the
run must go on past it (exit 1, since a cell has no timing).

    check_zoo_bench.py --build BUILD_DIR     (exit 77: ONNX Runtime unavailable, a skip)
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PRECISIONS = ["FP32", "static INT8", "dynamic INT8"]
BATCHES = [1, 16]
NUMBER = re.compile(r"^\*{0,2}\d+\.\d+\*{0,2}( \(\d+\.\d+–\d+\.\d+\))?$")


def fail(msg):
    print(f"check_zoo_bench: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def build_dir_or_skip(prog):
    """The --build argument; None, after saying so, when ONNX Runtime is unavailable (a skip)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    a = ap.parse_args()
    if subprocess.run(["node", os.path.join(ROOT, "tools", "ort", "ort_run.mjs"), "--version"],
                      capture_output=True).returncode != 0:
        print(f"{prog}: ONNX Runtime (node, onnxruntime-node) unavailable: skipped")
        return None
    return a.build


def main():
    build = build_dir_or_skip("check_zoo_bench")
    if build is None:
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        broken = os.path.join(tmp, "broken.onnx")
        with open(broken, "wb") as f:
            f.write(b"not an onnx model")
        md, js = os.path.join(tmp, "table.md"), os.path.join(tmp, "zoo_bench.json")
        cmd = [sys.executable, os.path.join(ROOT, "bench", "zoo_bench.py"), "--build", build,
               "--model", os.path.join(ROOT, "models", "tinynet.onnx"), "--model", broken, "--rounds", "1",
               "--budget-ms", "10", "--no-profile", "--out", md, "--json", js]
        out = subprocess.run(cmd, capture_output=True, text=True)
        sys.stderr.write(out.stderr[-3000:])
        if out.returncode != 1:
            fail(f"exit {out.returncode}, expected 1 (the broken model's cells have no timing)")
        doc = json.load(open(js))
        cells = {(c["model"], c["precision"], c["batch"]): c for c in doc["cells"]}
        for p in ["fp32", "static", "dynamic"]:
            for b in BATCHES:
                c = cells.get(("tinynet", p, b))
                if c is None or "error" in c:
                    fail(f"tinynet {p} batch {b}: {c and c.get('error') or 'no cell'}")
                for key in ["octet_ms", "ort_ms", "ratio", "scalar_steps",
                            "max_rel_diff" if p == "fp32" else "identical_pct"]:
                    if key not in c:
                        fail(f"tinynet {p} batch {b}: no {key}")
                if not (c["octet_ms"] > 0 and c["ort_ms"] > 0 and abs(c["ratio"] - c["octet_ms"] / c["ort_ms"]) < 1e-6):
                    fail(f"tinynet {p} batch {b}: times {c['octet_ms']} / {c['ort_ms']} and ratio {c['ratio']} disagree")
                if "error" not in cells.get(("broken", p, b), {}):
                    fail(f"broken.onnx {p} batch {b}: the cell does not say it fails")

        lines = open(md).read().splitlines()
        head = next((l for l in lines if l.startswith("| model |")), None)
        want = ["model", "precision"] + [f"b{b} {col}" for b in BATCHES
                                         for col in ["octet ms", "ORT ms", "ratio", "same", "scalar"]]
        if head is None or [h.strip() for h in head.strip("|").split("|")] != want:
            fail(f"table header {head!r}, expected the columns {want}")
        rows = {}
        for l in lines:
            cols = [x.strip() for x in l.strip().strip("|").split("|")]
            if l.startswith("| ") and len(cols) == len(want) and cols[1] in PRECISIONS:
                rows[(cols[0], cols[1])] = cols
        for p in PRECISIONS:
            cols = rows.get(("tinynet", p))
            if cols is None:
                fail(f"no table row for tinynet {p}")
            for i, b in enumerate(BATCHES):
                octet_ms, ort_ms, ratio, same, scalar = cols[2 + 5 * i: 7 + 5 * i]
                if not (NUMBER.match(octet_ms) and NUMBER.match(ort_ms) and NUMBER.match(ratio)):
                    fail(f"tinynet {p} batch {b}: cells {octet_ms!r} {ort_ms!r} {ratio!r} are not numbers")
                if not same or not scalar.isdigit():
                    fail(f"tinynet {p} batch {b}: accuracy {same!r} / scalar {scalar!r} missing")
            broken = rows.get(("broken", p))
            if broken is None or not all(broken[2 + 5 * i].startswith("fails:") for i in range(len(BATCHES))):
                fail(f"broken.onnx {p}: the row does not say it fails: {broken}")
    print("check_zoo_bench: every cell of TinyNet's table is filled; the broken model's cells say it fails")
    return 0


if __name__ == "__main__":
    sys.exit(main())
