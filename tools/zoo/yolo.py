"""YOLO detectors in plain torch, from the published layouts (ultralytics' yolov5 and yolov5u
YAML files), for octet's zoo: no ultralytics package needed, random weights.

yolov5nu: the YOLOv5n backbone (6x6 stem, C3 blocks, SPPF) and neck (nearest 2x upsampling,
Concat), with the anchor-free YOLOv8 head: per level a box branch (4 x 16 DFL bins) and a class
branch, decoded in the graph (DFL softmax over the bins, dist2bbox, strides) into one output
[batch, 4 + classes, anchors]: what `yolo export format=onnx` writes for YOLOv5nu.

yolov5n: the same backbone and neck with YOLOv5's own anchor-based head (v6.2 and later): per
level a 1x1 conv to 3 anchors x (5 + classes), viewed as a 5-D [batch, 3, ny, nx, 5 + classes]
tensor, sigmoid, split into xy / wh / scores, decoded against the cell grid and the anchors,
one output [batch, boxes, 5 + classes]: what yolov5's export.py writes.
"""
import torch
import torch.nn as nn


def _channels(c, width):
    # ultralytics' make_divisible(c * width, 8)
    return max(8, int((c * width + 7) // 8 * 8))


class Conv(nn.Module):
    """Conv2d (no bias) + BatchNorm + SiLU, 'same' padding for odd kernels."""

    def __init__(self, c1, c2, k=1, s=1, p=None):
        super().__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, k // 2 if p is None else p, bias=False)
        self.bn = nn.BatchNorm2d(c2)
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Bottleneck(nn.Module):
    def __init__(self, c, shortcut):
        super().__init__()
        self.cv1 = Conv(c, c, 1)
        self.cv2 = Conv(c, c, 3)
        self.add = shortcut

    def forward(self, x):
        y = self.cv2(self.cv1(x))
        return x + y if self.add else y


class C3(nn.Module):
    def __init__(self, c1, c2, n, shortcut=True):
        super().__init__()
        c = c2 // 2
        self.cv1 = Conv(c1, c, 1)
        self.cv2 = Conv(c1, c, 1)
        self.cv3 = Conv(2 * c, c2, 1)
        self.m = nn.Sequential(*(Bottleneck(c, shortcut) for _ in range(n)))

    def forward(self, x):
        return self.cv3(torch.cat((self.m(self.cv1(x)), self.cv2(x)), 1))


class SPPF(nn.Module):
    def __init__(self, c1, c2, k=5):
        super().__init__()
        c = c1 // 2
        self.cv1 = Conv(c1, c, 1)
        self.cv2 = Conv(4 * c, c2, 1)
        self.m = nn.MaxPool2d(k, 1, k // 2)

    def forward(self, x):
        x = self.cv1(x)
        y1 = self.m(x)
        y2 = self.m(y1)
        return self.cv2(torch.cat((x, y1, y2, self.m(y2)), 1))


class DFLHead(nn.Module):
    """YOLOv8's Detect: box (DFL) and class branches per level, decoded for one input size."""

    def __init__(self, channels, side, classes=80, reg_max=16, strides=(8, 16, 32)):
        super().__init__()
        self.classes, self.reg_max = classes, reg_max
        c2 = max(16, channels[0] // 4, reg_max * 4)
        c3 = max(channels[0], min(classes, 100))
        self.box = nn.ModuleList(
            nn.Sequential(Conv(c, c2, 3), Conv(c2, c2, 3), nn.Conv2d(c2, 4 * reg_max, 1)) for c in channels)
        self.cls = nn.ModuleList(
            nn.Sequential(Conv(c, c3, 3), Conv(c3, c3, 3), nn.Conv2d(c3, classes, 1)) for c in channels)
        self.dfl = nn.Conv2d(reg_max, 1, 1, bias=False)
        with torch.no_grad():
            self.dfl.weight.copy_(torch.arange(reg_max, dtype=torch.float32).view(1, reg_max, 1, 1))
        self.dfl.weight.requires_grad_(False)
        # Anchor points (cell centres) and strides for a side x side input, as make_anchors gives.
        points, stride_of = [], []
        for s in strides:
            n = side // s
            ys, xs = torch.meshgrid(torch.arange(n) + 0.5, torch.arange(n) + 0.5, indexing="ij")
            points.append(torch.stack((xs, ys), -1).view(-1, 2))
            stride_of.append(torch.full((n * n, 1), float(s)))
        self.register_buffer("anchors", torch.cat(points).transpose(0, 1).unsqueeze(0))
        self.register_buffer("strides", torch.cat(stride_of).transpose(0, 1))

    def forward(self, feats):
        b = feats[0].shape[0]
        x = torch.cat([torch.cat((self.box[i](f), self.cls[i](f)), 1).view(b, 4 * self.reg_max + self.classes, -1)
                       for i, f in enumerate(feats)], 2)
        box, cls = x.split((4 * self.reg_max, self.classes), 1)
        a = box.shape[2]
        dist = self.dfl(box.view(b, 4, self.reg_max, a).transpose(2, 1).softmax(1)).view(b, 4, a)
        lt, rb = dist.chunk(2, 1)
        x1y1 = self.anchors - lt
        x2y2 = self.anchors + rb
        xywh = torch.cat(((x1y1 + x2y2) / 2, x2y2 - x1y1), 1) * self.strides
        return torch.cat((xywh, cls.sigmoid()), 1)


class AnchorHead(nn.Module):
    """YOLOv5's Detect (v6.2+): anchors per level in pixels, grids for one input size."""

    ANCHORS = ((10, 13, 16, 30, 33, 23), (30, 61, 62, 45, 59, 119), (116, 90, 156, 198, 373, 326))

    def __init__(self, channels, side, classes=80, strides=(8, 16, 32)):
        super().__init__()
        self.classes, self.na, self.strides = classes, 3, strides
        self.no = 5 + classes
        self.m = nn.ModuleList(nn.Conv2d(c, self.na * self.no, 1) for c in channels)
        for i, s in enumerate(strides):
            n = side // s
            ys, xs = torch.meshgrid(torch.arange(n, dtype=torch.float32), torch.arange(n, dtype=torch.float32),
                                    indexing="ij")
            grid = torch.stack((xs, ys), 2).expand(1, self.na, n, n, 2) - 0.5
            anchors = torch.tensor(self.ANCHORS[i], dtype=torch.float32).view(1, self.na, 1, 1, 2)
            self.register_buffer(f"grid{i}", grid.contiguous())
            self.register_buffer(f"anchor_grid{i}", anchors.expand(1, self.na, n, n, 2).contiguous())

    def forward(self, feats):
        z = []
        for i, f in enumerate(feats):
            x = self.m[i](f)
            b, _, ny, nx = x.shape
            x = x.view(b, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2)
            xy, wh, conf = x.sigmoid().split((2, 2, self.classes + 1), 4)
            xy = (xy * 2 + getattr(self, f"grid{i}")) * self.strides[i]
            wh = (wh * 2) ** 2 * getattr(self, f"anchor_grid{i}")
            z.append(torch.cat((xy, wh, conf), 4).view(b, self.na * nx * ny, self.no))
        return torch.cat(z, 1)


class YOLOv5u(nn.Module):
    """yolov5u.yaml at a depth and width multiple (n: 0.33, 0.25); anchors=True: yolov5n.yaml's
    anchor-based head instead (the backbone and neck are the same)."""

    def __init__(self, side=640, depth=0.33, width=0.25, classes=80, anchors=False):
        super().__init__()
        c = lambda v: _channels(v, width)
        n = lambda v: max(round(v * depth), 1)
        self.b0 = Conv(3, c(64), 6, 2, 2)
        self.b1 = Conv(c(64), c(128), 3, 2)
        self.b2 = C3(c(128), c(128), n(3))
        self.b3 = Conv(c(128), c(256), 3, 2)
        self.b4 = C3(c(256), c(256), n(6))
        self.b5 = Conv(c(256), c(512), 3, 2)
        self.b6 = C3(c(512), c(512), n(9))
        self.b7 = Conv(c(512), c(1024), 3, 2)
        self.b8 = C3(c(1024), c(1024), n(3))
        self.b9 = SPPF(c(1024), c(1024))
        self.h10 = Conv(c(1024), c(512), 1)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.h13 = C3(c(1024), c(512), n(3), False)
        self.h14 = Conv(c(512), c(256), 1)
        self.h17 = C3(c(512), c(256), n(3), False)
        self.h18 = Conv(c(256), c(256), 3, 2)
        self.h20 = C3(c(512), c(512), n(3), False)
        self.h21 = Conv(c(512), c(512), 3, 2)
        self.h23 = C3(c(1024), c(1024), n(3), False)
        head = AnchorHead if anchors else DFLHead
        self.detect = head((c(256), c(512), c(1024)), side, classes)

    def forward(self, x):
        p3 = self.b4(self.b3(self.b2(self.b1(self.b0(x)))))
        p4 = self.b6(self.b5(p3))
        p5 = self.b9(self.b8(self.b7(p4)))
        h10 = self.h10(p5)
        h14 = self.h14(self.h13(torch.cat((self.up(h10), p4), 1)))
        h17 = self.h17(torch.cat((self.up(h14), p3), 1))
        h20 = self.h20(torch.cat((self.h18(h17), h14), 1))
        h23 = self.h23(torch.cat((self.h21(h20), h10), 1))
        return self.detect([h17, h20, h23])
