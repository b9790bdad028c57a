#include "kernels/elementwise/softmax.h"

#include <algorithm>
#include <cmath>

#include "kernels/ref/softmax.h"

namespace octet::kernels {

namespace {

// Calls unit(o, c0, columns) for every outer index o and block of columns [c0, c0 + columns)
// (one block of 1 when inner == 1), on the pool when there is more than one unit.
template <class Unit>
void for_each_unit(pthreadpool_t pool, int64_t outer, int64_t len, int64_t inner, const Unit& unit) {
  const int64_t blocks = inner == 1 ? 1 : (inner + kAxisColumnBlock - 1) / kAxisColumnBlock;
  const size_t units = size_t(outer * blocks);
  auto body = [&](size_t u) {
    const int64_t o = int64_t(u) / blocks, b = int64_t(u) % blocks;
    const int64_t c0 = b * kAxisColumnBlock;
    unit(o, c0, std::min(kAxisColumnBlock, inner - c0));
  };
  // Small problems stay on the calling thread: a unit of a few hundred values costs less than
  // waking the pool.
  if (pool == nullptr || units <= 1 || outer * len * inner < 16 * 1024) {
    for (size_t u = 0; u < units; ++u) body(u);
    return;
  }
  using Body = decltype(body);
  pthreadpool_parallelize_1d(
      pool, [](void* p, size_t u) { (*static_cast<const Body*>(p))(u); }, const_cast<Body*>(&body), units, 0);
}

}  // namespace

int ort_softmax_width() {
  static const int width = cpu_has(kAvx512F) ? 16 : 8;
  return width;
}

F32Softmax::F32Softmax(bool log, int64_t outer, int64_t len, int64_t inner, Isa isa)
    : log_(log), outer_(outer), len_(len), inner_(inner) {
  ukernel_ = first_runnable(log ? kF32LogSoftmaxUkernels : kF32SoftmaxUkernels, isa);
}

KernelId F32Softmax::kernel_id() const {
  if (!ukernel_) return reference_kernel(log_ ? "f32_logsoftmax__ref" : "f32_softmax__ref");
  return row_kernel(*ukernel_) + (inner_ == 1 ? " (rows)" : " (columns)");
}

void F32Softmax::run(const float* x, float* y, pthreadpool_t pool) const {
  if (!ukernel_) {
    (log_ ? f32_logsoftmax__ref : f32_softmax__ref)(outer_, len_, inner_, x, y);
    return;
  }
  const F32SoftmaxUkernel fn = ukernel_->fn;
  const int64_t len = len_, inner = inner_;
  const int width = ort_softmax_width();
  for_each_unit(pool, outer_, len, inner, [&](int64_t o, int64_t c0, int64_t columns) {
    const int64_t off = o * len * inner + c0;
    fn(size_t(len), size_t(columns), size_t(inner), x + off, y + off, width);
  });
}

F32ArgExtremum::F32ArgExtremum(bool min, bool last_index, int64_t outer, int64_t len, int64_t inner, Isa isa)
    : min_(min), last_index_(last_index), outer_(outer), len_(len), inner_(inner) {
  // The microkernels carry indices as floats: exact up to 2^24.
  if (len <= (int64_t{1} << 24)) ukernel_ = first_runnable(min ? kF32ArgMinUkernels : kF32ArgMaxUkernels, isa);
}

KernelId F32ArgExtremum::kernel_id() const {
  if (!ukernel_) return reference_kernel("f32_arg_extremum__ref");
  return row_kernel(*ukernel_) + (inner_ == 1 ? " (rows)" : " (columns)");
}

void F32ArgExtremum::run(const float* x, int64_t* y, pthreadpool_t pool) const {
  if (!ukernel_) {
    f32_arg_extremum__ref(min_, last_index_, outer_, len_, inner_, x, y);
    return;
  }
  const F32ArgUkernel fn = ukernel_->fn;
  const int64_t len = len_, inner = inner_;
  const bool last = last_index_;
  for_each_unit(pool, outer_, len, inner, [&](int64_t o, int64_t c0, int64_t columns) {
    fn(size_t(len), size_t(columns), size_t(inner), x + o * len * inner + c0, y + o * inner + c0, last);
  });
}

F32AxisExtremum::F32AxisExtremum(bool min, int64_t outer, int64_t len, int64_t inner, Isa isa)
    : outer_(outer), len_(len), inner_(inner) {
  ukernel_ = first_runnable(min ? kF32ReduceMinUkernels : kF32ReduceMaxUkernels, isa);
}

KernelId F32AxisExtremum::kernel_id() const {
  if (!ukernel_) return reference_kernel("f32_reduce_extremum_strided__ref");
  return row_kernel(*ukernel_) + (inner_ == 1 ? " (rows)" : " (columns)");
}

void F32AxisExtremum::run(const float* x, float* y, pthreadpool_t pool) const {
  const F32AxisReduceUkernel fn = ukernel_->fn;
  const int64_t len = len_, inner = inner_;
  for_each_unit(pool, outer_, len, inner, [&](int64_t o, int64_t c0, int64_t columns) {
    fn(size_t(len), size_t(columns), size_t(inner), x + o * len * inner + c0, y + o * inner + c0);
  });
}

Q8Softmax::Q8Softmax(bool is_signed, int64_t outer, int64_t len, int64_t inner, Isa isa)
    : signed_(is_signed), outer_(outer), len_(len), inner_(inner) {
  ukernel_ = first_runnable(is_signed ? kQs8SoftmaxUkernels : kQu8SoftmaxUkernels, isa);
}

Q8Softmax::Q8Softmax(bool is_signed, int64_t outer, int64_t len, int64_t inner, const Q8SoftmaxEntry& ukernel)
    : signed_(is_signed), outer_(outer), len_(len), inner_(inner), ukernel_(&ukernel) {}

KernelId Q8Softmax::kernel_id() const {
  if (!ukernel_) return reference_kernel(signed_ ? "qs8_softmax__ref" : "qu8_softmax__ref");
  return row_kernel(*ukernel_) + (inner_ == 1 ? " (rows)" : " (columns)");
}

void Q8Softmax::run(const void* x, void* y, const QSoftmaxTable& table, float y_scale, int32_t y_zero_point,
                    pthreadpool_t pool) const {
  if (!ukernel_) {
    if (signed_)
      q8_softmax__ref(size_t(outer_), size_t(len_), size_t(inner_), static_cast<const int8_t*>(x), table, y_scale,
                      y_zero_point, static_cast<int8_t*>(y));
    else
      q8_softmax__ref(size_t(outer_), size_t(len_), size_t(inner_), static_cast<const uint8_t*>(x), table, y_scale,
                      y_zero_point, static_cast<uint8_t*>(y));
    return;
  }
  const Q8SoftmaxParams p{table.data(), std::floor(1.0f / y_scale), y_zero_point};
  const Q8SoftmaxUkernel fn = ukernel_->fn;
  const int64_t len = len_, inner = inner_;
  const auto* xb = static_cast<const uint8_t*>(x);
  auto* yb = static_cast<uint8_t*>(y);
  for_each_unit(pool, outer_, len, inner, [&](int64_t o, int64_t c0, int64_t columns) {
    const int64_t off = o * len * inner + c0;
    fn(size_t(len), size_t(columns), size_t(inner), xb + off, yb + off, p);
  });
}

}  // namespace octet::kernels
