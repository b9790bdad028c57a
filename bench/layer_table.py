#!/usr/bin/env python3
"""Per-layer table: octet's chosen FP32 and INT8 kernels next to oneDNN at every conv layer of one
model in bench/layer_shapes.h, from one run of the kernel benchmarks (pinned to one CPU, Google
Benchmark repetitions interleaved at random, median real time).

    bench/layer_table.py [--build build] [--model resnet8-mlperf] [--repetitions 5] [--cpu 0]

Needs build/bench/{f32_conv,f32_winograd,q8_conv,dwconv}_bench; dnnl_peer_bench when oneDNN
(libdnnl-dev) was found at build time (the oneDNN columns are empty otherwise).
Only the Python standard library is used.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys


def run_bench(path, pattern, repetitions, cpu):
    """{benchmark name without /real_time: (median real µs, label)} for one program."""
    if not os.path.exists(path):
        return {}
    cmd = ["taskset", "-c", str(cpu), path, f"--benchmark_filter={pattern}", "--benchmark_format=json",
           f"--benchmark_repetitions={repetitions}", "--benchmark_enable_random_interleaving=true",
           "--benchmark_min_time=0.05"]
    print("running", " ".join(cmd[3:5]), file=sys.stderr)
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    if not out.strip():
        return {}  # nothing matched the filter (e.g. no depthwise layer in this model)
    samples, labels = {}, {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        name = b["name"].removesuffix("/real_time")
        scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[b.get("time_unit", "ns")]
        samples.setdefault(name, []).append(b["real_time"] * scale)
        if b.get("label"):
            labels[name] = b["label"]
    return {n: (statistics.median(v), labels.get(n, "")) for n, v in samples.items()}


def pick(results, prefix):
    """(µs, kernel) of the entry labelled 'pick' under prefix, else the fastest non-ref entry."""
    rows = [(us, name[len(prefix):], label) for name, (us, label) in results.items() if name.startswith(prefix)]
    rows = [r for r in rows if "__ref" not in r[1]]
    if not rows:
        return None
    picked = [r for r in rows if r[2] == "pick"]
    us, kernel, _ = picked[0] if picked else min(rows)
    return us, kernel


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "..", "build"))
    ap.add_argument("--model", default="resnet8-mlperf")
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--cpu", type=int, default=0)
    a = ap.parse_args()
    b = os.path.join(a.build, "bench")
    pattern = f"/{a.model}/"
    direct = run_bench(os.path.join(b, "f32_conv_bench"), pattern, a.repetitions, a.cpu)
    wino = run_bench(os.path.join(b, "f32_winograd_bench"), pattern, a.repetitions, a.cpu)
    q8 = run_bench(os.path.join(b, "q8_conv_bench"), pattern + ".*qu8s8", a.repetitions, a.cpu)
    dw = run_bench(os.path.join(b, "dwconv_bench"), pattern, a.repetitions, a.cpu)
    dnnl = run_bench(os.path.join(b, "dnnl_peer_bench"), pattern, a.repetitions, a.cpu)

    layers = []
    for name in list(direct) + list(dw):
        layer = name.split("/")[2]
        if layer not in layers and not layer.startswith("fc"):
            layers.append(layer)
    print(f"| {a.model} layer | oneDNN f32 µs | octet f32 µs | kernel | ×oneDNN | oneDNN u8s8 µs | octet int8 µs "
          "| kernel | ×oneDNN | octet int8/f32 |")
    print("|---|---:|---:|---|---:|---:|---:|---|---:|---:|")
    fmt = lambda v: f"{v:.2f}" if v is not None else "–"
    for layer in layers:
        depthwise = layer.startswith("dw")
        if depthwise:
            f32 = pick({k: v for k, v in dw.items() if "/f32_" in k}, f"dwconv/{a.model}/{layer}/")
            i8 = pick({k: v for k, v in dw.items() if "/q8_" in k}, f"dwconv/{a.model}/{layer}/")
        else:
            f32 = pick(direct, f"f32_conv/{a.model}/{layer}/")
            w = pick({k: v for k, v in wino.items() if "winograd" in k}, f"f32_winograd/{a.model}/{layer}/")
            # The engine's rule (F32WinogradConv::faster_than_direct): 3x3, stride 1, 8+ input channels.
            in_c = int(layer.split()[1].split("->")[0])
            if w and layer.startswith("conv3x3") and " s2 " not in layer and in_c >= 8:
                f32 = w
            i8 = pick(q8, f"q8_conv/{a.model}/{layer}/")
        d32 = dnnl.get(f"dnnl/{a.model}/{layer}/f32", (None,))[0]
        d8 = dnnl.get(f"dnnl/{a.model}/{layer}/u8s8", (None,))[0]
        r32 = f"{f32[0] / d32:.2f}" if f32 and d32 else "–"
        r8 = f"{i8[0] / d8:.2f}" if i8 and d8 else "–"
        ratio = f"{i8[0] / f32[0]:.2f}" if i8 and f32 else "–"
        print(f"| {layer} | {fmt(d32)} | {fmt(f32 and f32[0])} | {f32[1] if f32 else '–'} | {r32} | {fmt(d8)} "
              f"| {fmt(i8 and i8[0])} | {i8[1] if i8 else '–'} | {r8} | {ratio} |")


if __name__ == "__main__":
    main()
