#!/usr/bin/env python3
"""The zoo table: octet vs ONNX Runtime on every model, FP32, static INT8 and dynamic INT8, per batch.

For every model of a zoo (tools/zoo/export.py) and every precision and batch, one cell:
  octet ms/image, ORT ms/image, ratio octet/ORT   build/bench/model_bench on that one file: one
                                                  thread, pinned to --cpu, octet and ORT in
                                                  interleaved rounds; medians over the rounds
  identical / max rel diff                        one more run of each engine on the same random
                                                  batch (normal, seed 7): INT8, the share of output
                                                  values bit-identical to ORT's; FP32, max over the
                                                  outputs of max |octet - ORT| / max |ORT|
  scalar steps                                    `octet info --json --batch B`: plan steps on a
                                                  scalar reference kernel at this CPU's level
A model short of a target at any batch (FP32 ratio above 0.85, static INT8 above 0.6, dynamic
INT8 above 0.3) gets its batch-1 `octet run --profile` (share per op type, top steps) under the
table. Static INT8 is
model_int8.onnx (`octet quantize --calib npy:calib.npy`: minmax, per-channel, uint8 activations),
dynamic is model_dynamic.onnx (`octet quantize --mode dynamic`); either is written when missing or
older than model.onnx. A cell whose engine fails says why; the run goes on.

    /usr/bin/python3 bench/zoo_bench.py [--build DIR] [--zoo DIR | --model FILE ...] [--only a,b]
        [--precisions fp32,static,dynamic] [--batches 1,16] [--rounds 3] [--cpu 1]
        [--budget-ms 300] [--top 5] [--out FILE.md] [--json FILE.json] [--resume [--no-measure]]
        [--label TEXT]

--zoo (default build/zoo) reads zoo.json (without it: every NAME/model.onnx, by name); --model runs loose .onnx files instead (each gets a
random-normal calib.npy of 32 images in the run folder). Cells are done batch by batch (every
model at the first batch, then the next), so the slow large-batch runs come last; the JSON
(default out/zoo-bench/zoo_bench.json) is rewritten after every cell and --resume keeps the cells
and profiles it already has (--no-measure: only render them). Timed runs per round: about
--budget-ms of the slower engine's time (5x above batch 1), sized from a batch already measured,
else from the model's MACs. Markdown to --out (default: stdout only), progress on stderr. Needs numpy.
"""
import argparse
import datetime
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from thread_bench import cpu_name  # bench/: the same CPU line in every table

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PRECISIONS = {"fp32": ("FP32", "model.onnx"), "static": ("static INT8", "model_int8.onnx"),
              "dynamic": ("dynamic INT8", "model_dynamic.onnx")}
TARGETS = {"fp32": 0.85, "static": 0.6, "dynamic": 0.3}
STEP_RE = re.compile(r"^\s+(\d+)\s+(.{34}) (.{20}) (.+?)\s+([0-9.]+)\s+([0-9.]+)(\s+[0-9.]+)?\s*$")
TOTAL_RE = re.compile(r"sum of step medians\s+([0-9.]+)")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def last_line(text):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[-1].strip()[:300] if lines else "no message"


def run(cmd, **kw):
    cmd = [str(c) for c in cmd]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, **kw)
    except OSError as e:  # e.g. a binary being relinked: that cell fails, the run goes on
        return subprocess.CompletedProcess(cmd, 127, "", f"cannot start {cmd[0]}: {e}")


class Bench:
    def __init__(self, a):
        self.a = a
        self.octet = os.path.join(a.build, "apps", "octet")
        self.model_bench = os.path.join(a.build, "bench", "model_bench")
        self.ort_run = os.path.join(ROOT, "tools", "ort", "ort_run.mjs")

    # -- files -------------------------------------------------------------------------------
    def ensure_file(self, m, prec):
        """The model's file for a precision, quantized when missing or stale; raises with why not."""
        path = os.path.join(m["dir"], PRECISIONS[prec][1])
        if prec == "fp32":
            return path
        fp32 = os.path.join(m["dir"], "model.onnx")
        if os.path.exists(path) and os.path.getmtime(path) >= os.path.getmtime(fp32):
            return path
        cmd = [self.octet, "quantize", fp32, "-o", path, "--no-progress"]
        if prec == "static":
            calib = os.path.join(m["dir"], "calib.npy")
            if not os.path.exists(calib):
                raise RuntimeError(f"no calib.npy (tools/zoo/export.py --calib-only --only {m['name']})")
            cmd += ["--calib", f"npy:{calib}", "--calib-count", "32"]
        else:
            cmd += ["--mode", "dynamic"]
        log(f"  quantizing ({prec}) -> {path}")
        out = run(cmd)
        if out.returncode != 0:
            raise RuntimeError(f"octet quantize failed: {last_line(out.stderr + out.stdout)}")
        return path

    def peaks(self):
        """This CPU's measured peaks (`bench/peak`, pinned): FP32 GFLOP/s and INT8 GMAC/s, the best
        path of any width; {} when the binary is missing or says nothing parseable."""
        binary = os.path.join(self.a.build, "bench", "peak")
        if not os.access(binary, os.X_OK):
            return {}
        pin = ["taskset", "-c", self.a.cpu] if shutil.which("taskset") else []
        out = run(pin + [binary])
        f32 = [float(m.group(1)) for m in re.finditer(r"^f32 FMA (?:ymm|zmm|q|v)[^\n]*?([0-9.]+) GFLOP/s", out.stdout, re.M)]
        q8 = [float(m.group(1)) for m in re.finditer(r"^u8s8 [^\n]*?([0-9.]+) GMAC/s", out.stdout, re.M)]
        peaks = {}
        if f32:
            peaks["f32_gflops"] = max(f32)
        if q8:
            peaks["int8_gmacs"] = max(q8)
        return peaks

    def info(self, path, batch):
        out = run([self.octet, "info", path, "--json", "--batch", batch])
        if out.returncode != 0:
            raise RuntimeError(f"octet cannot plan it: {last_line(out.stderr)}")
        return json.loads(out.stdout)

    # -- one cell ----------------------------------------------------------------------------
    def iters(self, est_ms_per_image, batch, image_bytes):
        # A timed block of --budget-ms per engine and round at batch 1, 5x that above, at most 200 MB
        # of repeated input for ORT's runner.
        target = self.a.budget_ms * (1 if batch == 1 else 5)
        cap = min(200 if batch == 1 else 20, max(1, int(200e6 // (batch * image_bytes))))
        return max(1, min(cap, round(target / (max(est_ms_per_image, 0.02) * batch))))

    def time_cell(self, path, batch, iters, work):
        js = os.path.join(work, "model_bench.json")
        # Above batch 1 a run takes long enough that one untimed ORT run per round warms it.
        out = run([self.model_bench, path, "--batch", batch, "--iters", iters, "--rounds", self.a.rounds,
                   "--threads", 1, "--cpu", self.a.cpu, "--ort-warmup", 5 if batch == 1 else 1, "--json", js])
        if out.returncode != 0:
            raise RuntimeError(last_line(out.stderr).replace("model_bench: error: ", ""))
        r = json.load(open(js))[0]
        return {"octet_ms": r["median_octet_ms"], "ort_ms": r["median_ort_ms"], "ratio": r["median_ratio"],
                "ratios": r["ratio"], "iters": iters, "header": last_line(out.stdout.splitlines()[0])}

    def accuracy_cell(self, path, prec, in_spec, batch, work):
        shape = [batch] + [int(d) for d in in_spec["shape"][1:]]
        x = np.random.default_rng(7).standard_normal(shape, dtype=np.float32)
        x_path = os.path.join(work, "x.npy")
        np.save(x_path, x)
        mine, theirs = os.path.join(work, "octet"), os.path.join(work, "ort")
        out = run([self.octet, "run", path, "--input", x_path, "--output-dir", mine, "--top", 1])
        if out.returncode != 0:
            return {"error": f"octet: {last_line(out.stderr)}"}
        out = run(["node", self.ort_run, "--model", path, "--input", f"{in_spec['name']}={x_path}",
                   "--output-dir", theirs, "--threads", 1])
        if out.returncode != 0:
            return {"error": f"ORT: {last_line(out.stderr)}"}
        identical = values = 0
        rel = 0.0
        for name, entry in json.load(open(os.path.join(theirs, "outputs.json"))).items():
            ref_file = os.path.join(theirs, entry["file"])
            my_file = os.path.join(mine, entry["file"])
            if not os.path.exists(my_file):
                return {"error": f"octet wrote no {entry['file']} for output {name}"}
            a, b = np.load(my_file), np.load(ref_file)
            if a.shape != b.shape:
                return {"error": f"output {name}: octet {list(a.shape)} vs ORT {list(b.shape)}"}
            if a.dtype == b.dtype:  # bit patterns, so -0.0 vs 0.0 differs and equal NaNs count
                bits = np.dtype(f"u{a.itemsize}")
                identical += int(np.count_nonzero(a.reshape(-1).view(bits) == b.reshape(-1).view(bits)))
            values += a.size
            fa, fb = a.astype(np.float64), b.astype(np.float64)
            if not (np.isfinite(fa).all() and np.isfinite(fb).all()):
                return {"error": f"output {name}: NaN or infinity"}
            peak = float(np.abs(fb).max()) if fb.size else 0.0
            diff = float(np.abs(fa - fb).max()) if fa.size else 0.0
            rel = max(rel, diff / peak if peak > 0 else diff)
        return {"identical_pct": 100.0 * identical / values if values else 100.0, "max_rel_diff": rel}

    def cell(self, m, prec, batch, earlier):
        c = {"model": m["name"], "precision": prec, "batch": batch}
        try:
            fp32_info = self.info(os.path.join(m["dir"], "model.onnx"), 1)
            path = self.ensure_file(m, prec)
            info = fp32_info if prec == "fp32" and batch == 1 else self.info(path, batch)
        except (RuntimeError, json.JSONDecodeError) as e:
            c["error"] = str(e)
            return c
        c["file"] = os.path.relpath(path, ROOT) if path.startswith(ROOT) else path
        c["scalar_steps"] = [f"{s['node']} ({s['op']})" for s in info["steps"] if s.get("scalar")]
        c["isa"] = info.get("isa")
        c["macs_per_image"] = fp32_info["total_macs"]
        in_spec = info["inputs"][0]
        image_bytes = 4 * math.prod(int(d) for d in in_spec["shape"][1:])
        # The slower engine's time per image at a batch already measured, else ~50 GMAC/s.
        est = max([max(e["octet_ms"], e["ort_ms"]) for e in earlier if "ratio" in e] or [fp32_info["total_macs"] / 50e6])
        work = tempfile.mkdtemp(prefix="zoo_bench_")
        try:
            try:
                c.update(self.time_cell(path, batch, self.iters(est, batch, image_bytes), work))
            except RuntimeError as e:
                c["error"] = str(e)
            c.update(self.accuracy_cell(path, prec, in_spec, batch, work) if "error" not in c else {})
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return c

    def profile(self, path, top):
        """`octet run --profile` at batch 1, pinned: (sum of step medians us, share per op type, top steps)."""
        pin = ["taskset", "-c", self.a.cpu] if shutil.which("taskset") else []
        out = run(pin + [self.octet, "run", path, "--random", "--top", 1, "--profile", "--profile-runs", 30])
        if out.returncode != 0:
            return None, "", [f"profile failed: {last_line(out.stderr)}"]
        steps = []
        total = None
        for line in out.stdout.splitlines():
            s = STEP_RE.match(line)
            if s:
                steps.append((float(s.group(5)), float(s.group(6)), s.group(2).strip(), s.group(3).strip(), s.group(4)))
            t = TOTAL_RE.search(line)
            if t:
                total = float(t.group(1))
        by_op = {}
        for us, _, _, op, _ in steps:
            by_op[op] = by_op.get(op, 0.0) + us
        ops = sorted(by_op.items(), key=lambda kv: -kv[1])[:4]
        share = ", ".join(f"{op} {100 * us / total:.0f}%" for op, us in ops) if total else ""
        steps.sort(reverse=True)
        return total, share, [f"{us:.0f} us {op} {node} ({kernel})" for us, _, node, op, kernel in steps[:top]]


# -- models ------------------------------------------------------------------------------------
def zoo_models(zoo, only):
    manifest = os.path.join(zoo, "zoo.json")
    if os.path.isfile(manifest):
        names = [m["name"] for m in json.load(open(manifest))["models"]]
    elif os.path.isdir(zoo):  # an export still under way writes zoo.json last
        names = sorted(n for n in os.listdir(zoo) if os.path.isfile(os.path.join(zoo, n, "model.onnx")))
    else:
        sys.exit(f"zoo_bench: no {zoo}: run /usr/bin/python3 tools/zoo/export.py --out {zoo}")
    unknown = [n for n in only if n not in names]
    if unknown:
        sys.exit(f"zoo_bench: not in {manifest}: {', '.join(unknown)}")
    return [{"name": n, "dir": os.path.join(zoo, n)} for n in (only or names)]  # --only's order


def loose_models(files, run_dir, octet):
    """Each loose .onnx copied into RUN_DIR/models/NAME/model.onnx with a random-normal calib.npy."""
    out = []
    for f in files:
        name = os.path.splitext(os.path.basename(f))[0]
        d = os.path.join(run_dir, "models", name)
        os.makedirs(d, exist_ok=True)
        dst = os.path.join(d, "model.onnx")
        if not os.path.exists(dst) or os.path.getmtime(dst) < os.path.getmtime(f):
            shutil.copyfile(f, dst)
        try:
            info = json.loads(run([octet, "info", dst, "--json"]).stdout)
        except json.JSONDecodeError:
            info = None  # octet cannot load it: every cell will say so
        if info:
            shape = [32] + [int(x) for x in info["inputs"][0]["shape"][1:]]
            calib = np.random.default_rng(11).standard_normal(shape, dtype=np.float32)
            np.save(os.path.join(d, "calib.npy"), calib)
        out.append({"name": name, "dir": d})
    return out


# -- table -------------------------------------------------------------------------------------
def fmt_ms(v):
    return f"{v:.3f}" if v < 10 else f"{v:.1f}"


def cell_columns(c):
    """octet ms, ORT ms, ratio, identical / max rel, scalar steps."""
    if c is None:
        return ["not run"] + [""] * 4
    if "error" in c and "ratio" not in c:
        return [f"fails: {c['error'][:160]}".replace("|", "/")] + [""] * 4
    ratio = f"**{c['ratio']:.2f}**" if c["ratio"] <= TARGETS[c["precision"]] else f"{c['ratio']:.2f}"
    ratio += f" ({min(c['ratios']):.2f}–{max(c['ratios']):.2f})" if len(c["ratios"]) > 1 else ""
    if "error" in c:
        acc = f"fails: {c['error'][:100]}".replace("|", "/")
    elif c["precision"] == "fp32":
        acc = f"{c['max_rel_diff']:.1e}"
    else:
        acc = f"{c['identical_pct']:.2f}%" if c["identical_pct"] < 100 else "100%"
    return [fmt_ms(c["octet_ms"]), fmt_ms(c["ort_ms"]), ratio, acc, str(len(c["scalar_steps"]))]


def peak_shares(c, peaks):
    """(octet %, ORT %, % octet needs for the target) of this CPU's peak at the cell's
    precision (FP32 FLOP/s, INT8 MAC/s), from the FP32 model's MACs; None without them."""
    key = "f32_gflops" if c["precision"] == "fp32" else "int8_gmacs"
    macs = c.get("macs_per_image")
    if not macs or key not in peaks or "octet_ms" not in c:
        return None
    rate = peaks[key] * 1e9 / (2 if key == "f32_gflops" else 1)  # MAC/s
    share = lambda ms: 100.0 * macs / (ms * 1e-3) / rate
    return share(c["octet_ms"]), share(c["ort_ms"]), share(c["ort_ms"] * TARGETS[c["precision"]])


def render(doc):
    a = doc["args"]
    batches, precs = a["batches"], a["precisions"]
    cells = {(c["model"], c["precision"], c["batch"]): c for c in doc["cells"]}
    lines = [f"`{doc['command']}`: {doc['engines']}, one thread pinned to CPU {a['cpu']}, {a['rounds']} interleaved "
             f"round(s) per cell, on {doc['cpu']} ({doc['date']}{', ' + a['label'] if a['label'] else ''}). "
             "ms per image are medians over the rounds; the ratio is octet / ORT, the median of the per-round ratios "
             "(range in brackets), **bold** when it meets the target (FP32 0.85, static INT8 0.6, dynamic INT8 0.3). "
             "\"same\" is the share of output values bit-identical to ORT's (INT8) or max |octet − ORT| / max |ORT| "
             "(FP32) on one random-normal batch of that size; \"scalar\" counts plan steps on a scalar reference "
             "kernel at this CPU's level.", ""]
    head = ["model", "precision"]
    for b in batches:
        head += [f"b{b} octet ms", f"b{b} ORT ms", f"b{b} ratio", f"b{b} same", f"b{b} scalar"]
    lines += ["| " + " | ".join(head) + " |", "|---|---|" + "---:|" * (len(head) - 2)]
    names = list(dict.fromkeys(c["model"] for c in doc["cells"]))
    for name in names:
        for p in precs:
            row = [name, PRECISIONS[p][0]]
            for b in batches:
                row += cell_columns(cells.get((name, p, b)))
            lines.append("| " + " | ".join(row) + " |")
    short = doc.get("short", [])
    if short:
        lines += ["", "Short of target (static INT8's 0.6 assumes VNNI; this CPU "
                      f"{'has' if doc.get('vnni') else 'has none'}), with the `octet run --profile` share per op "
                      "and top steps at batch 1:", ""]
        peaks = doc.get("peaks", {})
        for s in short:
            prof = f"profile {s['total_us'] / 1000:.2f} ms ({s['by_op']}); top steps: " if s.get("total_us") else ""
            over = ", ".join(f"b{b} {r:.2f}" for b, r in s["ratios"].items())
            # How much of the peak the target asks: past ~90% over a whole model (its pools,
            # element-wise steps and memory-bound layers included) no kernel reaches it.
            bound = ""
            shares = [peak_shares(cells[(s["model"], s["precision"], int(b))], peaks) for b in s["ratios"]]
            if shares and all(shares):
                worst = max(shares, key=lambda t: t[2])
                bound = (f"octet at {worst[0]:.0f}% of this CPU's {'FP32' if s['precision'] == 'fp32' else 'INT8'} "
                         f"peak, ORT at {worst[1]:.0f}%, the target needs {worst[2]:.0f}%"
                         + (" (peak-bound)" if worst[2] > 90 else "") + "; ")
            lines.append(f"- **{s['model']}** {PRECISIONS[s['precision']][0]}: {over} × ORT "
                         f"(target {TARGETS[s['precision']]}): " + bound + prof + "; ".join(s["top"]))
    return "\n".join(lines) + "\n"


def save_json(doc, path):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--zoo", default=os.path.join(ROOT, "build", "zoo"))
    ap.add_argument("--model", action="append", default=[], help="a loose .onnx file instead of --zoo (repeatable)")
    ap.add_argument("--only", default="", help="comma-separated model names, run in this order")
    ap.add_argument("--precisions", default="fp32,static,dynamic")
    ap.add_argument("--batches", default="1,16")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cpu", type=int, default=1, help="CPU both engines are pinned to (default 1)")
    ap.add_argument("--budget-ms", type=float, default=300.0,
                    help="timed work per engine and round at batch 1 (5x above batch 1; default 300)")
    ap.add_argument("--top", type=int, default=5, help="profile steps listed per model short of target")
    ap.add_argument("--no-profile", action="store_true", help="no profile of the models short of target")
    ap.add_argument("--out", default="", help="also write the markdown here")
    ap.add_argument("--json", default=os.path.join(ROOT, "out", "zoo-bench", "zoo_bench.json"))
    ap.add_argument("--resume", action="store_true", help="keep the cells and profiles --json already has")
    ap.add_argument("--no-measure", action="store_true",
                    help="with --resume: measure nothing new, render what --json has (missing cells: not run)")
    ap.add_argument("--label", default="", help="a note for the table's caption (e.g. loaded)")
    a = ap.parse_args()
    try:
        batches = [int(b) for b in a.batches.split(",")]
        assert all(b > 0 for b in batches) and a.rounds > 0
    except (ValueError, AssertionError):
        sys.exit("zoo_bench: --batches must be positive integers separated by commas, --rounds positive")
    precs = [p for p in a.precisions.split(",") if p]
    if any(p not in PRECISIONS for p in precs):
        sys.exit(f"zoo_bench: --precisions takes {', '.join(PRECISIONS)}")
    bench = Bench(a)
    for f in (bench.octet, bench.model_bench):
        if not os.access(f, os.X_OK):
            sys.exit(f"zoo_bench: {f} is missing: build it (ninja -C {a.build} octet model_bench)")
    os.makedirs(os.path.dirname(os.path.abspath(a.json)), exist_ok=True)
    only = [n for n in a.only.split(",") if n]
    models = (loose_models(a.model, os.path.dirname(os.path.abspath(a.json)), bench.octet) if a.model
              else zoo_models(a.zoo, only))
    if not models:
        sys.exit("zoo_bench: no model to run")

    flags = open("/proc/cpuinfo").read() if os.path.exists("/proc/cpuinfo") else ""
    ort_version = run(["node", bench.ort_run, "--version"]).stdout.strip() or "ONNX Runtime (unavailable)"
    shown = [os.path.relpath(x, ROOT) if os.path.abspath(x).startswith(ROOT) else x for x in sys.argv[1:]]
    doc = {"schema": "octet-zoo-bench/1", "command": " ".join(["bench/zoo_bench.py"] + shown),
           "date": datetime.date.today().isoformat(), "cpu": cpu_name(), "vnni": " avx512_vnni" in flags or " avx_vnni" in flags,
           "engines": f"octet vs {ort_version} (u8s8 exact)",
           "args": {"batches": batches, "precisions": precs, "rounds": a.rounds, "cpu": a.cpu, "label": a.label},
           "cells": [], "short": [], "peaks": {}}
    done, profiles = {}, {}
    if a.resume and os.path.exists(a.json):
        old = json.load(open(a.json))
        for c in old.get("cells", []):
            done[(c["model"], c["precision"], c["batch"])] = c
        doc["command"] = old.get("command", doc["command"]).replace(" --resume", "").replace(" (resumed)", "") + " (resumed)"
        profiles = {(e["model"], e["precision"]): e for e in old.get("short", []) if e.get("total_us")}
        doc["peaks"] = old.get("peaks", {})
    if not doc["peaks"] and not a.no_measure:
        doc["peaks"] = bench.peaks()  # kept from --resume (its cells were set against them), else measured now
    todo = [(m, p, b) for b in batches for m in models for p in precs]
    start = time.time()
    for i, (m, p, b) in enumerate(todo):
        key = (m["name"], p, b)
        if key in done or a.no_measure:
            doc["cells"] += [done[key]] if key in done else []
            continue
        log(f"[{i + 1}/{len(todo)}] {m['name']} {PRECISIONS[p][0]} batch {b} ({(time.time() - start) / 60:.1f} min so far)")
        c = bench.cell(m, p, b, [e for e in doc["cells"] if e["model"] == m["name"] and e["precision"] == p])
        if "ratio" in c:
            log(f"  octet {c['octet_ms']:.3f} ms, ORT {c['ort_ms']:.3f} ms, ratio {c['ratio']:.3f}, " +
                (f"error {c['error']}" if "error" in c else
                 f"max rel {c['max_rel_diff']:.1e}" if p == "fp32" else f"identical {c['identical_pct']:.2f}%"))
        else:
            log(f"  fails: {c.get('error')}")
        doc["cells"].append(c)
        save_json(doc, a.json)

    by_key = {(c["model"], c["precision"], c["batch"]): c for c in doc["cells"]}
    for m in models:
        for p in precs:
            over = {b: by_key[(m["name"], p, b)]["ratio"] for b in batches
                    if "ratio" in by_key.get((m["name"], p, b), {}) and by_key[(m["name"], p, b)]["ratio"] > TARGETS[p]}
            if not over:
                continue
            s = {"model": m["name"], "precision": p, "ratios": over, "top": []}
            if (m["name"], p) in profiles:
                s.update({k: profiles[(m["name"], p)][k] for k in ("total_us", "by_op", "top")})
            elif not a.no_profile:
                log(f"profile: {m['name']} {PRECISIONS[p][0]}")
                s["total_us"], s["by_op"], s["top"] = bench.profile(os.path.join(m["dir"], PRECISIONS[p][1]), a.top)
            doc["short"].append(s)
    save_json(doc, a.json)
    text = render(doc)
    if a.out:
        with open(a.out + ".tmp", "w") as f:
            f.write(text)
        os.replace(a.out + ".tmp", a.out)
    print(text, end="")
    failed = sum("ratio" not in c for c in doc["cells"])
    log(f"zoo_bench: {len(doc['cells'])} cell(s), {failed} without timing; JSON {a.json} "
        f"({(time.time() - start) / 60:.1f} min)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
