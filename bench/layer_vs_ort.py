#!/usr/bin/env python3
"""Which layers make octet slower than ONNX Runtime on a model: octet's per-step profile and
ORT's per-node profile (FP32 or a QDQ INT8 file, both pinned to one CPU), mapped onto the same ONNX nodes and
sorted by the time octet loses.

    bench/layer_vs_ort.py MODEL.onnx [--batch 1] [--threads 1] [--rounds 3] [--runs 30] [--cpu 0]
                          [--top 25] [--json FILE] [--build build]

octet: `octet run MODEL --random --profile` (median of --runs per step) and `octet info --kernels
--json` (full node names, kernels, shapes). ORT: tools/ort/ort_profile.mjs, the session octet's
comparisons use (graph optimizations "all", ORT's default) with enableProfiling; the median of
--runs per node after warm-up. The two alternate --rounds times; a row's figure is the median
over rounds.

How rows are formed: every octet step names one ONNX node (pw+dw fusions two); a node octet
fused away (a Relu, a residual Add, a folded BatchNormalization) counts with the step of its
latest input producer. ORT names a node it kept by its ONNX name, a QDQ unit it fused into one
INT8 node by the node it was built around plus "_token_N" (a QDQ file's QLinearConv) or "/<Fusion>"
(a MatMul and its bias Add as "<MatMul>/MatMulAddFusion"), and an
NCHWc node by its last output tensor ("<tensor>_nchwc"), i.e. by the last node of what it fused; a node ORT fused away
counts with the ORT node of the Conv/Gemm before it when it is not one itself (a residual Add,
an activation, a BatchNormalization ORT fused into that Conv), else with its consumer's. A node
ORT's fusion names by its op type alone (BiasGelu: a bias Add and a GELU after a MatMul) counts
with the nearest ORT node before it whose output it reads. A row is the smallest set of ONNX nodes
closed under both groupings: octet's steps and ORT's nodes that ran the same part of the graph.
ORT's layout reorders (ReorderInput/Output) join the row of the node they feed or follow in
ORT's execution order; octet's relayout steps have no counterpart and are rows of their own.

Only the Python standard library is used; the ONNX file is read with a small protobuf walker.
"""
import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# --- ONNX graph: node names, ops, inputs and outputs (protobuf wire format, no onnx module) ---

def _varint(buf, i):
    v = shift = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        if b < 0x80:
            return v, i
        shift += 7


def _fields(buf, start=0, end=None):
    """(field number, wire type, value or (start, end) of a length-delimited field)."""
    i, end = start, len(buf) if end is None else end
    while i < end:
        key, i = _varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            v, i = _varint(buf, i)
            yield field, wire, v
        elif wire == 2:
            n, i = _varint(buf, i)
            yield field, wire, (i, i + n)
            i += n
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")


def onnx_nodes(path):
    """[{name, op, inputs, outputs}] in file order (ONNX stores nodes topologically sorted)."""
    buf = memoryview(open(path, "rb").read())
    text = lambda r: bytes(buf[r[0]:r[1]]).decode("utf-8", "replace")
    nodes = []
    for field, wire, graph in _fields(buf):
        if field != 7 or wire != 2:  # ModelProto.graph
            continue
        for gf, gw, node in _fields(buf, *graph):
            if gf != 1 or gw != 2:  # GraphProto.node
                continue
            n = {"name": "", "op": "", "inputs": [], "outputs": []}
            for nf, nw, v in _fields(buf, *node):
                if nw != 2:
                    continue
                if nf == 1:
                    n["inputs"].append(text(v))
                elif nf == 2:
                    n["outputs"].append(text(v))
                elif nf == 3:
                    n["name"] = text(v)
                elif nf == 4:
                    n["op"] = text(v)
            nodes.append(n)
    if not nodes:
        raise SystemExit(f"{path}: no graph nodes found (not an ONNX model?)")
    for k, n in enumerate(nodes):
        n["name"] = n["name"] or f"{n['op']}_{k}"  # torch's exporter names every node
    return nodes


# --- octet -------------------------------------------------------------------------------------

def octet_info(a):
    cmd = [a.octet, "--threads", str(a.threads), "info", a.model, "--kernels", "--json", "--batch", str(a.batch)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"octet info failed: {out.stderr.strip()}")
    return json.loads(out.stdout)


PROFILE_ROW = re.compile(r"^\s+(\d+)\s+(.*?)\s(\d+\.\d{2})\s+\d+\.\d(?:\s+\d+\.\d)?\s*$")


def octet_profile(a, steps):
    """Median µs of every plan step, in plan order."""
    cmd = ["taskset", "-c", str(a.cpu), a.octet, "--threads", str(a.threads), "run", a.model, "--random",
           "--batch", str(a.batch), "--top", "1", "--profile", "--profile-runs", str(a.runs)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"octet run failed: {out.stderr.strip()}")
    us = {}
    lines = out.stdout.split("\nprofile:", 1)[-1].splitlines()
    for line in lines:
        m = PROFILE_ROW.match(line)
        if m:
            us[int(m.group(1))] = (m.group(2), float(m.group(3)))
    if sorted(us) != list(range(len(steps))):
        raise SystemExit(f"octet run --profile printed {len(us)} steps, octet info {len(steps)}")
    for i, s in enumerate(steps):
        if not us[i][0].startswith(s["node"][:34]):
            raise SystemExit(f"step {i}: profile names '{us[i][0]}', info '{s['node']}'")
    return [us[i][1] for i in range(len(steps))]


# --- ONNX Runtime ------------------------------------------------------------------------------

def ort_profile(a, shapes, tmp, round_index):
    """{ORT node name: (median µs, op, output shape)} over the runs after warm-up, in execution order."""
    prefix = os.path.join(tmp, f"ort{round_index}")
    cmd = ["taskset", "-c", str(a.cpu), "node", os.path.join(ROOT, "tools", "ort", "ort_profile.mjs"),
           "--model", a.model, "--prefix", prefix, "--runs", str(a.runs), "--warmup", str(a.warmup),
           "--threads", str(a.threads)]
    for name, dims in shapes.items():
        cmd += ["--shape", f"{name}={'x'.join(map(str, dims))}"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    files = glob.glob(prefix + "_*.json")
    if out.returncode != 0 or len(files) != 1:
        raise SystemExit(f"ONNX Runtime profile failed: {out.stderr.strip() or 'no profile file'}")
    events = json.load(open(files[0]))
    os.remove(files[0])
    runs = sorted((e["ts"], e["ts"] + e["dur"]) for e in events if e.get("cat") == "Session" and e.get("name") == "model_run")
    runs = runs[a.warmup:]
    times, info, first_run = {}, {}, []
    seen = {}  # (run, name): occurrences so far
    for e in sorted((e for e in events if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time")),
                    key=lambda e: e["ts"]):
        run = next((k for k, (t0, t1) in enumerate(runs) if t0 <= e["ts"] <= t1), None)
        if run is None:
            continue
        # A node ORT built by a fusion may be named by its op type alone (BiasGelu), once per
        # place it fused: its k-th run within a model run is "<name>#k".
        name = e["name"][:-len("_kernel_time")]
        k = seen[(run, name)] = seen.get((run, name), 0) + 1
        key = name if k == 1 else f"{name}#{k}"
        times.setdefault(key, {}).setdefault(run, 0.0)
        times[key][run] += e["dur"]
        args = e.get("args", {})
        out_shape, in_shape = args.get("output_type_shape") or [{}], args.get("input_type_shape") or [{}]
        info[key] = (args.get("op_name", "?"), next(iter(out_shape[0].values()), None) if out_shape[0] else None,
                     next(iter(in_shape[0].values()), None) if in_shape[0] else None)
        if run == 0:
            first_run.append(key)
    # in execution order (the reorders are placed by their neighbours)
    return {n: (statistics.median(times[n].values()), *info[n]) for n in first_run}


# --- mapping -----------------------------------------------------------------------------------

# octet fusions named by the last node they absorb (engine/passes_se.cc, passes_shuffle.cc, passes_qsilu.cc)
FUSED_FORWARD = ("SqueezeExcite", "ChannelShuffle", "QLinearSilu")
EPILOGUE = ("Relu", "Clip", "HardSwish", "HardSigmoid", "LeakyRelu", "Sigmoid", "Add", "BatchNormalization")


class Groups:
    def __init__(self, keys):
        self.parent = {k: k for k in keys}

    def find(self, k):
        while self.parent[k] != k:
            self.parent[k] = self.parent[self.parent[k]]
            k = self.parent[k]
        return k

    def union(self, x, y):
        self.parent[self.find(x)] = self.find(y)


def map_rows(nodes, steps, ort_names, ort_shapes=None):
    """Rows: [{nodes, steps (indices), ort (names)}], and the octet steps that name no ONNX node.
    ort_shapes: {ORT name: (output shape, first input shape)}, for the nodes ORT's fusions name by
    op type alone."""
    by_name = {n["name"]: n for n in nodes}
    producer = {o: n["name"] for n in nodes for o in n["outputs"]}
    consumers = {}
    for n in nodes:
        for t in n["inputs"]:
            consumers.setdefault(t, []).append(n["name"])
    order = {n["name"]: k for k, n in enumerate(nodes)}

    # octet: the nodes each step names; a fused-away epilogue with its producer's step; another
    # fused-away node with the fusion named by the last node it feeds (Squeeze-Excite, channel
    # shuffle, SiLU), else with its latest producer's step
    octet_of = {}
    for i, s in enumerate(steps):
        for part in s["node"].split("+"):
            if part in by_name:
                octet_of.setdefault(part, i)
    for n in nodes:  # a conv epilogue: activation, residual Add, folded BatchNormalization
        if n["name"] not in octet_of and n["op"] in EPILOGUE:
            prods = [producer[t] for t in n["inputs"] if t in producer and producer[t] in octet_of]
            if prods:
                octet_of[n["name"]] = octet_of[max(prods, key=order.get)]
    for n in reversed(nodes):
        if n["name"] not in octet_of:
            later = [octet_of[c] for o in n["outputs"] for c in consumers.get(o, [])
                     if c in octet_of and steps[octet_of[c]]["op"] in FUSED_FORWARD]
            if later:
                octet_of[n["name"]] = min(later)
    for n in nodes:
        if n["name"] in octet_of:
            continue
        prods = [producer[t] for t in n["inputs"] if t in producer and producer[t] in octet_of]
        if prods:
            octet_of[n["name"]] = octet_of[max(prods, key=order.get)]

    # ORT: a kept node by its name, a QDQ unit it fused (QLinearConv "<Conv>_token_12") or a
    # fusion ("<MatMul>/MatMulAddFusion", a Gemm) by the node it was built around, an NCHWc node
    # by its last output tensor
    ort_of, by_tensor = {}, {}
    for name in ort_names:
        unit = re.sub(r"_token_\d+$", "", name)
        if name in by_name:
            ort_of.setdefault(name, name)
        elif unit != name and unit in by_name:
            ort_of.setdefault(unit, name)
        elif name.rsplit("/", 1)[0] in by_name:  # a fusion built on a node: "<node>/MatMulAddFusion"
            ort_of.setdefault(name.rsplit("/", 1)[0], name)
        elif name.endswith("_nchwc") and name[:-6] in producer:
            by_tensor[name] = producer[name[:-6]]
            ort_of.setdefault(producer[name[:-6]], name)
    compute = ("Conv", "ConvTranspose", "Gemm", "MatMul")
    backward = set()
    for n in nodes:  # back into the Conv/Gemm before it (a Sum/activation or BatchNormalization ORT fused)
        if n["name"] not in ort_of and n["op"] not in compute:
            prods = [producer[t] for t in n["inputs"] if t in producer and producer[t] in ort_of]
            p = max(prods, key=order.get) if prods else None
            if p and (by_name[p]["op"] in compute or p in backward):
                ort_of[n["name"]] = ort_of[p]
                backward.add(n["name"])
    for n in reversed(nodes):  # forward into the consumer ORT fused it into (named by its output)
        if n["name"] not in ort_of:
            outs = [c for o in n["outputs"] for c in consumers.get(o, []) if c in ort_of]
            if outs:
                ort_of[n["name"]] = ort_of[min(outs, key=order.get)]
    for n in nodes:  # what is left: with its latest producer
        if n["name"] not in ort_of:
            prods = [producer[t] for t in n["inputs"] if t in producer and producer[t] in ort_of]
            if prods:
                ort_of[n["name"]] = ort_of[max(prods, key=order.get)]

    g = Groups([n["name"] for n in nodes])
    first_of_step, first_of_ort = {}, {}
    for node, i in octet_of.items():
        g.union(node, first_of_step.setdefault(i, node))
    for node, o in ort_of.items():
        g.union(node, first_of_ort.setdefault(o, node))
    rows = {}
    for n in nodes:
        if n["name"] not in octet_of and n["name"] not in ort_of:
            continue
        r = rows.setdefault(g.find(n["name"]), {"nodes": [], "steps": set(), "ort": set()})
        r["nodes"].append(n["name"])
        if n["name"] in octet_of:
            r["steps"].add(octet_of[n["name"]])
        if n["name"] in ort_of:
            r["ort"].add(ort_of[n["name"]])
    out = list(rows.values())
    mapped = {i for r in out for i in r["steps"]}
    for i, s in enumerate(steps):
        if i not in mapped:
            out.append({"nodes": [], "steps": {i}, "ort": set(), "label": s["node"]})
    # ORT's layout reorders join the row of the node they feed (ReorderInput) or follow (ReorderOutput)
    row_of = {o: r for r in out for o in r["ort"]}
    for k, name in enumerate(ort_names):
        if name in row_of or not name.startswith("Reorder"):
            continue
        step = -1 if name.startswith("ReorderOutput") else 1
        j = k + step
        while 0 <= j < len(ort_names) and (ort_names[j] not in row_of or ort_names[j].startswith("Reorder")):
            j += step
        if 0 <= j < len(ort_names):
            row_of[name] = row_of[ort_names[j]]
            row_of[name]["ort"].add(name)
    # A node that names no ONNX node (a fusion named by its op type: BiasGelu after a MatMul)
    # joins the row of the nearest node before it in ORT's order whose output it reads (same
    # shape as its first input)
    for k, name in enumerate(ort_names):
        if name in row_of or not ort_shapes or ort_shapes[name][1] is None:
            continue
        j = k - 1
        while j >= 0 and (ort_names[j] not in row_of or ort_shapes[ort_names[j]][0] != ort_shapes[name][1]):
            j -= 1
        if j >= 0:
            row_of[name] = row_of[ort_names[j]]
            row_of[name]["ort"].add(name)
    for name in ort_names:
        if name not in row_of:
            out.append({"nodes": [], "steps": set(), "ort": {name}, "label": name})
    return out


def shape_str(dims):
    return "x".join(str(d) for d in dims) if dims else ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("model")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3, help="octet and ORT alternate this many times (default 3)")
    ap.add_argument("--runs", type=int, default=30, help="timed runs per round and engine (default 30)")
    ap.add_argument("--warmup", type=int, default=5, help="ORT runs before the timed ones (default 5)")
    ap.add_argument("--cpu", type=int, default=0, help="CPU both engines are pinned to (default 0)")
    ap.add_argument("--top", type=int, default=25, help="rows printed (default 25; 0: all)")
    ap.add_argument("--json", help="also write every row as JSON")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    a = ap.parse_args()
    a.octet = os.path.join(a.build, "apps", "octet")
    if not os.path.exists(a.octet):
        raise SystemExit(f"{a.octet} not built (ninja -C {a.build} octet)")

    nodes = onnx_nodes(a.model)
    info = octet_info(a)
    steps = info["steps"]
    shapes = {i["name"]: [a.batch if not isinstance(d, int) or d < 0 else d for d in i["shape"]]
              for i in info["inputs"]}
    octet_rounds, ort_rounds = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.rounds):
            print(f"round {r + 1}/{a.rounds}: octet", file=sys.stderr)
            octet_rounds.append(octet_profile(a, steps))
            print(f"round {r + 1}/{a.rounds}: ONNX Runtime", file=sys.stderr)
            ort_rounds.append(ort_profile(a, shapes, tmp, r))
    octet_us = [statistics.median(r[i] for r in octet_rounds) for i in range(len(steps))]
    ort_names = list(ort_rounds[0])
    ort_us = {n: statistics.median(r[n][0] for r in ort_rounds if n in r) for n in ort_names}
    ort_meta = {n: ort_rounds[0][n][1:] for n in ort_names}

    rows = []
    for r in map_rows(nodes, steps, ort_names, {n: (ort_meta[n][1], ort_meta[n][2]) for n in ort_names}):
        st = sorted(r["steps"])
        ot = sorted(r["ort"], key=lambda n: ort_names.index(n))
        main_step = max(st, key=lambda i: octet_us[i]) if st else None
        main_ort = max(ot, key=lambda n: ort_us[n]) if ot else None
        o_us = sum(octet_us[i] for i in st)
        r_us = sum(ort_us[n] for n in ot)
        op = steps[main_step]["op"] if main_step is not None else ort_meta[main_ort][0]
        shape = (shape_str(steps[main_step].get("output_shape")) if main_step is not None
                 else shape_str(ort_meta[main_ort][1]))
        rows.append({
            "nodes": r["nodes"], "label": r.get("label") or (steps[main_step]["node"] if main_step is not None else main_ort),
            "op": op, "shape": shape, "octet_steps": [steps[i]["node"] for i in st],
            "octet_us": o_us, "octet_kernel": "+".join(dict.fromkeys(steps[i]["kernel"] for i in st)),
            "macs": sum(steps[i]["macs"] for i in st),
            "ort_nodes": ot, "ort_us": r_us,
            "ort_kernel": "+".join(dict.fromkeys(ort_meta[n][0] + (" nchwc" if n.endswith("_nchwc") else "") for n in ot)),
            "lost_us": o_us - r_us, "ratio": o_us / r_us if r_us > 0 else None,
        })
    rows.sort(key=lambda r: -r["lost_us"])
    tot_o, tot_r = sum(octet_us), sum(ort_us.values())
    print(f"{os.path.basename(a.model)} batch {a.batch}, {a.threads} thread(s), CPU {a.cpu}: "
          f"octet {tot_o / 1e3:.2f} ms, ORT {tot_r / 1e3:.2f} ms (sums of per-layer medians over {a.rounds} rounds "
          f"of {a.runs} runs), ratio {tot_o / max(tot_r, 1e-9):.2f}")
    print(f"| node | op | output | octet µs | octet kernel | ORT µs | ORT kernel | octet/ORT | lost µs |")
    print("|---|---|---|---:|---|---:|---|---:|---:|")
    for r in rows[:a.top or len(rows)]:
        label = r["label"] + (f" (+{len(r['nodes']) - 1} nodes)" if len(r["nodes"]) > 1 else "")
        ratio = f"{r['ratio']:.2f}" if r["ratio"] is not None else "–"
        print(f"| {label} | {r['op']} | {r['shape']} | {r['octet_us']:.1f} | {r['octet_kernel'] or '–'} | "
              f"{r['ort_us']:.1f} | {r['ort_kernel'] or '–'} | {ratio} | {r['lost_us']:.1f} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"model": a.model, "batch": a.batch, "threads": a.threads, "rounds": a.rounds, "runs": a.runs,
                       "octet_total_us": tot_o, "ort_total_us": tot_r, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
