#pragma once
// A small decoder for the ConvTranspose quantization tests: a Conv, then two ConvTransposes
// (2x upsampling, the first with a Relu), flattened so that every code of the last unit is an
// output value, [N, 4 * 24 * 24]. ORT's quantize_static writes a QDQ unit around each
// ConvTranspose (int8 weights per output channel along axis 1, the [C, M / group, k...] layout,
// an int32 bias) and ORT's CPU provider runs the unit in float; octet's quantizer writes the
// same graph. `group2` groups the last ConvTranspose.
#include "loader/onnx_loader.h"
#include "tests/util/onnx_builder.h"

namespace octet::testing {

inline ir::Graph decoder_model(int64_t group2 = 1) {
  OnnxBuilder b(13, "decoder", 13);
  auto x = b.input("input", {-1, 3, 6, 6});
  auto c1 = b.node("Relu", {b.node("Conv", {x, b.random_normal_init("w1", {8, 3, 3, 3}, 0, 0.4f),
                                            b.random_normal_init("b1", {8}, 0, 0.1f)},
                                   {{"pads", {1, 1, 1, 1}}})});
  auto d1 = b.node("Relu", {b.node("ConvTranspose", {c1, b.random_normal_init("wt1", {8, 6, 4, 4}, 0, 0.3f),
                                                     b.random_normal_init("bt1", {6}, 0, 0.2f)},
                                   {{"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}}, "up1")});
  auto d2 = b.node("ConvTranspose", {d1, b.random_normal_init("wt2", {6, 4 / group2, 3, 3}, 0, 0.3f),
                                     b.random_normal_init("bt2", {4}, 0, 0.2f)},
                   {{"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}, {"output_padding", {1, 1}}, {"group", group2}}, "up2");
  b.output(b.node("Flatten", {d2}));
  return loader::load_onnx_bytes(b.serialize(), "decoder");
}

// Its 3-D twin (NCDHW, a volumetric decoder): a 3-D Conv, then ConvTranspose3d + Relu (2x on
// every axis, k4 s2 p1) and a ConvTranspose3d k3 s2 p1 output_padding 1 (grouped by `group2`),
// flattened: [N, 4 * 8 * 16 * 16].
inline ir::Graph decoder3d_model(int64_t group2 = 1) {
  OnnxBuilder b(13, "decoder3d", 13);
  auto x = b.input("input", {-1, 3, 2, 4, 4});
  auto c1 = b.node("Relu", {b.node("Conv", {x, b.random_normal_init("w1", {8, 3, 3, 3, 3}, 0, 0.3f),
                                            b.random_normal_init("b1", {8}, 0, 0.1f)},
                                   {{"pads", {1, 1, 1, 1, 1, 1}}})});
  auto d1 = b.node("Relu", {b.node("ConvTranspose", {c1, b.random_normal_init("wt1", {8, 6, 4, 4, 4}, 0, 0.2f),
                                                     b.random_normal_init("bt1", {6}, 0, 0.2f)},
                                   {{"strides", {2, 2, 2}}, {"pads", {1, 1, 1, 1, 1, 1}}}, "up1")});
  auto d2 = b.node("ConvTranspose", {d1, b.random_normal_init("wt2", {6, 4 / group2, 3, 3, 3}, 0, 0.2f),
                                     b.random_normal_init("bt2", {4}, 0, 0.2f)},
                   {{"strides", {2, 2, 2}}, {"pads", {1, 1, 1, 1, 1, 1}}, {"output_padding", {1, 1, 1}}, {"group", group2}},
                   "up2");
  b.output(b.node("Flatten", {d2}));
  return loader::load_onnx_bytes(b.serialize(), "decoder3d");
}

}  // namespace octet::testing
