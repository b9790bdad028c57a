#include "core/ir.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <limits>

namespace octet::ir {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::f32: case DType::s32: return 4;
    case DType::f64: case DType::s64: return 8;
    case DType::u8: case DType::s8: case DType::b8: return 1;
  }
  return 0;
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "float32";
    case DType::f64: return "float64";
    case DType::u8: return "uint8";
    case DType::s8: return "int8";
    case DType::s32: return "int32";
    case DType::s64: return "int64";
    case DType::b8: return "bool";
  }
  return "?";
}

void copy_bytes(void* dst, const void* src, size_t n) {
  if (n) std::memcpy(dst, src, n);
}

int64_t element_count(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) throw std::logic_error("element_count of a shape with an unknown extent");
    if (__builtin_mul_overflow(n, d, &n))
      throw Error("the shape " + dims_str(dims) + " has more elements than a 64-bit count holds");
  }
  return n;
}

std::string dims_str(const Dims& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    s += dims[i] < 0 ? "N" : std::to_string(dims[i]);
  }
  return s + "]";
}

void reserve_or_throw(size_t bytes) {
  if (bytes < (size_t{1} << 30)) return;
  // More than the machine's RAM never fits; malloc alone may still hand out the address space
  // (overcommit, or a sanitizer allocator that reserves it) and fail only when it is touched.
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0 && bytes / static_cast<size_t>(page) > static_cast<size_t>(pages)) throw std::bad_alloc();
  void* p = std::malloc(bytes);
  if (p == nullptr) throw std::bad_alloc();
  std::free(p);
}

TensorData TensorData::make(DType t, Dims d) {
  TensorData td;
  td.dtype = t;
  td.dims = std::move(d);
  const size_t count = size_t(td.count()), size = dtype_size(t);
  if (count > std::numeric_limits<size_t>::max() / size) throw std::bad_alloc();
  reserve_or_throw(count * size);
  td.bytes.resize(count * size);
  return td;
}

TensorData TensorData::f32(Dims d, std::span<const float> v) {
  TensorData td = make(DType::f32, std::move(d));
  if (int64_t(v.size()) != td.count()) throw std::logic_error("TensorData::f32 size mismatch");
  copy_bytes(td.bytes.data(), v.data(), v.size_bytes());
  return td;
}

TensorData TensorData::s64(Dims d, std::span<const int64_t> v) {
  TensorData td = make(DType::s64, std::move(d));
  if (int64_t(v.size()) != td.count()) throw std::logic_error("TensorData::s64 size mismatch");
  copy_bytes(td.bytes.data(), v.data(), v.size_bytes());
  return td;
}

std::vector<int64_t> TensorData::to_i64() const {
  std::vector<int64_t> out(static_cast<size_t>(count()));
  for (size_t i = 0; i < out.size(); ++i) {
    switch (dtype) {
      case DType::s64: out[i] = as<int64_t>()[i]; break;
      case DType::s32: out[i] = as<int32_t>()[i]; break;
      case DType::u8: out[i] = as<uint8_t>()[i]; break;
      case DType::s8: out[i] = as<int8_t>()[i]; break;
      case DType::b8: out[i] = as<uint8_t>()[i] != 0; break;
      default: throw Error(std::string("expected an integer tensor, got ") + dtype_name(dtype));
    }
  }
  return out;
}

const std::string& Node::input(size_t i) const {
  static const std::string none;
  return i < inputs.size() ? inputs[i] : none;
}

Value& Graph::value(const std::string& name) {
  auto it = values.find(name);
  if (it == values.end()) throw Error(source + ": tensor '" + name + "' is used but never produced");
  return it->second;
}

const Value& Graph::value(const std::string& name) const {
  return const_cast<Graph*>(this)->value(name);
}

bool Graph::is_constant(const std::string& name) const {
  auto it = values.find(name);
  return it != values.end() && it->second.constant.has_value();
}

std::vector<size_t> Graph::consumers(const std::string& name) const {
  std::vector<size_t> out;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const auto& in : nodes[i].inputs)
      if (in == name) { out.push_back(i); break; }
  return out;
}

bool Graph::is_graph_output(const std::string& name) const {
  for (const auto& o : outputs) if (o == name) return true;
  return false;
}

// Weights, biases, scales and zero points in any numeric type (a quantized model's int8
// weights and int32 biases count); int64 and bool constants are shapes, axes and masks.
int64_t Graph::parameter_count() const {
  int64_t n = 0;
  for (const auto& [name, v] : values)
    if (v.constant && v.constant->dtype != DType::s64 && v.constant->dtype != DType::b8) n += v.constant->count();
  return n;
}

std::string Graph::describe(const Node& n) {
  return "node '" + n.name + "' (" + n.op + ")";
}

}  // namespace octet::ir
