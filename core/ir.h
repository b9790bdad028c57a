#pragma once
// The internal graph: what the loader builds, the passes rewrite and the planner executes.
// Nodes keep ONNX operator names and ONNX (NCHW) logical shapes; the physical layout of
// activations is the planner's business, not the graph's.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace octet::ir {

enum class DType : uint8_t { f32, f64, u8, s8, s32, s64, b8 };

size_t dtype_size(DType t);
const char* dtype_name(DType t);

using Dims = std::vector<int64_t>;  // a negative extent is a dimension unknown until run time

// memcpy that accepts empty ranges: an empty vector's data() may be null, and passing
// null to memcpy is undefined even for zero bytes.
void copy_bytes(void* dst, const void* src, size_t n);

// Throws std::bad_alloc when the allocator refuses `bytes` now. Asked with malloc, which
// returns null where operator new would abort a sanitizer build instead of throwing; checked
// only for requests of 1 GiB or more.
void reserve_or_throw(size_t bytes);

int64_t element_count(const Dims& dims);  // product of the extents; throws on unknown ones
std::string dims_str(const Dims& dims);   // "[N,3,32,32]" (unknown extents print as N)

// A tensor whose contents are known at load or plan time (initializers, folded values).
struct TensorData {
  DType dtype = DType::f32;
  Dims dims;
  std::vector<std::byte> bytes;

  int64_t count() const { return element_count(dims); }
  template <class T> const T* as() const { return reinterpret_cast<const T*>(bytes.data()); }
  template <class T> T* as() { return reinterpret_cast<T*>(bytes.data()); }
  template <class T> std::span<const T> values() const { return {as<T>(), size_t(count())}; }

  static TensorData make(DType t, Dims d);
  static TensorData f32(Dims d, std::span<const float> v);
  static TensorData s64(Dims d, std::span<const int64_t> v);
  // Any integer tensor's elements as int64 (for shapes, axes, pads).
  std::vector<int64_t> to_i64() const;
};

// An attribute the loader adds to a float AveragePool: 1 when ONNX Runtime's shape inference
// knows its input as 4-D with a known channel count (loader/ort_shapes.h), 0 when not. ORT runs
// such a pool in its NCHWc layout (when the channels are a multiple of its block), and only then:
// its layout pass skips the pool otherwise, and the two layouts sum a window in different orders
// (kernels/ref/pool2d.h: f32_avgpool_sum_rows). A hint for the engine: the ONNX writer leaves it out.
inline constexpr const char* kShapeKnownToOrtAttr = "octet_input_shape_known";

// An attribute the loader adds to a BatchNormalization: the NCHWc blocks (8: AVX2, 16: AVX-512F)
// at which ONNX Runtime's layout pass rewrites it into a 1x1 depthwise NCHWc Conv, whose weight
// scale / sqrt(var + eps) rounds once where ORT's plain kernel (and octet's default) rounds
// 1 / sqrt(var + eps) and then its product with scale (loader/ort_nchwc.h). The engine applies
// the rewrite's arithmetic when the list holds this CPU's block (kernels::ort_nchwc_block()). A
// hint for the engine: the ONNX writer leaves it out.
inline constexpr const char* kOrtNchwcBlocksAttr = "octet_ort_nchwc_blocks";

// An attribute the loader adds (value 1) to a ReduceMean of a QDQ model that ONNX Runtime runs
// on channels-last data: its layout pass runs the QLinearConv before it on NHWC and pushes the
// Transpose through the DequantizeLinear and the ReduceMean (loader/ort_nhwc.h), which then sums
// each channel over the pixels in their order instead of over the NCHW rows
// (kernels/ref/qreduce.h). A hint for the engine: the ONNX writer leaves it out.
inline constexpr const char* kOrtChannelsLastAttr = "octet_ort_channels_last";

struct Value {
  std::string name;
  DType dtype = DType::f32;
  std::optional<Dims> dims;  // absent when the file says nothing and inference has not run
  std::optional<TensorData> constant;
};

using AttrValue = std::variant<int64_t, float, std::string, std::vector<int64_t>,
                               std::vector<float>, TensorData>;

class Attrs {
 public:
  bool has(const std::string& k) const { return map_.count(k) != 0; }
  void set(const std::string& k, AttrValue v) { map_[k] = std::move(v); }
  void erase(const std::string& k) { map_.erase(k); }
  int64_t i(const std::string& k) const { return get<int64_t>(k); }
  float f(const std::string& k) const { return get<float>(k); }
  const std::string& s(const std::string& k) const { return get<std::string>(k); }
  const std::vector<int64_t>& ints(const std::string& k) const { return get<std::vector<int64_t>>(k); }
  const std::vector<float>& floats(const std::string& k) const { return get<std::vector<float>>(k); }
  const TensorData& t(const std::string& k) const { return get<TensorData>(k); }
  int64_t i(const std::string& k, int64_t dflt) const { return has(k) ? i(k) : dflt; }
  float f(const std::string& k, float dflt) const { return has(k) ? f(k) : dflt; }
  const std::map<std::string, AttrValue>& all() const { return map_; }

 private:
  template <class T> const T& get(const std::string& k) const {
    auto it = map_.find(k);
    if (it == map_.end()) throw std::logic_error("attribute '" + k + "' missing");
    if (auto* v = std::get_if<T>(&it->second)) return *v;
    throw std::logic_error("attribute '" + k + "' has another type");
  }
  std::map<std::string, AttrValue> map_;
};

struct Node {
  std::string name;
  std::string op;                    // ONNX op type, e.g. "Conv"
  std::string domain;                // "" for the default ONNX domain, or "com.microsoft"
  std::vector<std::string> inputs;   // "" marks an omitted optional input
  std::vector<std::string> outputs;
  Attrs attrs;

  const std::string& input(size_t i) const;  // "" when absent
  bool has_input(size_t i) const { return i < inputs.size() && !inputs[i].empty(); }
};

struct Graph {
  std::string source;  // file the graph came from, for messages
  int64_t opset = 0;   // of the default ONNX domain
  std::vector<Node> nodes;
  std::map<std::string, Value> values;
  std::vector<std::string> inputs;   // graph inputs that are not initializers
  std::vector<std::string> outputs;

  Value& value(const std::string& name);
  const Value& value(const std::string& name) const;
  bool is_constant(const std::string& name) const;
  // Nodes reading `name`, by index in `nodes`.
  std::vector<size_t> consumers(const std::string& name) const;
  bool is_graph_output(const std::string& name) const;
  // Elements of the float constants: the model's parameters as stored.
  int64_t parameter_count() const;
  // "node 'conv1' (Conv)" for messages.
  static std::string describe(const Node& n);
};

// A message for the user: which file, node, op and what was expected.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace octet::ir
