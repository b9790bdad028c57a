#include "tests/util/onnx_builder.h"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace octet::testing {
namespace {

// A uniform float in [0, 1) with 24 random bits, from the generator's fully specified output.
float unit(std::mt19937& rng) { return float(rng() >> 8) * (1.0f / 16777216.0f); }

std::vector<float> normal_from(std::mt19937& rng, size_t count, float mean, float stddev) {
  std::vector<float> v;
  v.reserve(count);
  // Box-Muller, two values per pair of uniforms; u1 is kept away from 0 for the log.
  while (v.size() < count) {
    const double u1 = (double(rng() >> 8) + 1.0) / 16777217.0;
    const double u2 = double(rng() >> 8) / 16777216.0;
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double t = 2.0 * 3.14159265358979323846 * u2;
    v.push_back(float(mean + stddev * r * std::cos(t)));
    if (v.size() < count) v.push_back(float(mean + stddev * r * std::sin(t)));
  }
  return v;
}

std::vector<float> uniform_from(std::mt19937& rng, size_t count, float lo, float hi) {
  std::vector<float> v(count);
  for (auto& x : v) x = lo + (hi - lo) * unit(rng);
  return v;
}

void fill_tensor(onnx::TensorProto* t, const std::string& name, const TensorValue& v) {
  if (!name.empty()) t->set_name(name);
  t->set_data_type(int32_t(v.type));
  for (int64_t d : v.dims) t->add_dims(d);
  const size_t n = count_of(v.dims);
  switch (v.type) {
    case ElemType::f32:
      if (v.f.size() != n)
        throw std::invalid_argument("tensor '" + name + "': " + std::to_string(v.f.size()) + " floats for " +
                                    std::to_string(n) + " elements");
      for (float x : v.f) t->add_float_data(x);
      break;
    case ElemType::s64:
      if (v.i.size() != n)
        throw std::invalid_argument("tensor '" + name + "': " + std::to_string(v.i.size()) + " ints for " +
                                    std::to_string(n) + " elements");
      for (int64_t x : v.i) t->add_int64_data(x);
      break;
    case ElemType::s32:
    case ElemType::u8:
    case ElemType::s8: {
      if (v.i.size() != n) throw std::invalid_argument("tensor '" + name + "': wrong number of values");
      const int64_t lo = v.type == ElemType::u8 ? 0 : v.type == ElemType::s8 ? -128 : INT32_MIN;
      const int64_t hi = v.type == ElemType::u8 ? 255 : v.type == ElemType::s8 ? 127 : INT32_MAX;
      for (int64_t x : v.i) {
        if (x < lo || x > hi)
          throw std::invalid_argument("tensor '" + name + "': value " + std::to_string(x) + " does not fit its type");
        t->add_int32_data(int32_t(x));  // ONNX stores 8-bit and 32-bit integers in int32_data
      }
      break;
    }
    default:
      throw std::invalid_argument("tensor '" + name +
                                  "': only float32, uint8, int8, int32 and int64 constants are supported");
  }
}

void set_value_info(onnx::ValueInfoProto* vi, const std::string& name, ElemType type,
                    const std::vector<int64_t>* dims) {
  vi->set_name(name);
  auto* t = vi->mutable_type()->mutable_tensor_type();
  t->set_elem_type(int32_t(type));
  if (!dims) return;
  auto* shape = t->mutable_shape();
  for (int64_t d : *dims) {
    auto* dim = shape->add_dim();
    if (d >= 0) {
      dim->set_dim_value(d);
    } else {
      // -1 -> "N", -2 -> "M", -3 -> "L", ...
      static const char* names[] = {"N", "M", "L", "K", "J"};
      const int64_t k = -d - 1;
      dim->set_dim_param(k < 5 ? names[k] : "D" + std::to_string(k));
    }
  }
}

void set_attr(onnx::AttributeProto* a, const std::string& name, const AttrValue& value) {
  a->set_name(name);
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          a->set_type(onnx::AttributeProto::INT);
          a->set_i(v);
        } else if constexpr (std::is_same_v<T, float>) {
          a->set_type(onnx::AttributeProto::FLOAT);
          a->set_f(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          a->set_type(onnx::AttributeProto::STRING);
          a->set_s(v);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          a->set_type(onnx::AttributeProto::INTS);
          for (int64_t x : v) a->add_ints(x);
        } else if constexpr (std::is_same_v<T, std::vector<float>>) {
          a->set_type(onnx::AttributeProto::FLOATS);
          for (float x : v) a->add_floats(x);
        } else {
          a->set_type(onnx::AttributeProto::TENSOR);
          fill_tensor(a->mutable_t(), "", v);
        }
      },
      value.get());
}

}  // namespace

TensorValue TensorValue::f32(std::vector<int64_t> dims, std::vector<float> values) {
  TensorValue t;
  t.type = ElemType::f32;
  t.dims = std::move(dims);
  t.f = std::move(values);
  return t;
}

TensorValue TensorValue::s64(std::vector<int64_t> dims, std::vector<int64_t> values) {
  TensorValue t;
  t.type = ElemType::s64;
  t.dims = std::move(dims);
  t.i = std::move(values);
  return t;
}

TensorValue TensorValue::ints(ElemType type, std::vector<int64_t> dims, std::vector<int64_t> values) {
  TensorValue t;
  t.type = type;
  t.dims = std::move(dims);
  t.i = std::move(values);
  return t;
}

std::vector<float> random_normal(size_t count, uint32_t seed, float mean, float stddev) {
  std::mt19937 rng(seed);
  return normal_from(rng, count, mean, stddev);
}

std::vector<float> random_uniform(size_t count, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  return uniform_from(rng, count, lo, hi);
}

size_t count_of(const std::vector<int64_t>& dims) {
  size_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) throw std::invalid_argument("count_of: negative extent");
    n *= size_t(d);
  }
  return n;
}

OnnxBuilder::OnnxBuilder(int64_t opset, std::string graph_name, uint32_t seed)
    : opset_(opset), model_(std::make_unique<onnx::ModelProto>()), rng_(seed) {
  // IR version 8 (ONNX 1.10+) covers every opset these tests use and every ORT they run with.
  model_->set_ir_version(8);
  model_->set_producer_name("octet-tests");
  auto* op = model_->add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  model_->mutable_graph()->set_name(std::move(graph_name));
}

OnnxBuilder::~OnnxBuilder() = default;
OnnxBuilder::OnnxBuilder(OnnxBuilder&&) noexcept = default;
OnnxBuilder& OnnxBuilder::operator=(OnnxBuilder&&) noexcept = default;

onnx::ModelProto& OnnxBuilder::model() { return *model_; }
const onnx::ModelProto& OnnxBuilder::model() const { return *model_; }
onnx::GraphProto& OnnxBuilder::graph() { return *model_->mutable_graph(); }

std::string OnnxBuilder::unique_name(const std::string& base) {
  int& k = name_counts_[base];
  std::string name = k == 0 ? base : base + "_" + std::to_string(k);
  ++k;
  return name;
}

std::string OnnxBuilder::input(const std::string& name, const std::vector<int64_t>& dims, ElemType type) {
  set_value_info(graph().add_input(), name, type, &dims);
  return name;
}

std::string OnnxBuilder::initializer(const std::string& name, const TensorValue& t) {
  const std::string fresh = name.empty() ? unique_name("init") : name;
  fill_tensor(graph().add_initializer(), fresh, t);
  return fresh;
}

std::string OnnxBuilder::initializer(const std::string& name, const std::vector<int64_t>& dims,
                                     std::vector<float> values) {
  return initializer(name, TensorValue::f32(dims, std::move(values)));
}

std::string OnnxBuilder::initializer_i64(const std::string& name, const std::vector<int64_t>& dims,
                                         std::vector<int64_t> values) {
  return initializer(name, TensorValue::s64(dims, std::move(values)));
}

std::string OnnxBuilder::random_normal_init(const std::string& name, const std::vector<int64_t>& dims, float mean,
                                            float stddev) {
  return initializer(name.empty() ? unique_name("init") : name, dims, normal(count_of(dims), mean, stddev));
}

std::string OnnxBuilder::random_uniform_init(const std::string& name, const std::vector<int64_t>& dims, float lo,
                                             float hi) {
  return initializer(name.empty() ? unique_name("init") : name, dims, uniform(count_of(dims), lo, hi));
}

std::vector<std::string> OnnxBuilder::node_multi(const std::string& op, const std::vector<std::string>& inputs,
                                                 size_t outputs, const Attrs& attrs, const std::string& name,
                                                 const std::vector<std::string>& output_names) {
  if (!output_names.empty() && output_names.size() != outputs)
    throw std::invalid_argument("node " + op + ": " + std::to_string(output_names.size()) + " output names for " +
                                std::to_string(outputs) + " outputs");
  auto* n = graph().add_node();
  n->set_op_type(op);
  const std::string node_name = name.empty() ? unique_name("/" + op) : name;
  n->set_name(node_name);
  for (const auto& in : inputs) n->add_input(in);
  std::vector<std::string> outs;
  for (size_t i = 0; i < outputs; ++i) {
    outs.push_back(output_names.empty() ? node_name + "_output_" + std::to_string(i) : output_names[i]);
    n->add_output(outs.back());
  }
  for (const auto& a : attrs) set_attr(n->add_attribute(), a.name, a.value);
  return outs;
}

std::string OnnxBuilder::node(const std::string& op, const std::vector<std::string>& inputs, const Attrs& attrs,
                              const std::string& name) {
  return node_multi(op, inputs, 1, attrs, name).front();
}

void OnnxBuilder::set_domain(const std::string& output, const std::string& domain, int64_t version) {
  onnx::NodeProto* producer = nullptr;
  for (auto& n : *graph().mutable_node())
    for (const auto& o : n.output())
      if (o == output) producer = &n;
  if (!producer) throw std::invalid_argument("set_domain: no node produces '" + output + "'");
  producer->set_domain(domain);
  for (const auto& op : model_->opset_import())
    if (op.domain() == domain) return;
  auto* op = model_->add_opset_import();
  op->set_domain(domain);
  op->set_version(version);
}

std::string OnnxBuilder::constant(const TensorValue& t, const std::string& name) {
  return node("Constant", {}, {{"value", t}}, name);
}

void OnnxBuilder::output(const std::string& name, ElemType type) {
  set_value_info(graph().add_output(), name, type, nullptr);
}

void OnnxBuilder::output(const std::string& name, const std::vector<int64_t>& dims, ElemType type) {
  set_value_info(graph().add_output(), name, type, &dims);
}

std::vector<float> OnnxBuilder::normal(size_t count, float mean, float stddev) {
  return normal_from(rng_, count, mean, stddev);
}

std::vector<float> OnnxBuilder::uniform(size_t count, float lo, float hi) {
  return uniform_from(rng_, count, lo, hi);
}

std::string OnnxBuilder::serialize() const {
  std::string bytes;
  if (!model_->SerializeToString(&bytes)) throw std::runtime_error("cannot serialize the ONNX model");
  return bytes;
}

void OnnxBuilder::save(const std::string& path) const {
  // Written beside `path` and renamed over it: readers never see half a model.
  const std::string bytes = serialize();
  const std::string tmp = path + ".partial";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot open " + tmp + " for writing");
    out.write(bytes.data(), std::streamsize(bytes.size()));
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      throw std::runtime_error("cannot write " + tmp);
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot rename " + tmp + " to " + path);
  }
}

}  // namespace octet::testing
