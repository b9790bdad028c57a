// A ConvNeXt block as torchvision writes it (depthwise 7x7 conv, Transpose to channels-last,
// LayerNormalization over channels, Linear = MatMul + Add, GELU as Div / Erf / Add / Mul / Mul,
// Linear, Transpose back, layer-scale Mul, residual Add) and ConvNeXt's downsampling
// (LayerNormalization, then a 2x2 stride-2 conv), against ONNX Runtime: FP32 with the opset-17
// LayerNormalization and with the decomposed form opset-13 exports write (both fused by octet's
// passes into one LayerNormalization step, the GELU chain into one Gelu), then statically and
// dynamically quantized.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <string>

#include "calib/quantize.h"
#include "engine/session.h"
#include "loader/onnx_loader.h"
#include "loader/onnx_writer.h"
#include "tests/parity/parity_fixture.h"
#include "tests/util/qdq_patterns.h"
#include "apps/cli/int8_parity.h"
#include "io/tensor_io.h"

namespace octet::parity::convnext_test {

using testing::OnnxBuilder;

constexpr int64_t kC = 12, kH = 9, kW = 9;

// LayerNormalization over the last axis: the op (opset 17) or the chain older exports write.
std::string layer_norm(OnnxBuilder& b, const std::string& x, bool decomposed, const std::string& tag) {
  auto gamma = b.random_uniform_init(tag + ".gamma", {kC}, 0.5f, 1.5f);
  auto beta = b.random_normal_init(tag + ".beta", {kC}, 0.0f, 0.2f);
  if (!decomposed) return b.node("LayerNormalization", {x, gamma, beta}, {{"axis", -1}, {"epsilon", 1e-6f}});
  auto mean = b.node("ReduceMean", {x}, {{"axes", {-1}}, {"keepdims", 1}});
  auto d = b.node("Sub", {x, mean});
  auto var = b.node("ReduceMean", {b.node("Pow", {d, b.initializer(tag + ".two", {}, {2.0f})})},
                    {{"axes", {-1}}, {"keepdims", 1}});
  auto sd = b.node("Sqrt", {b.node("Add", {var, b.initializer(tag + ".eps", {}, {1e-6f})})});
  return b.node("Add", {b.node("Mul", {b.node("Div", {d, sd}), gamma}), beta});
}

std::string gelu(OnnxBuilder& b, const std::string& x, const std::string& tag) {
  auto e = b.node("Erf", {b.node("Div", {x, b.initializer(tag + ".sqrt2", {}, {1.41421353816986f})})});
  auto bracket = b.node("Add", {e, b.initializer(tag + ".one", {}, {1.0f})});
  return b.node("Mul", {b.node("Mul", {x, bracket}), b.initializer(tag + ".half", {}, {0.5f})});
}

std::string linear(OnnxBuilder& b, const std::string& x, int64_t in, int64_t out, const std::string& tag) {
  auto w = b.random_normal_init(tag + ".w", {in, out}, 0.0f, 1.0f / std::sqrt(float(in)));
  return b.node("Add", {b.node("MatMul", {x, w}), b.random_normal_init(tag + ".b", {out}, 0.0f, 0.1f)});
}

OnnxBuilder convnext_block(bool decomposed) {
  OnnxBuilder b(decomposed ? 13 : 17, decomposed ? "convnext_block_op13" : "convnext_block", 7);
  auto x = b.input("x", {-1, kC, kH, kW});
  auto dw = b.node("Conv", {x, b.random_normal_init("dw.w", {kC, 1, 7, 7}, 0.0f, 0.15f),
                            b.random_normal_init("dw.b", {kC}, 0.0f, 0.1f)},
                   {{"group", kC}, {"pads", {3, 3, 3, 3}}});
  auto t = b.node("Transpose", {dw}, {{"perm", {0, 2, 3, 1}}});
  auto h = linear(b, layer_norm(b, t, decomposed, "ln"), kC, 4 * kC, "fc1");
  auto o = linear(b, gelu(b, h, "gelu"), 4 * kC, kC, "fc2");
  auto back = b.node("Transpose", {o}, {{"perm", {0, 3, 1, 2}}});
  auto scaled = b.node("Mul", {b.random_uniform_init("layer_scale", {kC, 1, 1}, 0.2f, 0.6f), back});
  auto y = b.node("Add", {scaled, x});
  // The downsampling: LayerNorm2d (Transpose, LayerNormalization, Transpose), 2x2 stride-2 conv.
  auto n = b.node("Transpose", {layer_norm(b, b.node("Transpose", {y}, {{"perm", {0, 2, 3, 1}}}), decomposed, "ln2")},
                  {{"perm", {0, 3, 1, 2}}});
  b.output(b.node("Conv", {n, b.random_normal_init("down.w", {2 * kC, kC, 2, 2}, 0.0f, 0.2f)}, {{"strides", {2, 2}}}));
  return b;
}

int count_steps(const Session& s, const std::string& op) {
  int n = 0;
  for (const auto& node : s.graph().nodes) n += node.op == op;
  return n;
}

void expect_fused(const OnnxBuilder& model) {
  const Session s(loader::load_onnx_bytes(model.serialize(), "convnext_block"));
  EXPECT_EQ(count_steps(s, "LayerNormalization"), 2);
  // The Gelu, fused into the first Linear's GEMM (passes::fuse_matmul_bias, fuse_activations).
  int gelu = count_steps(s, "Gelu");
  for (const auto& node : s.graph().nodes)
    gelu += node.attrs.has("fused_act") && node.attrs.s("fused_act") == "Gelu";
  EXPECT_EQ(gelu, 1);
  EXPECT_EQ(count_steps(s, "Add"), 1);  // the residual: both Linear biases are in their GEMMs
  for (const char* gone : {"Erf", "ReduceMean", "Pow", "Sqrt", "Div"}) EXPECT_EQ(count_steps(s, gone), 0) << gone;
}

TEST_F(ParityTest, ConvNextBlockFp32) {
  expect_fused(convnext_block(false));
  OCTET_SKIP_WITHOUT_ORT();
  check_model(convnext_block(false), "convnext_block", {1, 3});
}

TEST_F(ParityTest, ConvNextBlockDecomposedLayerNormFp32) {
  expect_fused(convnext_block(true));
  OCTET_SKIP_WITHOUT_ORT();
  check_model(convnext_block(true), "convnext_block_op13", {1, 3});
}

// The quantized model's output against ORT's on the same QDQ / dynamic file: every value in
// units of the output's scale identical (static), or within 1e-4 of max |ORT| (dynamic).
void check_quantized(const ir::Graph& q, const std::string& name, bool is_static) {
  ScratchDir dir("octet-convnext");
  const std::string path = (dir.path() / (name + ".onnx")).string();
  loader::save_onnx(q, path);
  Session ours = Session::load(path);
  for (int64_t batch : {1, 2}) {
    const auto in = random_inputs({{-1, kC, kH, kW}}, batch, 77 + uint32_t(batch));
    const auto mine = ours.run(in);
    const auto theirs = testing::run_ort(path, {{"x", to_npy(in[0])}});
    const ir::TensorData ort = from_npy(theirs.at(ours.outputs()[0].name));
    ASSERT_EQ(mine[0].dims, ort.dims);
    double max_diff = 0, max_ref = 0;
    int64_t identical = 0;
    for (int64_t i = 0; i < ort.count(); ++i) {
      const float a = mine[0].as<float>()[i], b = ort.as<float>()[i];
      identical += std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
      max_diff = std::max(max_diff, double(std::fabs(a - b)));
      max_ref = std::max(max_ref, double(std::fabs(b)));
    }
    std::printf("[ CONVNEXT ] %s batch %lld: %.2f%% identical to ORT, max |diff| %g of max |ORT| %g\n", name.c_str(),
                (long long)batch, 100.0 * double(identical) / double(ort.count()), max_diff, max_ref);
    if (is_static) {
      const auto tap = cli::find_logits_tap(q);
      ASSERT_TRUE(tap && tap->scale > 0);
      const cli::TapComparison c =
          cli::compare_tap(mine[0].values<float>(), {ort.as<float>(), size_t(ort.count())}, tap->scale);
      EXPECT_EQ(c.max_lsb, 0) << name;
      EXPECT_EQ(c.identical, c.values) << name;
    } else {
      EXPECT_LE(max_diff, 1e-4 * max_ref) << name;
    }
  }
}

TEST(ConvNextParity, BlockStaticInt8) {
  OCTET_SKIP_WITHOUT_ORT();
  const ir::Graph fp32 = loader::load_onnx_bytes(convnext_block(false).serialize(), "convnext_block");
  const auto batches = random_inputs({{-1, kC, kH, kW}}, 8, 5);
  check_quantized(calib::quantize_model(fp32, {batches[0]}, {}, {}), "convnext_block_static", true);
}

TEST(ConvNextParity, BlockDynamicInt8) {
  OCTET_SKIP_WITHOUT_ORT();
  const ir::Graph fp32 = loader::load_onnx_bytes(convnext_block(false).serialize(), "convnext_block");
  check_quantized(calib::quantize_dynamic(calib::prepare_for_quantization(fp32), {}), "convnext_block_dynamic", false);
}

// A Linear of the block as octet's quantizer exports it: B [K, N] int8 per column (axis 1)
// between Q / DQ pairs. ORT fuses the unit into QLinearMatMul (int32 sums, one requantizing
// multiply), so octet must as well: a float MatMul between the pairs rounds differently at a
// code boundary. Here the multipliers (a_scale * b_scale[j]) / y_scale are 0.5, 1 and 1.5, so
// about every other output is on a tie, which the float sums miss by an ulp either way.
TEST(ConvNextParity, QdqMatMulWithPerColumnWeights) {
  OCTET_SKIP_WITHOUT_ORT();
  constexpr int64_t K = 40, N = 19;
  OnnxBuilder b(17, "qdq_matmul_per_column", 3);
  const testing::QParams act{0.5f, 128, testing::ElemType::u8}, out{0.1f, 120, testing::ElemType::u8};
  auto x = testing::qdq(b, b.input("x", {-1, 5, 7, K}), act);
  std::vector<int64_t> w(K * N);
  for (int64_t i = 0; i < K * N; ++i) w[size_t(i)] = (i * 37) % 21 - 10;
  w[0] = 127;  // the ends of int8's symmetric range, in the first column
  w[size_t(N)] = -127;
  std::vector<float> scales(N);
  for (int64_t j = 0; j < N; ++j) scales[size_t(j)] = 0.1f * float(1 + j % 3);
  auto dq = b.node("DequantizeLinear",
                   {b.initializer("w", testing::TensorValue::s8({K, N}, w)),
                    b.initializer("w_scale", testing::TensorValue::f32({N}, scales)),
                    b.initializer("w_zero_point", testing::TensorValue::s8({N}, std::vector<int64_t>(N, 0)))},
                   {{"axis", 1}});
  b.output(testing::qdq(b, b.node("MatMul", {x, dq}), out));
  expect_ort_bytes_at_every_level(b, "qdq_matmul_per_column", {{"x", random_inputs({{2, 5, 7, K}}, 2, 21)[0]}});
  expect_no_scalar_step_at_simd_levels(b, "qdq_matmul_per_column", {{1, 5, 7, K}}, {"QLinearMatMul"});
  const Session s(loader::load_onnx_bytes(b.serialize(), "qdq_matmul_per_column"));
  EXPECT_EQ(count_steps(s, "QLinearMatMul"), 1);
}

}  // namespace octet::parity::convnext_test
