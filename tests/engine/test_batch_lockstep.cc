// A dynamically quantized model shares a batch out over threads in lockstep: each thread runs
// its images through a plan of its own and every DynamicQuantizeLinear combines the threads'
// ranges (engine/batch_ranges.h), so the result is the one-thread whole-batch run's, bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <thread>
#include <vector>

#include "engine/batch_ranges.h"
#include "engine/session.h"
#include "loader/onnx_loader.h"
#include "tests/util/onnx_builder.h"

namespace octet {
namespace {

using testing::OnnxBuilder;
using testing::TensorValue;

TEST(BatchRangeExchange, EveryPartyGetsTheRangeOfAllRoundByRound) {
  constexpr int kParties = 3, kRounds = 300;
  BatchRangeExchange exchange(kParties);
  std::vector<std::vector<kernels::F32Range>> got(kParties);
  std::vector<std::thread> threads;
  for (int p = 0; p < kParties; ++p)
    threads.emplace_back([&, p] {
      for (int r = 0; r < kRounds; ++r)
        got[size_t(p)].push_back(exchange.combine({float(-r - p), float(r * p)}));
    });
  for (auto& t : threads) t.join();
  for (int p = 0; p < kParties; ++p)
    for (int r = 0; r < kRounds; ++r) {
      EXPECT_EQ(got[size_t(p)][size_t(r)].min, float(-r - (kParties - 1))) << "party " << p << " round " << r;
      EXPECT_EQ(got[size_t(p)][size_t(r)].max, float(r * (kParties - 1))) << "party " << p << " round " << r;
    }
}

TEST(BatchRangeExchange, ANanRangeMakesTheWholeRangeNan) {
  BatchRangeExchange exchange(2);
  kernels::F32Range other;
  std::thread t([&] { other = exchange.combine({-1.0f, 1.0f}); });
  const kernels::F32Range mine = exchange.combine({NAN, NAN});
  t.join();
  EXPECT_TRUE(std::isnan(mine.min) && std::isnan(mine.max));
  EXPECT_TRUE(std::isnan(other.min) && std::isnan(other.max));
}

TEST(BatchRangeExchange, AFailedPartyReleasesTheWaitingOnes) {
  BatchRangeExchange exchange(2);
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    exchange.abandon();
  });
  EXPECT_THROW(exchange.combine({0.0f, 1.0f}), BatchRangeExchange::Abandoned);
  t.join();
}

// ONNX Runtime's quantize_dynamic form: x -> DynamicQuantizeLinear -> ConvInteger -> Cast ->
// Mul by the scale product, twice, with an Add between (a producer that hands its range to the
// second DynamicQuantizeLinear), then a per-image mean.
std::string dynamic_model() {
  OnnxBuilder b(13, "lockstep", 4);
  auto x = b.input("x", {-1, 3, 8, 8});
  auto quantized_conv = [&](const std::string& in, int64_t in_c, const std::string& name) {
    auto q = b.node_multi("DynamicQuantizeLinear", {in}, 3);
    std::vector<int64_t> w(size_t(8 * in_c * 9));
    for (size_t i = 0; i < w.size(); ++i) w[i] = int64_t((i * 37) % 19) - 9;
    auto acc = b.node("ConvInteger", {q[0], b.initializer(name, TensorValue::s8({8, in_c, 3, 3}, w)), q[2]},
                      {{"pads", {1, 1, 1, 1}}});
    auto scale = b.node("Mul", {q[1], b.initializer(name + "_scale", TensorValue::scalar_f32(0.02f))});
    return b.node("Mul", {b.node("Cast", {acc}, {{"to", int64_t{1}}}), scale});
  };
  auto y = quantized_conv(x, 3, "w1");
  y = b.node("Add", {y, b.random_normal_init("bias", {1, 8, 1, 1})});
  y = quantized_conv(y, 8, "w2");
  b.output(b.node("GlobalAveragePool", {y}));
  return b.serialize();
}

// Images of very different ranges (image i scaled by 4^(i % 4)): a range per share instead of
// one over the batch would give other codes for every image.
ir::TensorData images(int64_t batch) {
  std::vector<float> v = testing::random_normal(size_t(batch) * 3 * 64, 21);
  for (int64_t i = 0; i < batch; ++i)
    for (size_t k = 0; k < 3 * 64; ++k) v[size_t(i) * 3 * 64 + k] *= std::pow(4.0f, float(i % 4));
  return ir::TensorData::f32({batch, 3, 8, 8}, v);
}

std::vector<float> run(const std::string& model, int threads, const ir::TensorData& x) {
  SessionOptions o;
  o.threads = threads;
  Session s(loader::load_onnx_bytes(model, "lockstep"), o);
  EXPECT_EQ(s.shares_batches_in_lockstep(), threads > 1);
  EXPECT_FALSE(s.slices_batches());
  auto out = s.run({x});
  return {out[0].as<float>(), out[0].as<float>() + out[0].count()};
}

TEST(BatchLockstep, DynamicModelSharedOverThreadsEqualsTheOneThreadRun) {
  const std::string model = dynamic_model();
  for (int64_t batch : {2, 5, 7}) {
    const ir::TensorData x = images(batch);
    const std::vector<float> one = run(model, 1, x);
    for (int threads : {2, 3}) EXPECT_EQ(run(model, threads, x), one) << threads << " threads, batch " << batch;
    // The check can fail: each image quantized with its own range gives other outputs.
    std::vector<float> apart;
    for (int64_t i = 0; i < batch; ++i) {
      ir::TensorData image = ir::TensorData::f32({1, 3, 8, 8}, std::vector<float>(x.as<float>() + i * 192,
                                                                                  x.as<float>() + (i + 1) * 192));
      const std::vector<float> r = run(model, 1, image);
      apart.insert(apart.end(), r.begin(), r.end());
    }
    EXPECT_NE(apart, one) << "batch " << batch;
  }
}

// A NaN in one thread's images is refused (both threads see the NaN range), not waited on.
TEST(BatchLockstep, ANanInOneShareFailsTheRunOnEveryThread) {
  ir::TensorData x = images(6);
  x.as<float>()[5 * 192 + 7] = NAN;
  SessionOptions o;
  o.threads = 2;
  Session s(loader::load_onnx_bytes(dynamic_model(), "lockstep"), o);
  ASSERT_TRUE(s.shares_batches_in_lockstep());
  EXPECT_THROW(s.run({x}), ir::Error);
  // The session runs on after the failure.
  x.as<float>()[5 * 192 + 7] = 0.5f;
  EXPECT_EQ(s.run({x})[0].count(), 6 * 8);
}

}  // namespace
}  // namespace octet
