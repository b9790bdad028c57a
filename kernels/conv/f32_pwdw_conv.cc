#include "kernels/conv/f32_pwdw_conv.h"

#include <algorithm>
#include <stdexcept>

namespace octet::kernels {
namespace {

// Input rows that output rows [o, o + band) read: (band - 1) strides plus one kernel extent.
int rows_for_band(const Conv2dShape& s, int band) {
  return (band - 1) * s.stride_h + (s.kernel_h - 1) * s.dilation_h + 1;
}

}  // namespace

F32PointwiseDwConv::F32PointwiseDwConv(const Conv2dShape& dw, int in_c, const float* pw_weights,
                                       const float* pw_bias, const Activation& pw_act, const float* dw_weights,
                                       const float* dw_bias, const Activation& dw_act, Isa isa,
                                       size_t ring_budget_bytes)
    : s_(dw), batch_(dw.batch), in_c_(in_c) {
  if (!is_depthwise(dw) || in_c < 1) {
    throw std::invalid_argument("F32PointwiseDwConv: expected a depthwise conv after a 1x1 conv with in_c >= 1");
  }
  s_.batch = 1;
  dw_ = std::make_unique<F32DwConv>(s_, dw_weights, dw_bias, dw_act, isa);
  if (dw_->kernel() == nullptr) {
    throw std::invalid_argument("F32PointwiseDwConv: no depthwise microkernel runs under the ISA cap on this CPU");
  }
  // The microkernel the unfused 1x1 conv would choose for the whole image (choose_... throws
  // std::invalid_argument when none runs).
  const int64_t pixels = static_cast<int64_t>(s_.in_h) * s_.in_w;
  pw_ = std::make_unique<F32Gemm>(in_c, s_.in_c, pw_weights, /*trans_b=*/true, pw_bias, pw_act,
                                  choose_f32_gemm_kernel(isa, pixels, s_.in_c));

  const size_t row_bytes = static_cast<size_t>(s_.in_w) * s_.in_c * sizeof(float);
  const int fit = static_cast<int>(std::max<size_t>(1, ring_budget_bytes / row_bytes));
  band_ = 1;
  while (band_ < s_.out_h && rows_for_band(s_, band_ + 1) <= fit) ++band_;
  // Rows past the image are never computed, so a ring longer than the image is no use.
  ring_rows_ = std::min(rows_for_band(s_, band_), s_.in_h);
  ring_ = std::make_unique<float[]>(static_cast<size_t>(ring_rows_) * s_.in_w * s_.in_c);
  // When a whole image fits, the ring is that image: the depthwise conv then runs as usual on
  // it, keeping its own choices (the padded copy of small maps).
  whole_image_ = ring_rows_ == s_.in_h;
  if (whole_image_) {
    band_ = s_.out_h;
    dw_->bind(ring_.get());
  } else {
    dw_->bind_ring(ring_.get(), ring_rows_);
  }
  name_ = "pwdw(" + pw_->kernel_name() + ", " + dw_->kernel_name() + ")";
}

void F32PointwiseDwConv::run(const float* x, float* y, pthreadpool_t pool) const {
  const size_t in_row = static_cast<size_t>(s_.in_w) * in_c_;
  const size_t ring_row = static_cast<size_t>(s_.in_w) * s_.in_c;
  const size_t in_image = in_row * s_.in_h;
  const size_t out_image = static_cast<size_t>(s_.out_h) * s_.out_w * s_.out_c;
  for (int n = 0; n < batch_; ++n) {
    const float* x_image = x + n * in_image;
    float* y_image = y + n * out_image;
    if (whole_image_) {
      pw_->run(static_cast<int64_t>(s_.in_h) * s_.in_w, x_image, ring_.get(), pool);
      dw_->run(ring_.get(), y_image, pool);
      continue;
    }
    int produced = 0;  // input rows [0, produced) of this image have been expanded
    for (int first = 0; first < s_.out_h; first += band_) {
      const int count = std::min(band_, s_.out_h - first);
      // Input rows this band reads end before `need`; the rows it reads start at
      // first * stride_h - pad_top, at most ring_rows - 1 rows back, so expanding up to
      // `need` overwrites only slots of rows no band reads again.
      const int last = (first + count - 1) * s_.stride_h - s_.pad_top + (s_.kernel_h - 1) * s_.dilation_h;
      const int need = std::min(s_.in_h, last + 1);
      while (produced < need) {
        const int slot = produced % ring_rows_;
        const int rows = std::min(need - produced, ring_rows_ - slot);  // contiguous up to the ring's end
        pw_->run(static_cast<int64_t>(rows) * s_.in_w, x_image + produced * in_row, ring_.get() + slot * ring_row,
                 pool);
        produced += rows;
      }
      dw_->run_rows(first, count, y_image, pool);
    }
  }
}

}  // namespace octet::kernels
