#!/usr/bin/env python3
"""1 vs 2 (or N) threads over the zoo: whole-run medians and where the time at N threads goes.

Runs `octet --threads T run MODEL --random --profile` for every zoo model in FP32 (model.onnx),
static INT8 (model_int8.onnx) and dynamic INT8 (model_dynamic.onnx), alternating thread counts in
each round so machine noise hits both alike, and takes the median over rounds of each run's
median. Per step it compares the T-thread time against the 1-thread time and names the steps
that lose the most time to not scaling (time at T threads minus 1-thread time / T).

    bench/thread_bench.py [--octet LABEL=PATH ...] [--zoo DIR] [--only a,b] [--rounds 3]
                          [--threads 2] [--precisions fp32,int8,dynamic] [--out FILE.md] [--json FILE]
                          [--label TEXT] [--top 3]

bench/run_thread_bench.sh calls it with two binaries (before and after a change).
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
    """The CPU line of every bench table: model name, with family and model where /proc says."""
    try:
        with open("/proc/cpuinfo") as f:
            info = dict(line.split(":", 1) for line in f if ":" in line and not line.startswith("flags"))
        name = info.get("model name\t", "").strip()
        fam, mod = info.get("cpu family\t", "").strip(), info.get("model\t\t", "").strip()
        return f"{name} (family {fam} model {mod})" if fam else name
    except (OSError, ValueError):
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


def measure(octets, model, threads, rounds, budget_us):
    """Per binary: {threads: median total}, {threads: {step: (median us, kernel)}}. Every round
    runs every binary at every thread count, so load changes hit all of them alike."""
    # Runs per process from a short first run: about budget_us of timed work per process.
    t0, _ = run_once(octets[0][1], model, 1, 10)
    runs = int(min(400, max(15, budget_us / max(t0, 1.0))))
    totals = {(b, t): [] for b, _ in octets for t in threads}
    steps = {(b, t): {} for b, _ in octets for t in threads}
    for _ in range(rounds):
        for b, octet in octets:
            for t in threads:
                total, st = run_once(octet, model, t, runs)
                totals[(b, t)].append(total)
                for i, node, op, kernel, us in st:
                    steps[(b, t)].setdefault((i, node, op), []).append((us, kernel))
    out = {}
    for b, _ in octets:
        med = {t: statistics.median(totals[(b, t)]) for t in threads}
        step_med = {t: {k: (statistics.median(u for u, _ in v), v[0][1]) for k, v in steps[(b, t)].items()}
                    for t in threads}
        out[b] = (med, step_med)
    return out, runs


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
    ap.add_argument("--octet", action="append", default=[],
                    help="LABEL=PATH of an octet binary (repeatable; default: after=BUILD/apps/octet)")
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
    octets = []
    for spec in a.octet or ["after=" + os.path.join(root, "build", "apps", "octet")]:
        label, _, path = spec.partition("=")
        if not path:
            label, path = os.path.basename(spec), spec
        if not os.access(path, os.X_OK):
            sys.exit(f"thread_bench: {path} is not an executable octet binary")
        octets.append((label, path))
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
            per_binary, runs = measure(octets, model, threads, a.rounds, a.budget_ms * 1e3)
            r = {"model": name, "precision": p, "runs": runs, "binaries": {}}
            for b, (med, step_med) in per_binary.items():
                top = losers(step_med, a.threads, a.top)
                r["binaries"][b] = {
                    "us": {str(t): med[t] for t in threads}, "speedup": med[1] / med[a.threads],
                    "not_scaling": [{"op": op, "kernel": k, "us_1": u1, "us_n": un, "lost_us": lost}
                                    for lost, op, k, u1, un in top]}
                print(f"{name:30} {p:8} {b:8} 1T {med[1]:9.1f} us  {a.threads}T {med[a.threads]:9.1f} us  "
                      f"x{med[1] / med[a.threads]:.2f}", file=sys.stderr, flush=True)
            results.append(r)
    doc = {"cpu": cpu_name(), "threads": a.threads, "rounds": a.rounds, "label": a.label, "results": results}
    if a.json:
        with open(a.json, "w") as f:
            json.dump(doc, f, indent=1)
    labels = [b for b, _ in octets]
    n = a.threads
    lines = [f"{doc['cpu']}, batch 1, 1 vs {n} threads, median of {a.rounds} interleaved rounds; time = sum of "
             "the per-step medians of one process (robust to other tenants' time slices); us at 1 thread / "
             f"{n} threads, speed-up", ""]
    head = "| model | precision | " + " | ".join(f"{b} 1T / {n}T us | {b} x" for b in labels)
    head += f" | where the {n}-thread time goes ({labels[-1]}; op kernel: 1T -> {n}T us) |"
    lines += [head, "|---|---|" + "---:|---:|" * len(labels) + "---|"]
    for r in results:
        cells = []
        for b in labels:
            d = r["binaries"][b]
            cells.append(f"{d['us']['1']:.1f} / {d['us'][str(n)]:.1f} | {d['speedup']:.2f}")
        last = r["binaries"][labels[-1]]
        where = "; ".join(f"{s['op']} {s['kernel']}: {s['us_1']:.1f} -> {s['us_n']:.1f}" for s in last["not_scaling"])
        lines.append(f"| {r['model']} | {r['precision']} | " + " | ".join(cells) + f" | {where} |")
    text = "\n".join(lines) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    main()
