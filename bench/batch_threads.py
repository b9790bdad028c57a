#!/usr/bin/env python3
"""A batch on 1 thread and on T threads, whole runs, for one build or two (before / after).

`octet run --profile` (bench/thread_bench.py) times one plan step by step, so it never shares a
batch out over the threads; this times whole runs through the Python module (build/python) as
a user's batch runs: each (build, threads) pair in a fresh process, alternated within every
round so machine noise hits all alike, the median of `--iters` runs after `--warmup` untimed
ones (which cover a threaded plan's tuning runs), then the median over rounds.

    bench/batch_threads.py MODEL.onnx... [--build build] [--before OTHER_BUILD] [--batch 16]
                           [--threads 2] [--rounds 3] [--iters 40] [--warmup 8]

Prints ms per image at 1 and T threads and the speed-up, per build, and T-thread after / before.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = r"""
import json, statistics, sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])
import octet
model, threads, batch, iters, warmup = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
s = octet.Session(model, threads=threads)
inp = s.get_inputs()[0]
shape = [batch if not isinstance(d, int) or d < 0 else d for d in inp.shape]
x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
for _ in range(warmup):
    s.run(None, {inp.name: x})
times = []
for _ in range(iters):
    t0 = time.perf_counter()
    s.run(None, {inp.name: x})
    times.append(time.perf_counter() - t0)
print(json.dumps(statistics.median(times) * 1e3 / batch))
"""


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="+")
    ap.add_argument("--build", default=os.path.join(root, "build"), help="build tree (its python/ module)")
    ap.add_argument("--before", default="", help="another build tree to compare against")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iters", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=8)
    a = ap.parse_args()
    builds = [("before", a.before), ("after", a.build)] if a.before else [("octet", a.build)]
    for _, b in builds:
        if not os.path.isdir(os.path.join(b, "python", "octet")):
            sys.exit(f"batch_threads.py: no Python module in {b}/python (build the tree first)")
    for m in a.models:
        name = os.path.basename(os.path.dirname(os.path.abspath(m))) + "/" + os.path.basename(m)
        times = {}
        for r in range(a.rounds):
            for label, b in builds:
                for t in (1, a.threads):
                    out = subprocess.run([sys.executable, "-c", CHILD, os.path.join(b, "python"), m, str(t),
                                          str(a.batch), str(a.iters), str(a.warmup)], capture_output=True, text=True)
                    if out.returncode != 0:
                        sys.exit(f"batch_threads.py: {m} ({label}, {t} threads) failed:\n{out.stderr[-2000:]}")
                    times.setdefault((label, t), []).append(json.loads(out.stdout.strip().splitlines()[-1]))
            print(f"  {name}: round {r + 1}/{a.rounds}", file=sys.stderr)
        med = {k: statistics.median(v) for k, v in times.items()}
        cells = [f"{label} {med[(label, 1)]:.3f} / {med[(label, a.threads)]:.3f} ms "
                 f"x{med[(label, 1)] / med[(label, a.threads)]:.2f}" for label, _ in builds]
        if a.before:
            cells.append(f"{a.threads}T after/before {med[('after', a.threads)] / med[('before', a.threads)]:.2f}")
        print(f"{name:48s} " + " | ".join(cells), flush=True)


if __name__ == "__main__":
    main()
