// The public API (include/octet/octet.h, liboctet.so) against the engine it wraps: the same
// outputs as octet::Session on the bundled TinyNet, ORT-style named runs, errors a user reads,
// and one session shared by several threads.
#include <octet/octet.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <thread>

#include "engine/session.h"
#include "tests/util/onnx_builder.h"

namespace {

const std::string kTinyNet = std::string(OCTET_SOURCE_DIR) + "/models/tinynet.onnx";

octet::Tensor random_images(int64_t batch, uint32_t seed) {
  return octet::Tensor::from_floats({batch, 1, 28, 28}, octet::testing::random_normal(size_t(batch) * 784, seed));
}

octet::InferenceOptions options(int threads, const std::string& isa = "") {
  octet::InferenceOptions o;
  o.threads = threads;
  o.isa = isa;
  return o;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const octet::Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(InferenceSession, DescribesTheModel) {
  octet::InferenceSession session(kTinyNet);
  ASSERT_EQ(session.inputs().size(), 1u);
  EXPECT_EQ(session.inputs()[0].name, "input");
  EXPECT_EQ(session.inputs()[0].type, octet::ElementType::float32);
  EXPECT_EQ(session.inputs()[0].shape, (std::vector<int64_t>{-1, 1, 28, 28}));
  ASSERT_EQ(session.outputs().size(), 1u);
  EXPECT_EQ(session.outputs()[0].name, "logits");
  EXPECT_EQ(session.outputs()[0].shape, (std::vector<int64_t>{-1, 10}));
  const auto isas = octet::available_isas();
  ASSERT_FALSE(isas.empty());
  EXPECT_EQ(isas.front(), "scalar");
  EXPECT_EQ(session.isa(), isas.back());
  EXPECT_FALSE(octet::version().empty());
}

TEST(InferenceSession, GivesTheEnginesOutputsAtEveryLevel) {
  const octet::Tensor images = random_images(3, 7);
  for (const std::string& isa : octet::available_isas()) {
    SCOPED_TRACE(isa);
    octet::InferenceSession session(kTinyNet, options(1, isa));
    EXPECT_EQ(session.isa(), isa);
    const auto out = session.run({images});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].shape, (std::vector<int64_t>{3, 10}));

    octet::SessionOptions engine_options;
    engine_options.isa = *octet::kernels::parse_isa(isa);
    auto engine = octet::Session::load(kTinyNet, engine_options);
    const auto expected = engine.run({octet::ir::TensorData{octet::ir::DType::f32, images.shape, images.bytes}});
    EXPECT_EQ(out[0].bytes, expected[0].bytes);
  }
}

TEST(InferenceSession, NamedRunsMatchPositionalRuns) {
  octet::InferenceSession session(kTinyNet);
  const octet::Tensor images = random_images(2, 11);
  const auto positional = session.run({images});
  const auto named = session.run({{"input", images}});
  ASSERT_EQ(named.size(), 1u);
  EXPECT_EQ(named.at("logits").bytes, positional[0].bytes);
  EXPECT_EQ(session.run({{"input", images}}, {"logits"}).size(), 1u);
  const auto values = named.at("logits").values<float>();
  EXPECT_EQ(values.size(), 20u);
  EXPECT_NE(error_of([&] { (void)named.at("logits").values<int8_t>(); }).find("holds float32, not int8"),
            std::string::npos);
}

TEST(InferenceSession, ErrorsNameWhatIsWrong) {
  EXPECT_NE(error_of([] { octet::InferenceSession("no/such/model.onnx"); }).find("no/such/model.onnx"),
            std::string::npos);
  EXPECT_NE(error_of([] { octet::InferenceSession(kTinyNet, options(1, "avx9")); }).find("unknown ISA level 'avx9'"),
            std::string::npos);
  EXPECT_NE(error_of([] { octet::InferenceSession(kTinyNet, options(0)); }).find("threads"), std::string::npos);

  octet::InferenceSession session(kTinyNet);
  const octet::Tensor images = random_images(1, 3);
  EXPECT_NE(error_of([&] { session.run({{"pixels", images}}); }).find("input 'input' is not fed"), std::string::npos);
  EXPECT_NE(error_of([&] { session.run({{"input", images}, {"extra", images}}); }).find("no input 'extra'"),
            std::string::npos);
  EXPECT_NE(error_of([&] { session.run({{"input", images}}, {"probabilities"}); }).find("no output 'probabilities'"),
            std::string::npos);
  EXPECT_NE(error_of([&] { session.run(std::vector<octet::Tensor>{images, images}); }).find("takes 1 input(s), 2 given"), std::string::npos);

  const std::vector<float> row(27 * 28);
  EXPECT_NE(error_of([&] { session.run({octet::Tensor::from_floats({1, 1, 27, 28}, row)}); }), "(no error)");
  const std::vector<int64_t> ints(784);
  EXPECT_NE(error_of([&] { session.run({octet::Tensor::from_int64s({1, 1, 28, 28}, ints)}); }), "(no error)");
  octet::Tensor short_tensor = images;
  short_tensor.bytes.resize(100);
  EXPECT_NE(error_of([&] { session.run({short_tensor}); }).find("holds 100 bytes"), std::string::npos);
  EXPECT_NE(error_of([] { octet::Tensor::from_floats({2, 3}, std::vector<float>(5)); }).find("5 float32 values"),
            std::string::npos);
}

TEST(InferenceSession, OneSessionServesSeveralThreads) {
  octet::InferenceSession session(kTinyNet);
  std::vector<octet::Tensor> images;
  std::vector<std::vector<std::byte>> expected;
  for (int t = 0; t < 4; ++t) {
    images.push_back(random_images(1 + t, 100 + t));
    expected.push_back(session.run({images.back()})[0].bytes);
  }
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i)
        if (session.run({images[t]})[0].bytes != expected[t]) ++mismatches[t];
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches, (std::vector<int>{0, 0, 0, 0}));
}

}  // namespace
