#!/usr/bin/env python3
"""Does the dispatcher pick the fastest kernel for the layers of the zoo, on this machine?

Runs build/bench/dispatch_check over every model of a zoo (each NAME/model.onnx and, when
present, its static INT8 form model_int8.onnx) and the bundled models: for every distinct
conv layer as the plan runs it, at batch 1 and 16, every candidate kernel the dispatcher could
have chosen on this CPU is timed with the weights, before each run, where the model leaves them
(in the L3 when the model's weights fit what a run can count on finding there again,
CacheBudgets::model_weights_in_l3, else in memory), and the
plan's pick is set against the fastest. Prints a Markdown
table of every layer, worst first (and writes it with --out, the raw rows with --json); with
--assert R exits 1 when a pick is more than R times slower than the fastest, the way tract's
`hwbench --assert` checks its kernel choice. A timing check: run it in bench, never as a test
(ctest's dispatch_check_candidates runs it on the bundled models, briefly, only to check that
every pick is one of the candidates: that the table compares the dispatcher against all it
could have chosen).

  bench/check_dispatch.py [--build DIR] [--zoo DIR | --no-zoo] [--only A,B] [--batch 1,16] [--repetitions N]
                          [--min-time S] [--warm] [--cpu-time] [--assert R] [--out FILE] [--json FILE]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from thread_bench import cpu_name  # bench/: the same CPU line in every table

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def zoo_models(zoo, only):
    names = sorted(d for d in os.listdir(zoo) if os.path.isfile(os.path.join(zoo, d, "model.onnx")))
    if only:
        unknown = [n for n in only if n not in names]
        if unknown:
            sys.exit(f"check_dispatch: not in {zoo}: {', '.join(unknown)}")
        names = [n for n in names if n in only]
    files = []
    for n in names:
        for f in ("model.onnx", "model_int8.onnx"):
            path = os.path.join(zoo, n, f)
            if os.path.isfile(path):
                files.append(path)
    return files


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--zoo", help="zoo folder (default: BUILD/zoo when it exists); the bundled models are always in")
    p.add_argument("--no-zoo", action="store_true", help="the bundled models only")
    p.add_argument("--warm", action="store_true", help="keep the weights cached between runs (dispatch_check --warm)")
    p.add_argument("--cpu-time", action="store_true",
                   help="time by the thread's CPU time, not the wall clock (dispatch_check --cpu-time; a loaded machine)")
    p.add_argument("--only", default="", help="comma-separated zoo model names")
    p.add_argument("--batch", default="1,16", help="batch sizes (default 1,16)")
    p.add_argument("--repetitions", type=int, default=5)
    p.add_argument("--min-time", type=float, default=0.02, help="seconds per candidate per round (default 0.02)")
    p.add_argument("--assert", dest="limit", type=float, help="exit 1 when a pick is slower than this times the fastest")
    p.add_argument("--out", help="also write the table to this file")
    p.add_argument("--json", help="also write dispatch_check's rows to this file")
    a = p.parse_args()
    if a.repetitions < 1 or a.min_time <= 0:
        sys.exit("check_dispatch: --repetitions must be >= 1 and --min-time > 0")
    tool = os.path.join(a.build, "bench", "dispatch_check")
    if not os.path.exists(tool):
        sys.exit(f"check_dispatch: {tool} is missing: build it first (ninja -C {a.build} dispatch_check)")
    zoo = None if a.no_zoo else a.zoo or (os.path.join(a.build, "zoo") if os.path.isdir(os.path.join(a.build, "zoo"))
                                          else None)
    models = [os.path.join(ROOT, "models", m) for m in ("resnet8.onnx", "tinynet.onnx")]
    models += [os.path.join(ROOT, "models", m) for m in ("resnet8_int8.onnx", "tinynet_int8.onnx")
               if os.path.isfile(os.path.join(ROOT, "models", m))]
    if zoo:
        models += zoo_models(zoo, [n for n in a.only.split(",") if n])
    batches = [b for b in a.batch.split(",") if b]

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "rows.json")
        cmd = [tool, "--min-time", str(a.min_time), "--repetitions", str(a.repetitions), "--json", out]
        cmd += ["--batch", ",".join(batches)] + (["--warm"] if a.warm else []) + (["--cpu-time"] if a.cpu_time else [])
        started = time.time()
        print(f"check_dispatch: {len(models)} model files, batch {a.batch}", file=sys.stderr)
        subprocess.run(cmd + models, check=True)
        with open(out) as f:
            report = json.load(f)
    elapsed = time.time() - started

    rows = [r for r in report["rows"] if len(r["candidates"]) > 1]
    missing = [r for r in rows if r["pick_us"] is None]
    rows.sort(key=lambda r: -(r["ratio"] or 0))
    worst = max((r["ratio"] for r in rows if r["ratio"] is not None), default=1.0)
    over = [r for r in rows if a.limit is not None and r["ratio"] is not None and r["ratio"] > a.limit]

    def model_names(r):
        names = sorted({os.path.relpath(m, zoo).split(os.sep)[0] if zoo and m.startswith(zoo) else os.path.basename(m)
                        for m in r["models"]})
        return ", ".join(names[:3]) + (f" +{len(names) - 3}" if len(names) > 3 else "")

    table = []
    for r in rows:
        others = ", ".join(f"{c['kernel']} {c['us']:.0f}" for c in r["candidates"] if c["kernel"] != r["pick"])
        pick = f"{r['pick']} {r['pick_us']:.0f}" if r["pick_us"] is not None else f"{r['pick']} (not a candidate)"
        ratio = f"{r['ratio']:.2f}" if r["ratio"] is not None else "?"
        table.append(f"| {r['family']} | {r['layer']} | {model_names(r)} | {pick} | {others} | {ratio} |")
    lines = [
        f"# Dispatcher check: the plan's pick vs every candidate, per zoo layer ({time.strftime('%Y-%m-%d')})",
        "",
        f"`bench/check_dispatch.py --batch {a.batch} --repetitions {a.repetitions} --min-time {a.min_time}"
        f"{' --cpu-time' if a.cpu_time else ''}` on "
        f"{cpu_name()} ({os.cpu_count()} CPUs, kernels up to {report['isa']}), {len(models)} model files, "
        f"1 thread, weights {report['weights']} before each run (L3 or memory); {elapsed / 60:.1f} min. Times are medians in µs"
        f"{' of CPU time' if a.cpu_time else ''}; "
        "ratio = pick / fastest (1.00: the pick is the fastest).",
        "",
        "| family | layer | models | pick (µs) | other candidates (µs) | pick / fastest |",
        "|---|---|---|---|---|---:|",
        *table,
        "",
        f"Worst ratio {worst:.2f} over {len(rows)} layers with a choice; "
        f"{sum(1 for r in rows if r['ratio'] is not None and r['ratio'] > 1.10)} more than 10% off the fastest.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    for path, content in ((a.out, text), (a.json, json.dumps(report, indent=1) + "\n")):
        if path:
            with open(path + ".tmp", "w") as f:
                f.write(content)
            os.replace(path + ".tmp", path)
    if missing:
        print(f"check_dispatch: {len(missing)} layer(s) picked a kernel that is not among the candidates "
              f"(first: {missing[0]['layer']}: {missing[0]['pick']})", file=sys.stderr)
        return 1
    if over:
        print(f"check_dispatch: {len(over)} pick(s) over the --assert limit {a.limit} (worst {worst:.2f})",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
