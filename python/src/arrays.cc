#include "python/src/arrays.h"

#include <memory>

namespace octet::python {

py::dtype numpy_dtype(ir::DType t) { return py::dtype(ir::dtype_name(t)); }

std::string onnx_type_name(ir::DType t) {
  switch (t) {
    case ir::DType::f32: return "tensor(float)";
    case ir::DType::f64: return "tensor(double)";
    case ir::DType::u8: return "tensor(uint8)";
    case ir::DType::s8: return "tensor(int8)";
    case ir::DType::s32: return "tensor(int32)";
    case ir::DType::s64: return "tensor(int64)";
    case ir::DType::b8: return "tensor(bool)";
  }
  return "tensor(?)";
}

TensorView view_of(const py::array& a, ir::DType t) {
  TensorView v;
  v.dtype = t;
  v.dims.assign(a.shape(), a.shape() + a.ndim());
  v.bytes = {static_cast<const std::byte*>(a.data()), size_t(a.nbytes())};
  return v;
}

py::array to_numpy(ir::TensorData&& t) {
  auto owner = std::make_unique<ir::TensorData>(std::move(t));
  const ir::TensorData& data = *owner;
  py::capsule base(owner.get(), [](void* p) { delete static_cast<ir::TensorData*>(p); });
  owner.release();  // the capsule owns it now
  std::vector<py::ssize_t> shape(data.dims.begin(), data.dims.end());
  return py::array(numpy_dtype(data.dtype), shape, data.bytes.data(), base);
}

std::string describe_array(const py::array& a) {
  std::string s = py::str(a.dtype());
  s += " [";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) {
    if (i) s += ',';
    s += std::to_string(a.shape(i));
  }
  return s + "]";
}

}  // namespace octet::python
