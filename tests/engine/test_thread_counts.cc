// Whole models on 1, 2 and 3 threads give the same bytes: an INT8 graph whose every step splits
// (QuantizeLinear, QLinearConv, QLinearSigmoid's table, QLinearAdd, DequantizeLinear, the
// DynamicQuantizeLinear range and quantize passes over a tensor of uneven pieces) next to steps
// too small to split (a GAP at batch 1, a 1x1 conv of a pooled vector), and the bundled FP32
// models.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "engine/session.h"
#include "loader/onnx_loader.h"
#include "tests/util/onnx_builder.h"

namespace octet::thread_counts_test {

using testing::OnnxBuilder;
using testing::TensorValue;

ir::Graph int8_graph() {
  OnnxBuilder b(13, "threads_q8", 9);
  // 16 x 48 x 48 = 36864 elements: one kEltwiseMinPiece piece and a short one.
  auto x = b.input("x", {-1, 16, 48, 48});
  auto f = [&](const std::string& name, float v) { return b.initializer(name, {}, {v}); };
  auto u8 = [&](const std::string& name, int64_t v) { return b.initializer(name, TensorValue::u8({}, {v})); };
  auto weights = [&](const std::string& name, std::vector<int64_t> dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::vector<int64_t> w(static_cast<size_t>(n));
    for (size_t i = 0; i < w.size(); ++i) w[i] = int64_t(i * 73 % 251) - 125;
    return b.initializer(name, TensorValue::s8(dims, w));
  };
  auto q = b.node("QuantizeLinear", {x, f("xs", 0.05f), u8("xz", 128)});
  auto conv = b.node("QLinearConv", {q, f("cs", 0.05f), u8("cz", 128), weights("w", {16, 16, 3, 3}), f("ws", 0.002f),
                                     b.initializer("wz", TensorValue::s8({}, {0})), f("ys", 0.2f), u8("yz", 100)},
                     {{"pads", {1, 1, 1, 1}}});
  auto sig = b.node("QLinearSigmoid", {conv, f("ss", 0.2f), u8("sz", 100), f("so", 1.0f / 256), u8("soz", 0)});
  b.set_domain(sig, "com.microsoft");
  auto add = b.node("QLinearAdd", {sig, f("as", 1.0f / 256), u8("az", 0), q, f("bs", 0.05f), u8("bz", 128),
                                   f("os", 0.06f), u8("oz", 120)});
  b.set_domain(add, "com.microsoft");
  auto gap = b.node("QLinearGlobalAveragePool", {add, f("gs", 0.06f), u8("gz", 120), f("go", 0.03f), u8("goz", 110)});
  b.set_domain(gap, "com.microsoft");
  // 8 x 16 MACs per image: one tile.
  auto small = b.node("QLinearConv", {gap, f("s2", 0.03f), u8("z2", 110), weights("w2", {8, 16, 1, 1}),
                                      f("ws2", 0.004f), b.initializer("wz2", TensorValue::s8({}, {0})), f("ys2", 0.1f),
                                      u8("yz2", 90)});
  b.output(b.node("DequantizeLinear", {small, f("ds", 0.1f), u8("dz", 90)}));
  b.output(b.node("DequantizeLinear", {add, f("ds2", 0.06f), u8("dz2", 120)}));
  auto dyn = b.node_multi("DynamicQuantizeLinear", {x}, 3);
  b.output(b.node("DequantizeLinear", {dyn[0], dyn[1], dyn[2]}));
  return loader::load_onnx_bytes(b.serialize(), "threads_q8");
}

ir::TensorData input_for(const TensorSpec& spec, int64_t batch, uint32_t seed) {
  ir::Dims d = spec.dims;
  d[0] = batch;
  for (auto& v : d) v = v < 0 ? 1 : v;
  ir::TensorData t = ir::TensorData::make(ir::DType::f32, d);
  uint32_t r = seed * 2654435761u + 7;
  for (int64_t i = 0; i < t.count(); ++i) {
    r = r * 1664525u + 1013904223u;
    t.as<float>()[i] = float(int(r >> 24) - 128) / 40.0f;
  }
  return t;
}

// Every output of `load()` at 2 and 3 threads against 1 thread, byte for byte, at batch 1 and 3.
template <class Load>
void expect_same_bytes(Load load, const std::string& what) {
  std::vector<std::vector<std::vector<std::byte>>> want;
  for (int threads : {1, 2, 3}) {
    SessionOptions o;
    o.threads = threads;
    Session s(load(), o);
    size_t k = 0;
    for (int64_t batch : {1, 3}) {
      const auto outputs = s.run({input_for(s.inputs()[0], batch, uint32_t(batch))});
      std::vector<std::vector<std::byte>> bytes;
      for (const auto& out : outputs) bytes.push_back(out.bytes);
      if (threads == 1) {
        want.push_back(bytes);
        continue;
      }
      ASSERT_EQ(bytes.size(), want[k].size());
      for (size_t i = 0; i < bytes.size(); ++i)
        EXPECT_TRUE(bytes[i] == want[k][i]) << what << ": output " << i << " at batch " << batch << " differs on "
                                             << threads << " threads";
      ++k;
    }
  }
}

TEST(ThreadCounts, Int8StepsGiveTheSameBytesOnAnyThreadCount) {
  expect_same_bytes(int8_graph, "threads_q8");
}

TEST(ThreadCounts, BundledModelsGiveTheSameBytesOnAnyThreadCount) {
  for (const char* name : {"tinynet", "resnet8"}) {
    const std::string path = std::string(OCTET_SOURCE_DIR) + "/models/" + name + ".onnx";
    expect_same_bytes([&] { return loader::load_onnx(path); }, name);
  }
}

// Plan::run_steps measures each step split and alone on the first runs, then keeps the faster:
// every run before, during and after gives the 1-thread bytes, and the tuned plan says per step
// which it kept.
TEST(ThreadCounts, StepsTunedBetweenThePoolAndTheCallerKeepTheBytes) {
  const std::string path = std::string(OCTET_SOURCE_DIR) + "/models/tinynet.onnx";
  for (auto load : {std::function<ir::Graph()>(int8_graph), std::function<ir::Graph()>([&] { return loader::load_onnx(path); })}) {
    Session one(load());
    const ir::TensorData x = input_for(one.inputs()[0], 1, 5);
    const auto want = one.run({x});
    SessionOptions o;
    o.threads = 2;
    Session two(load(), o);
    const int runs = 1 + 2 * Plan::kThreadTuningRuns + 2;
    for (int r = 0; r < runs; ++r) {
      const auto got = two.run({x});
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(got[i].bytes == want[i].bytes) << "run " << r << ", output " << i;
    }
    const Plan& plan = two.plan_for(std::vector<ir::Dims>{x.dims});
    EXPECT_TRUE(plan.threads_tuned());
    for (const PlanStep& step : plan.steps()) EXPECT_TRUE(step.threads == 1 || step.threads == 2) << step.node;
    EXPECT_FALSE(one.plan_for(std::vector<ir::Dims>{x.dims}).threads_tuned()) << "no pool, nothing to tune";
  }
}

// A timing loop starts after Session::warm_up: by then the plan on threads has settled, so no
// timed run is one of the tuning runs (half of which keep every step on the caller's thread).
TEST(ThreadCounts, WarmUpSettlesThePlanBeforeAnyTimedRun) {
  const std::string path = std::string(OCTET_SOURCE_DIR) + "/models/tinynet.onnx";
  SessionOptions o;
  o.threads = 2;
  Session two(loader::load_onnx(path), o);
  const ir::TensorData x = input_for(two.inputs()[0], 1, 5);
  two.run({x});
  EXPECT_FALSE(two.plan_for(std::vector<ir::Dims>{x.dims}).threads_tuned()) << "one run does not settle it";
  Session fresh(loader::load_onnx(path), o);
  EXPECT_EQ(fresh.warm_up_runs(), 1 + 2 * Plan::kThreadTuningRuns);
  fresh.warm_up({x});
  EXPECT_TRUE(fresh.plan_for(std::vector<ir::Dims>{x.dims}).threads_tuned());
  Session one(loader::load_onnx(path));
  EXPECT_EQ(one.warm_up_runs(), 1) << "one thread: nothing to settle, one run warms the caches";
}

}  // namespace octet::thread_counts_test
