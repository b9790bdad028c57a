// Importing quantized ONNX models: the QuantizeLinear / DequantizeLinear family, the integer
// conv and matmul ops, Cast, ONNX Runtime's com.microsoft contrib ops, and 8-bit / 32-bit
// initializers. These tests stop at the loader: attributes, defaults, domains and errors.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <functional>

#include "loader/onnx_loader.h"
#include "tests/util/onnx_builder.h"

namespace octet {
namespace {

using testing::AttrValue;
using testing::ElemType;
using testing::OnnxBuilder;
using testing::TensorValue;

ir::Graph load(const OnnxBuilder& b) { return loader::load_onnx_bytes(b.serialize(), "quant.onnx"); }

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ir::Error& e) {
    return e.what();
  }
  return "(no error)";
}

const ir::Node& node_named(const ir::Graph& g, const std::string& name) {
  for (const auto& n : g.nodes)
    if (n.name == name) return n;
  throw std::runtime_error("no node " + name);
}

// The error for a model whose node `name` is bad: one line that names the file, node and op.
std::string load_error(const OnnxBuilder& b, const std::string& name, const std::string& op) {
  std::string msg = message_of([&] { load(b); });
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  EXPECT_NE(msg.find("quant.onnx"), std::string::npos) << msg;
  EXPECT_NE(msg.find("node '" + name + "'"), std::string::npos) << msg;
  EXPECT_NE(msg.find(op), std::string::npos) << msg;
  return msg;
}

#define EXPECT_HAS(haystack, needle) EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

// x (float [1, 3, 4, 4]) -> QuantizeLinear(per axis 1) -> DequantizeLinear, with optional extra
// attributes on the QuantizeLinear node.
OnnxBuilder qdq_model(int64_t opset, const testing::Attrs& q_attrs = {}) {
  OnnxBuilder b(opset);
  auto x = b.input("x", {1, 3, 4, 4});
  auto s = b.initializer("s", {3}, {0.5f, 0.25f, 0.125f});
  auto zp = b.initializer("zp", TensorValue::s8({3}, {-128, 0, 127}));
  auto q = b.node("QuantizeLinear", {x, s, zp}, q_attrs, "q");
  auto y = b.node("DequantizeLinear", {q, s, zp}, {}, "dq");
  b.output(y);
  return b;
}

// ---- attributes and defaults ----

TEST(QuantizedImport, QuantizeDequantizeDefaults) {
  for (int64_t opset : {10, 13, 19, 21}) {
    auto g = load(qdq_model(opset));
    const auto& q = node_named(g, "q");
    EXPECT_EQ(q.domain, "");
    EXPECT_EQ(q.attrs.i("axis"), 1) << opset;
    EXPECT_EQ(q.attrs.i("block_size"), 0);
    EXPECT_EQ(q.attrs.i("saturate"), 1);
    EXPECT_EQ(q.attrs.i("output_dtype"), 0);
    const auto& dq = node_named(g, "dq");
    EXPECT_EQ(dq.attrs.i("axis"), 1);
    EXPECT_EQ(dq.attrs.i("block_size"), 0);
  }
}

TEST(QuantizedImport, QuantizeKeepsExplicitAttributes) {
  auto g = load(qdq_model(21, {{"axis", -3}, {"saturate", 0}, {"output_dtype", int(onnx::TensorProto::INT8)},
                               {"block_size", 0}}));
  const auto& q = node_named(g, "q");
  EXPECT_EQ(q.attrs.i("axis"), -3);
  EXPECT_EQ(q.attrs.i("saturate"), 0);
  EXPECT_EQ(q.attrs.i("output_dtype"), onnx::TensorProto::INT8);
}

TEST(QuantizedImport, DynamicQuantizeLinearAndIntegerOps) {
  OnnxBuilder b(11);
  auto x = b.input("x", {1, 2, 5, 5});
  auto outs = b.node_multi("DynamicQuantizeLinear", {x}, 3, {}, "dql");
  auto w = b.initializer("w", TensorValue::u8({4, 2, 3, 3}, std::vector<int64_t>(72, 3)));
  auto ci = b.node("ConvInteger", {outs[0], w, outs[2]}, {{"pads", {1, 1, 1, 1}}}, "ci");
  b.output(ci, ElemType::s32);
  auto a = b.input("a", {2, 3}, ElemType::u8);
  auto bm = b.initializer("bm", TensorValue::s8({3, 4}, {-128, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 127}));
  auto mi = b.node("MatMulInteger", {a, bm}, {}, "mi");
  b.output(mi, ElemType::s32);
  auto g = load(b);
  EXPECT_EQ(node_named(g, "dql").outputs.size(), 3u);
  const auto& conv = node_named(g, "ci");
  EXPECT_EQ(conv.attrs.i("group"), 1);
  EXPECT_EQ(conv.attrs.s("auto_pad"), "NOTSET");
  EXPECT_EQ(conv.attrs.ints("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_TRUE(conv.attrs.ints("strides").empty());
  EXPECT_TRUE(node_named(g, "mi").attrs.all().empty());
}

TEST(QuantizedImport, QLinearConvAndMatMul) {
  OnnxBuilder b(10);
  auto x = b.input("x", {1, 4, 5, 5}, ElemType::u8);
  auto xs = b.initializer("xs", {}, {0.1f});
  auto xz = b.initializer("xz", TensorValue::u8({}, {128}));
  auto w = b.initializer("w", TensorValue::s8({4, 1, 3, 3}, std::vector<int64_t>(36, -2)));
  auto ws = b.initializer("ws", {4}, {0.01f, 0.02f, 0.03f, 0.04f});
  auto wz = b.initializer("wz", TensorValue::s8({4}, {0, 0, 0, 0}));
  auto bias = b.initializer("bias", TensorValue::s32({4}, {-100000, 0, 7, 2147483647}));
  auto y = b.node("QLinearConv", {x, xs, xz, w, ws, wz, xs, xz, bias},
                  {{"group", 4}, {"strides", {2, 2}}, {"dilations", {1, 1}}}, "qconv");
  b.output(y, ElemType::u8);
  auto a = b.input("a", {3, 4}, ElemType::u8);
  auto bb = b.initializer("bb", TensorValue::u8({4, 2}, {0, 1, 2, 3, 4, 5, 6, 255}));
  auto mm = b.node("QLinearMatMul", {a, xs, xz, bb, xs, xz, xs, xz}, {}, "qmm");
  b.output(mm, ElemType::u8);
  auto g = load(b);
  const auto& c = node_named(g, "qconv");
  EXPECT_EQ(c.inputs.size(), 9u);
  EXPECT_EQ(c.attrs.i("group"), 4);
  EXPECT_EQ(c.attrs.ints("strides"), (std::vector<int64_t>{2, 2}));
  EXPECT_TRUE(c.attrs.ints("kernel_shape").empty());
  EXPECT_EQ(node_named(g, "qmm").inputs.size(), 8u);
}

TEST(QuantizedImport, CastTargetsAndSaturate) {
  OnnxBuilder b(19);
  auto x = b.input("x", {4});
  auto y = b.node("Cast", {x}, {{"to", int(onnx::TensorProto::INT32)}}, "c1");
  auto z = b.node("Cast", {y}, {{"to", int(onnx::TensorProto::UINT8)}, {"saturate", 0}}, "c2");
  b.output(z, ElemType::u8);
  auto g = load(b);
  EXPECT_EQ(node_named(g, "c1").attrs.i("to"), onnx::TensorProto::INT32);
  EXPECT_EQ(node_named(g, "c1").attrs.i("saturate"), 1);
  EXPECT_EQ(node_named(g, "c2").attrs.i("saturate"), 0);
}

// ---- com.microsoft contrib ops ----

TEST(QuantizedImport, ContribOpsLoadWithTheirDomainAndDefaults) {
  OnnxBuilder b(13);
  auto x = b.input("x", {1, 8, 4, 4}, ElemType::u8);
  auto s = b.initializer("s", {}, {0.05f});
  auto z = b.initializer("z", TensorValue::u8({}, {10}));
  auto add = b.node("QLinearAdd", {x, s, z, x, s, z, s, z}, {}, "add");
  auto mul = b.node("QLinearMul", {add, s, z, x, s, z, s, z}, {}, "mul");
  auto sig = b.node("QLinearSigmoid", {mul, s, z, s, z}, {}, "sig");
  auto lrelu = b.node("QLinearLeakyRelu", {sig, s, z, s, z}, {}, "lrelu");
  auto avg = b.node("QLinearAveragePool", {lrelu, s, z, s, z}, {{"kernel_shape", {2, 2}}}, "avg");
  auto gap = b.node("QLinearGlobalAveragePool", {avg, s, z, s, z}, {}, "gap");
  auto flat = b.node("Flatten", {gap}, {}, "flat");
  auto w = b.initializer("w", TensorValue::s8({8, 3}, std::vector<int64_t>(24, 1)));
  auto ws = b.initializer("ws", {}, {0.01f});
  auto wz = b.initializer("wz", TensorValue::s8({}, {0}));
  auto gemm = b.node("QGemm", {flat, s, z, w, ws, wz, "", s, z}, {}, "gemm");
  b.output(gemm, ElemType::u8);
  for (const auto& out : {add, mul, sig, lrelu, avg, gap, gemm}) b.set_domain(out, "com.microsoft");

  auto g = load(b);
  for (const char* name : {"add", "mul", "sig", "lrelu", "avg", "gap", "gemm"})
    EXPECT_EQ(node_named(g, name).domain, "com.microsoft") << name;
  EXPECT_EQ(node_named(g, "flat").domain, "");
  EXPECT_FLOAT_EQ(node_named(g, "lrelu").attrs.f("alpha"), 0.01f);
  EXPECT_EQ(node_named(g, "gap").attrs.i("channels_last"), 0);
  const auto& pool = node_named(g, "avg");
  EXPECT_EQ(pool.attrs.i("channels_last"), 0);
  EXPECT_EQ(pool.attrs.i("count_include_pad"), 0);
  EXPECT_EQ(pool.attrs.i("ceil_mode"), 0);
  EXPECT_EQ(pool.attrs.s("auto_pad"), "NOTSET");
  EXPECT_EQ(pool.attrs.ints("kernel_shape"), (std::vector<int64_t>{2, 2}));
  const auto& qgemm = node_named(g, "gemm");
  EXPECT_FLOAT_EQ(qgemm.attrs.f("alpha"), 1.0f);
  EXPECT_EQ(qgemm.attrs.i("transA"), 0);
  EXPECT_EQ(qgemm.attrs.i("transB"), 0);
  EXPECT_TRUE(qgemm.inputs[6].empty());  // the omitted bias stays omitted
}

TEST(QuantizedImport, ContribAttributesKeepTheirValues) {
  OnnxBuilder b(13);
  auto x = b.input("x", {2, 3}, ElemType::s8);
  auto s = b.initializer("s", {}, {0.5f});
  auto z = b.initializer("z", TensorValue::s8({}, {-3}));
  auto lrelu = b.node("QLinearLeakyRelu", {x, s, z, s, z}, {{"alpha", 0.125f}}, "lrelu");
  auto w = b.initializer("w", TensorValue::s8({4, 3}, std::vector<int64_t>(12, -1)));
  auto gemm = b.node("QGemm", {lrelu, s, z, w, s, z, "", s, z},
                     {{"alpha", 2.0f}, {"transB", 1}}, "gemm");
  b.output(gemm, ElemType::s8);
  b.set_domain(lrelu, "com.microsoft");
  b.set_domain(gemm, "com.microsoft");
  auto g = load(b);
  EXPECT_FLOAT_EQ(node_named(g, "lrelu").attrs.f("alpha"), 0.125f);
  EXPECT_FLOAT_EQ(node_named(g, "gemm").attrs.f("alpha"), 2.0f);
  EXPECT_EQ(node_named(g, "gemm").attrs.i("transB"), 1);
}

// ---- quantized initializers ----

// An initializer written with raw_data (the way onnx.numpy_helper and ORT's tools write them).
void add_raw_initializer(OnnxBuilder& b, const std::string& name, int type, std::vector<int64_t> dims,
                         const void* data, size_t bytes) {
  auto* t = b.graph().add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (auto d : dims) t->add_dims(d);
  t->set_raw_data(std::string(static_cast<const char*>(data), bytes));
}

TEST(QuantizedImport, QuantizedInitializersFromInt32DataAndRawData) {
  OnnxBuilder b(13);
  auto x = b.input("x", {1, 3, 2, 2});
  b.initializer("u8_field", TensorValue::u8({3}, {0, 128, 255}));
  b.initializer("s8_field", TensorValue::s8({3}, {-128, -1, 127}));
  b.initializer("s32_field", TensorValue::s32({3}, {INT32_MIN, -5, INT32_MAX}));
  const uint8_t u8_raw[3] = {255, 0, 7};
  const int8_t s8_raw[3] = {-128, 127, -2};
  const int32_t s32_raw[3] = {-1, 65536, INT32_MIN};
  add_raw_initializer(b, "u8_raw", onnx::TensorProto::UINT8, {3}, u8_raw, sizeof u8_raw);
  add_raw_initializer(b, "s8_raw", onnx::TensorProto::INT8, {3}, s8_raw, sizeof s8_raw);
  add_raw_initializer(b, "s32_raw", onnx::TensorProto::INT32, {3}, s32_raw, sizeof s32_raw);
  auto s = b.initializer("s", {}, {1.0f});
  // Every initializer is consumed, so none is dropped as unused.
  std::string y = x;
  for (const char* name : {"u8_field", "s8_field", "s32_field", "u8_raw", "s8_raw", "s32_raw"}) {
    auto dq = b.node("DequantizeLinear", {name, s}, {});
    y = b.node("Add", {y, dq});
  }
  b.output(y);
  auto g = load(b);

  auto values_of = [&](const std::string& name) {
    const auto& t = *g.value(name).constant;
    std::vector<int64_t> v = t.to_i64();
    EXPECT_EQ(t.dims, (ir::Dims{3})) << name;
    return v;
  };
  EXPECT_EQ(g.value("u8_field").constant->dtype, ir::DType::u8);
  EXPECT_EQ(g.value("s8_field").constant->dtype, ir::DType::s8);
  EXPECT_EQ(g.value("s32_field").constant->dtype, ir::DType::s32);
  EXPECT_EQ(g.value("u8_raw").constant->dtype, ir::DType::u8);
  EXPECT_EQ(g.value("s8_raw").constant->dtype, ir::DType::s8);
  EXPECT_EQ(g.value("s32_raw").constant->dtype, ir::DType::s32);
  EXPECT_EQ(values_of("u8_field"), (std::vector<int64_t>{0, 128, 255}));
  EXPECT_EQ(values_of("s8_field"), (std::vector<int64_t>{-128, -1, 127}));
  EXPECT_EQ(values_of("s32_field"), (std::vector<int64_t>{INT32_MIN, -5, INT32_MAX}));
  EXPECT_EQ(values_of("u8_raw"), (std::vector<int64_t>{255, 0, 7}));
  EXPECT_EQ(values_of("s8_raw"), (std::vector<int64_t>{-128, 127, -2}));
  EXPECT_EQ(values_of("s32_raw"), (std::vector<int64_t>{-1, 65536, INT32_MIN}));
}

TEST(QuantizedImport, QuantizedInitializerWithTooFewBytes) {
  OnnxBuilder b(13);
  auto x = b.input("x", {3});
  const int8_t two[2] = {1, 2};
  add_raw_initializer(b, "w", onnx::TensorProto::INT8, {3}, two, sizeof two);
  auto s = b.initializer("s", {}, {1.0f});
  b.output(b.node("Add", {x, b.node("DequantizeLinear", {"w", s})}));
  auto msg = message_of([&] { load(b); });
  EXPECT_HAS(msg, "initializer 'w'");
  EXPECT_HAS(msg, "raw data has 2 bytes");
}

// ---- what is rejected, and how ----

TEST(QuantizedImportErrors, BlockedQuantization) {
  auto msg = load_error(qdq_model(21, {{"block_size", 32}}), "q", "QuantizeLinear");
  EXPECT_HAS(msg, "block_size=32 is not supported");

  OnnxBuilder b(21);
  auto x = b.input("x", {4, 64}, ElemType::s8);
  auto s = b.initializer("s", {4, 2}, std::vector<float>(8, 0.5f));
  b.output(b.node("DequantizeLinear", {x, s}, {{"axis", 1}, {"block_size", 32}}, "dq"));
  msg = load_error(b, "dq", "DequantizeLinear");
  EXPECT_HAS(msg, "block_size=32 is not supported");
}

TEST(QuantizedImportErrors, OutputTypesOtherThan8BitIntegers) {
  // TensorProto.DataType codes; the ONNX headers here may predate float8 (17-20) and int4 (21, 22).
  const std::pair<int, const char*> types[] = {{4, "UINT16"},        {5, "INT16"},      {17, "FLOAT8E4M3FN"},
                                               {19, "FLOAT8E5M2"},   {21, "UINT4"},     {22, "INT4"},
                                               {1, "FLOAT"},         {6, "INT32"}};
  for (const auto& [code, name] : types) {
    auto msg = load_error(qdq_model(21, {{"output_dtype", code}}), "q", "QuantizeLinear");
    EXPECT_HAS(msg, std::string("output_dtype=") + name + " is not supported");
  }
}

TEST(QuantizedImportErrors, QuantizedTensorOfUnsupportedType) {
  // An int4 / float8 zero point fails where its type is read, naming the tensor and type.
  OnnxBuilder b(21);
  auto x = b.input("x", {4});
  auto s = b.initializer("s", {}, {0.5f});
  auto* zp = b.graph().add_initializer();
  zp->set_name("zp");
  zp->set_data_type(17);  // FLOAT8E4M3FN
  zp->add_int32_data(0);
  b.output(b.node("QuantizeLinear", {x, s, "zp"}, {}, "q"), ElemType::s8);
  auto msg = message_of([&] { load(b); });
  EXPECT_HAS(msg, "initializer 'zp'");
  EXPECT_HAS(msg, "FLOAT8E4M3FN is not supported");
}

TEST(QuantizedImportErrors, CastToUnsupportedType) {
  OnnxBuilder b(13);
  auto x = b.input("x", {4});
  b.output(b.node("Cast", {x}, {{"to", int(onnx::TensorProto::FLOAT16)}}, "half"));
  auto msg = load_error(b, "half", "Cast");
  EXPECT_HAS(msg, "Cast to FLOAT16 is not supported");
}

TEST(QuantizedImportErrors, UnknownContribOp) {
  OnnxBuilder b(13);
  auto x = b.input("x", {1, 3, 4, 4});
  auto y = b.node("FusedConv", {x}, {}, "fused");
  b.set_domain(y, "com.microsoft");
  b.output(y);
  auto msg = load_error(b, "fused", "FusedConv");
  EXPECT_HAS(msg, "op type 'FusedConv' of domain 'com.microsoft' is not supported");
  EXPECT_HAS(msg, "QLinearAdd");  // says what it does run from that domain
}

TEST(QuantizedImportErrors, DefaultOpInTheContribDomainAndViceVersa) {
  OnnxBuilder b(13);
  auto x = b.input("x", {1, 3, 4, 4});
  auto y = b.node("Relu", {x}, {}, "relu");
  b.set_domain(y, "com.microsoft");
  b.output(y);
  auto msg = load_error(b, "relu", "Relu");
  EXPECT_HAS(msg, "of domain 'com.microsoft' is not supported");

  OnnxBuilder c(13);
  auto a = c.input("a", {4}, ElemType::u8);
  auto s = c.initializer("s", {}, {0.5f});
  auto z = c.initializer("z", TensorValue::u8({}, {0}));
  c.output(c.node("QLinearAdd", {a, s, z, a, s, z, s, z}, {}, "add"), ElemType::u8);
  msg = load_error(c, "add", "QLinearAdd");
  EXPECT_HAS(msg, "not supported in the default ONNX domain");
  EXPECT_HAS(msg, "com.microsoft");
}

TEST(QuantizedImportErrors, ForeignDomain) {
  OnnxBuilder b(13);
  auto x = b.input("x", {4});
  auto y = b.node("LinearClassifier", {x}, {}, "clf");
  b.set_domain(y, "ai.onnx.ml");
  b.output(y);
  auto msg = load_error(b, "clf", "LinearClassifier");
  EXPECT_HAS(msg, "domain 'ai.onnx.ml' is not supported");
}

TEST(QuantizedImportErrors, ChannelsLastContribOps) {
  for (const char* op : {"QLinearGlobalAveragePool", "QLinearAveragePool"}) {
    OnnxBuilder b(13);
    auto x = b.input("x", {1, 4, 4, 8}, ElemType::u8);
    auto s = b.initializer("s", {}, {0.5f});
    auto z = b.initializer("z", TensorValue::u8({}, {0}));
    testing::Attrs attrs = {{"channels_last", 1}};
    if (std::string(op) == "QLinearAveragePool") attrs.push_back({"kernel_shape", {2, 2}});
    auto y = b.node(op, {x, s, z, s, z}, attrs, "pool");
    b.set_domain(y, "com.microsoft");
    b.output(y, ElemType::u8);
    auto msg = load_error(b, "pool", op);
    EXPECT_HAS(msg, "channels_last=1 is not supported");
  }
}

// ONNX Runtime's schema requires both of QLinearReduceMean's attributes.
TEST(QuantizedImportErrors, QLinearReduceMeanWithoutAxesOrKeepdims) {
  for (const char* missing : {"axes", "keepdims"}) {
    OnnxBuilder b(13);
    auto x = b.input("x", {1, 4, 4, 4}, ElemType::u8);
    auto s = b.initializer("s", {}, {0.5f});
    auto z = b.initializer("z", TensorValue::u8({}, {0}));
    testing::Attrs attrs;
    if (std::string(missing) != "axes") attrs.push_back({"axes", {2, 3}});
    if (std::string(missing) != "keepdims") attrs.push_back({"keepdims", 1});
    auto y = b.node("QLinearReduceMean", {x, s, z, s, z}, attrs, "mean");
    b.set_domain(y, "com.microsoft");
    b.output(y, ElemType::u8);
    auto msg = load_error(b, "mean", "QLinearReduceMean");
    EXPECT_HAS(msg, std::string("required attribute '") + missing + "' is missing");
  }
}

TEST(QuantizedImportErrors, OpsBeforeTheirOpset) {
  OnnxBuilder b(9);
  auto x = b.input("x", {4});
  auto s = b.initializer("s", {}, {0.5f});
  b.output(b.node("QuantizeLinear", {x, s}, {}, "q"), ElemType::u8);
  auto msg = load_error(b, "q", "QuantizeLinear");
  EXPECT_HAS(msg, "before opset 10 is not supported");
}

TEST(QuantizedImportErrors, UnknownAttributeOnAContribOp) {
  OnnxBuilder b(13);
  auto x = b.input("x", {1, 4, 4, 4}, ElemType::u8);
  auto s = b.initializer("s", {}, {0.5f});
  auto z = b.initializer("z", TensorValue::u8({}, {0}));
  // QLinearAveragePool has no dilations in ONNX Runtime's schema.
  auto y = b.node("QLinearAveragePool", {x, s, z, s, z}, {{"kernel_shape", {2, 2}}, {"dilations", {2, 2}}}, "pool");
  b.set_domain(y, "com.microsoft");
  b.output(y, ElemType::u8);
  auto msg = load_error(b, "pool", "QLinearAveragePool");
  EXPECT_HAS(msg, "attribute 'dilations' is not supported");
}

}  // namespace
}  // namespace octet
