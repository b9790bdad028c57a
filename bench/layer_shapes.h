#pragma once
// The convolution and fully connected layers of the bundled models (models/tinynet.onnx,
// models/resnet8.onnx) and of the MLPerf Tiny ResNet8 in ../shared/models, at batch 1, plus
// the extra shapes measured-anchors.md times oneDNN at. Every kernel benchmark runs these,
// so a kernel's figure can be read next to the layer it serves. Duplicates within a model
// are listed once. The TinyNet SE 1x1 convs (1x1 spatial) are listed as FC layers.
#include <vector>

#include "kernels/ref/conv2d.h"

namespace octet::bench {

struct ConvLayer {
  const char* model;  // "resnet8-mlperf", "resnet8", "tinynet", "anchor", "zoo"
  const char* name;   // short label, e.g. "conv3x3 16->32 s2"
  kernels::Conv2dShape shape;  // batch 1
};

struct FcLayer {
  const char* model;
  const char* name;
  int k, n;  // [1 x k] * [k x n]
};

// A dense or depthwise 3x3 / 1x1 conv at batch 1.
inline kernels::Conv2dShape conv(int in_hw, int in_c, int out_c, int kernel, int stride, int pad_top_left,
                                 int pad_bottom_right, int groups = 1) {
  kernels::Conv2dShape s;
  s.in_h = s.in_w = in_hw;
  s.in_c = in_c;
  s.out_c = out_c;
  s.kernel_h = s.kernel_w = kernel;
  s.stride_h = s.stride_w = stride;
  s.pad_top = s.pad_left = pad_top_left;
  s.out_h = s.out_w = (in_hw + pad_top_left + pad_bottom_right - kernel) / stride + 1;
  s.groups = groups;
  return s;
}

inline std::vector<ConvLayer> conv_layers() {
  return {
      // MLPerf Tiny ResNet8, CIFAR-10 (32x32x3); stride-2 convs pad bottom/right only.
      {"resnet8-mlperf", "conv3x3 3->16 @32", conv(32, 3, 16, 3, 1, 1, 1)},
      {"resnet8-mlperf", "conv3x3 16->16 @32", conv(32, 16, 16, 3, 1, 1, 1)},
      {"resnet8-mlperf", "conv3x3 16->32 s2 @32", conv(32, 16, 32, 3, 2, 0, 1)},
      {"resnet8-mlperf", "conv1x1 16->32 s2 @32", conv(32, 16, 32, 1, 2, 0, 0)},
      {"resnet8-mlperf", "conv3x3 32->32 @16", conv(16, 32, 32, 3, 1, 1, 1)},
      {"resnet8-mlperf", "conv3x3 32->64 s2 @16", conv(16, 32, 64, 3, 2, 0, 1)},
      {"resnet8-mlperf", "conv1x1 32->64 s2 @16", conv(16, 32, 64, 1, 2, 0, 0)},
      {"resnet8-mlperf", "conv3x3 64->64 @8", conv(8, 64, 64, 3, 1, 1, 1)},
      // octet's ResNet8, Fashion-MNIST (28x28x1).
      {"resnet8", "conv3x3 1->16 @28", conv(28, 1, 16, 3, 1, 1, 1)},
      {"resnet8", "conv3x3 16->16 @28", conv(28, 16, 16, 3, 1, 1, 1)},
      {"resnet8", "conv3x3 16->32 s2 @28", conv(28, 16, 32, 3, 2, 1, 1)},
      {"resnet8", "conv1x1 16->32 s2 @28", conv(28, 16, 32, 1, 2, 0, 0)},
      {"resnet8", "conv3x3 32->32 @14", conv(14, 32, 32, 3, 1, 1, 1)},
      {"resnet8", "conv3x3 32->64 s2 @14", conv(14, 32, 64, 3, 2, 1, 1)},
      {"resnet8", "conv1x1 32->64 s2 @14", conv(14, 32, 64, 1, 2, 0, 0)},
      {"resnet8", "conv3x3 64->64 @7", conv(7, 64, 64, 3, 1, 1, 1)},
      // TinyNet (MobileNetV2-style with squeeze-excitation), Fashion-MNIST.
      {"tinynet", "conv3x3 1->16 @28", conv(28, 1, 16, 3, 1, 1, 1)},
      {"tinynet", "conv1x1 16->48 @28", conv(28, 16, 48, 1, 1, 0, 0)},
      {"tinynet", "dw3x3 48 @28", conv(28, 48, 48, 3, 1, 1, 1, 48)},
      {"tinynet", "conv1x1 48->24 @28", conv(28, 48, 24, 1, 1, 0, 0)},
      {"tinynet", "conv1x1 24->48 @28", conv(28, 24, 48, 1, 1, 0, 0)},
      {"tinynet", "conv1x1 24->72 @28", conv(28, 24, 72, 1, 1, 0, 0)},
      {"tinynet", "dw3x3 72 s2 @28", conv(28, 72, 72, 3, 2, 1, 1, 72)},
      {"tinynet", "conv1x1 72->32 @14", conv(14, 72, 32, 1, 1, 0, 0)},
      {"tinynet", "conv1x1 32->72 @14", conv(14, 32, 72, 1, 1, 0, 0)},
      {"tinynet", "dw3x3 72 @14", conv(14, 72, 72, 3, 1, 1, 1, 72)},
      {"tinynet", "conv1x1 32->96 @14", conv(14, 32, 96, 1, 1, 0, 0)},
      {"tinynet", "dw3x3 96 s2 @14", conv(14, 96, 96, 3, 2, 1, 1, 96)},
      {"tinynet", "conv1x1 96->48 @7", conv(7, 96, 48, 1, 1, 0, 0)},
      {"tinynet", "conv1x1 48->96 @7", conv(7, 48, 96, 1, 1, 0, 0)},
      {"tinynet", "dw3x3 96 @7", conv(7, 96, 96, 3, 1, 1, 1, 96)},
      {"tinynet", "conv1x1 48->128 @7", conv(7, 48, 128, 1, 1, 0, 0)},
      {"tinynet", "dw3x3 128 s2 @7", conv(7, 128, 128, 3, 2, 1, 1, 128)},
      {"tinynet", "conv1x1 128->64 @4", conv(4, 128, 64, 1, 1, 0, 0)},
      // Shapes measured-anchors.md gives oneDNN times for (a CIFAR-sized MobileNetV2 block).
      {"anchor", "conv1x1 24->48 @32", conv(32, 24, 48, 1, 1, 0, 0)},
      {"anchor", "dw3x3 48 @32", conv(32, 48, 48, 3, 1, 1, 1, 48)},
      {"anchor", "conv1x1 72->32 @16", conv(16, 72, 32, 1, 1, 0, 0)},
      {"anchor", "dw3x3 96 s2 @16", conv(16, 96, 96, 3, 2, 1, 1, 96)},
      // Depthwise layers of the torchvision zoo at 224 px (tools/zoo/export.py): where octet
      // and ORT's NCHWc kernels differ most.
      {"zoo", "dw3x3 32 @112", conv(112, 32, 32, 3, 1, 1, 1, 32)},
      {"zoo", "dw3x3 96 s2 @112", conv(112, 96, 96, 3, 2, 1, 1, 96)},
      {"zoo", "dw3x3 144 @56", conv(56, 144, 144, 3, 1, 1, 1, 144)},
      {"zoo", "dw3x3 192 @28", conv(28, 192, 192, 3, 1, 1, 1, 192)},
      {"zoo", "dw3x3 576 @14", conv(14, 576, 576, 3, 1, 1, 1, 576)},
      {"zoo", "dw3x3 960 @7", conv(7, 960, 960, 3, 1, 1, 1, 960)},
      {"zoo", "dw5x5 72 s2 @56", conv(56, 72, 72, 5, 2, 2, 2, 72)},
      {"zoo", "dw5x5 120 @28", conv(28, 120, 120, 5, 1, 2, 2, 120)},
      {"zoo", "dw5x5 672 @14", conv(14, 672, 672, 5, 1, 2, 2, 672)},
      {"zoo", "dw5x5 960 @7", conv(7, 960, 960, 5, 1, 2, 2, 960)},
      // ConvNeXt-Tiny's 7x7 depthwise convs (pads 3): most output columns of the small maps
      // touch the padding.
      {"zoo", "dw7x7 96 @56", conv(56, 96, 96, 7, 1, 3, 3, 96)},
      {"zoo", "dw7x7 192 @28", conv(28, 192, 192, 7, 1, 3, 3, 192)},
      {"zoo", "dw7x7 384 @14", conv(14, 384, 384, 7, 1, 3, 3, 384)},
      {"zoo", "dw7x7 768 @7", conv(7, 768, 768, 7, 1, 3, 3, 768)},
      // ResNet-50's stem and 56x56 / 28x28 stages: maps of megabytes that the L2 does not hold.
      {"zoo", "conv7x7 3->64 s2 @224", conv(224, 3, 64, 7, 2, 3, 3)},
      {"zoo", "conv1x1 256->64 @56", conv(56, 256, 64, 1, 1, 0, 0)},
      {"zoo", "conv1x1 64->256 @56", conv(56, 64, 256, 1, 1, 0, 0)},
      {"zoo", "conv3x3 64->64 @56", conv(56, 64, 64, 3, 1, 1, 1)},
      {"zoo", "conv1x1 512->128 @28", conv(28, 512, 128, 1, 1, 0, 0)},
      {"zoo", "conv3x3 128->128 @28", conv(28, 128, 128, 3, 1, 1, 1)},
      // ResNet-50's 14x14 and 7x7 stages: few rows, megabytes of weights, long reductions.
      {"zoo", "conv3x3 256->256 @14", conv(14, 256, 256, 3, 1, 1, 1)},
      {"zoo", "conv1x1 1024->256 @14", conv(14, 1024, 256, 1, 1, 0, 0)},
      {"zoo", "conv1x1 1024->2048 s2 @14", conv(14, 1024, 2048, 1, 2, 0, 0)},
      {"zoo", "conv3x3 512->512 @7", conv(7, 512, 512, 3, 1, 1, 1)},
      {"zoo", "conv1x1 2048->512 @7", conv(7, 2048, 512, 1, 1, 0, 0)},
      {"zoo", "conv1x1 512->2048 @7", conv(7, 512, 2048, 1, 1, 0, 0)},
  };
}

// Grouped (not depthwise) 3x3 convs of the zoo at 224 px: RegNetY-400MF's 8-channel groups and
// ResNeXt-50 32x4d's 32 groups of 4 to 32 channels (bench/layer_vs_ort.py names them among the
// layers octet loses most on). Kept apart from conv_layers(), whose users read groups > 1 as
// depthwise.
inline std::vector<ConvLayer> grouped_conv_layers() {
  return {
      {"zoo", "g3x3 48 g6 s2 @112", conv(112, 48, 48, 3, 2, 1, 1, 6)},
      {"zoo", "g3x3 104 g13 @28", conv(28, 104, 104, 3, 1, 1, 1, 13)},
      {"zoo", "g3x3 208 g26 @14", conv(14, 208, 208, 3, 1, 1, 1, 26)},
      {"zoo", "g3x3 440 g55 @7", conv(7, 440, 440, 3, 1, 1, 1, 55)},
      {"zoo", "g3x3 128 g32 @56", conv(56, 128, 128, 3, 1, 1, 1, 32)},
      {"zoo", "g3x3 256 g32 @28", conv(28, 256, 256, 3, 1, 1, 1, 32)},
      {"zoo", "g3x3 512 g32 @14", conv(14, 512, 512, 3, 1, 1, 1, 32)},
  };
}

inline std::vector<FcLayer> fc_layers() {
  return {
      {"resnet8-mlperf", "fc 64->10", 64, 10},
      {"tinynet", "se 48->12", 48, 12},
      {"tinynet", "se 12->48", 12, 48},
      {"tinynet", "se 72->18", 72, 18},
      {"tinynet", "se 18->72", 18, 72},
      {"tinynet", "se 96->24", 96, 24},
      {"tinynet", "se 24->96", 24, 96},
      {"tinynet", "se 128->32", 128, 32},
      {"tinynet", "se 32->128", 32, 128},
      {"tinynet", "fc 64->10", 64, 10},
      // Classifiers at batch 1: GEMVs bound by reading the weights (5-16 MB in FP32).
      {"zoo", "fc 1280->1000", 1280, 1000},
      {"zoo", "fc 2048->1000", 2048, 1000},
      {"zoo", "fc 4096->1000", 4096, 1000},
      {"zoo", "fc 9216->4096", 9216, 4096},
  };
}

// Large GEMMs for the "% of peak" target: big enough that packing and edges do not matter.
struct GemmSize {
  int m, n, k;
};
inline std::vector<GemmSize> large_gemms() { return {{1024, 256, 256}, {2048, 512, 512}, {4096, 64, 576}}; }

}  // namespace octet::bench
