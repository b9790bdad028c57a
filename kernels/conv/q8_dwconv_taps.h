#pragma once
// The tap pointers of a depthwise row call's first window, in the packed weights' tap order:
// tap[t] = rows[t / kernel_w] + (t % kernel_w) * tap_step; pixel p of the row reads tap[t] +
// p * pixel_step. The INT8 row kernels walk this flat list, so every kernel size (7x7, 1x7,
// 11x11, dilated) runs the same loop with no index arithmetic per tap.
#include <cstdint>
#include <vector>

#include "kernels/conv/dwconv_list.h"

namespace octet::kernels {

class Q8DwRowTaps {
 public:
  explicit Q8DwRowTaps(const Q8DwRowArgs& a) : count_(a.kernel_h * a.kernel_w) {
    if (count_ > kStack) heap_.resize(static_cast<size_t>(count_));
    const uint8_t** tap = count_ > kStack ? heap_.data() : stack_;
    for (int t = 0; t < count_; ++t) tap[t] = a.rows[t / a.kernel_w] + static_cast<size_t>(t % a.kernel_w) * a.tap_step;
    taps_ = tap;
  }
  Q8DwRowTaps(const Q8DwRowTaps&) = delete;
  Q8DwRowTaps& operator=(const Q8DwRowTaps&) = delete;

  const uint8_t* const* data() const { return taps_; }
  int size() const { return count_; }

 private:
  static constexpr int kStack = 256;  // up to 16x16 kernels without an allocation
  int count_;
  const uint8_t* stack_[kStack];
  std::vector<const uint8_t*> heap_;
  const uint8_t* const* taps_ = nullptr;
};

}  // namespace octet::kernels
