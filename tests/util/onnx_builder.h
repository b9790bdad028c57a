// A small fluent builder over onnx::ModelProto, for tests that need ONNX models written by hand
// (octet's loader is not involved in writing them, so a loader bug cannot hide a model bug).
//
//   OnnxBuilder b(/*opset=*/13);
//   auto x = b.input("x", {-1, 16, 8, 8});        // -1: dim_param "N" (dynamic batch)
//   auto w = b.initializer("w", {16, 1, 3, 3}, random_normal(16 * 9, /*seed=*/1));
//   auto y = b.node("Conv", {x, w}, {{"group", 16}, {"pads", {1, 1, 1, 1}}});
//   b.output(y);
//   b.save(path);                                   // or b.serialize()
//
// Values are referred to by name (plain std::string). Unnamed nodes get torch-style names
// ("/Conv_2", output "/Conv_2_output_0"). Random data comes from std::mt19937 turned into
// numbers by this file's own arithmetic (not std::*_distribution, whose algorithms differ
// between standard libraries), so a seed gives the same values everywhere.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <variant>
#include <vector>

namespace onnx {
class ModelProto;
class GraphProto;
class TensorProto;
}  // namespace onnx

namespace octet::testing {

// ONNX element types used here (values of onnx::TensorProto::DataType).
enum class ElemType : int32_t { f32 = 1, u8 = 2, s8 = 3, s32 = 6, s64 = 7, b8 = 9, f64 = 11 };

// A constant tensor for initializers, Constant nodes and tensor attributes.
struct TensorValue {
  ElemType type = ElemType::f32;
  std::vector<int64_t> dims;  // empty: a scalar
  std::vector<float> f;       // when type == f32
  std::vector<int64_t> i;     // when type == s64, s32, u8 or s8 (written as int32_data for the last three)

  static TensorValue f32(std::vector<int64_t> dims, std::vector<float> values);
  static TensorValue s64(std::vector<int64_t> dims, std::vector<int64_t> values);
  // Quantized tensors: values must fit the type (checked when the tensor is written).
  static TensorValue ints(ElemType type, std::vector<int64_t> dims, std::vector<int64_t> values);
  static TensorValue u8(std::vector<int64_t> dims, std::vector<int64_t> values) { return ints(ElemType::u8, dims, values); }
  static TensorValue s8(std::vector<int64_t> dims, std::vector<int64_t> values) { return ints(ElemType::s8, dims, values); }
  static TensorValue s32(std::vector<int64_t> dims, std::vector<int64_t> values) { return ints(ElemType::s32, dims, values); }
  static TensorValue scalar_f32(float v) { return f32({}, {v}); }
  static TensorValue scalar_s64(int64_t v) { return s64({}, {v}); }
};

// An attribute value: int, float, string, ints, floats or tensor. Braces pick the list kind:
// {1, 1, 1, 1} is ints, {0.5f, 2.0f} is floats.
class AttrValue {
 public:
  using Storage = std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>, TensorValue>;

  AttrValue(int v) : v_(int64_t{v}) {}
  AttrValue(int64_t v) : v_(v) {}
  AttrValue(float v) : v_(v) {}
  AttrValue(double v) : v_(float(v)) {}
  AttrValue(const char* v) : v_(std::string(v)) {}
  AttrValue(std::string v) : v_(std::move(v)) {}
  AttrValue(std::initializer_list<int> v) : v_(std::vector<int64_t>(v.begin(), v.end())) {}
  AttrValue(std::initializer_list<int64_t> v) : v_(std::vector<int64_t>(v)) {}
  AttrValue(std::initializer_list<float> v) : v_(std::vector<float>(v)) {}
  AttrValue(std::vector<int64_t> v) : v_(std::move(v)) {}
  AttrValue(std::vector<float> v) : v_(std::move(v)) {}
  AttrValue(TensorValue v) : v_(std::move(v)) {}

  const Storage& get() const { return v_; }

 private:
  Storage v_;
};

struct Attr {
  std::string name;
  AttrValue value;
};
using Attrs = std::vector<Attr>;

// Deterministic random numbers: the same seed gives the same values on every platform.
std::vector<float> random_normal(size_t count, uint32_t seed, float mean = 0.0f, float stddev = 1.0f);
std::vector<float> random_uniform(size_t count, uint32_t seed, float lo = -1.0f, float hi = 1.0f);

// The product of the extents (all must be >= 0).
size_t count_of(const std::vector<int64_t>& dims);

class OnnxBuilder {
 public:
  // `seed` feeds the builder's own generator (random_* members below).
  explicit OnnxBuilder(int64_t opset = 13, std::string graph_name = "octet_test", uint32_t seed = 1);
  ~OnnxBuilder();
  OnnxBuilder(OnnxBuilder&&) noexcept;
  OnnxBuilder& operator=(OnnxBuilder&&) noexcept;

  int64_t opset() const { return opset_; }

  // A graph input. Negative extents become symbolic dimensions: -1 is "N", -2 "M", ...
  std::string input(const std::string& name, const std::vector<int64_t>& dims, ElemType type = ElemType::f32);

  // Initializers (constants stored in the graph, not listed as inputs).
  std::string initializer(const std::string& name, const std::vector<int64_t>& dims, std::vector<float> values);
  std::string initializer_i64(const std::string& name, const std::vector<int64_t>& dims, std::vector<int64_t> values);
  std::string initializer(const std::string& name, const TensorValue& t);

  // Initializers filled from the builder's generator. An empty name picks a unique one.
  std::string random_normal_init(const std::string& name, const std::vector<int64_t>& dims, float mean = 0.0f,
                                 float stddev = 1.0f);
  std::string random_uniform_init(const std::string& name, const std::vector<int64_t>& dims, float lo, float hi);

  // A node with one output; returns the output's name. `name` empty: "/<Op>_<k>" (torch style),
  // output "<node name>_output_0". "" in `inputs` marks an omitted optional input.
  std::string node(const std::string& op, const std::vector<std::string>& inputs, const Attrs& attrs = {},
                   const std::string& name = "");
  // A node with `outputs` outputs (names chosen as above when `output_names` is empty).
  std::vector<std::string> node_multi(const std::string& op, const std::vector<std::string>& inputs,
                                      size_t outputs, const Attrs& attrs = {}, const std::string& name = "",
                                      const std::vector<std::string>& output_names = {});
  // Puts the node that produced `output` into `domain` (e.g. "com.microsoft" for ONNX Runtime's
  // contrib ops) and imports that domain at `version` (once per domain).
  void set_domain(const std::string& output, const std::string& domain, int64_t version = 1);

  // A Constant node holding `t` (the way torch.onnx.export writes small constants).
  std::string constant(const TensorValue& t, const std::string& name = "");

  // Declares a graph output. Without dims only the element type is declared.
  void output(const std::string& name, ElemType type = ElemType::f32);
  void output(const std::string& name, const std::vector<int64_t>& dims, ElemType type = ElemType::f32);

  // Draws from the builder's generator (deterministic for its seed).
  std::vector<float> normal(size_t count, float mean = 0.0f, float stddev = 1.0f);
  std::vector<float> uniform(size_t count, float lo, float hi);

  onnx::ModelProto& model();
  const onnx::ModelProto& model() const;
  onnx::GraphProto& graph();

  std::string serialize() const;
  // Throws std::runtime_error naming the path when it cannot write.
  void save(const std::string& path) const;

 private:
  std::string unique_name(const std::string& base);

  int64_t opset_;
  std::unique_ptr<onnx::ModelProto> model_;
  std::map<std::string, int> name_counts_;
  std::mt19937 rng_;
};

}  // namespace octet::testing
