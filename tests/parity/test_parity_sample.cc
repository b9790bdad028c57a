// RoiAlign and GridSample against ONNX Runtime at every level this CPU has: each op alone
// bit-identical to ORT (its CPU kernels' arithmetic, kernels/ref/sample.h), in every mode, and
// the blocks the field uses them in within 1e-4 of max |ORT|: a Mask R-CNN-like head (a feature
// map of two images -> RoiAlign of 8 rois -> Conv -> Relu) and a spatial transformer (an affine
// grid as an input -> GridSample -> Conv).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>

#include "engine/session.h"
#include "io/tensor_io.h"
#include "kernels/isa.h"
#include "tests/parity/parity_fixture.h"

namespace octet::parity {
namespace sample_parity {

using testing::OnnxBuilder;

// Runs `model` in octet at every level and in ORT on `inputs` (named "x", then "grid").
void compare_at_every_level(const OnnxBuilder& model, const std::string& name, const std::vector<ir::TensorData>& inputs,
                            bool exact) {
  std::map<std::string, ir::TensorData> in = {{"x", inputs[0]}};
  if (inputs.size() > 1) in["grid"] = inputs[1];
  if (exact) return expect_ort_bytes_at_every_level(model, name, in);
  ScratchDir dir;
  const std::string path = (dir.path() / (name + ".onnx")).string();
  const auto theirs = save_and_run_ort(model, path, in);
  for (kernels::Isa isa : kernels::runnable_isas()) {
    SessionOptions o;
    o.isa = isa;
    Session session = Session::load(path, o);
    const auto mine = session.run(inputs);
    const std::string& out = session.outputs()[0].name;
    const Figures f = compare(mine[0], theirs.at(out));
    EXPECT_TRUE(f.shape_ok) << name << ": " << f.shape_note;
    std::printf("%s at %s: %s\n", name.c_str(), kernels::isa_name(isa), describe(f).c_str());
    EXPECT_LE(f.max_abs_diff, 1e-4 * f.max_abs_ref) << name << " at " << kernels::isa_name(isa) << ": " << describe(f);
  }
}

// Eight rois over a map of stride 4 (spatial_scale 1/4) on two images, one partly outside.
std::string roi_align(OnnxBuilder& b, const std::string& x, const std::string& mode, int64_t ratio) {
  const std::string rois = b.initializer("", {8, 4},
                                         {4, 4, 60, 40,     10, 20, 90, 96,   0, 0, 135, 99,   50, 30, 58, 37,
                                          -20, -10, 30, 50, 70, 60, 140, 110, 33, 12, 34, 13,  100, 5, 130, 70});
  const std::string idx = b.initializer_i64("", {8}, {0, 1, 0, 1, 1, 0, 0, 1});
  return b.node("RoiAlign", {x, rois, idx},
                {{"mode", mode}, {"output_height", int64_t(7)}, {"output_width", int64_t(7)},
                 {"sampling_ratio", ratio}, {"spatial_scale", 0.25f}});
}

TEST(SampleParity, RoiAlignBitIdenticalToOrtAtEveryLevel) {
  OCTET_SKIP_WITHOUT_ORT();
  const ir::Dims dims = {2, 37, 25, 34};
  for (const char* mode : {"avg", "max"})
    for (int64_t ratio : {0, 2}) {
      OnnxBuilder b(16);
      b.output(roi_align(b, b.input("x", dims), mode, ratio));
      compare_at_every_level(b, std::string("roialign_") + mode + "_r" + std::to_string(ratio),
                             random_inputs({dims}, 2, 3), true);
    }
}

TEST(SampleParity, MaskRcnnLikeHeadWithinOneE4OfOrt) {
  OCTET_SKIP_WITHOUT_ORT();
  const ir::Dims dims = {2, 32, 25, 34};
  OnnxBuilder b(16);
  const std::string pooled = roi_align(b, b.input("x", dims), "avg", 2);
  const std::string conv = b.node("Conv", {pooled, b.random_normal_init("", {16, 32, 3, 3}, 0, 0.1f), b.random_normal_init("", {16})},
                                  {{"pads", {1, 1, 1, 1}}});
  b.output(b.node("Relu", {conv}));
  compare_at_every_level(b, "mask_rcnn_head", random_inputs({dims}, 2, 4), false);
}

// An affine grid per image (a rotation, a scale, a shift), as a spatial transformer computes it.
ir::TensorData affine_grid(int64_t n, int64_t h, int64_t w) {
  std::vector<float> g;
  for (int64_t i = 0; i < n; ++i) {
    const float a = 0.3f + 0.4f * float(i), s = 0.8f + 0.3f * float(i), tx = 0.1f * float(i), ty = -0.15f;
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x) {
        const float u = -1.0f + 2.0f * (float(x) + 0.5f) / float(w), v = -1.0f + 2.0f * (float(y) + 0.5f) / float(h);
        g.push_back(s * (std::cos(a) * u - std::sin(a) * v) + tx);
        g.push_back(s * (std::sin(a) * u + std::cos(a) * v) + ty);
      }
  }
  return ir::TensorData::f32({n, h, w, 2}, g);
}

TEST(SampleParity, GridSampleBitIdenticalToOrtAtEveryLevel) {
  OCTET_SKIP_WITHOUT_ORT();
  const ir::Dims dims = {2, 19, 11, 13};
  const std::vector<ir::TensorData> inputs = {random_inputs({dims}, 2, 5)[0], affine_grid(2, 9, 10)};
  for (const char* mode : {"bilinear", "nearest", "bicubic"})
    for (const char* pad : {"zeros", "border", "reflection"})
      for (int64_t align : {0, 1}) {
        OnnxBuilder b(16);
        b.output(b.node("GridSample", {b.input("x", dims), b.input("grid", {2, 9, 10, 2})},
                        {{"mode", std::string(mode)}, {"padding_mode", std::string(pad)}, {"align_corners", align}}));
        compare_at_every_level(b, std::string("gridsample_") + mode + "_" + pad + "_" + std::to_string(align), inputs, true);
      }
}

TEST(SampleParity, SpatialTransformerWithinOneE4OfOrt) {
  OCTET_SKIP_WITHOUT_ORT();
  const ir::Dims dims = {2, 16, 20, 20};
  OnnxBuilder b(16);
  const std::string warped = b.node("GridSample", {b.input("x", dims), b.input("grid", {2, 12, 12, 2})});
  b.output(b.node("Conv", {warped, b.random_normal_init("", {8, 16, 3, 3}, 0, 0.1f), b.random_normal_init("", {8})}));
  compare_at_every_level(b, "spatial_transformer", {random_inputs({dims}, 2, 6)[0], affine_grid(2, 12, 12)}, false);
}

}  // namespace sample_parity
}  // namespace octet::parity
