// MaxPool and AveragePool plans run on the SIMD pooling kernels (kernels/pool/pool2d.h)
// where the CPU has them, report them for `octet info --kernels`, and give the ref kernels'
// results bit for bit; at --isa scalar they report the ref kernels.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "engine/session.h"
#include "kernels/isa.h"
#include "loader/onnx_loader.h"
#include "tests/util/onnx_builder.h"
#include "tests/util/skip_reasons.h"

namespace octet {
namespace {

using testing::OnnxBuilder;

// x [N,C,H,W] -> op -> y.
ir::Graph one_pool(const std::string& op, const testing::Attrs& attrs, testing::ElemType type) {
  OnnxBuilder b(13, "pool", 3);
  auto x = b.input("x", {2, 19, 15, 15}, type);
  b.output(b.node(op, {x}, attrs), type);
  return loader::load_onnx_bytes(b.serialize(), "pool");
}

std::string pool_kernel(Session& s, const ir::Dims& dims, const std::string& op) {
  for (const PlanStep& step : s.plan_for({dims}).steps())
    if (step.op == op) return step.kernel;
  return "";
}

struct Case {
  const char* op;
  testing::Attrs attrs;
  testing::ElemType type;
  const char* simd_prefix;
  const char* ref;
};

TEST(PoolKernels, PlansReportTheSimdKernelAndMatchTheRef) {
  if (kernels::active_isa() < kernels::Isa::avx2)
    GTEST_SKIP() << (kernels::isa_supported(kernels::Isa::avx2) ? "" : testing::kIsaNotOnCpu) << "kernels capped at " << kernels::isa_name(kernels::active_isa()) << ": only the ref kernels run";
  const ir::Dims dims = {2, 19, 15, 15};
  const Case cases[] = {
      {"MaxPool", {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}}, testing::ElemType::f32,
       "f32_maxpool__", "f32_maxpool2d_nhwc__ref"},
      {"MaxPool", {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"ceil_mode", 1}}, testing::ElemType::u8,
       "qu8_maxpool__", "q8_maxpool2d_nhwc__ref"},
      {"MaxPool", {{"kernel_shape", {2, 3}}, {"strides", {1, 2}}, {"pads", {0, 1, 1, 0}}}, testing::ElemType::s8,
       "qs8_maxpool__", "q8_maxpool2d_nhwc__ref"},
      {"AveragePool", {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}, {"count_include_pad", 1}},
       testing::ElemType::f32, "f32_avgpool__", "f32_avgpool2d_nhwc__ref"},
      {"AveragePool", {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"ceil_mode", 1}}, testing::ElemType::f32,
       "f32_avgpool__", "f32_avgpool2d_nhwc__ref"},
  };
  const std::vector<float> values = testing::random_normal(2 * 19 * 15 * 15, 21);
  for (const Case& c : cases) {
    SessionOptions scalar;
    scalar.isa = kernels::Isa::scalar;
    Session fast(one_pool(c.op, c.attrs, c.type)), ref(one_pool(c.op, c.attrs, c.type), scalar);
    const std::string fast_kernel = pool_kernel(fast, dims, c.op);
    EXPECT_EQ(fast_kernel.rfind(c.simd_prefix, 0), 0u) << c.op << " ran on " << fast_kernel;
    EXPECT_EQ(pool_kernel(ref, dims, c.op), c.ref);

    ir::TensorData in;
    if (c.type == testing::ElemType::f32) {
      in = ir::TensorData::f32(dims, values);
    } else {
      const bool u8 = c.type == testing::ElemType::u8;
      in = ir::TensorData::make(u8 ? ir::DType::u8 : ir::DType::s8, dims);
      auto* bytes = in.as<uint8_t>();
      for (size_t i = 0; i < values.size(); ++i) bytes[i] = uint8_t(int(values[i] * 60.0f) + (u8 ? 128 : 0));
    }
    auto a = fast.run({in}), b = ref.run({in});
    ASSERT_EQ(a[0].dims, b[0].dims) << c.op;
    ASSERT_EQ(a[0].bytes.size(), b[0].bytes.size()) << c.op;
    EXPECT_TRUE(a[0].bytes == b[0].bytes) << c.op << " " << fast_kernel;
  }
}

}  // namespace
}  // namespace octet
