#pragma once
// A depthwise conv with a channel multiplier m (groups == in_c, out_c == m * in_c: FastViT's
// downsampling convs, TF's depth_multiplier): output channel o reads input channel o / m (ONNX's
// group rule), so it is the depthwise conv of x with every channel repeated m times. The repeat
// goes to a buffer of out_c channels a pixel, then the depthwise driver of the precision runs over
// it (FP32, static and dynamic INT8: a repeat of bytes is exact). The grouped IGEMMs it replaces
// gave each group's m output columns a whole tile (FastViT-T8's 7x7 stride-2 convs at multiplier
// 2 ran 3 GMAC/s there in FP32, 1-5 GFLOP/s in INT8).
#include <pthreadpool.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "engine/op_registry.h"
#include "kernels/elementwise/parallel_pieces.h"
#include "kernels/ref/conv2d.h"

namespace octet::ops {

// s as the depthwise conv over its input's channels repeated; nullopt when s has no multiplier.
inline std::optional<kernels::Conv2dShape> repeated_depthwise_shape(const kernels::Conv2dShape& s) {
  if (s.has_depth() || s.groups <= 1 || s.groups != s.in_c || s.out_c <= s.in_c || s.out_c % s.in_c != 0)
    return std::nullopt;
  kernels::Conv2dShape repeated = s;
  repeated.in_c = repeated.groups = s.out_c;
  return repeated;
}

// The buffer of x's channels repeated, for the conv of shape s (repeated_depthwise_shape(s) set).
template <class T>
class RepeatedChannels {
 public:
  explicit RepeatedChannels(const kernels::Conv2dShape& s)
      : pixels_(size_t(s.batch) * size_t(s.in_h) * size_t(s.in_w)),
        channels_(size_t(s.in_c)),
        m_(size_t(s.out_c / s.in_c)),
        buffer_(std::make_shared<std::vector<T>>(pixels_ * channels_ * m_)) {}

  const T* data() const { return buffer_->data(); }

  // Repeats x's channels into the buffer.
  void fill(pthreadpool_t pool, const T* x) const {
    T* to = buffer_->data();
    const size_t channels = channels_, m = m_;
    kernels::parallel_pieces(pool, pixels_, std::max<size_t>(1, kernels::kEltwiseMinPiece / (channels * m)),
                             [&](size_t first, size_t count) {
                               const T* from = x + first * channels;
                               T* dst = to + first * channels * m;
                               const size_t n = count * channels;
                               if (m == 2) {  // a loop the compiler vectorizes (unpacks)
                                 for (size_t i = 0; i < n; ++i) dst[2 * i] = dst[2 * i + 1] = from[i];
                               } else {
                                 for (size_t i = 0; i < n; ++i) std::fill_n(dst + i * m, m, from[i]);
                               }
                             });
  }

  // A kernel that repeats x's channels into the buffer, then runs `conv` (which reads it).
  Kernel then(pthreadpool_t pool, const T* x, Kernel conv) const {
    return [self = *this, pool, x, conv = std::move(conv)] {
      self.fill(pool, x);
      conv();
    };
  }

 private:
  size_t pixels_, channels_, m_;
  std::shared_ptr<std::vector<T>> buffer_;
};

}  // namespace octet::ops
