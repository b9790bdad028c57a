#include "kernels/resize/resize.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <span>
#include <stdexcept>

#include "kernels/fallback.h"

namespace octet::kernels {
namespace {

size_t bytes_of(ResizeElement e) { return e == ResizeElement::f32 ? sizeof(float) : 1; }

std::span<const ResizeUkernel> list_of(ResizeElement e) {
  switch (e) {
    case ResizeElement::u8:
      return kQu8ResizeLinearUkernels;
    case ResizeElement::s8:
      return kQs8ResizeLinearUkernels;
    case ResizeElement::f32:
      break;
  }
  return kF32ResizeLinearUkernels;
}

void check_shape(const Resize2dShape& s) {
  if (s.batch < 1 || s.in_h < 1 || s.in_w < 1 || s.out_h < 1 || s.out_w < 1 || s.channels < 1)
    throw std::invalid_argument("Resize2d: every extent must be >= 1");
  // Column offsets (pixel * channels) are int32 in the microkernels' arguments.
  if (int64_t(s.in_w) * s.channels > std::numeric_limits<int32_t>::max())
    throw Unsupported("Resize2d: an input row of more than 2^31 elements");
}

}  // namespace

Resize2d::Resize2d(const Resize2dShape& s, const Resize2dParams& p, ResizeElement e, Isa isa)
    : s_(s), p_(p), element_(e), element_bytes_(bytes_of(e)) {
  check_shape(s);
  if (p.mode == ResizeMode::cubic && e != ResizeElement::f32)
    throw Unsupported("Resize2d: cubic resize of 8-bit data (ONNX Runtime runs it in float only)");
  if (p.mode == ResizeMode::linear) ukernel_ = first_runnable(list_of(e), isa);
  if (p.mode == ResizeMode::cubic) cubic_ukernel_ = first_runnable(kF32ResizeCubicUkernels, isa);
  setup();
}

Resize2d::Resize2d(const Resize2dShape& s, const Resize2dParams& p, const ResizeCubicEntry& ukernel)
    : s_(s), p_(p), element_(ResizeElement::f32), element_bytes_(sizeof(float)), cubic_ukernel_(&ukernel) {
  check_shape(s);
  if (p.mode != ResizeMode::cubic) throw std::invalid_argument("Resize2d: a cubic microkernel for a non-cubic resize");
  if (!isa_supported(ukernel.isa))
    throw std::invalid_argument(std::string("Resize2d: kernel ") + ukernel.name + " needs " + isa_name(ukernel.isa) +
                                ", which this CPU does not support");
  setup();
}

Resize2d::Resize2d(const Resize2dShape& s, const Resize2dParams& p, ResizeElement e, const ResizeUkernel& ukernel)
    : s_(s), p_(p), element_(e), element_bytes_(bytes_of(e)), ukernel_(&ukernel) {
  check_shape(s);
  if (p.mode != ResizeMode::linear) throw std::invalid_argument("Resize2d: microkernels are for linear resizes");
  if (!isa_supported(ukernel.isa))
    throw std::invalid_argument(std::string("Resize2d: kernel ") + ukernel.name + " needs " + isa_name(ukernel.isa) +
                                ", which this CPU does not support");
  setup();
}

void Resize2d::setup() {
  const ResizeAxis h{s_.in_h, s_.out_h, p_.scale_h, p_.roi_h[0], p_.roi_h[1]};
  const ResizeAxis w{s_.in_w, s_.out_w, p_.scale_w, p_.roi_w[0], p_.roi_w[1]};
  switch (element_) {
    case ResizeElement::f32: {
      const float v = extrapolated<float>(p_.extrapolation_value);
      std::memcpy(fill_, &v, sizeof v);
      break;
    }
    case ResizeElement::u8: {
      const uint8_t v = extrapolated<uint8_t>(p_.extrapolation_value);
      std::memcpy(fill_, &v, 1);
      break;
    }
    case ResizeElement::s8: {
      const int8_t v = extrapolated<int8_t>(p_.extrapolation_value);
      std::memcpy(fill_, &v, 1);
      break;
    }
  }
  if (p_.mode == ResizeMode::cubic) {
    row_cubic_ = cubic_taps(h, p_.transform, p_.cubic_coeff_a, p_.exclude_outside);
    col_cubic_ = cubic_taps(w, p_.transform, p_.cubic_coeff_a, p_.exclude_outside);
    for (size_t k = 0; k < col_cubic_.index.size(); ++k) {
      cubic_offsets_.push_back(col_cubic_.index[k] * s_.channels);
      cubic_wx_.push_back(col_cubic_.coeff[k] / col_cubic_.sum[k / 4]);
    }
    return;
  }
  if (p_.mode == ResizeMode::nearest) {
    rows_ = nearest_source_indices(h, p_.transform, p_.rounding);
    cols_ = nearest_source_indices(w, p_.transform, p_.rounding);
    for (int oy = 0; oy < s_.out_h; ++oy)
      if (oy == 0 || rows_[oy] != rows_[oy - 1]) run_starts_.push_back(oy);
    run_starts_.push_back(s_.out_h);
    return;
  }
  row_taps_ = linear_taps(h, p_.transform);
  col_taps_ = linear_taps(w, p_.transform);
  for (int ox = 0; ox < s_.out_w; ++ox) {
    col_offsets0_.push_back(col_taps_.i0[ox] * s_.channels);
    col_offsets1_.push_back(col_taps_.i1[ox] * s_.channels);
  }
}

KernelId Resize2d::kernel_id() const {
  if (p_.mode == ResizeMode::nearest) return portable_kernel("resize_nearest_nhwc__copy");
  if (p_.mode == ResizeMode::cubic)
    return cubic_ukernel_ ? row_kernel(*cubic_ukernel_) : reference_kernel("resize_cubic_nhwc__ref");
  return ukernel_ ? row_kernel(*ukernel_) : reference_kernel("resize_linear_nhwc__ref");
}

// One task per image and run of output rows reading one input row: the first row is built
// pixel by pixel, the others are copies of it.
void Resize2d::nearest_task(void* context, size_t task) {
  const auto& call = *static_cast<const Call*>(context);
  const Resize2d& r = *call.self;
  const size_t runs = r.run_starts_.size() - 1;
  const size_t n = task / runs, run = task % runs;
  const size_t pixel = r.element_bytes_ * size_t(r.s_.channels);
  const size_t in_row = size_t(r.s_.in_w) * pixel, out_row = size_t(r.s_.out_w) * pixel;
  const int first = r.run_starts_[run], end = r.run_starts_[run + 1];
  const int32_t row = r.rows_[first];
  const auto* src = static_cast<const unsigned char*>(call.x) + (n * r.s_.in_h + size_t(std::max(row, 0))) * in_row;
  auto* dst = static_cast<unsigned char*>(call.y) + (n * r.s_.out_h + size_t(first)) * out_row;
  for (int ox = 0; ox < r.s_.out_w; ++ox) {
    if (row < 0 || r.cols_[ox] < 0) r.fill(dst + ox * pixel, size_t(r.s_.channels));
    else std::memcpy(dst + ox * pixel, src + size_t(r.cols_[ox]) * pixel, pixel);
  }
  for (int oy = first + 1; oy < end; ++oy) std::memcpy(dst + size_t(oy - first) * out_row, dst, out_row);
}

void Resize2d::fill(unsigned char* p, size_t elements) const {
  for (size_t i = 0; i < elements; ++i) std::memcpy(p + i * element_bytes_, fill_, element_bytes_);
}

bool Resize2d::extrapolate_row(size_t task, void* y, const std::vector<uint8_t>& rows_outside,
                               const std::vector<uint8_t>& cols_outside) const {
  if (rows_outside.empty()) return false;
  const size_t pixel = size_t(s_.channels) * element_bytes_;
  auto* row = static_cast<unsigned char*>(y) + task * size_t(s_.out_w) * pixel;
  if (rows_outside[task % size_t(s_.out_h)]) {
    fill(row, size_t(s_.out_w) * size_t(s_.channels));
    return true;
  }
  for (size_t ox = 0; ox < size_t(s_.out_w); ++ox)
    if (cols_outside[ox]) fill(row + ox * pixel, size_t(s_.channels));
  return false;
}

void Resize2d::cubic_task(void* context, size_t task) {
  const auto& call = *static_cast<const Call*>(context);
  const Resize2d& r = *call.self;
  const size_t n = task / size_t(r.s_.out_h), oy = task % size_t(r.s_.out_h);
  if (resize_outside(r.row_cubic_.outside, oy)) {
    r.extrapolate_row(task, call.y, r.row_cubic_.outside, r.col_cubic_.outside);
    return r.finish_row(call.y, task);
  }
  const size_t row_elems = size_t(r.s_.in_w) * size_t(r.s_.channels);
  const float* image = static_cast<const float*>(call.x) + n * size_t(r.s_.in_h) * row_elems;
  ResizeCubicRowArgs a;
  for (size_t i = 0; i < 4; ++i) {
    a.rows[i] = image + size_t(r.row_cubic_.index[4 * oy + i]) * row_elems;
    a.wy[i] = r.row_cubic_.coeff[4 * oy + i];
  }
  a.wy_sum = r.row_cubic_.sum[oy];
  a.x = r.cubic_offsets_.data();
  a.wx = r.cubic_wx_.data();
  a.pixels = size_t(r.s_.out_w);
  a.channels = size_t(r.s_.channels);
  a.y = static_cast<float*>(call.y) + task * size_t(r.s_.out_w) * a.channels;
  r.cubic_ukernel_->fn(a);
  r.extrapolate_row(task, call.y, r.row_cubic_.outside, r.col_cubic_.outside);
  r.finish_row(call.y, task);
}

void Resize2d::set_row_epilogue(const RowEpilogue& e) {
  if (element_ != ResizeElement::f32) throw std::invalid_argument("Resize2d: a row epilogue rewrites float rows only");
  epilogue_ = e;
}

void Resize2d::finish_row(void* y, size_t task) const {
  if (epilogue_.fn == nullptr) return;
  const size_t n = size_t(s_.out_w) * size_t(s_.channels);
  epilogue_.fn(epilogue_.ctx, static_cast<float*>(y) + task * n, n);
}

void Resize2d::epilogue_task(void* context, size_t task) {
  const auto& call = *static_cast<const Call*>(context);
  call.self->finish_row(call.y, task);
}

void Resize2d::linear_task(void* context, size_t task) {
  const auto& call = *static_cast<const Call*>(context);
  const Resize2d& r = *call.self;
  if (resize_outside(r.row_taps_.outside, task % size_t(r.s_.out_h))) {
    r.extrapolate_row(task, call.y, r.row_taps_.outside, r.col_taps_.outside);
    return r.finish_row(call.y, task);
  }
  const size_t n = task / size_t(r.s_.out_h), oy = task % size_t(r.s_.out_h);
  const size_t row_elems = size_t(r.s_.in_w) * size_t(r.s_.channels);
  const auto* image = static_cast<const unsigned char*>(call.x) + n * size_t(r.s_.in_h) * row_elems * r.element_bytes_;
  ResizeRowArgs a;
  a.top = image + size_t(r.row_taps_.i0[oy]) * row_elems * r.element_bytes_;
  a.bottom = image + size_t(r.row_taps_.i1[oy]) * row_elems * r.element_bytes_;
  a.x0 = r.col_offsets0_.data();
  a.x1 = r.col_offsets1_.data();
  a.w0 = r.col_taps_.w0.data();
  a.w1 = r.col_taps_.w1.data();
  a.wy0 = r.row_taps_.w0[oy];
  a.wy1 = r.row_taps_.w1[oy];
  a.pixels = size_t(r.s_.out_w);
  a.channels = size_t(r.s_.channels);
  a.y = static_cast<unsigned char*>(call.y) + task * size_t(r.s_.out_w) * a.channels * r.element_bytes_;
  r.ukernel_->fn(a);
  r.extrapolate_row(task, call.y, r.row_taps_.outside, r.col_taps_.outside);
  r.finish_row(call.y, task);
}

void Resize2d::run(const void* x, void* y, pthreadpool_t pool) const {
  Call call{this, x, y};
  const size_t rows = size_t(s_.batch) * size_t(s_.out_h);
  // The paths that write whole runs of rows: the epilogue once the output is complete.
  auto then_epilogue = [&] {
    if (epilogue_.fn != nullptr) pthreadpool_parallelize_1d(pool, &Resize2d::epilogue_task, &call, rows, 0);
  };
  if (p_.mode == ResizeMode::nearest) {
    pthreadpool_parallelize_1d(pool, &Resize2d::nearest_task, &call,
                               size_t(s_.batch) * (run_starts_.size() - 1), 0);
    return then_epilogue();
  }
  if (p_.mode == ResizeMode::cubic) {
    if (cubic_ukernel_ != nullptr) return pthreadpool_parallelize_1d(pool, &Resize2d::cubic_task, &call, rows, 0);
    resize_cubic_nhwc__ref(s_, row_cubic_, col_cubic_, static_cast<const float*>(x), static_cast<float*>(y),
                           p_.extrapolation_value);
    return then_epilogue();
  }
  if (ukernel_ != nullptr) return pthreadpool_parallelize_1d(pool, &Resize2d::linear_task, &call, rows, 0);
  const float e = p_.extrapolation_value;
  switch (element_) {
    case ResizeElement::f32:
      resize_linear_nhwc__ref(s_, row_taps_, col_taps_, static_cast<const float*>(x), static_cast<float*>(y), e);
      return then_epilogue();
    case ResizeElement::u8:
      return resize_linear_nhwc__ref(s_, row_taps_, col_taps_, static_cast<const uint8_t*>(x),
                                     static_cast<uint8_t*>(y), e);
    case ResizeElement::s8:
      return resize_linear_nhwc__ref(s_, row_taps_, col_taps_, static_cast<const int8_t*>(x),
                                     static_cast<int8_t*>(y), e);
  }
}

}  // namespace octet::kernels
