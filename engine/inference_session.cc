// include/octet/octet.h over the engine's Session: the same loading, checks and kernels, with
// the engine's types (ir::TensorData, kernels::Isa) kept out of the public header.
#include "octet/octet.h"

#include <algorithm>
#include <utility>

#include "engine/session.h"
#include "kernels/isa.h"
#include "core/version.h"

namespace octet {
namespace {

ElementType public_type(ir::DType t) {
  switch (t) {
    case ir::DType::f32: return ElementType::float32;
    case ir::DType::f64: return ElementType::float64;
    case ir::DType::u8: return ElementType::uint8;
    case ir::DType::s8: return ElementType::int8;
    case ir::DType::s32: return ElementType::int32;
    case ir::DType::s64: return ElementType::int64;
    case ir::DType::b8: return ElementType::boolean;
  }
  throw Error("octet: unknown element type");
}

ir::DType engine_type(ElementType t) {
  switch (t) {
    case ElementType::float32: return ir::DType::f32;
    case ElementType::float64: return ir::DType::f64;
    case ElementType::uint8: return ir::DType::u8;
    case ElementType::int8: return ir::DType::s8;
    case ElementType::int32: return ir::DType::s32;
    case ElementType::int64: return ir::DType::s64;
    case ElementType::boolean: return ir::DType::b8;
  }
  throw Error("octet: unknown element type");
}

std::vector<NodeArg> public_args(const std::vector<TensorSpec>& specs) {
  std::vector<NodeArg> args;
  for (const auto& s : specs) {
    NodeArg a{s.name, public_type(s.dtype), s.dims};
    for (auto& d : a.shape) d = std::max<int64_t>(d, -1);
    args.push_back(std::move(a));
  }
  return args;
}

// Engine failures keep their message; allocation failures stay std::bad_alloc.
template <class F> auto translating_errors(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(e.what());
  }
}

template <class T> constexpr ElementType type_of();
template <> constexpr ElementType type_of<float>() { return ElementType::float32; }
template <> constexpr ElementType type_of<double>() { return ElementType::float64; }
template <> constexpr ElementType type_of<uint8_t>() { return ElementType::uint8; }
template <> constexpr ElementType type_of<int8_t>() { return ElementType::int8; }
template <> constexpr ElementType type_of<int32_t>() { return ElementType::int32; }
template <> constexpr ElementType type_of<int64_t>() { return ElementType::int64; }

}  // namespace

const char* element_type_name(ElementType type) {
  switch (type) {
    case ElementType::float32: return "float32";
    case ElementType::float64: return "float64";
    case ElementType::uint8: return "uint8";
    case ElementType::int8: return "int8";
    case ElementType::int32: return "int32";
    case ElementType::int64: return "int64";
    case ElementType::boolean: return "bool";
  }
  return "unknown";
}

int64_t Tensor::element_count() const {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw Error("octet: tensor shape has a negative extent");
    n *= d;
  }
  return n;
}

template <class T> std::span<const T> Tensor::values() const {
  if (type != type_of<T>())
    throw Error(std::string("octet: tensor holds ") + element_type_name(type) + ", not " +
                element_type_name(type_of<T>()));
  const size_t n = size_t(element_count());
  if (bytes.size() != n * sizeof(T))
    throw Error("octet: tensor holds " + std::to_string(bytes.size()) + " bytes for " + std::to_string(n) +
                " elements of " + element_type_name(type));
  return {reinterpret_cast<const T*>(bytes.data()), n};
}
template <class T> std::span<T> Tensor::values() {
  auto v = std::as_const(*this).values<T>();
  return {const_cast<T*>(v.data()), v.size()};
}

#define OCTET_TENSOR_VALUES(T)                                  \
  template std::span<const T> Tensor::values<T>() const;      \
  template std::span<T> Tensor::values<T>();
OCTET_TENSOR_VALUES(float)
OCTET_TENSOR_VALUES(double)
OCTET_TENSOR_VALUES(uint8_t)
OCTET_TENSOR_VALUES(int8_t)
OCTET_TENSOR_VALUES(int32_t)
OCTET_TENSOR_VALUES(int64_t)
#undef OCTET_TENSOR_VALUES

namespace {

template <class T> Tensor tensor_of(std::vector<int64_t> shape, std::span<const T> values) {
  Tensor t{type_of<T>(), std::move(shape), {}};
  if (size_t(t.element_count()) != values.size())
    throw Error("octet: " + std::to_string(values.size()) + " " + element_type_name(t.type) +
                " values given for a tensor of " + std::to_string(t.element_count()) + " elements");
  t.bytes.resize(values.size_bytes());
  ir::copy_bytes(t.bytes.data(), values.data(), values.size_bytes());
  return t;
}

}  // namespace

Tensor Tensor::from_floats(std::vector<int64_t> shape, std::span<const float> values) {
  return tensor_of(std::move(shape), values);
}

Tensor Tensor::from_int64s(std::vector<int64_t> shape, std::span<const int64_t> values) {
  return tensor_of(std::move(shape), values);
}

std::vector<std::string> available_isas() {
  std::vector<std::string> names;
  for (kernels::Isa isa : kernels::runnable_isas()) names.push_back(kernels::isa_name(isa));
  return names;
}

std::string version() { return OCTET_VERSION; }

struct InferenceSession::Impl {
  Session session;
  std::vector<NodeArg> inputs, outputs;
  std::string isa;
};

InferenceSession::InferenceSession(const std::string& model_path, const InferenceOptions& options) {
  impl_ = translating_errors([&] {
    // The engine checks the thread count and that this CPU runs the level; only the name is ours.
    SessionOptions so;
    so.threads = options.threads;
    so.winograd = options.winograd;
    kernels::Isa isa = kernels::active_isa();
    if (!options.isa.empty()) {
      auto parsed = kernels::parse_isa(options.isa);
      if (!parsed) throw Error("octet: unknown ISA level '" + options.isa + "' (levels: " + kernels::isa_names() + ")");
      isa = *parsed;
    }
    so.isa = isa;
    Session session = Session::load(model_path, so);
    auto inputs = public_args(session.inputs());
    auto outputs = public_args(session.outputs());
    return std::make_unique<Impl>(Impl{std::move(session), std::move(inputs), std::move(outputs), kernels::isa_name(isa)});
  });
}

InferenceSession::InferenceSession(InferenceSession&&) noexcept = default;
InferenceSession& InferenceSession::operator=(InferenceSession&&) noexcept = default;
InferenceSession::~InferenceSession() = default;

const std::vector<NodeArg>& InferenceSession::inputs() const { return impl_->inputs; }
const std::vector<NodeArg>& InferenceSession::outputs() const { return impl_->outputs; }
const std::string& InferenceSession::isa() const { return impl_->isa; }

namespace {

// Both run() overloads: the inputs in the model's order, by pointer, so neither copies them.
std::vector<Tensor> run_session(Session& session, const std::vector<NodeArg>& specs,
                                const std::vector<const Tensor*>& inputs) {
  return translating_errors([&] {
    if (inputs.size() != specs.size())
      throw Error("octet: the model takes " + std::to_string(specs.size()) + " input(s), " +
                  std::to_string(inputs.size()) + " given");
    std::vector<TensorView> feeds;  // read in place: the engine's one copy is into its arena
    feeds.reserve(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& t = *inputs[i];  // Session::run_views checks type, shape and byte count
      feeds.push_back(TensorView{engine_type(t.type), t.shape, t.bytes});
    }
    // Session::run is reentrant: each run leases a plan of its own (engine/session.h).
    auto results = session.run_views(feeds);
    std::vector<Tensor> out;
    out.reserve(results.size());
    for (auto& r : results) out.push_back(Tensor{public_type(r.dtype), std::move(r.dims), std::move(r.bytes)});
    return out;
  });
}

}  // namespace

std::vector<Tensor> InferenceSession::run(const std::vector<Tensor>& inputs) const {
  std::vector<const Tensor*> ordered;
  for (const Tensor& t : inputs) ordered.push_back(&t);
  return run_session(impl_->session, impl_->inputs, ordered);
}

std::map<std::string, Tensor> InferenceSession::run(const std::map<std::string, Tensor>& feeds,
                                                    const std::vector<std::string>& output_names) const {
  std::vector<const Tensor*> ordered;
  for (const auto& in : impl_->inputs) {
    auto it = feeds.find(in.name);
    if (it == feeds.end()) throw Error("octet: input '" + in.name + "' is not fed");
    ordered.push_back(&it->second);
  }
  for (const auto& feed : feeds) {
    const std::string& name = feed.first;  // not a structured binding: clang 14 cannot capture one
    bool known = std::any_of(impl_->inputs.begin(), impl_->inputs.end(), [&](const NodeArg& a) { return a.name == name; });
    if (!known) throw Error("octet: the model has no input '" + name + "'");
  }
  std::vector<Tensor> results = run_session(impl_->session, impl_->inputs, ordered);
  std::map<std::string, Tensor> named;
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string& name = impl_->outputs[i].name;
    if (output_names.empty() || std::find(output_names.begin(), output_names.end(), name) != output_names.end())
      named.emplace(name, std::move(results[i]));
  }
  for (const auto& name : output_names)
    if (!named.count(name)) throw Error("octet: the model has no output '" + name + "'");
  return named;
}

}  // namespace octet
