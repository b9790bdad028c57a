#!/usr/bin/env python3
"""1 vs 2 (or N) threads over the zoo: whole-run medians and where the time at N threads goes.

Runs `octet --threads T run MODEL --random --profile` for every zoo model in FP32 (model.onnx),
static INT8 (model_int8.onnx) and dynamic INT8 (model_dynamic.onnx), alternating thread counts in
each round so machine noise hits both alike, and takes the median over rounds of each run's
median. Per step it compares the T-thread time against the 1-thread time and names the steps
that lose the most time to not scaling (time at T threads minus 1-thread time / T).

    bench/thread_bench.py [--octet BUILD/tools/octet] [--zoo DIR] [--only a,b] [--rounds 3]
                          [--threads 2] [--precisions fp32,int8,dynamic] [--out FILE.md] [--json FILE]
                          [--label TEXT] [--top 3]

Called by bench/run_thread_bench.sh, which also runs a second octet binary (main's) for the
before column.
"""
import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys

PRECISIONS = {"fp32": "model.onnx", "int8": "model_int8.onnx", "dynamic": "model_dynamic.onnx"}
STEP_RE = re.compile(r"^\s+(\d+)\s+(.{34}) (.{20}) (\S+)\s+([0-9.]+)\s+[0-9.]+")
# The sum of the per-step medians, not the median whole run: on a shared machine another
# tenant's time slice lands in most whole runs at 2 threads (a step waits for the preempted
# worker), but in few runs of any one step.
TOTAL_RE = re.compile(r"sum of step medians\s+([0-9.]+)\s+\(median whole run ([0-9.]+) us")


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def run_once(octet, model, threads, runs):
    cmd = [octet, "--threads", str(threads), "run", model, "--random", "--top", "1", "--profile",
           "--profile-runs", str(runs)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {out.stderr.strip()[-400:]}")
    steps = []
    total = None
    for line in out.stdout.splitlines():
        m = STEP_RE.match(line)
        if m:
            steps.append((int(m.group(1)), m.group(2).strip(), m.group(3).strip(), m.group(4), float(m.group(5))))
        t = TOTAL_RE.search(line)
        if t:
            total = float(t.group(1))
    if total is None:
        raise RuntimeError(f"{' '.join(cmd)}: no 'sum of step medians' in its output")
    return total, steps


def measure(octet, model, threads, rounds, budget_us):
    # Runs per process from a short first run: about budget_us of timed work per process.
    t0, _ = run_once(octet, model, 1, 10)
    runs = int(min(400, max(15, budget_us / max(t0, 1.0))))
    totals = {t: [] for t in threads}
    steps = {t: {} for t in threads}
    for _ in range(rounds):
        for t in threads:
            total, st = run_once(octet, model, t, runs)
            totals[t].append(total)
            for i, node, op, kernel, us in st:
                steps[t].setdefault((i, node, op), []).append((us, kernel))
    med = {t: statistics.median(v) for t, v in totals.items()}
    step_med = {t: {k: (statistics.median(u for u, _ in v), v[0][1]) for k, v in s.items()} for t, s in steps.items()}
    return med, step_med, runs


def losers(step_med, t, top):
    """Steps that lose the most to not scaling at t threads: time(t) - time(1) / t."""
    one, many = step_med[1], step_med[t]
    rows = []
    for key, (us_t, kernel) in many.items():
        if key not in one:
            continue
        us_1 = one[key][0]
        rows.append((us_t - us_1 / t, key[2], kernel, us_1, us_t))
    rows.sort(reverse=True)
    return rows[:top]


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--octet", default=os.path.join(root, "build", "tools", "octet"))
    ap.add_argument("--zoo", default=os.path.join(root, "build", "zoo"))
    ap.add_argument("--only", default="")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--precisions", default="fp32,int8,dynamic")
    ap.add_argument("--budget-ms", type=float, default=150.0, help="timed work per process (default 150 ms)")
    ap.add_argument("--top", type=int, default=3)
    ap.add_argument("--label", default="")
    ap.add_argument("--out", default="")
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    if a.rounds < 1 or a.threads < 2:
        sys.exit("thread_bench: --rounds must be >= 1 and --threads >= 2")
    manifest = os.path.join(a.zoo, "zoo.json")
    if not os.path.isfile(manifest):
        sys.exit(f"thread_bench: {manifest} is missing (the zoo: tools/zoo/export.py)")
    if not os.access(a.octet, os.X_OK):
        sys.exit(f"thread_bench: {a.octet} is not an executable octet binary")
    names = [m["name"] for m in json.load(open(manifest))["models"]]
    only = [n for n in a.only.split(",") if n]
    unknown = [n for n in only if n not in names]
    if unknown:
        sys.exit(f"thread_bench: not in the zoo: {', '.join(unknown)}")
    precisions = [p for p in a.precisions.split(",") if p]
    bad = [p for p in precisions if p not in PRECISIONS]
    if bad:
        sys.exit(f"thread_bench: unknown precision(s) {', '.join(bad)} (fp32, int8, dynamic)")
    threads = [1, a.threads]
    results = []
    for name in names:
        if only and name not in only:
            continue
        for p in precisions:
            model = os.path.join(a.zoo, name, PRECISIONS[p])
            if not os.path.isfile(model):
                print(f"thread_bench: {model} missing, row left out", file=sys.stderr)
                continue
            med, step_med, runs = measure(a.octet, model, threads, a.rounds, a.budget_ms * 1e3)
            top = losers(step_med, a.threads, a.top)
            r = {"model": name, "precision": p, "runs": runs, "us": {str(t): med[t] for t in threads},
                 "speedup": med[1] / med[a.threads],
                 "not_scaling": [{"op": op, "kernel": k, "us_1": u1, "us_n": un, "lost_us": lost}
                                 for lost, op, k, u1, un in top]}
            results.append(r)
            print(f"{name:30} {p:8} 1T {med[1]:9.1f} us  {a.threads}T {med[a.threads]:9.1f} us  "
                  f"x{r['speedup']:.2f}", file=sys.stderr, flush=True)
    doc = {"cpu": cpu_name(), "threads": a.threads, "rounds": a.rounds, "label": a.label, "results": results}
    if a.json:
        with open(a.json, "w") as f:
            json.dump(doc, f, indent=1)
    lines = [f"{a.label}: {doc['cpu']}, batch 1, 1 vs {a.threads} threads, median of {a.rounds} interleaved rounds; "
             "time = sum of the per-step medians of one process (robust to other tenants' time slices)", "",
             f"| model | precision | 1 thread us | {a.threads} threads us | speed-up | where the {a.threads}-thread time goes "
             f"(op kernel: 1T -> {a.threads}T us) |", "|---|---|---:|---:|---:|---|"]
    for r in results:
        where = "; ".join(f"{s['op']} {s['kernel']}: {s['us_1']:.1f} -> {s['us_n']:.1f}" for s in r["not_scaling"])
        lines.append(f"| {r['model']} | {r['precision']} | {r['us']['1']:.1f} | {r['us'][str(a.threads)]:.1f} | "
                     f"{r['speedup']:.2f} | {where} |")
    text = "\n".join(lines) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    main()
