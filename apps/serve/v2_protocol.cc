#include "apps/serve/v2_protocol.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "apps/serve/request_error.h"

namespace octet::serve::v2 {
namespace {

using json = nlohmann::json;

[[noreturn]] void bad(const std::string& message) { throw RequestError(400, message); }

struct DtypeName {
  ir::DType dtype;
  const char* name;
};
constexpr DtypeName kDtypes[] = {{ir::DType::f32, "FP32"},  {ir::DType::f64, "FP64"},  {ir::DType::u8, "UINT8"},
                                 {ir::DType::s8, "INT8"},   {ir::DType::s32, "INT32"}, {ir::DType::s64, "INT64"},
                                 {ir::DType::b8, "BOOL"}};

template <class T>
void store(std::byte* dst, T v) {
  std::memcpy(dst, &v, sizeof v);
}

template <class T>
void store_integer(std::byte* dst, const json& v, const std::string& what) {
  int64_t x = 0;
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > uint64_t(std::numeric_limits<T>::max())) bad(fmt::format("{}: {} does not fit its datatype", what, u));
    x = int64_t(u);
  } else if (v.is_number_integer()) {
    x = v.get<int64_t>();
  } else {
    bad(fmt::format("{}: {} is not an integer", what, v.dump()));
  }
  if (x < int64_t(std::numeric_limits<T>::min()) || x > int64_t(std::numeric_limits<T>::max()))
    bad(fmt::format("{}: {} does not fit its datatype", what, x));
  store(dst, T(x));
}

// One JSON element into the tensor's bytes at `dst`.
void store_element(ir::DType t, std::byte* dst, const json& v, const std::string& what) {
  switch (t) {
    case ir::DType::f32:
    case ir::DType::f64:
      if (!v.is_number()) bad(fmt::format("{}: {} is not a number", what, v.dump()));
      // A JSON number is read as the nearest double; a float32 written with enough digits
      // (Python's repr, nlohmann's dump) comes back as the same float.
      if (t == ir::DType::f32) store(dst, float(v.get<double>()));
      else store(dst, v.get<double>());
      return;
    case ir::DType::u8: return store_integer<uint8_t>(dst, v, what);
    case ir::DType::s8: return store_integer<int8_t>(dst, v, what);
    case ir::DType::s32: return store_integer<int32_t>(dst, v, what);
    case ir::DType::s64: return store_integer<int64_t>(dst, v, what);
    case ir::DType::b8:
      if (!v.is_boolean()) bad(fmt::format("{}: {} is not true or false", what, v.dump()));
      store(dst, uint8_t(v.get<bool>() ? 1 : 0));
      return;
  }
}

// The elements of `data`, flat or nested, in row-major order, into `out` (count elements).
void read_data(const json& data, ir::TensorData& out, const std::string& what) {
  const size_t size = ir::dtype_size(out.dtype);
  const size_t count = out.bytes.size() / size;
  size_t n = 0;
  // Depth-first over the nesting without recursion (a hostile body may nest deeply).
  struct Frame {
    const json* array;
    size_t next;
  };
  std::vector<Frame> stack;
  if (!data.is_array()) bad(what + ": 'data' is not an array");
  stack.push_back({&data, 0});
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.next == f.array->size()) {
      stack.pop_back();
      continue;
    }
    const json& v = (*f.array)[f.next++];
    if (v.is_array()) {
      if (stack.size() >= size_t(kMaxNesting)) bad(fmt::format("{}: 'data' nests deeper than {} lists", what, kMaxNesting));
      stack.push_back({&v, 0});
      continue;
    }
    if (n == count) bad(fmt::format("{}: 'data' has more than the {} elements its shape holds", what, count));
    store_element(out.dtype, out.bytes.data() + n * size, v, fmt::format("{} element {}", what, n));
    ++n;
  }
  if (n != count) bad(fmt::format("{}: 'data' has {} elements, its shape holds {}", what, n, count));
}

ir::Dims read_shape(const json& input, const std::string& what) {
  const auto s = input.find("shape");
  if (s == input.end() || !s->is_array()) bad(what + ": no 'shape' (an array of extents)");
  ir::Dims dims;
  for (const json& d : *s) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0)
      bad(fmt::format("{}: shape {} is not a list of non-negative integers", what, s->dump()));
    dims.push_back(d.get<int64_t>());
  }
  return dims;
}

// The element count of `dims` and its bytes, refused past what a request can hold anyway.
size_t tensor_bytes(const ir::Dims& dims, ir::DType t, const std::string& what) {
  constexpr uint64_t kLimit = uint64_t{1} << 40;
  uint64_t count = 1;
  for (int64_t d : dims) {
    if (d != 0 && count > kLimit / uint64_t(d)) bad(fmt::format("{}: shape {} is too large", what, ir::dims_str(dims)));
    count *= uint64_t(d);
  }
  if (count > kLimit / ir::dtype_size(t)) bad(fmt::format("{}: shape {} is too large", what, ir::dims_str(dims)));
  return size_t(count) * ir::dtype_size(t);
}

std::optional<int64_t> int_parameter(const json& parameters, const char* key, const std::string& what) {
  const auto p = parameters.find(key);
  if (p == parameters.end()) return std::nullopt;
  if (!p->is_number_integer() || p->get<int64_t>() < 0)
    bad(fmt::format("{}: parameter '{}' is {}, not a number of bytes", what, key, p->dump()));
  return p->get<int64_t>();
}

std::optional<bool> bool_parameter(const json& parameters, const char* key, const std::string& what) {
  const auto p = parameters.find(key);
  if (p == parameters.end()) return std::nullopt;
  if (!p->is_boolean()) bad(fmt::format("{}: parameter '{}' is {}, not true or false", what, key, p->dump()));
  return p->get<bool>();
}

const json& parameters_of(const json& object, const std::string& what) {
  static const json kNone = json::object();
  const auto p = object.find("parameters");
  if (p == object.end()) return kNone;
  if (!p->is_object()) bad(what + ": 'parameters' is not an object");
  return *p;
}

std::string name_of(const json& object, const std::string& what) {
  const auto n = object.find("name");
  if (n == object.end() || !n->is_string()) bad(what + " has no 'name' string");
  return n->get<std::string>();
}

}  // namespace

std::optional<ir::DType> dtype_of(std::string_view datatype) {
  for (const DtypeName& d : kDtypes)
    if (datatype == d.name) return d.dtype;
  return std::nullopt;
}

const char* datatype_name(ir::DType t) {
  for (const DtypeName& d : kDtypes)
    if (d.dtype == t) return d.name;
  return "?";
}

size_t parse_header_length(const std::string& value) {
  const bool digits = !value.empty() && value.size() <= 18 &&
                      std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits) bad("Inference-Header-Content-Length '" + value + "' is not a number of bytes");
  return size_t(std::stoull(value));
}

InferRequest parse_infer_request(std::string_view body, std::optional<size_t> header_length) {
  const size_t json_bytes = header_length.value_or(body.size());
  if (json_bytes > body.size())
    bad(fmt::format("Inference-Header-Content-Length is {} but the body has only {} bytes", json_bytes, body.size()));
  const json j = json::parse(body.substr(0, json_bytes), nullptr, false);
  if (j.is_discarded()) bad("the inference request is not valid JSON");
  if (!j.is_object()) bad("the inference request is not a JSON object");

  InferRequest r;
  if (const auto id = j.find("id"); id != j.end()) {
    if (!id->is_string()) bad("'id' is not a string");
    r.id = *id;
  }
  const json& params = parameters_of(j, "the request");
  r.binary_output = bool_parameter(params, "binary_data_output", "the request").value_or(false);

  const auto inputs = j.find("inputs");
  if (inputs == j.end() || !inputs->is_array() || inputs->empty()) bad("the request has no 'inputs' (a list of tensors)");
  std::string_view binary = body.substr(json_bytes);
  for (const json& in : *inputs) {
    if (!in.is_object()) bad("an input is not a JSON object");
    InferInput x;
    x.name = name_of(in, "an input");
    const std::string what = "input '" + x.name + "'";
    if (std::any_of(r.inputs.begin(), r.inputs.end(), [&](const InferInput& o) { return o.name == x.name; }))
      bad(what + " is given twice");
    const auto datatype = in.find("datatype");
    if (datatype == in.end() || !datatype->is_string()) bad(what + ": no 'datatype' string");
    const std::optional<ir::DType> t = dtype_of(datatype->get<std::string>());
    if (!t) bad(fmt::format("{}: datatype {} is not one octet runs (FP32, FP64, UINT8, INT8, INT32, INT64, BOOL)", what,
                            datatype->dump()));
    x.tensor.dtype = *t;
    x.tensor.dims = read_shape(in, what);
    const size_t bytes = tensor_bytes(x.tensor.dims, *t, what);
    const std::optional<int64_t> binary_size = int_parameter(parameters_of(in, what), "binary_data_size", what);
    const bool has_data = in.contains("data");
    if (binary_size && has_data) bad(what + " has both 'data' and parameters.binary_data_size");
    if (binary_size) {
      if (size_t(*binary_size) != bytes)
        bad(fmt::format("{}: binary_data_size is {} bytes but {} {} needs {}", what, *binary_size, datatype->get<std::string>(),
                        ir::dims_str(x.tensor.dims), bytes));
      if (bytes > binary.size())
        bad(fmt::format("{}: {} bytes of binary data, only {} left after the JSON header", what, bytes, binary.size()));
      x.tensor.bytes.resize(bytes);
      ir::copy_bytes(x.tensor.bytes.data(), binary.data(), bytes);
      binary.remove_prefix(bytes);
    } else {
      if (!has_data) bad(what + " has neither 'data' nor parameters.binary_data_size");
      x.tensor.bytes.resize(bytes);
      read_data(in["data"], x.tensor, what);
    }
    r.inputs.push_back(std::move(x));
  }
  if (!binary.empty())
    bad(fmt::format("{} bytes after the JSON header belong to no input (binary_data_size)", binary.size()));

  if (const auto outputs = j.find("outputs"); outputs != j.end()) {
    if (!outputs->is_array()) bad("'outputs' is not a list");
    r.outputs_listed = true;
    for (const json& o : *outputs) {
      if (!o.is_object()) bad("an output is not a JSON object");
      RequestedOutput out;
      out.name = name_of(o, "an output");
      out.binary = bool_parameter(parameters_of(o, "output '" + out.name + "'"), "binary_data", "output '" + out.name + "'")
                       .value_or(r.binary_output);
      r.outputs.push_back(std::move(out));
    }
  }
  return r;
}

std::vector<ir::TensorData> inputs_in_model_order(const std::vector<TensorSpec>& specs, InferRequest& request) {
  for (const InferInput& in : request.inputs)
    if (std::none_of(specs.begin(), specs.end(), [&](const TensorSpec& s) { return s.name == in.name; })) {
      std::string names;
      for (const TensorSpec& s : specs) names += (names.empty() ? "'" : ", '") + s.name + "'";
      bad(fmt::format("the model has no input '{}' (its inputs: {})", in.name, names));
    }
  std::vector<ir::TensorData> out;
  for (const TensorSpec& spec : specs) {
    const auto in = std::find_if(request.inputs.begin(), request.inputs.end(),
                                 [&](const InferInput& i) { return i.name == spec.name; });
    if (in == request.inputs.end()) bad("the request has no input '" + spec.name + "'");
    const ir::TensorData& t = in->tensor;
    if (t.dtype != spec.dtype)
      bad(fmt::format("input '{}' is {}, the model takes {}", spec.name, datatype_name(t.dtype), datatype_name(spec.dtype)));
    bool fits = t.dims.size() == spec.dims.size();
    for (size_t d = 0; fits && d < t.dims.size(); ++d) fits = spec.dims[d] < 0 || spec.dims[d] == t.dims[d];
    if (!fits)
      bad(fmt::format("input '{}' has shape {}, the model takes {} (-1: any extent)", spec.name,
                      json(t.dims).dump(), json(spec.dims).dump()));
    out.push_back(std::move(in->tensor));
  }
  return out;
}

std::vector<RequestedOutput> outputs_to_send(const std::vector<TensorSpec>& specs, const InferRequest& request) {
  if (!request.outputs_listed) {
    std::vector<RequestedOutput> all;
    for (const TensorSpec& s : specs) all.push_back({s.name, request.binary_output});
    return all;
  }
  for (const RequestedOutput& o : request.outputs)
    if (std::none_of(specs.begin(), specs.end(), [&](const TensorSpec& s) { return s.name == o.name; }))
      bad("the model has no output '" + o.name + "'");
  return request.outputs;
}

namespace {

json data_json(const ir::TensorData& t) {
  json data = json::array();
  const int64_t n = t.count();
  switch (t.dtype) {
    // float32 goes out through a double, whose shortest decimal form reads back as the same float.
    case ir::DType::f32: for (float v : t.values<float>()) data.push_back(double(v)); break;
    case ir::DType::f64: for (double v : t.values<double>()) data.push_back(v); break;
    case ir::DType::u8: for (uint8_t v : t.values<uint8_t>()) data.push_back(v); break;
    case ir::DType::s8: for (int8_t v : t.values<int8_t>()) data.push_back(v); break;
    case ir::DType::s32: for (int32_t v : t.values<int32_t>()) data.push_back(v); break;
    case ir::DType::s64: for (int64_t v : t.values<int64_t>()) data.push_back(v); break;
    case ir::DType::b8: for (uint8_t v : t.values<uint8_t>()) data.push_back(v != 0); break;
  }
  (void)n;
  return data;
}

}  // namespace

EncodedResponse encode_infer_response(const std::string& model, const std::string& version, const json& id,
                                      const std::vector<RequestedOutput>& outputs,
                                      const std::vector<const ir::TensorData*>& tensors) {
  json j = {{"model_name", model}, {"model_version", version}};
  if (!id.is_null()) j["id"] = id;
  json outs = json::array();
  std::string binary;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const ir::TensorData& t = *tensors[i];
    json o = {{"name", outputs[i].name}, {"datatype", datatype_name(t.dtype)}, {"shape", t.dims}};
    if (outputs[i].binary) {
      o["parameters"] = {{"binary_data_size", t.bytes.size()}};
      binary.append(reinterpret_cast<const char*>(t.bytes.data()), t.bytes.size());
    } else {
      o["data"] = data_json(t);
    }
    outs.push_back(std::move(o));
  }
  j["outputs"] = std::move(outs);
  EncodedResponse r;
  // NaN and infinity have no JSON form: nlohmann writes null (binary outputs keep them).
  r.body = j.dump();
  const bool any_binary = std::any_of(outputs.begin(), outputs.end(), [](const RequestedOutput& o) { return o.binary; });
  if (any_binary) {
    r.header_length = r.body.size();
    r.body += binary;
  }
  return r;
}

json tensor_metadata(const TensorSpec& spec) {
  json shape = json::array();
  for (int64_t d : spec.dims) shape.push_back(d < 0 ? -1 : d);
  return {{"name", spec.name}, {"datatype", datatype_name(spec.dtype)}, {"shape", shape}};
}

}  // namespace octet::serve::v2
