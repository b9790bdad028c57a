#pragma once
// numpy broadcasting of any number of operands of any element type into a row-major output,
// walked as runs along the last axis: the integer and float64 element-wise ops (Add ... Div,
// Min, Max, Clip, Pow, Where) that are not on the FP32 SIMD kernels. Each run is a plain
// loop over stride 0 or 1 operands, which the compiler vectorizes where the type allows; the
// step names it "<type>_<op>_runs" (portable code, not a scalar reference: these ops carry
// shape arithmetic and small integer tensors, not the activations the SIMD kernels are for).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/ops/broadcast.h"

namespace octet::ops {

struct TypedBroadcast {
  ir::Dims dims;                                // the output's, row-major
  std::vector<std::vector<int64_t>> strides;    // per operand, along dims, 0 where it broadcasts
};

inline TypedBroadcast typed_broadcast(const OpContext& c, const std::vector<size_t>& operands) {
  TypedBroadcast w;
  for (size_t i : operands) w.dims = ops::broadcast_dims(c, w.dims, c.info(i).dims);
  for (size_t i : operands) {
    const TensorInfo& t = c.info(i);
    const auto s = t.strides();
    std::vector<int64_t> aligned(w.dims.size(), 0);
    const size_t off = w.dims.size() - t.dims.size();
    for (size_t d = 0; d < t.dims.size(); ++d) aligned[off + d] = t.dims[d] == 1 ? 0 : s[d];
    w.strides.push_back(std::move(aligned));
  }
  return w;
}

// f(y_offset, run_length, offsets, inner_strides): every run along the last axis (one run of
// one element for a rank-0 output), offsets[i] the element operand i starts the run at.
template <class F>
void for_each_run(const TypedBroadcast& w, F&& f) {
  const size_t rank = w.dims.size(), n_in = w.strides.size();
  const int64_t len = rank == 0 ? 1 : w.dims[rank - 1];
  int64_t runs = 1;
  for (size_t d = 0; d + 1 < rank; ++d) runs *= w.dims[d];
  if (len == 0 || runs == 0) return;
  std::vector<int64_t> inner(n_in, 0), offsets(n_in);
  for (size_t i = 0; i < n_in && rank > 0; ++i) inner[i] = w.strides[i][rank - 1];
  for (int64_t r = 0; r < runs; ++r) {
    int64_t rest = r;
    std::fill(offsets.begin(), offsets.end(), 0);
    for (size_t d = rank == 0 ? 0 : rank - 1; d-- > 0;) {
      const int64_t idx = rest % w.dims[d];
      rest /= w.dims[d];
      for (size_t i = 0; i < n_in; ++i) offsets[i] += idx * w.strides[i][d];
    }
    f(r * len, len, offsets.data(), inner.data());
  }
}

inline const char* type_tag(ir::DType t) {
  switch (t) {
    case ir::DType::f32: return "f32";
    case ir::DType::f64: return "f64";
    case ir::DType::u8: return "u8";
    case ir::DType::s8: return "s8";
    case ir::DType::s32: return "s32";
    case ir::DType::s64: return "s64";
    default: return "b8";
  }
}

// Calls f(T{}) with T the C++ type of `t` (every type but bool).
template <class F>
auto with_type(const OpContext& c, ir::DType t, F&& f) {
  switch (t) {
    case ir::DType::f32: return f(float{});
    case ir::DType::f64: return f(double{});
    case ir::DType::u8: return f(uint8_t{});
    case ir::DType::s8: return f(int8_t{});
    case ir::DType::s32: return f(int32_t{});
    case ir::DType::s64: return f(int64_t{});
    default: c.fail(std::string(ir::dtype_name(t)) + " " + c.node.op + " is not supported");
  }
}

}  // namespace octet::ops
