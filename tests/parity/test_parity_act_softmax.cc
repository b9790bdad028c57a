// Softmax / LogSoftmax on any axis (opset 11's flattening and 13's single axis, negative axes,
// row-major and channels-last inputs), the parametric activations (LeakyRelu, PRelu with scalar,
// per-channel and full slopes, Elu, Selu, Celu, Softplus, ThresholdedRelu), ArgMax / ArgMin and
// DepthToSpace / SpaceToDepth against ONNX Runtime at every ISA level this CPU has. FP32 outputs
// within 1e-5 relative (each value against max(|ORT value|, 1e-3 max |ORT|)), indices and
// moved data identical; at every SIMD level no step of these ops runs a scalar reference. Ops fed
// by a Conv inherit its rounding (its sums run in another order than ORT's): those outputs are
// held to the project's bound for a conv, 1e-4 of max |ORT|.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>
#include <span>

#include "engine/plan.h"
#include "engine/session.h"
#include "kernels/isa.h"
#include "tests/parity/parity_fixture.h"
#include "io/tensor_io.h"

namespace octet::parity {
namespace act_softmax_parity {

using testing::ElemType;
using testing::OnnxBuilder;

const std::set<std::string> kOps = {"Softmax",  "LogSoftmax", "LeakyRelu",       "PRelu",  "Elu",
                                    "Selu",     "Celu",       "Softplus",        "ThresholdedRelu",
                                    "ArgMax",   "ArgMin",     "DepthToSpace",    "SpaceToDepth", "Conv",
                                    "ReduceMax", "ReduceMin"};

// Worst relative difference of float outputs; exact comparison of everything else.
struct Worst {
  double rel = 0.0;
};

void compare(const ir::TensorData& mine, const npy::Array& theirs, const std::string& what, bool after_conv,
             double abs_floor, Worst& worst) {
  ASSERT_EQ(mine.bytes.size(), theirs.data.size()) << what;
  if (mine.dtype != ir::DType::f32) {
    EXPECT_EQ(std::memcmp(mine.bytes.data(), theirs.data.data(), mine.bytes.size()), 0) << what;
    return;
  }
  const float* a = mine.as<float>();
  const float* b = theirs.as<float>();
  const size_t n = size_t(mine.count());
  double max_abs = 0.0;
  for (size_t i = 0; i < n; ++i) max_abs = std::max(max_abs, double(std::fabs(b[i])));
  for (size_t i = 0; i < n; ++i) {
    if (std::isnan(b[i]) || std::isnan(a[i])) {
      EXPECT_EQ(std::isnan(a[i]), std::isnan(b[i])) << what << " at " << i;
      continue;
    }
    const double scale = std::max(double(std::fabs(b[i])), 1e-3 * max_abs);
    const double rel = scale == 0.0 ? std::fabs(a[i] - b[i]) : std::fabs(double(a[i]) - b[i]) / scale;
    worst.rel = std::max(worst.rel, rel);
    if (after_conv) {
      ASSERT_LE(std::fabs(double(a[i]) - b[i]), 1e-4 * max_abs) << what << " at " << i << ": octet " << a[i] << ", ORT " << b[i];
      continue;
    }
    if (std::fabs(double(a[i]) - b[i]) <= abs_floor) continue;
    ASSERT_LE(rel, 1e-5) << what << " at " << i << ": octet " << a[i] << ", ORT " << b[i];
  }
}

// Saves the model, runs it in ORT and in octet at every level this CPU has on one random input
// `dims` (scaled by `scale`), compares every output and checks the plan: no scalar reference
// step for the ops under test at a SIMD level.
// abs_floor: a difference this small passes whatever the value (exp(x) - 1 near x = 0 cancels:
// a 1-ulp difference of exp(x) is 1.2e-7 absolute, up to 1e-5 relative for |x| near 0.01).
void expect_parity(const OnnxBuilder& model, const std::string& name, const ir::Dims& dims, float scale = 3.0f,
                   bool after_conv = false, double abs_floor = 0.0) {
  ScratchDir dir;
  const std::string path = (dir.path() / (name + ".onnx")).string();
  model.save(path);
  const auto inputs = random_inputs({dims}, dims[0], 11);
  for (float& v : std::span(const_cast<float*>(inputs[0].as<float>()), size_t(inputs[0].count()))) v *= scale;
  const auto theirs = testing::run_ort(path, {{"x", to_npy(inputs[0])}});
  Worst worst;
  for (kernels::Isa isa : kernels::runnable_isas()) {
    SessionOptions o;
    o.isa = isa;
    Session session = Session::load(path, o);
    const auto mine = session.run(inputs);
    for (size_t i = 0; i < mine.size(); ++i) {
      const std::string& out = session.outputs()[i].name;
      compare(mine[i], theirs.at(out), name + ", output " + out + " at " + kernels::isa_name(isa), after_conv, abs_floor, worst);
    }
    if (isa == kernels::Isa::scalar) continue;
    for (const PlanStep& s : session.plan_for(std::vector<ir::Dims>{dims}).steps()) {
      if (kOps.count(s.op)) {
        EXPECT_FALSE(s.scalar()) << name << ": " << s.node << " runs " << s.kernel;
      }
    }
  }
  std::printf("%s: max relative difference to ORT %.2e\n", name.c_str(), worst.rel);
}

// ---- Softmax / LogSoftmax ----

TEST(ActSoftmaxParity, SoftmaxAndLogSoftmaxOnEveryAxisOpset13) {
  OCTET_SKIP_WITHOUT_ORT();
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (int64_t axis : {-4, -3, -2, -1, 0, 1, 2, 3}) {
      OnnxBuilder b(13);
      auto x = b.input("x", {-1, 16, 5, 37});
      b.output(b.node(op, {x}, {{"axis", axis}}));
      expect_parity(b, std::string(op) + "_13_axis" + std::to_string(axis), {2, 16, 5, 37});
    }
  }
}

TEST(ActSoftmaxParity, SoftmaxAndLogSoftmaxFlattenFromAxisOpset11) {
  OCTET_SKIP_WITHOUT_ORT();
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (int64_t axis : {-3, -1, 0, 1, 2}) {
      OnnxBuilder b(11);
      auto x = b.input("x", {-1, 6, 7, 9});
      b.output(b.node(op, {x}, {{"axis", axis}}));
      expect_parity(b, std::string(op) + "_11_axis" + std::to_string(axis), {3, 6, 7, 9});
    }
    OnnxBuilder b(11);  // the default axis (1) before opset 13
    auto x = b.input("x", {-1, 6, 7, 9});
    b.output(b.node(op, {x}));
    expect_parity(b, std::string(op) + "_11_default", {3, 6, 7, 9});
  }
}

// YOLOv8's DFL head (Softmax over the 16 bins of [N, 16, 4, A]) and a segmentation head's
// Softmax over the channels of a conv's channels-last output; logits large enough to matter.
TEST(ActSoftmaxParity, DflHeadAndChannelsOfAConvOutput) {
  OCTET_SKIP_WITHOUT_ORT();
  {
    OnnxBuilder b(13);
    auto x = b.input("x", {-1, 64, 1, 525});
    auto r = b.node("Reshape", {x, b.initializer_i64("", {4}, {-1, 16, 4, 525})});
    b.output(b.node("Softmax", {r}, {{"axis", int64_t{1}}}));
    expect_parity(b, "dfl_softmax", {1, 64, 1, 525}, 8.0f);
  }
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    OnnxBuilder b(13);
    auto x = b.input("x", {-1, 8, 9, 11});
    auto y = b.node("Conv", {x, b.random_normal_init("w", {21, 8, 3, 3})}, {{"pads", {1, 1, 1, 1}}});
    b.output(b.node(op, {y}, {{"axis", int64_t{1}}}));
    expect_parity(b, std::string("seghead_") + op, {2, 8, 9, 11}, 3.0f, true);
    // No relayout before the Softmax: it reads the conv's channels-last rows.
    ScratchDir dir;
    const std::string path = (dir.path() / "m.onnx").string();
    b.save(path);
    Session session = Session::load(path);
    for (const PlanStep& s : session.plan_for(std::vector<ir::Dims>{{2, 8, 9, 11}}).steps()) {
      if (s.op == op) {
        EXPECT_NE(s.kernel.find("(rows)"), std::string::npos) << s.kernel;
      }
      EXPECT_FALSE(s.node.starts_with("relayout /Conv")) << s.node;
    }
  }
}

// ---- Activations ----

TEST(ActSoftmaxParity, ParametricActivations) {
  OCTET_SKIP_WITHOUT_ORT();
  struct Case {
    const char* op;
    testing::Attrs attrs;
    int64_t opset;
    double abs_floor = 0.0;  // Elu, Selu, Celu: 2.5 ulp of 1, times alpha (and gamma)
  };
  const std::vector<Case> cases = {
      {"LeakyRelu", {}, 13},
      {"LeakyRelu", {{"alpha", 0.2f}}, 13},
      {"Elu", {}, 13, 3e-7},
      {"Elu", {{"alpha", 0.5f}}, 13, 1.5e-7},
      {"Selu", {}, 13, 3e-7 * 1.76},
      {"Selu", {{"alpha", 1.5f}, {"gamma", 2.0f}}, 13, 3e-7 * 3.0},
      {"Celu", {}, 13, 3e-7},
      {"Celu", {{"alpha", 2.0f}}, 13, 6e-7},
      {"Softplus", {}, 13},
      {"ThresholdedRelu", {}, 13},
      {"ThresholdedRelu", {{"alpha", 0.3f}}, 13},
      {"LeakyRelu", {{"alpha", 0.1f}}, 6},
  };
  int k = 0;
  for (const Case& c : cases) {
    for (bool after_conv : {false, true}) {
      // After a conv: channels-last input, LeakyRelu fused into its epilogue.
      OnnxBuilder b(c.opset);
      auto x = b.input("x", {-1, 13, 7, 9});
      auto in = after_conv ? b.node("Conv", {x, b.random_normal_init("w", {11, 13, 1, 1})}) : x;
      b.output(b.node(c.op, {in}, c.attrs));
      expect_parity(b, std::string(c.op) + "_" + std::to_string(k++), {2, 13, 7, 9}, 3.0f, after_conv, c.abs_floor);
      if (after_conv && std::string(c.op) == "LeakyRelu") {  // fused into the conv's epilogue
        ScratchDir dir;
        const std::string path = (dir.path() / "m.onnx").string();
        b.save(path);
        Session session = Session::load(path);
        for (const auto& n : session.graph().nodes) EXPECT_NE(n.op, "LeakyRelu") << n.name;
        for (const PlanStep& s : session.plan_for(std::vector<ir::Dims>{{2, 13, 7, 9}}).steps()) {
          if (s.op == "Conv" && !s.scalar()) {
            EXPECT_NE(s.kernel.find("f32_leaky_relu__"), std::string::npos) << s.kernel;
          }
        }
      }
    }
  }
}

TEST(ActSoftmaxParity, PReluScalarPerChannelAndFullSlopes) {
  OCTET_SKIP_WITHOUT_ORT();
  for (bool after_conv : {false, true}) {
    OnnxBuilder b(13);
    auto x = b.input("x", {-1, 19, 6, 7});
    auto in = after_conv ? b.node("Conv", {x, b.random_normal_init("w", {19, 19, 1, 1})}) : x;
    b.output(b.node("PRelu", {in, b.random_uniform_init("", {1}, 0.0f, 0.5f)}));
    b.output(b.node("PRelu", {in, b.random_uniform_init("", {19, 1, 1}, -1.0f, 1.0f)}));
    b.output(b.node("PRelu", {in, b.random_uniform_init("", {19, 6, 7}, -1.0f, 1.0f)}));
    b.output(b.node("PRelu", {in, b.random_uniform_init("", {7}, -1.0f, 1.0f)}));
    b.output(b.node("PRelu", {in, b.random_uniform_init("", {6, 1}, -1.0f, 1.0f)}));
    expect_parity(b, after_conv ? "prelu_after_conv" : "prelu", {3, 19, 6, 7}, 3.0f, after_conv);
  }
}

// DequantizeLinear -> LeakyRelu -> QuantizeLinear becomes QLinearLeakyRelu; its codes are ORT's.
TEST(ActSoftmaxParity, LeakyReluInsideAQdqUnitGivesOrtsCodes) {
  OCTET_SKIP_WITHOUT_ORT();
  for (int s8 = 0; s8 < 2; ++s8) {
    OnnxBuilder b(13);
    auto x = b.input("x", {-1, 24, 7, 5});
    auto scale_in = b.initializer("s_in", {}, {0.05f});
    auto zp = b.initializer("zp", s8 ? testing::TensorValue::s8({}, {3}) : testing::TensorValue::u8({}, {128}));
    auto dq = b.node("DequantizeLinear", {b.node("QuantizeLinear", {x, scale_in, zp}), scale_in, zp});
    auto act = b.node("LeakyRelu", {dq}, {{"alpha", 0.13f}});
    b.output(b.node("QuantizeLinear", {act, b.initializer("s_out", {}, {0.03f}), zp}), s8 ? ElemType::s8 : ElemType::u8);
    expect_parity(b, s8 ? "leaky_qdq_s8" : "leaky_qdq_u8", {2, 24, 7, 5});
    ScratchDir dir;
    const std::string path = (dir.path() / "m.onnx").string();
    b.save(path);
    Session session = Session::load(path);
    int fused = 0;
    for (const auto& n : session.graph().nodes) fused += n.op == "QLinearLeakyRelu";
    EXPECT_EQ(fused, 1);
  }
}

// ---- ArgMax / ArgMin ----

TEST(ActSoftmaxParity, ArgMaxArgMinOverAxesKeepdimsAndLastIndex) {
  OCTET_SKIP_WITHOUT_ORT();
  for (const char* op : {"ArgMax", "ArgMin"}) {
    for (int64_t axis : {-3, -1, 1, 2, 3}) {
      for (int64_t keep : {0, 1}) {
        for (int64_t last : {0, 1}) {
          OnnxBuilder b(13);
          auto x = b.input("x", {-1, 10, 6, 37});
          // Rounded inputs: ties, so select_last_index matters.
          auto r = b.node("Round", {x});
          b.output(b.node(op, {r}, {{"axis", axis}, {"keepdims", keep}, {"select_last_index", last}}), ElemType::s64);
          expect_parity(b, std::string(op) + "_a" + std::to_string(axis) + "_k" + std::to_string(keep) + "_l" +
                               std::to_string(last),
                        {2, 10, 6, 37}, 1.5f);
        }
      }
    }
  }
}

// ---- ReduceMax / ReduceMin on the axis kernels ----

TEST(ActSoftmaxParity, ReduceMaxMinOverAxisRunsBothLayouts) {
  OCTET_SKIP_WITHOUT_ORT();
  for (const char* op : {"ReduceMax", "ReduceMin"}) {
    for (bool after_conv : {false, true}) {
      OnnxBuilder b(13);
      auto x = b.input("x", {-1, 12, 5, 9});
      auto in = after_conv ? b.node("Conv", {x, b.random_normal_init("w", {12, 12, 1, 1})}) : x;
      b.output(b.node(op, {in}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{1}}}));
      // W of a channels-last map is not one run with the kept axes in order: the strided
      // reference runs it (not under test here).
      if (!after_conv) b.output(b.node(op, {in}, {{"axes", std::vector<int64_t>{-1}}, {"keepdims", int64_t{0}}}));
      b.output(b.node(op, {in}, {{"axes", std::vector<int64_t>{2, 3}}, {"keepdims", int64_t{0}}}));
      expect_parity(b, std::string(op) + (after_conv ? "_conv" : ""), {2, 12, 5, 9}, 3.0f, after_conv);
    }
  }
}

// ---- DepthToSpace / SpaceToDepth ----

TEST(ActSoftmaxParity, DepthToSpaceAndSpaceToDepthBothLayouts) {
  OCTET_SKIP_WITHOUT_ORT();
  for (const char* mode : {"DCR", "CRD"}) {
    for (int64_t block : {2, 3}) {
      OnnxBuilder b(13);
      auto x = b.input("x", {-1, 36, 5, 7});
      b.output(b.node("DepthToSpace", {x}, {{"blocksize", block}, {"mode", std::string(mode)}}));
      expect_parity(b, std::string("d2s_") + mode + std::to_string(block), {2, 36, 5, 7});
      OnnxBuilder bc(13);
      auto xc = bc.input("x", {-1, 36, 5, 7});
      auto y = bc.node("Conv", {xc, bc.random_normal_init("w", {36, 36, 1, 1})});
      bc.output(bc.node("DepthToSpace", {y}, {{"blocksize", block}, {"mode", std::string(mode)}}));
      expect_parity(bc, std::string("d2s_conv_") + mode + std::to_string(block), {2, 36, 5, 7}, 3.0f, true);
    }
  }
  for (int64_t block : {2, 3}) {
    OnnxBuilder b(13);
    auto x = b.input("x", {-1, 5, 12, 6});
    b.output(b.node("SpaceToDepth", {x}, {{"blocksize", block}}));
    expect_parity(b, "s2d_" + std::to_string(block), {2, 5, 12, 6});
    OnnxBuilder bc(13);
    auto xc = bc.input("x", {-1, 5, 12, 6});
    auto y = bc.node("Conv", {xc, bc.random_normal_init("w", {5, 5, 1, 1})});
    bc.output(bc.node("SpaceToDepth", {y}, {{"blocksize", block}}));
    expect_parity(bc, "s2d_conv_" + std::to_string(block), {2, 5, 12, 6}, 3.0f, true);
  }
}

}  // namespace act_softmax_parity
}  // namespace octet::parity
