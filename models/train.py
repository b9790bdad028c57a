#!/usr/bin/env python3
"""Trains octet's bundled models on Fashion-MNIST and exports them to ONNX.

    /usr/bin/python3 models/train.py tinynet  [--epochs 15] [--threads 2]
    /usr/bin/python3 models/train.py resnet8  [--epochs 10] [--threads 2]

Uses Debian's PyTorch on the CPU with a fixed seed. Reads the gzipped IDX files of
Debian's dataset-fashion-mnist (/usr/share/datasets/fashion-mnist, or --data DIR).
Writes models/<name>.onnx (opset 13, dynamic batch, input "input" [N,1,28,28] float32,
output "logits" [N,10]) and its card models/<name>.json, each through a temporary file
so an interrupted run leaves nothing half-written.
"""
import argparse
import gzip
import json
import os
import random
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CLASSES = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
           "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]
# Training-set statistics of Fashion-MNIST pixels scaled to [0, 1].
MEAN, STD = 0.2860, 0.3530


# ---------------------------------------------------------------- data
def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic = int.from_bytes(data[0:4], "big")
    ndim = magic & 0xFF
    dims = [int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load_split(root, split):
    prefix = "train" if split == "train" else "t10k"
    x = read_idx(os.path.join(root, f"{prefix}-images-idx3-ubyte.gz"))
    y = read_idx(os.path.join(root, f"{prefix}-labels-idx1-ubyte.gz"))
    x = torch.from_numpy(x.astype(np.float32) / 255.0).unsqueeze(1)
    return (x - MEAN) / STD, torch.from_numpy(y.astype(np.int64))


def augment(x, gen):
    """Random 2-pixel shifts (pad then crop) and horizontal flips, per image."""
    n = x.shape[0]
    padded = F.pad(x, (2, 2, 2, 2), value=(0.0 - MEAN) / STD)
    dy = torch.randint(0, 5, (n,), generator=gen)
    dx = torch.randint(0, 5, (n,), generator=gen)
    out = torch.empty_like(x)
    for i in range(n):
        out[i] = padded[i, :, dy[i]:dy[i] + 28, dx[i]:dx[i] + 28]
    flip = torch.rand(n, generator=gen) < 0.5
    out[flip] = out[flip].flip(-1)
    return out


# ---------------------------------------------------------------- models
class SqueezeExcite(nn.Module):
    def __init__(self, channels, reduced):
        super().__init__()
        self.reduce = nn.Conv2d(channels, reduced, 1)
        self.expand = nn.Conv2d(reduced, channels, 1)

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        s = torch.sigmoid(self.expand(F.relu(self.reduce(s))))
        return x * s


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, expand, stride):
        super().__init__()
        self.residual = stride == 1 and cin == cout
        self.expand = nn.Sequential(nn.Conv2d(cin, expand, 1, bias=False), nn.BatchNorm2d(expand), nn.ReLU6())
        self.depthwise = nn.Sequential(nn.Conv2d(expand, expand, 3, stride, 1, groups=expand, bias=False),
                                       nn.BatchNorm2d(expand), nn.ReLU6())
        self.se = SqueezeExcite(expand, expand // 4)
        self.project = nn.Sequential(nn.Conv2d(expand, cout, 1, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.project(self.se(self.depthwise(self.expand(x))))
        return x + y if self.residual else y


class TinyNet(nn.Module):
    """MobileNetV2-style net with squeeze-excitation, ~78k parameters."""
    BLOCKS = [(16, 24, 48, 1), (24, 24, 48, 1), (24, 32, 72, 2), (32, 32, 72, 1),
              (32, 48, 96, 2), (48, 48, 96, 1), (48, 64, 128, 2)]

    def __init__(self, in_channels=1, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(in_channels, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU6())
        self.blocks = nn.Sequential(*[InvertedResidual(*b) for b in self.BLOCKS])
        self.dropout = nn.Dropout(0.2)
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        x = F.adaptive_avg_pool2d(x, 1)
        return self.fc(self.dropout(x.view(x.size(0), -1)))


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Conv2d(cin, cout, 1, stride) if stride != 1 or cin != cout else None

    def forward(self, x):
        y = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        return F.relu(y + (self.shortcut(x) if self.shortcut is not None else x))


class ResNet8(nn.Module):
    """The MLPerf Tiny ResNet8 layout: 16/32/64 filters, 1x1 projections on strided stages."""

    def __init__(self, in_channels=1, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(in_channels, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
        self.stages = nn.Sequential(BasicBlock(16, 16, 1), BasicBlock(16, 32, 2), BasicBlock(32, 64, 2))
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        x = F.adaptive_avg_pool2d(self.stages(self.stem(x)), 1)
        return self.fc(x.view(x.size(0), -1))


MODELS = {"tinynet": TinyNet, "resnet8": ResNet8}


# ---------------------------------------------------------------- training
def evaluate(model, x, y, batch=1000):
    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(x), batch):
            correct += (model(x[i:i + batch]).argmax(1) == y[i:i + batch]).sum().item()
    return correct / len(x)


def train(name, epochs, data_root, batch, lr, seed):
    torch.manual_seed(seed)
    random.seed(seed)
    np.random.seed(seed)
    gen = torch.Generator().manual_seed(seed)
    xtr, ytr = load_split(data_root, "train")
    xte, yte = load_split(data_root, "test")
    model = MODELS[name]()
    params = sum(p.numel() for p in model.parameters())
    print(f"{name}: {params} parameters, {epochs} epochs, batch {batch}", flush=True)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True, weight_decay=5e-4)
    steps = epochs * ((len(xtr) + batch - 1) // batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.15)
    start = time.time()
    for epoch in range(epochs):
        model.train()
        perm = torch.randperm(len(xtr), generator=gen)
        seen, loss_sum, t0 = 0, 0.0, time.time()
        for i in range(0, len(xtr), batch):
            idx = perm[i:i + batch]
            xb = augment(xtr[idx], gen)
            loss = F.cross_entropy(model(xb), ytr[idx], label_smoothing=0.1)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            seen += len(idx)
            loss_sum += loss.item() * len(idx)
            if (i // batch) % 100 == 0:
                print(f"  epoch {epoch + 1}/{epochs}: {seen}/{len(xtr)} images, loss {loss_sum / seen:.4f}", flush=True)
        acc = evaluate(model, xte, yte)
        print(f"epoch {epoch + 1}/{epochs}: loss {loss_sum / seen:.4f}, test top-1 {acc * 100:.2f}%, "
              f"{time.time() - t0:.0f} s", flush=True)
    return model, params, evaluate(model, xte, yte), time.time() - start


def replace_atomically(path, write):
    tmp = path + ".tmp"
    write(tmp)
    os.replace(tmp, path)


def export(model, name, out_dir, params, accuracy, seconds, command):
    model.eval()
    onnx_path = os.path.join(out_dir, f"{name}.onnx")
    dummy = torch.zeros(1, 1, 28, 28)
    replace_atomically(onnx_path, lambda p: torch.onnx.export(
        model, dummy, p, opset_version=13, input_names=["input"], output_names=["logits"],
        dynamic_axes={"input": {0: "N"}, "logits": {0: "N"}}, do_constant_folding=True,
        training=torch.onnx.TrainingMode.EVAL))
    card = {
        "name": name,
        "model": f"{name}.onnx",
        "dataset": "fashion-mnist",
        "input": {"name": "input", "layout": "NCHW", "channels": 1, "height": 28, "width": 28,
                  "scale": 1.0 / 255.0, "mean": [MEAN], "std": [STD]},
        "output": {"name": "logits", "kind": "logits"},
        "classes": CLASSES,
        "training": {"command": command, "seconds": round(seconds), "parameters": params,
                     "test_top1_pytorch": round(accuracy * 100, 2)},
    }
    card_path = os.path.join(out_dir, f"{name}.json")
    replace_atomically(card_path, lambda p: open(p, "w").write(json.dumps(card, indent=2) + "\n"))
    print(f"wrote {onnx_path} ({os.path.getsize(onnx_path)} bytes) and {card_path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", choices=sorted(MODELS))
    ap.add_argument("--epochs", type=int, default=None, help="default: 15 for tinynet, 10 for resnet8")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=0.2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    args = ap.parse_args()
    if not os.path.isdir(args.data):
        sys.exit(f"train.py: {args.data} not found: install Debian's dataset-fashion-mnist or pass --data DIR")
    torch.set_num_threads(args.threads)
    epochs = args.epochs or (15 if args.model == "tinynet" else 10)
    command = f"/usr/bin/python3 models/train.py {args.model} --epochs {epochs} --seed {args.seed}"
    model, params, acc, seconds = train(args.model, epochs, args.data, args.batch, args.lr, args.seed)
    print(f"{args.model}: test top-1 {acc * 100:.2f}% after {seconds / 60:.1f} min")
    export(model, args.model, args.out, params, acc, seconds, command)


if __name__ == "__main__":
    main()
