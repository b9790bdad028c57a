#include "io/tensor_io.h"

namespace octet {
namespace {

ir::DType to_ir(npy::DType t) {
  switch (t) {
    case npy::DType::f32: return ir::DType::f32;
    case npy::DType::f64: return ir::DType::f64;
    case npy::DType::u8: return ir::DType::u8;
    case npy::DType::s8: return ir::DType::s8;
    case npy::DType::s32: return ir::DType::s32;
    case npy::DType::s64: return ir::DType::s64;
    case npy::DType::b8: return ir::DType::b8;
  }
  throw std::logic_error("npy dtype");
}

npy::DType to_npy_dtype(ir::DType t) {
  switch (t) {
    case ir::DType::f32: return npy::DType::f32;
    case ir::DType::f64: return npy::DType::f64;
    case ir::DType::u8: return npy::DType::u8;
    case ir::DType::s8: return npy::DType::s8;
    case ir::DType::s32: return npy::DType::s32;
    case ir::DType::s64: return npy::DType::s64;
    case ir::DType::b8: return npy::DType::b8;
  }
  throw std::logic_error("ir dtype");
}

}  // namespace

ir::TensorData from_npy(const npy::Array& a) {
  ir::TensorData t;
  t.dtype = to_ir(a.dtype);
  t.dims = a.shape;
  t.bytes = a.data;
  return t;
}

npy::Array to_npy(const ir::TensorData& t) {
  npy::Array a;
  a.dtype = to_npy_dtype(t.dtype);
  a.shape = t.dims;
  a.data = t.bytes;
  return a;
}

}  // namespace octet
