#!/usr/bin/env python3
"""Exports octet's model zoo: torchvision CNN families with random weights, as users bring them.

    /usr/bin/python3 tools/zoo/export.py [--out out/zoo] [--only NAME,...] [--small] [--no-ort]
                                         [--calib-count N] [--calib-only]
    /usr/bin/python3 tools/zoo/export.py --list

Needs Debian's python3-torch, python3-torchvision and python3-onnx (run with /usr/bin/python3).
Every model gets its own fixed seed, so a second run writes the same weights. BatchNorm
statistics are re-estimated on a batch of random images before export, so activations have the
ranges a trained network has (unit variance after every BatchNorm) instead of the ranges of an
untouched random init. Writes, per model, into OUT/<name>/:

    model.onnx    torch.onnx.export, opset as listed, dynamic batch axis, input "input"
    input.npy     2 images, float32 NCHW (the parity input)
    calib.npy     N (--calib-count, default 32) other random-normal images, float32 NCHW, from their
                  own fixed seed: the calibration set, since the zoo has no dataset. The models see
                  random-normal images in export and parity, so this is their input distribution:
                  octet quantize OUT/NAME/model.onnx -o OUT/NAME/model_int8.onnx --calib npy:OUT/NAME/calib.npy
    ort/          ONNX Runtime's outputs for input.npy (tools/ort/ort_run.mjs), unless --no-ort

and OUT/zoo.json, the manifest (name, file, input shape, opset, parameters, MB, what the model
stands for). Every file goes through a temporary name, so an interrupted run leaves no half file.
--small exports only the models that take a few seconds (the 32-px ones and the smallest 224-px
ones), for the test suite. --calib-only writes calib.npy (and its manifest entry) for models
already exported, without torch's export or ONNX Runtime.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import zlib

import numpy as np
import torch
import torch.nn as nn
import torchvision.models as tvm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import yolo  # noqa: E402  (tools/zoo/yolo.py: detectors in plain torch)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def cifar_resnet18():
    # The CIFAR form of ResNet-18: a 3x3 stride-1 stem and no max pool, so the last stage
    # runs 512-channel 3x3 convs at 4x4 pixels (weight-bound layers).
    m = tvm.resnet18(num_classes=10)
    m.conv1 = nn.Conv2d(3, 64, kernel_size=3, stride=1, padding=1, bias=False)
    m.maxpool = nn.Identity()
    return m


# name: (constructor, input side, opset, keep BatchNormalization nodes, what it stands for)
ZOO = {
    "mobilenet_v2": (lambda: tvm.mobilenet_v2(), 224, 13, False, "inverted residuals, ReLU6 depthwise 3x3"),
    "mobilenet_v3_small": (lambda: tvm.mobilenet_v3_small(), 224, 14, False,
                           "5x5 depthwise, HardSwish, SE with HardSigmoid"),
    "mobilenet_v3_large": (lambda: tvm.mobilenet_v3_large(), 224, 17, False,
                           "5x5 depthwise, HardSwish, SE with HardSigmoid"),
    "shufflenet_v2_x0_5": (lambda: tvm.shufflenet_v2_x0_5(), 224, 11, False,
                           "channel shuffle (Reshape-Transpose-Reshape), chunk (Split/Slice)"),
    "shufflenet_v2_x1_0": (lambda: tvm.shufflenet_v2_x1_0(), 224, 13, False, "channel shuffle, chunk"),
    "squeezenet1_1": (lambda: tvm.squeezenet1_1(), 224, 12, False, "fire modules (Concat), ceil-mode MaxPool"),
    "efficientnet_b0": (lambda: tvm.efficientnet_b0(), 224, 15, False, "SiLU, SE with Sigmoid, 5x5 depthwise"),
    "resnet18": (lambda: tvm.resnet18(), 224, 13, False, "7x7 stem, max pool, 3x3 convs"),
    "resnet50": (lambda: tvm.resnet50(), 224, 13, False, "bottlenecks, 100 MB of weights"),
    "resnet18_cifar": (cifar_resnet18, 32, 13, False, "3x3 stem at 32 px: 512-channel convs at 4x4"),
    "mobilenet_v2_035_cifar": (lambda: tvm.mobilenet_v2(width_mult=0.35, num_classes=10), 32, 13, False,
                               "MobileNetV2 width 0.35 at 32 px"),
    "mobilenet_v2_035_cifar_bn": (lambda: tvm.mobilenet_v2(width_mult=0.35, num_classes=10), 32, 12, True,
                                  "BatchNormalization nodes kept (not folded by the exporter)"),
    "yolov5nu": (lambda: yolo.YOLOv5u(640), 640, 17, False,
                 "detector: C3, SPPF, nearest 2x Resize, DFL head (Softmax over bins) decoded in the graph"),
    "yolov5nu_320": (lambda: yolo.YOLOv5u(320), 320, 13, False, "YOLOv5nu at 320 px, opset 13 (the CI variant)"),
}
# The output's name (torch's default for detectors is ultralytics' "output0"); classifiers: logits.
OUTPUT_NAMES = {"yolov5nu": "output0", "yolov5nu_320": "output0"}
DETECTORS = set(OUTPUT_NAMES)
SMALL = ["mobilenet_v2_035_cifar", "resnet18_cifar", "mobilenet_v2_035_cifar_bn", "shufflenet_v2_x0_5",
         "squeezenet1_1", "mobilenet_v3_small", "yolov5nu_320"]


def seed_of(name):
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


def reestimate_batchnorm(model, side, gen):
    """Sets running mean/var to the statistics of random images, as a trained net would have."""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None  # cumulative average over the batches below
        # A random affine part, so folded scales and biases differ per channel.
        with torch.no_grad():
            bn.weight.uniform_(0.5, 1.5, generator=gen)
            bn.bias.uniform_(-0.2, 0.2, generator=gen)
    model.train()
    batch = 16 if side <= 64 else 8
    with torch.no_grad():
        for _ in range(2):
            model(torch.randn(batch, 3, side, side, generator=gen))
    model.eval()


def calib_seed_of(name):
    # Not seed_of(name): the calibration images must not be the parity images.
    return zlib.crc32(("calib:" + name).encode()) & 0x7FFFFFFF


def write_calib(name, out_dir, count):
    """OUT/NAME/calib.npy: `count` random-normal images [count, 3, side, side] float32."""
    side = ZOO[name][1]
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(calib_seed_of(name))
    x = rng.standard_normal((count, 3, side, side), dtype=np.float32)
    tmp = os.path.join(d, "calib.tmp.npy")
    np.save(tmp, x)
    os.replace(tmp, os.path.join(d, "calib.npy"))
    return {"calib": f"{name}/calib.npy", "calib_images": count, "calib_seed": calib_seed_of(name)}


def export_one(name, out_dir, run_ort):
    ctor, side, opset, keep_bn, what = ZOO[name]
    seed = seed_of(name)
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    model = ctor().eval()
    reestimate_batchnorm(model, side, gen)

    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    x = torch.randn(2, 3, side, side, generator=gen)

    tmp = os.path.join(d, "model.onnx.tmp")
    out_name = OUTPUT_NAMES.get(name, "logits")
    kwargs = dict(input_names=["input"], output_names=[out_name], opset_version=opset,
                  dynamic_axes={"input": {0: "batch"}, out_name: {0: "batch"}})
    if keep_bn:
        # PRESERVE with the module in eval mode skips the exporter's Conv+BN folding.
        kwargs.update(training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)
    torch.onnx.export(model, x, tmp, **kwargs)
    os.replace(tmp, os.path.join(d, "model.onnx"))

    np_tmp = os.path.join(d, "input.tmp.npy")
    np.save(np_tmp, x.numpy().astype(np.float32))
    os.replace(np_tmp, os.path.join(d, "input.npy"))

    if run_ort:
        ort_dir = os.path.join(d, "ort")
        ort_tmp = ort_dir + ".tmp"
        shutil.rmtree(ort_tmp, ignore_errors=True)
        cmd = ["node", os.path.join(ROOT, "tools", "ort", "ort_run.mjs"), "--model", os.path.join(d, "model.onnx"),
               "--input", "input=" + os.path.join(d, "input.npy"), "--output-dir", ort_tmp]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"ONNX Runtime failed on {name}: {r.stderr.strip()}")
        shutil.rmtree(ort_dir, ignore_errors=True)
        os.replace(ort_tmp, ort_dir)

    params = sum(p.numel() for p in model.parameters())
    size = os.path.getsize(os.path.join(d, "model.onnx"))
    return {"name": name, "file": f"{name}/model.onnx", "input": f"{name}/input.npy",
            "ort_outputs": f"{name}/ort" if run_ort else None, "input_shape": [2, 3, side, side],
            "opset": opset, "params": params, "mb": round(size / 1e6, 2), "batchnorm_kept": keep_bn,
            "seed": seed, "what": what, "kind": "detector" if name in DETECTORS else "classifier"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--out", default=os.path.join(ROOT, "out", "zoo"), help="output folder (default out/zoo)")
    ap.add_argument("--only", help="comma-separated model names (default: all)")
    ap.add_argument("--small", action="store_true", help="only the quick models: " + ", ".join(SMALL))
    ap.add_argument("--no-ort", action="store_true", help="do not write ONNX Runtime's outputs")
    ap.add_argument("--list", action="store_true", help="list the models and exit")
    ap.add_argument("--calib-count", type=int, default=32, help="images in calib.npy (default 32)")
    ap.add_argument("--calib-only", action="store_true",
                    help="only write calib.npy for models already exported (no torch export, no ONNX Runtime)")
    a = ap.parse_args()
    if a.calib_count < 1:
        print("export.py: --calib-count must be at least 1", file=sys.stderr)
        return 2

    if a.list:
        for n, (_, side, opset, _, what) in ZOO.items():
            print(f"{n:24s} {side:4d} px  opset {opset:2d}  {what}")
        return 0
    names = list(ZOO) if not a.only else a.only.split(",")
    if a.small:
        names = [n for n in names if n in SMALL]
    unknown = [n for n in names if n not in ZOO]
    if unknown:
        print(f"export.py: unknown model(s) {', '.join(unknown)}; --list shows the zoo", file=sys.stderr)
        return 2
    if not a.no_ort and not a.calib_only and shutil.which("node") is None:
        print("export.py: 'node' not found (needed for ONNX Runtime's outputs); run tools/setup.sh or pass --no-ort",
              file=sys.stderr)
        return 1

    torch.set_num_threads(max(1, os.cpu_count() or 1))
    os.makedirs(a.out, exist_ok=True)
    manifest_path = os.path.join(a.out, "zoo.json")
    entries = {}
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            entries = {e["name"]: e for e in json.load(f)["models"]}
    if a.calib_only:
        missing = [n for n in names if n not in entries or not os.path.exists(os.path.join(a.out, n, "model.onnx"))]
        if missing:
            print(f"export.py: --calib-only: {', '.join(missing)} not exported yet in {a.out}; "
                  "run without --calib-only first", file=sys.stderr)
            return 1
    for i, n in enumerate(names, 1):
        t0 = time.time()
        print(f"[{i}/{len(names)}] {n} ...", end="", file=sys.stderr, flush=True)
        if not a.calib_only:
            entries[n] = export_one(n, a.out, not a.no_ort)
        entries[n].update(write_calib(n, a.out, a.calib_count))
        print(f" {entries[n]['mb']} MB + calib.npy ({a.calib_count} images), {time.time() - t0:.1f} s",
              file=sys.stderr)
    ordered = [entries[n] for n in ZOO if n in entries]
    tmp = manifest_path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"models": ordered}, f, indent=1)
    os.replace(tmp, manifest_path)
    total = sum(e["mb"] for e in ordered)
    print(f"zoo: {len(ordered)} models, {total:.1f} MB in {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
