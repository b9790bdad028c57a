#!/usr/bin/env python3
"""Does the dispatcher pick the fastest microkernel on this machine?

Runs build/bench/f32_conv_bench and build/bench/q8_conv_bench (every microkernel this CPU
supports at every layer of bench/layer_shapes.h, the driver's own choice labelled "pick"),
takes the median of --repetitions runs of each, and for every layer and activation type
compares the pick with the fastest entry. Prints a Markdown table (and writes it with --out);
with --assert R it exits 1 when a pick is more than R times slower than the fastest, the way
tract's `hwbench --assert` checks its kernel choice. A timing check: run it in bench, never
as a test.

  bench/check_dispatch.py [--build DIR] [--repetitions N] [--min-time S] [--assert R] [--out FILE]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_bench(binary, repetitions, min_time):
    if not os.path.exists(binary):
        sys.exit(f"check_dispatch: {binary} is missing: build the benchmarks first (cmake --build build)")
    cmd = [binary, "--benchmark_format=json", f"--benchmark_min_time={min_time}",
           f"--benchmark_repetitions={repetitions}", "--benchmark_filter=^(f32_conv|q8_conv)/"]
    print("check_dispatch: " + " ".join(cmd), file=sys.stderr)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def groups_of(report):
    """(family, model, layer, activation type) -> {kernel: (median ns, is pick)}."""
    times = defaultdict(list)
    picks = set()
    for b in report["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        parts = b["run_name"].split("/")
        if len(parts) < 4:
            continue
        family, model, layer, kernel = parts[0], parts[1], parts[2], parts[3]
        if kernel.endswith("__ref"):
            continue
        act = kernel.split("_", 1)[0] if family == "q8_conv" else "f32"
        key = (family, model, layer, act)
        times[(key, kernel)].append(b["real_time"])
        if b.get("label") == "pick":
            picks.add((key, kernel))
    groups = defaultdict(dict)
    for (key, kernel), ts in times.items():
        groups[key][kernel] = (statistics.median(ts), (key, kernel) in picks)
    return groups


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--repetitions", type=int, default=5)
    p.add_argument("--min-time", type=float, default=0.05, help="seconds per repetition (default 0.05)")
    p.add_argument("--assert", dest="limit", type=float, help="exit 1 when a pick is slower than this times the fastest")
    p.add_argument("--out", help="also write the table to this file")
    a = p.parse_args()
    if a.repetitions < 1 or a.min_time <= 0:
        sys.exit("check_dispatch: --repetitions must be >= 1 and --min-time > 0")

    rows, worst, context = [], 1.0, None
    for name in ("f32_conv_bench", "q8_conv_bench"):
        report = run_bench(os.path.join(a.build, "bench", name), a.repetitions, a.min_time)
        context = context or report.get("context", {})
        for (family, model, layer, act), kernels in sorted(groups_of(report).items()):
            picked = [k for k, (_, pick) in kernels.items() if pick]
            if not picked or len(kernels) < 2:
                continue  # one candidate: nothing to choose
            fastest = min(kernels, key=lambda k: kernels[k][0])
            ratio = kernels[picked[0]][0] / kernels[fastest][0]
            worst = max(worst, ratio)
            rows.append(f"| {family} | {model} | {layer} | {act} | {picked[0]} | {fastest} | {ratio:.3f} |")

    lines = [
        f"# Dispatcher check: picked vs fastest microkernel ({context.get('date', '')[:10]})",
        "",
        f"`bench/check_dispatch.py --repetitions {a.repetitions}`: median of {a.repetitions} runs of each entry of "
        f"`f32_conv_bench` and `q8_conv_bench` (1 thread, {context.get('num_cpus', '?')} CPUs at "
        f"{context.get('mhz_per_cpu', '?')} MHz). Ratio = pick time / fastest time (1.000: the pick is the fastest).",
        "",
        "| bench | model | layer | activations | pick | fastest | pick / fastest |",
        "|---|---|---|---|---|---|---:|",
        *rows,
        "",
        f"Worst ratio: {worst:.3f} over {len(rows)} layer choices.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        tmp = a.out + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, a.out)
    if a.limit is not None and worst > a.limit:
        print(f"check_dispatch: a pick is {worst:.3f}x the fastest entry, over the --assert limit {a.limit}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
