#pragma once
// Where a conv step writes its output when the plan made it a slice of a Concat's channels
// (OpContext::out_row_stride, engine/plan_views.cc): its pixels land `stride` elements apart.
// A driver that takes such a stride writes there itself (placed()); any other writes a dense
// buffer of the step's own (dense()), which then_place copies into place after it.
#include <pthreadpool.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/op_registry.h"
#include "kernels/elementwise/strided_copy.h"
#include "kernels/ref/conv2d.h"

namespace octet::ops {

class StridedOutput {
 public:
  // `pixels` rows of `channels` elements of `elem_size` bytes, at y with rows `stride` elements
  // apart (0: dense, channels).
  StridedOutput(size_t pixels, size_t channels, size_t elem_size, void* y, size_t stride)
      : pixels_(pixels), channels_(channels), elem_(elem_size), y_(y), stride_(stride == channels ? 0 : stride) {}
  // The output of a conv of shape s, as the plan placed it for step `c`.
  StridedOutput(const kernels::Conv2dShape& s, size_t elem_size, void* y, const OpContext& c)
      : StridedOutput(size_t(s.batch) * s.out_d * s.out_h * s.out_w, size_t(s.out_c), elem_size, y,
                      size_t(c.out_row_stride)) {}

  void* placed() const { return y_; }
  size_t stride() const { return stride_; }  // 0: dense
  void* dense() {
    if (stride_ == 0) return y_;
    if (!buffer_) buffer_ = std::make_shared<std::vector<std::byte>>(pixels_ * channels_ * elem_);
    return buffer_->data();
  }
  // k, then the dense buffer into place, when k wrote it.
  Kernel then_place(Kernel k, pthreadpool_t pool) const {
    if (!k || !buffer_) return k;
    const int64_t dims[2] = {int64_t(pixels_), int64_t(channels_)};
    const int64_t from[2] = {int64_t(channels_), 1}, to[2] = {int64_t(stride_), 1};
    auto copy = std::make_shared<const kernels::StridedCopy>(2, dims, from, to, int(elem_));
    return [k = std::move(k), copy, buffer = buffer_, y = y_, pool] {
      k();
      copy->run(buffer->data(), y, pool);
    };
  }

 private:
  size_t pixels_, channels_, elem_;
  void* y_;
  size_t stride_;
  std::shared_ptr<std::vector<std::byte>> buffer_;
};

}  // namespace octet::ops
