#pragma once
// octet's public C++ API: load an ONNX model (FP32, or INT8 as QDQ / QOperator / dynamic) and
// run it on octet's kernels. This header is all an application needs:
//
//   find_package(octet REQUIRED)
//   target_link_libraries(app PRIVATE octet::octet)
//
//   octet::InferenceSession session("model.onnx");
//   std::vector<octet::Tensor> out = session.run({octet::Tensor::from_floats({1, 1, 28, 28}, pixels)});
//
// Names follow ONNX Runtime's InferenceSession where the idea is the same. Every failure (a
// missing or malformed file, an unsupported operator, an input of the wrong type or shape) is
// thrown as octet::Error with a one-line message naming the file, node or input.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(_WIN32)
#define OCTET_API
#else
#define OCTET_API __attribute__((visibility("default")))
#endif

namespace octet {

class OCTET_API Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class ElementType { float32, float64, uint8, int8, int32, int64, boolean };

// "float32", "int8", ...: the NumPy spelling.
OCTET_API const char* element_type_name(ElementType type);

// A dense row-major tensor that owns its elements.
struct OCTET_API Tensor {
  ElementType type = ElementType::float32;
  std::vector<int64_t> shape;
  std::vector<std::byte> bytes;

  int64_t element_count() const;
  // The elements as T; throws Error when T is not the tensor's element type.
  template <class T> std::span<const T> values() const;
  template <class T> std::span<T> values();

  static Tensor from_floats(std::vector<int64_t> shape, std::span<const float> values);
  static Tensor from_int64s(std::vector<int64_t> shape, std::span<const int64_t> values);
};

// A model input or output: its element type and shape, -1 where the extent is decided at run
// time (the batch axis of a dynamic-batch export).
struct OCTET_API NodeArg {
  std::string name;
  ElementType type = ElementType::float32;
  std::vector<int64_t> shape;
};

struct OCTET_API InferenceOptions {
  int threads = 1;  // threads the kernels split each step over, the caller's included
  // Highest instruction set the kernels may use ("scalar", "avx2", "avx512vnni", "neondot", ...;
  // available_isas() lists this CPU's). Empty: the best this CPU runs.
  std::string isa;
  bool winograd = true;  // FP32 3x3 convolutions may run as Winograd F(2x2, 3x3)
};

// The instruction-set levels this CPU can run, lowest first ("scalar" is always there).
OCTET_API std::vector<std::string> available_isas();
OCTET_API std::string version();

class OCTET_API InferenceSession {
 public:
  explicit InferenceSession(const std::string& model_path, const InferenceOptions& options = {});
  InferenceSession(InferenceSession&&) noexcept;
  InferenceSession& operator=(InferenceSession&&) noexcept;
  ~InferenceSession();

  const std::vector<NodeArg>& inputs() const;
  const std::vector<NodeArg>& outputs() const;
  // The ISA level the kernels were capped at when the session was made.
  const std::string& isa() const;

  // Inputs in the order of inputs(), outputs in the order of outputs(). Any batch size; the
  // element type, rank and every fixed extent are checked; inputs are read where they are.
  // Safe to call from several threads at once on one session.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs) const;
  // By name, ORT-style: every input must be fed; returns the outputs named in `output_names`
  // (all of them when it is empty).
  std::map<std::string, Tensor> run(const std::map<std::string, Tensor>& feeds,
                                    const std::vector<std::string>& output_names = {}) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

extern template OCTET_API std::span<const float> Tensor::values<float>() const;
extern template OCTET_API std::span<float> Tensor::values<float>();
extern template OCTET_API std::span<const int64_t> Tensor::values<int64_t>() const;
extern template OCTET_API std::span<int64_t> Tensor::values<int64_t>();
extern template OCTET_API std::span<const int8_t> Tensor::values<int8_t>() const;
extern template OCTET_API std::span<int8_t> Tensor::values<int8_t>();
extern template OCTET_API std::span<const uint8_t> Tensor::values<uint8_t>() const;
extern template OCTET_API std::span<uint8_t> Tensor::values<uint8_t>();
extern template OCTET_API std::span<const int32_t> Tensor::values<int32_t>() const;
extern template OCTET_API std::span<int32_t> Tensor::values<int32_t>();
extern template OCTET_API std::span<const double> Tensor::values<double>() const;
extern template OCTET_API std::span<double> Tensor::values<double>();

}  // namespace octet
