#!/usr/bin/env python3
"""Exports octet's model zoo: torchvision CNN families with random weights, as users bring them.

    /usr/bin/python3 tools/zoo/export.py [--out out/zoo] [--only NAME,...] [--small] [--no-ort]
                                         [--calib-count N] [--calib-only]
    /usr/bin/python3 tools/zoo/export.py --list
    third_party/timm/venv/bin/python tools/zoo/export.py --timm [--out build/zoo-timm] ...

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
--small exports only the models that take a few seconds, for the test suite: the 32-px ones, the
smallest 224-px ones, and for every other family a "_mini" variant built from torchvision's own
classes, narrower or shallower, at a small input (its manifest entry says which family it stands
for); --small --timm every timm_* model at 64 px (Inception-v4 at 96: tools/zoo/timm_models.py).
Segmentation models write one output, "out" (torchvision's key of the masks). --calib-only writes
calib.npy (and its manifest entry) for models already exported, without torch's export or ONNX
Runtime.

The "timm_*" models (tools/zoo/timm_models.py: 35 CNN families torchvision lacks, at 224 px) need
timm, which tools/setup.sh installs into third_party/timm/venv (over Debian's torch): run this
script with that venv's python. --timm exports only them; under a python without timm a full
export leaves them out and says so.
"""
import argparse
import importlib
import json
import os
import shutil
import subprocess
import sys
import time
import zlib
from functools import partial

import numpy as np
import torch
import torch.nn as nn
import torchvision.models as tvm
from torchvision.models import convnext as tv_convnext
from torchvision.models import efficientnet as tv_efficientnet
from torchvision.models import inception as tv_inception
from torchvision.models import regnet as tv_regnet
from torchvision.models import resnet as tv_resnet
from torchvision.models import vgg as tv_vgg
from torchvision.models.segmentation import deeplabv3 as tv_deeplabv3
from torchvision.models.segmentation import lraspp as tv_lraspp

# torchvision.models.googlenet is the builder function; its module by name.
tv_googlenet = importlib.import_module("torchvision.models.googlenet")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import timm_models  # noqa: E402  (tools/zoo/timm_models.py: timm's CNNs, when timm is installed)
import yolo  # noqa: E402  (tools/zoo/yolo.py: detectors in plain torch)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def cifar_resnet18():
    # The CIFAR form of ResNet-18: a 3x3 stride-1 stem and no max pool, so the last stage
    # runs 512-channel 3x3 convs at 4x4 pixels (weight-bound layers).
    m = tvm.resnet18(num_classes=10)
    m.conv1 = nn.Conv2d(3, 64, kernel_size=3, stride=1, padding=1, bias=False)
    m.maxpool = nn.Identity()
    return m


def narrow(conv_block, divisor):
    """A conv_block factory for Inception-v3 and GoogLeNet (whose block classes take one) that divides
    every channel count by `divisor` (the image's 3 channels excepted): the same blocks, narrower."""
    return lambda c_in, c_out, **kw: conv_block(c_in if c_in == 3 else c_in // divisor, c_out // divisor, **kw)


def alexnet_mini():
    # At 127 px AlexNet's features end at 3x3, so a (3, 3) adaptive pool is the identity AveragePool
    # that (6, 6) is at 224 px; the classifier keeps its Dropout-Linear-ReLU shape, 256 wide.
    m = tvm.AlexNet(num_classes=10)
    m.avgpool = nn.AdaptiveAvgPool2d((3, 3))
    m.classifier = nn.Sequential(nn.Dropout(0.5), nn.Linear(256 * 3 * 3, 256), nn.ReLU(inplace=True), nn.Dropout(0.5),
                                 nn.Linear(256, 256), nn.ReLU(inplace=True), nn.Linear(256, 10))
    return m


def vgg11_bn_mini():
    # VGG-11's layout ("A") at a quarter of the width; at 64 px the features end at 2x2, so a (2, 2)
    # adaptive pool is the identity AveragePool that (7, 7) is at 224 px.
    cfg = [c if c == "M" else c // 4 for c in tv_vgg.cfgs["A"]]
    m = tvm.VGG(tv_vgg.make_layers(cfg, batch_norm=True), num_classes=10, init_weights=True)
    m.avgpool = nn.AdaptiveAvgPool2d((2, 2))
    m.classifier = nn.Sequential(nn.Linear(128 * 2 * 2, 128), nn.ReLU(True), nn.Dropout(), nn.Linear(128, 128),
                                 nn.ReLU(True), nn.Dropout(), nn.Linear(128, 10))
    return m


def inception_v3_mini():
    # torchvision's Inception3 and its blocks at a quarter of the width (every channel count of
    # Inception-v3 divides by 4), at 80 px (it needs 75); the input transform of the pretrained weights.
    conv = narrow(tv_inception.BasicConv2d, 4)
    blocks = [conv] + [partial(b, conv_block=conv) for b in (tv_inception.InceptionA, tv_inception.InceptionB,
                                                             tv_inception.InceptionC, tv_inception.InceptionD,
                                                             tv_inception.InceptionE, tv_inception.InceptionAux)]
    m = tv_inception.Inception3(num_classes=10, aux_logits=False, transform_input=True, inception_blocks=blocks,
                                init_weights=True)
    m.fc = nn.Linear(2048 // 4, 10)
    return m


def googlenet_mini():
    # GoogLeNet at a quarter of the width, the pretrained weights' input transform, at 64 px.
    conv = narrow(tv_googlenet.BasicConv2d, 4)
    m = tv_googlenet.GoogLeNet(num_classes=10, aux_logits=False, transform_input=True, init_weights=True,
                               blocks=[conv, partial(tv_googlenet.Inception, conv_block=conv),
                                       tv_googlenet.InceptionAux])
    m.fc = nn.Linear(1024 // 4, 10)
    return m


def efficientnet_v2_mini():
    # EfficientNetV2-S's stages at 1/4 depth and about 2/3 width (Fused-MBConv with and without
    # expansion, MBConv with SE), plus one 5x5 MBConv stage as EfficientNet-B0 has.
    F, M = tv_efficientnet.FusedMBConvConfig, tv_efficientnet.MBConvConfig
    setting = [F(1, 3, 1, 16, 16, 1), F(4, 3, 2, 16, 32, 1), M(4, 3, 2, 32, 48, 2), M(6, 5, 2, 48, 64, 1)]
    return tv_efficientnet.EfficientNet(setting, dropout=0.2, stochastic_depth_prob=0.2, num_classes=10,
                                        norm_layer=partial(nn.BatchNorm2d, eps=1e-03), last_channel=256)


def regnet_y_mini():
    # Four stages (16, 32, 64, 128 wide; 1, 2, 4, 1 blocks), group width 8, SE as RegNetY has.
    params = tv_regnet.BlockParams.from_init_params(depth=8, w_0=16, w_a=12.0, w_m=2.0, group_width=8, se_ratio=0.25)
    return tv_regnet.RegNet(params, num_classes=10)


def convnext_mini():
    cfg = tv_convnext.CNBlockConfig
    return tv_convnext.ConvNeXt([cfg(16, 32, 1), cfg(32, 64, 1), cfg(64, 128, 1), cfg(128, None, 1)], num_classes=10)


class SegmentationOut(nn.Module):
    """torchvision's segmentation models return {"out": masks}: the tensor alone, exported as "out"."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def lraspp(width_mult=1.0):
    # As lraspp_mobilenet_v3_large builds it (dilated backbone, VOC's 21 classes), without weights.
    backbone = tvm.mobilenet_v3_large(dilated=True, width_mult=width_mult)
    return SegmentationOut(tv_lraspp._lraspp_mobilenetv3(backbone, 21))


def deeplabv3(width_mult=1.0):
    backbone = tvm.mobilenet_v3_large(dilated=True, width_mult=width_mult)
    return SegmentationOut(tv_deeplabv3._deeplabv3_mobilenetv3(backbone, 21, aux=False))


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
    "yolov5n": (lambda: yolo.YOLOv5u(640, anchors=True), 640, 13, False,
                "detector: YOLOv5n's anchor head (v6.2+): 5-D Reshape / Transpose, Sigmoid, Split, grid decode"),
    "yolov5n_320": (lambda: yolo.YOLOv5u(320, anchors=True), 320, 13, False,
                    "YOLOv5n (anchor head) at 320 px (the CI variant)"),
    # The rest of torchvision 0.14's CNN classifiers, at the input size of their weights' transforms.
    "alexnet": (lambda: tvm.alexnet(), 224, 13, False, "11x11 stride-4 stem, 5x5 conv, 9216-4096-4096 Gemms"),
    "vgg11_bn": (lambda: tvm.vgg11_bn(), 224, 13, False, "plain 3x3 conv stacks, 25088-4096 Gemm, 133 M params"),
    "resnext50_32x4d": (lambda: tvm.resnext50_32x4d(), 224, 13, False, "bottlenecks with 32-group 3x3 convs"),
    "wide_resnet50_2": (lambda: tvm.wide_resnet50_2(), 224, 13, False, "bottlenecks twice as wide, 69 M params"),
    "squeezenet1_0": (lambda: tvm.squeezenet1_0(), 224, 12, False, "7x7 stride-2 stem, fire modules"),
    "densenet121": (lambda: tvm.densenet121(), 224, 13, False,
                    "dense blocks (growing Concat), BatchNormalization before each conv, 2x2 AveragePool"),
    "inception_v3": (lambda: tvm.inception_v3(aux_logits=False, init_weights=True, transform_input=True), 299, 13,
                     False, "1x7 / 7x1 convs, pool branches, the pretrained weights' input transform"),
    "googlenet": (lambda: tvm.googlenet(aux_logits=False, init_weights=True, transform_input=True), 224, 13, False,
                  "inception modules, ceil-mode MaxPool, the pretrained weights' input transform"),
    "mnasnet0_5": (lambda: tvm.mnasnet0_5(), 224, 13, False, "3x3 and 5x5 depthwise, ReLU, mean over H and W (ReduceMean)"),
    "mnasnet1_0": (lambda: tvm.mnasnet1_0(), 224, 13, False, "MNASNet at width 1.0"),
    "efficientnet_v2_s": (lambda: tvm.efficientnet_v2_s(), 384, 15, False, "Fused-MBConv (3x3 expand), MBConv with SE, SiLU"),
    "regnet_x_400mf": (lambda: tvm.regnet_x_400mf(), 224, 13, False, "grouped 3x3 (group width 16) bottlenecks"),
    "regnet_y_400mf": (lambda: tvm.regnet_y_400mf(), 224, 14, False, "grouped 3x3 (group width 8), SE with ReLU and Sigmoid"),
    "convnext_tiny": (lambda: tvm.convnext_tiny(), 224, 17, False,
                      "7x7 depthwise, LayerNormalization (channels last), MatMul, exact GELU (Erf), layer scale"),
    # Segmentation with a MobileNetV3-Large backbone (dilated last stage): VOC's 21 classes at 520 px.
    "lraspp_mobilenet_v3_large": (lambda: lraspp(), 520, 13, False,
                                  "segmentation: LR-ASPP head (pooled Sigmoid gate, bilinear Resize), output \"out\""),
    "deeplabv3_mobilenet_v3_large": (lambda: deeplabv3(), 520, 13, False,
                                     "segmentation: ASPP (dilation 12, 24, 36, pooled branch Resized), output \"out\""),
    # Small variants for CI (--small): torchvision's own classes, narrower, shallower or at a small
    # input, one for each family above that has no quick member of its own.
    "alexnet_mini": (alexnet_mini, 127, 13, False, "AlexNet family (small): its features at 127 px, a 256-wide classifier"),
    "vgg11_bn_mini": (vgg11_bn_mini, 64, 13, False, "VGG family (small): VGG-11-BN at quarter width, 64 px"),
    "resnext_mini": (lambda: tvm.ResNet(tv_resnet.Bottleneck, [1, 1, 1, 1], groups=32, width_per_group=4,
                                        num_classes=10), 64, 13, False,
                     "ResNet-50 / ResNeXt / Wide-ResNet family (small): one 32x4d bottleneck per stage, 64 px"),
    "densenet_mini": (lambda: tvm.DenseNet(growth_rate=8, block_config=(2, 2, 2), num_init_features=16,
                                           num_classes=10), 64, 13, False,
                      "DenseNet family (small): growth 8, three blocks of 2 layers, 64 px"),
    "inception_v3_mini": (inception_v3_mini, 80, 13, False, "Inception-v3 family (small): quarter width, 80 px"),
    "googlenet_mini": (googlenet_mini, 64, 13, False, "GoogLeNet family (small): quarter width, 64 px"),
    "efficientnet_v2_mini": (efficientnet_v2_mini, 64, 15, False,
                             "EfficientNet B0 / V2 family (small): Fused-MBConv, MBConv with SE (3x3 and 5x5), 64 px"),
    "regnet_y_mini": (regnet_y_mini, 64, 14, False, "RegNetX / RegNetY family (small): 4 stages, group width 8, SE, 64 px"),
    "convnext_mini": (convnext_mini, 64, 17, False, "ConvNeXt family (small): 16-128 channels, one block a stage, 64 px"),
    "lraspp_mobilenet_v3_mini": (lambda: lraspp(0.5), 96, 13, False,
                                 "LR-ASPP family (small): MobileNetV3-Large backbone at width 0.5, 96 px"),
    "deeplabv3_mobilenet_v3_mini": (lambda: deeplabv3(0.5), 96, 13, False,
                                    "DeepLabV3 family (small): MobileNetV3-Large backbone at width 0.5, 96 px"),
    # timm's CNN families that torchvision lacks (tools/zoo/timm_models.py), "timm_" + timm's name.
    **timm_models.zoo_entries(),
}
TIMM = [n for n in ZOO if n.startswith("timm_")]
# The output's name (torch's default for detectors is ultralytics' "output0"); classifiers: logits.
# Segmentation models: torchvision's key of the masks, "out".
DETECTORS = {"yolov5nu", "yolov5nu_320", "yolov5n", "yolov5n_320"}
SEGMENTERS = {n for n in ZOO if n.startswith(("lraspp_", "deeplabv3_"))}
OUTPUT_NAMES = {**{n: "output0" for n in DETECTORS}, **{n: "out" for n in SEGMENTERS}}
# inception_v3_mini's FP32 output is 3.4e-5 (Zen 4) to 4.6e-5 (Zen 3) x max |ORT| from ORT's, under
# the zoo check's 1e-4 (it was left out while the check allowed 4.6e-5).
SMALL = ["mobilenet_v2_035_cifar", "resnet18_cifar", "mobilenet_v2_035_cifar_bn", "shufflenet_v2_x0_5",
         "squeezenet1_1", "mobilenet_v3_small", "yolov5nu_320", "yolov5n_320", "mnasnet0_5", "alexnet_mini",
         "vgg11_bn_mini", "resnext_mini", "densenet_mini", "googlenet_mini", "inception_v3_mini",
         "efficientnet_v2_mini", "regnet_y_mini", "convnext_mini", "lraspp_mobilenet_v3_mini",
         "deeplabv3_mobilenet_v3_mini"]


def seed_of(name):
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


def randomize_layer_scale(model, gen):
    """ConvNeXt's per-channel layer scale starts at 1e-6, which makes every block an identity; a
    trained network's scales are of order 0.1-1, so draw them there (per channel, like BatchNorm's)."""
    for m in model.modules():
        if isinstance(m, tv_convnext.CNBlock):
            with torch.no_grad():
                m.layer_scale.uniform_(0.1, 1.0, generator=gen)


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
    randomize_layer_scale(model, gen)
    timm_models.randomize_layer_scale(model, gen)
    reestimate_batchnorm(model, side, gen)
    model = timm_models.finalize(name, model).eval()

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
            "seed": seed, "what": what,
            "kind": "detector" if name in DETECTORS else "segmenter" if name in SEGMENTERS else "classifier"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--out", default=os.path.join(ROOT, "out", "zoo"), help="output folder (default out/zoo)")
    ap.add_argument("--only", help="comma-separated model names (default: all)")
    ap.add_argument("--small", action="store_true",
                    help="only the quick models: " + ", ".join(SMALL) + "; with --timm: every timm_* model at "
                    f"{timm_models.SMALL_SIDE} px (a few larger: timm_models.SMALL_SIDES)")
    ap.add_argument("--timm", action="store_true",
                    help="only timm's models (timm_*; needs timm: third_party/timm/venv/bin/python)")
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
            print(f"{n:30s} {side:4d} px  opset {opset:2d}  {what}")
        return 0
    names = list(ZOO) if not a.only else a.only.split(",")
    if a.small and a.timm:
        # timm's models at the test suite's side (timm_models.SMALL_SIDE), under their own names.
        ZOO.update(timm_models.zoo_entries(small=True))
        names = [n for n in names if n in TIMM]
    elif a.small:
        names = [n for n in names if n in SMALL]
    elif a.timm:
        names = [n for n in names if n in TIMM]
    unknown = [n for n in names if n not in ZOO]
    if unknown:
        print(f"export.py: unknown model(s) {', '.join(unknown)}; --list shows the zoo", file=sys.stderr)
        return 2
    if not a.calib_only and timm_models.available() is None and any(n in TIMM for n in names):
        need = "third_party/timm/venv/bin/python (tools/setup.sh installs it)"
        if a.only or a.timm:
            print(f"export.py: the timm_* models need timm, which {sys.executable} lacks: run with {need}",
                  file=sys.stderr)
            return 1
        names = [n for n in names if n not in TIMM]
        print(f"export.py: leaving out the {len(TIMM)} timm_* models (no timm here; {need} has it)", file=sys.stderr)
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
