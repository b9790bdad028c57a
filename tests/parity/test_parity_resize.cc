// Resize and Upsample against ONNX Runtime over their attribute space: every mode octet runs
// (cubic with its a and exclude_outside), every coordinate transform (tf_crop_and_resize with
// a region reaching outside the input) and nearest rounding, scales and sizes, enlarging and
// shrinking, odd extents, the opset-10 and Upsample forms, the 8-bit form (a QDQ unit ORT runs
// on the integers), and scales fed at run time. Every output must be bit-identical (octet takes
// ORT's float steps), at every ISA level this CPU has, and the 2-D resizes must not run the
// scalar reference where a SIMD level exists.
#include <gtest/gtest.h>

#include <cstring>

#include "engine/session.h"
#include "kernels/isa.h"
#include "tests/parity/parity_fixture.h"
#include "tests/util/skip_reasons.h"
#include "io/tensor_io.h"

namespace octet::parity {
namespace resize_parity {

using testing::ElemType;
using testing::OnnxBuilder;
using testing::TensorValue;

struct Case {
  std::string name;
  int64_t opset = 13;
  testing::Attrs attrs;
  std::vector<float> scales;   // or
  std::vector<int64_t> sizes;  // (one of the two)
  ir::Dims dims{2, 19, 9, 11};
  std::vector<float> roi;      // the roi input when not empty (tf_crop_and_resize)
  // u8 / s8: the input quantized, then resized as a QDQ unit (DequantizeLinear, Resize,
  // QuantizeLinear), or with `on_codes` the codes resized directly (a QOperator file's Resize).
  ElemType type = ElemType::f32;
  bool on_codes = false;
  bool expect_simd = true;
};

// The Resize node of `c` on `x`, in the input form of c.opset.
std::string resize_node(OnnxBuilder& b, const Case& c, const std::string& x) {
  if (c.opset < 10) {  // Upsample
    if (c.opset < 9) {
      testing::Attrs attrs = c.attrs;
      attrs.push_back({"scales", c.scales});
      return b.node("Upsample", {x}, attrs);
    }
    return b.node("Upsample", {x, b.initializer("", {int64_t(c.scales.size())}, c.scales)}, c.attrs);
  }
  if (c.opset == 10) return b.node("Resize", {x, b.initializer("", {int64_t(c.scales.size())}, c.scales)}, c.attrs);
  const std::string roi = !c.roi.empty() ? b.initializer("", {int64_t(c.roi.size())}, c.roi)
                          : c.opset >= 13 ? ""
                                          : b.initializer("", {0}, std::vector<float>{});
  if (!c.scales.empty())
    return b.node("Resize", {x, roi, b.initializer("", {int64_t(c.scales.size())}, c.scales)}, c.attrs);
  const std::string no_scales = c.opset >= 13 ? "" : b.initializer("", {0}, std::vector<float>{});
  return b.node("Resize",
                {x, roi, no_scales, b.initializer("", TensorValue::s64({int64_t(c.sizes.size())}, c.sizes))},
                c.attrs);
}

void expect_identical(const Case& c) {
  SCOPED_TRACE(c.name);
  OnnxBuilder b(c.opset);
  ir::Dims symbolic = c.dims;
  symbolic[0] = -1;
  auto x = b.input("x", symbolic);
  if (c.type == ElemType::f32) {
    b.output(resize_node(b, c, x));
  } else {
    // ORT drops the Q/DQ pair around a nearest Resize and copies codes; it keeps a linear one
    // in float and rounds its result to a code. A Resize of codes truncates its float result.
    const bool u8 = c.type == ElemType::u8;
    auto scale = b.initializer("s", {}, {0.03f});
    auto zp = b.initializer("zp", u8 ? TensorValue::u8({}, {131}) : TensorValue::s8({}, {-7}));
    auto q = b.node("QuantizeLinear", {x, scale, zp});
    if (c.on_codes) {
      b.output(resize_node(b, c, q), c.type);
    } else {
      auto dq = b.node("DequantizeLinear", {q, scale, zp});
      b.output(b.node("QuantizeLinear", {resize_node(b, c, dq), scale, zp}), c.type);
    }
  }
  auto inputs = random_inputs({c.dims}, c.dims[0], 11);
  for (float& v : std::span(const_cast<float*>(inputs[0].as<float>()), size_t(inputs[0].count()))) v *= 2.0f;
  expect_ort_bytes_at_every_level(b, c.name, {{"x", inputs[0]}});
  if (c.expect_simd) expect_no_scalar_step_at_simd_levels(b, c.name, {c.dims});
}

std::vector<Case> nearest_cases() {
  std::vector<Case> cases;
  const char* transforms[] = {"asymmetric", "half_pixel", "pytorch_half_pixel", "align_corners", "tf_half_pixel_for_nn"};
  const char* roundings[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  for (const char* t : transforms)
    for (const char* r : roundings) {
      Case up{std::string("nearest_") + t + "_" + r + "_up"};
      up.attrs = {{"mode", "nearest"}, {"coordinate_transformation_mode", t}, {"nearest_mode", r}};
      up.scales = {1, 1, 2.0f, 1.75f};
      cases.push_back(up);
      Case down = up;
      down.name = std::string("nearest_") + t + "_" + r + "_sizes_down";
      down.scales.clear();
      down.opset = 18;
      down.attrs.push_back({"axes", {2, 3}});
      down.sizes = {4, 6};
      cases.push_back(down);
    }
  return cases;
}

std::vector<Case> linear_cases() {
  std::vector<Case> cases;
  const char* transforms[] = {"half_pixel", "asymmetric", "pytorch_half_pixel", "align_corners",
                              "half_pixel_symmetric"};
  for (const char* t : transforms) {
    Case up{std::string("linear_") + t + "_up"};
    up.opset = std::string(t) == "half_pixel_symmetric" ? 19 : 13;
    up.attrs = {{"mode", "linear"}, {"coordinate_transformation_mode", t}};
    up.scales = {1, 1, 2.0f, 2.0f};
    cases.push_back(up);
    Case odd = up;
    odd.name = std::string("linear_") + t + "_odd_scales";
    odd.scales = {1, 1, 1.7f, 0.6f};
    cases.push_back(odd);
    Case sizes = up;
    sizes.name = std::string("linear_") + t + "_sizes";
    sizes.opset = 19;
    sizes.attrs.push_back({"axes", {2, 3}});
    sizes.scales.clear();
    sizes.sizes = {5, 17};
    cases.push_back(sizes);
  }
  return cases;
}

std::vector<Case> cubic_cases() {
  std::vector<Case> cases;
  const char* transforms[] = {"half_pixel", "asymmetric", "pytorch_half_pixel", "align_corners",
                              "half_pixel_symmetric", "tf_half_pixel_for_nn"};
  for (const char* t : transforms)
    for (float a : {-0.75f, -0.5f})
      for (int64_t ex : {0, 1}) {
        Case up{std::string("cubic_") + t + (a == -0.5f ? "_a05" : "_a075") + (ex ? "_exclude" : "") + "_up"};
        up.opset = 19;
        up.attrs = {{"mode", "cubic"}, {"coordinate_transformation_mode", t}, {"cubic_coeff_a", a},
                    {"exclude_outside", ex}};
        up.scales = {1, 1, 2.0f, 2.0f};
        cases.push_back(up);
        Case odd = up;
        odd.name.replace(odd.name.size() - 3, 3, "_odd_scales");
        odd.scales = {1, 1, 1.7f, 0.6f};
        cases.push_back(odd);
      }
  return cases;
}

TEST(ResizeParity, CubicEveryTransform) {
  OCTET_SKIP_WITHOUT_ORT();
  for (const Case& c : cubic_cases()) expect_identical(c);
  Case sizes{"cubic_sizes_axes", 18, {{"mode", "cubic"}, {"axes", {2, 3}}}, {}, {5, 17}};
  expect_identical(sizes);
  Case two_d{"cubic_2d", 13, {{"mode", "cubic"}}, {1.5f, 0.5f}, {}, {6, 10}};
  expect_identical(two_d);
  // In a QDQ unit ORT runs cubic in float, as linear; 8-bit codes octet refuses (ORT fails).
  for (ElemType type : {ElemType::u8, ElemType::s8}) {
    Case q{std::string("cubic_qdq_") + (type == ElemType::u8 ? "u8" : "s8"), 13, {{"mode", "cubic"}},
           {1, 1, 2.0f, 1.5f}};
    q.type = type;
    expect_identical(q);
  }
}

TEST(ResizeParity, TfCropAndResizeExtrapolates) {
  OCTET_SKIP_WITHOUT_ORT();
  for (const char* mode : {"nearest", "linear", "cubic"})
    for (ElemType type : {ElemType::f32, ElemType::u8}) {
      Case c{std::string("crop_") + mode + (type == ElemType::u8 ? "_qdq" : ""), 13,
             {{"mode", mode}, {"coordinate_transformation_mode", "tf_crop_and_resize"},
              {"extrapolation_value", 0.6f}},
             {1, 1, 1.5f, 0.8f}};
      c.roi = {0, 0, -0.2f, 0.3f, 1, 1, 0.7f, 1.3f};
      c.type = mode == std::string("cubic") ? ElemType::f32 : type;
      if (type == ElemType::u8 && c.type == ElemType::f32) continue;
      expect_identical(c);
    }
  // Opset 18's roi over the listed axes only.
  Case axes{"crop_linear_axes", 18,
            {{"mode", "linear"}, {"coordinate_transformation_mode", "tf_crop_and_resize"}, {"axes", {3, 2}}},
            {0.8f, 1.5f}};
  axes.roi = {0.3f, -0.2f, 1.3f, 0.7f};
  expect_identical(axes);
}

// Scales (and roi) fed at run time: each set of values plans anew, like a shape fed at run time.
TEST(ResizeParity, ScalesAtRunTime) {
  OCTET_SKIP_WITHOUT_ORT();
  for (int opset : {9, 13}) {
    SCOPED_TRACE(opset);
    OnnxBuilder b(opset);
    auto x = b.input("x", {-1, 3, 5, 7});
    auto scales = b.input("scales", {4});
    const std::string mode = opset == 9 ? "nearest" : "cubic";
    if (opset == 9) b.output(b.node("Upsample", {x, scales}, {{"mode", mode}}));
    else b.output(b.node("Resize", {x, "", scales}, {{"mode", mode}}));
    ScratchDir dir;
    const std::string path = (dir.path() / "runtime_scales.onnx").string();
    b.save(path);
    Session session = Session::load(path);
    auto inputs = random_inputs({{2, 3, 5, 7}}, 2, 5);
    for (const std::vector<float>& s : {std::vector<float>{1, 1, 2, 3}, std::vector<float>{1, 1, 1.5f, 1.25f}}) {
      const ir::TensorData scales_in = ir::TensorData::f32({4}, s);
      const auto mine = session.run({inputs[0], scales_in});
      const auto theirs = testing::run_ort(path, {{"x", to_npy(inputs[0])}, {"scales", to_npy(scales_in)}});
      const npy::Array& ref = theirs.at(session.outputs()[0].name);
      EXPECT_EQ(mine[0].dims, (ir::Dims{2, 3, int64_t(5 * s[2]), int64_t(7 * s[3])}));
      ASSERT_EQ(mine[0].bytes.size(), ref.data.size());
      EXPECT_EQ(differing_bytes(mine[0], ref), 0) << "scales " << s[2] << " x " << s[3];
    }
  }
}

TEST(ResizeParity, NearestEveryTransformAndRounding) {
  OCTET_SKIP_WITHOUT_ORT();
  for (const Case& c : nearest_cases()) expect_identical(c);
}

TEST(ResizeParity, LinearEveryTransform) {
  OCTET_SKIP_WITHOUT_ORT();
  for (const Case& c : linear_cases()) expect_identical(c);
}

TEST(ResizeParity, OlderForms) {
  OCTET_SKIP_WITHOUT_ORT();
  for (const char* mode : {"nearest", "linear"}) {
    Case resize10{std::string("resize10_") + mode, 10, {{"mode", mode}}, {1, 1, 2.0f, 3.0f}};
    Case upsample9{std::string("upsample9_") + mode, 9, {{"mode", mode}}, {1, 1, 2.0f, 2.0f}};
    Case upsample7{std::string("upsample7_") + mode, 7, {{"mode", mode}}, {1, 1, 1.5f, 2.5f}};
    for (const Case& c : {resize10, upsample9, upsample7}) expect_identical(c);
  }
  // Resize-10 shrinking: its own rounding (ceil when shrinking).
  expect_identical({"resize10_nearest_down", 10, {{"mode", "nearest"}}, {1, 1, 0.5f, 0.4f}});
}

TEST(ResizeParity, EightBitQdqUnitsAndCodes) {
  OCTET_SKIP_WITHOUT_ORT();
  for (ElemType type : {ElemType::u8, ElemType::s8}) {
    const std::string t = type == ElemType::u8 ? "u8" : "s8";
    Case nearest{"nearest_" + t, 13, {{"mode", "nearest"}, {"coordinate_transformation_mode", "asymmetric"},
                                      {"nearest_mode", "floor"}}, {1, 1, 2.0f, 2.0f}};
    nearest.type = type;
    Case linear{"linear_" + t, 13, {{"mode", "linear"}}, {1, 1, 1.6f, 2.3f}};
    linear.type = type;
    Case aligned{"linear_align_corners_" + t, 18,
                 {{"mode", "linear"}, {"coordinate_transformation_mode", "align_corners"}, {"axes", {2, 3}}},
                 {}, {17, 5}};
    aligned.type = type;
    for (Case c : {nearest, linear, aligned}) {
      expect_identical(c);
      c.name += "_on_codes";
      c.on_codes = true;
      expect_identical(c);
    }
  }
}

TEST(ResizeParity, OtherRanksAndAxes) {
  OCTET_SKIP_WITHOUT_ORT();
  Case ncl{"nearest_3d", 13, {{"mode", "nearest"}}, {1, 1, 2.5f}, {}, {2, 7, 9}};
  expect_identical(ncl);
  Case channels{"nearest_channels", 13, {{"mode", "nearest"}}, {1, 2.0f, 1, 1}};
  channels.expect_simd = false;  // a resized channel axis runs the row-major reference
  expect_identical(channels);
  Case axes{"nearest_axes_opset18", 18, {{"mode", "nearest"}, {"axes", {-1, 2}}}, {3.0f, 2.0f}};
  expect_identical(axes);
  Case two_d{"linear_2d", 13, {{"mode", "linear"}}, {1.5f, 0.5f}, {}, {6, 10}};
  expect_identical(two_d);
}

}  // namespace resize_parity
}  // namespace octet::parity
