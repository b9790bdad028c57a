// Graphs with ops whose output shape depends on input values, run in stages (engine/stages.cc),
// against ONNX Runtime: a detector's tail (NonMaxSuppression, then the selected boxes picked
// with Gather through Slice / Squeeze as exporters write it) at two data that select different
// counts, so that the stage after the cut is planned for two shapes and each plan is kept; NonZero
// -> Transpose -> GatherND. And a graph without such ops plans exactly as before.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "engine/plan.h"
#include "engine/session.h"
#include "tests/parity/parity_fixture.h"

namespace octet::parity {
namespace value_shaped_parity {

using testing::ElemType;
using testing::OnnxBuilder;
using testing::TensorValue;

std::string i64s(OnnxBuilder& b, std::vector<int64_t> v) { return b.initializer_i64("", {int64_t(v.size())}, v); }

npy::Array to_npy(const ir::TensorData& t) {
  return {static_cast<npy::DType>(t.dtype), t.dims, t.bytes};
}

ir::TensorData random_f32(const ir::Dims& dims, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(size_t(ir::element_count(dims)));
  for (float& x : v) x = u(rng);
  return ir::TensorData::f32(dims, v);
}

// Runs the model in octet and ONNX Runtime on `inputs` and expects every output identical: the
// same shape and the same bytes (float outputs here are picked, not computed, so exact).
std::vector<ir::TensorData> expect_same_as_ort(Session& s, const std::string& path,
                                               const std::vector<ir::TensorData>& inputs) {
  std::map<std::string, npy::Array> in;
  for (size_t i = 0; i < inputs.size(); ++i) in[s.inputs()[i].name] = to_npy(inputs[i]);
  const auto want = testing::run_ort(path, in);
  const std::vector<ir::TensorData> got = s.run(inputs);
  for (size_t o = 0; o < got.size(); ++o) {
    const std::string& name = s.outputs()[o].name;
    const npy::Array& ref = want.at(name);
    EXPECT_EQ(static_cast<int>(ref.dtype), static_cast<int>(got[o].dtype)) << name;
    EXPECT_EQ(ref.shape, got[o].dims) << name;
    EXPECT_TRUE(ref.data == got[o].bytes) << name << " differs from ONNX Runtime";
  }
  return got;
}

// boxes [1, N, 4] and class scores [1, C, N] as a detector's head leaves them (a Sigmoid and a
// Transpose before the cut), NonMaxSuppression, then column 2 of its [K, 3] output picks the boxes.
std::string detector_tail(int64_t boxes, int64_t classes) {
  OnnxBuilder b(13);
  auto xyxy = b.node("Mul", {b.input("boxes", {1, boxes, 4}), b.initializer("", TensorValue::scalar_f32(4.0f))});
  auto scores = b.node("Transpose", {b.node("Sigmoid", {b.input("logits", {1, boxes, classes})})}, {{"perm", {0, 2, 1}}});
  auto nms = b.node("NonMaxSuppression", {xyxy, scores, i64s(b, {20}), b.initializer("", TensorValue::scalar_f32(0.45f)),
                                          b.initializer("", TensorValue::scalar_f32(0.6f))});
  auto column = [&](int64_t c) {
    return b.node("Squeeze", {b.node("Slice", {nms, i64s(b, {c}), i64s(b, {c + 1}), i64s(b, {1})}), i64s(b, {1})});
  };
  auto picked = b.node("Gather", {b.node("Squeeze", {xyxy, i64s(b, {0})}), column(2)}, {{"axis", int64_t(0)}});
  b.output(b.node("Relu", {picked}));
  b.output(b.node("Cast", {column(1)}, {{"to", int64_t(1)}}));
  b.output(b.node("GatherND", {scores, nms}));
  b.output(nms, ElemType::s64);
  const std::string path = ::testing::TempDir() + "/detector_tail.onnx";
  b.save(path);
  return path;
}

class ValueShapedParity : public ParityTest {};

TEST_F(ValueShapedParity, DetectorTailPlansTheStageAfterTheCutPerCount) {
  OCTET_SKIP_WITHOUT_ORT();
  const int64_t n = 300, c = 5;
  const std::string path = detector_tail(n, c);
  for (int threads : {1, 2}) {
    SessionOptions options;
    options.threads = threads;
    Session s = Session::load(path, options);
    ASSERT_EQ(s.stage_cuts().size(), 1u);
    EXPECT_EQ(s.stage_cuts()[0]->op, "NonMaxSuppression");
    const size_t at_load = s.plans_held();
    // Two data that keep different numbers of boxes (a lower logit range keeps fewer).
    const std::vector<ir::TensorData> a = {random_f32({1, n, 4}, 1, 0, 20), random_f32({1, n, c}, 2, -3, 3)};
    const std::vector<ir::TensorData> b = {random_f32({1, n, 4}, 3, 0, 20), random_f32({1, n, c}, 4, -6, 0.6f)};
    const int64_t kept_a = expect_same_as_ort(s, path, a).back().dims[0];
    const size_t after_a = s.plans_held();
    const int64_t kept_b = expect_same_as_ort(s, path, b).back().dims[0];
    const size_t after_b = s.plans_held();
    EXPECT_GT(kept_a, 0);
    EXPECT_GT(kept_b, 0);
    EXPECT_NE(kept_a, kept_b);
    EXPECT_EQ(after_a, at_load + 1);  // the second stage, planned for kept_a rows
    EXPECT_EQ(after_b, after_a + 1);  // and for kept_b rows: indices are not keyed by their values
    expect_same_as_ort(s, path, a);
    EXPECT_EQ(s.plans_held(), after_b);  // the first count's plan was kept
  }
}

TEST_F(ValueShapedParity, NonZeroTransposeGatherNd) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto x = b.input("x", {2, 5, 6});
  auto idx = b.node("Transpose", {b.node("NonZero", {b.node("Relu", {x})})}, {{"perm", {1, 0}}});
  b.output(b.node("GatherND", {x, idx}));
  b.output(b.node("Add", {b.node("ReduceSum", {b.node("Cast", {idx}, {{"to", int64_t(1)}})}, {{"keepdims", int64_t(0)}}),
                          b.initializer("", TensorValue::scalar_f32(1.0f))}));
  const std::string path = ::testing::TempDir() + "/nonzero_gathernd.onnx";
  b.save(path);
  Session s = Session::load(path);
  for (uint32_t seed : {5u, 6u}) {
    const auto got = expect_same_as_ort(s, path, {random_f32({2, 5, 6}, seed, -1, 1)});
    EXPECT_GT(got[0].dims[0], 0);
  }
}

// A graph without such ops takes the path it always took: no stage, and the session's plan is the
// one a Plan of its optimized graph gives, step for step.
TEST(ValueShapedStages, GraphWithoutThemPlansAsBefore) {
  OnnxBuilder b(13);
  auto x = b.input("x", {-1, 3, 16, 16});
  auto y = b.node("Relu", {b.node("Conv", {x, b.random_normal_init("w", {8, 3, 3, 3}), b.random_normal_init("bias", {8})},
                                  {{"pads", {1, 1, 1, 1}}})});
  b.output(b.node("GlobalAveragePool", {y}));
  const std::string path = ::testing::TempDir() + "/no_cut.onnx";
  b.save(path);
  Session s = Session::load(path);
  EXPECT_TRUE(s.stage_cuts().empty());
  const Plan& plan = s.plan_for(s.input_dims_at(1));
  PlanOptions options;
  options.isa = kernels::active_isa();
  const Plan direct(s.graph(), {{"x", {1, 3, 16, 16}}}, {}, options);
  ASSERT_EQ(plan.steps().size(), direct.steps().size());
  for (size_t i = 0; i < plan.steps().size(); ++i) {
    EXPECT_EQ(plan.steps()[i].node, direct.steps()[i].node);
    EXPECT_EQ(plan.steps()[i].kernel, direct.steps()[i].kernel);
  }
  EXPECT_GT(s.batch_slice(), 0);  // still sliced: staging turns slicing off only where it cuts
}

// Passes do not reach across a cut: the Relu after NonZero's stage is not fused into the Conv
// before it, and the first stage's plan (what `octet info` lists) ends before the cut.
TEST(ValueShapedStages, NothingFusesAcrossACut) {
  OnnxBuilder b(13);
  auto x = b.input("x", {1, 3, 8, 8});
  auto conv = b.node("Conv", {x, b.random_normal_init("w", {4, 3, 1, 1})});
  auto nz = b.node("NonZero", {conv});
  b.output(b.node("Relu", {b.node("Cast", {nz}, {{"to", int64_t(1)}})}));
  b.output(b.node("Relu", {conv}));
  const std::string path = ::testing::TempDir() + "/cut_fusion.onnx";
  b.save(path);
  Session s = Session::load(path);
  ASSERT_EQ(s.stage_cuts().size(), 1u);
  for (const PlanStep& step : s.plan_for(s.input_dims_at(1)).steps()) EXPECT_NE(step.op, "NonZero");
  std::vector<float> v(3 * 64);
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(int(i % 7) - 3);
  std::vector<StepTiming> timings;
  const auto out = s.run({ir::TensorData::f32({1, 3, 8, 8}, v)}, &timings);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].dims.size(), 2u);
  EXPECT_EQ(out[0].dims[0], 4);
  bool cut_timed = false;
  for (const StepTiming& t : timings) cut_timed = cut_timed || t.op == "NonZero";
  EXPECT_TRUE(cut_timed);
}

// A cut that reads the model's inputs directly: the first stage has no step, plan_for still works.
TEST(ValueShapedStages, CutOnTheInputs) {
  OnnxBuilder b(13);
  auto x = b.input("x", {6});
  b.output(b.node("NonZero", {x}), ElemType::s64);
  const std::string path = ::testing::TempDir() + "/cut_on_inputs.onnx";
  b.save(path);
  Session s = Session::load(path);
  EXPECT_TRUE(s.plan_for(s.input_dims_at(1)).steps().empty());
  const auto out = s.run({ir::TensorData::f32({6}, std::vector<float>{0, 1, 0, 2, 3, 0})});
  EXPECT_EQ(out[0].dims, (ir::Dims{1, 3}));
  EXPECT_EQ(out[0].to_i64(), (std::vector<int64_t>{1, 3, 4}));
}

}  // namespace value_shaped_parity
}  // namespace octet::parity
