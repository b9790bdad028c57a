#include "kernels/conv/q8_grouped_conv.h"

#include <cstring>

#include "kernels/fallback.h"

namespace octet::kernels {
namespace {

Conv2dShape one_group(Conv2dShape s) {
  s.in_c /= s.groups;
  s.out_c /= s.groups;
  s.groups = 1;
  return s;
}

// rows of `width` bytes, `from_stride` apart in `from`, `to_stride` apart in `to`.
void copy_rows(size_t rows, size_t width, const uint8_t* from, size_t from_stride, uint8_t* to, size_t to_stride) {
  for (size_t r = 0; r < rows; ++r) std::memcpy(to + r * to_stride, from + r * from_stride, width);
}

}  // namespace

bool Q8GroupedConv::supports(const Conv2dShape& s, Q8 x_type, Q8 y_type) {
  return s.groups > 1 && s.in_c % s.groups == 0 && s.out_c % s.groups == 0 &&
         Q8Conv::supports(one_group(s), x_type, y_type);
}

Q8GroupedConv::Q8GroupedConv(const Conv2dShape& s, Q8 x_type, int32_t x_zero_point, const int8_t* w,
                             const int32_t* bias, const Requantization& rq, Q8 y_type, Isa isa)
    : s_(s) {
  if (!supports(s, x_type, y_type))
    throw Unsupported("Q8GroupedConv: needs groups > 1 that divide " + std::to_string(s.in_c) + " input and " +
                      std::to_string(s.out_c) + " output channels, got " + std::to_string(s.groups));
  if (rq.multiplier.size() != 1 && rq.multiplier.size() != size_t(s.out_c))
    throw std::invalid_argument("Q8GroupedConv: " + std::to_string(rq.multiplier.size()) +
                                " requantization multipliers for " + std::to_string(s.out_c) + " output channels");
  const Conv2dShape g = one_group(s);
  group_in_c_ = size_t(g.in_c);
  group_out_c_ = size_t(g.out_c);
  const size_t w_per_group = group_out_c_ * group_in_c_ * size_t(s.kernel_h) * size_t(s.kernel_w);
  for (int k = 0; k < s.groups; ++k) {
    Requantization part = rq;
    if (rq.multiplier.size() > 1) part.multiplier = rq.multiplier.subspan(size_t(k) * group_out_c_, group_out_c_);
    groups_.push_back(std::make_unique<Q8Conv>(g, x_type, x_zero_point, w + size_t(k) * w_per_group,
                                               bias ? bias + size_t(k) * group_out_c_ : nullptr, part, y_type, isa));
    if (groups_.back()->kernel() == nullptr)
      throw Unsupported("Q8GroupedConv: no INT8 microkernel runs a group's conv under the ISA cap on this CPU");
  }
  x_group_.resize(size_t(s.batch) * s.in_h * s.in_w * group_in_c_);
  y_group_.resize(size_t(s.batch) * s.out_h * s.out_w * group_out_c_);
  for (auto& conv : groups_) conv->bind(x_group_.data());
  name_ = groups_.front()->kernel_name() + " (" + std::to_string(s.groups) + " groups)";
}

void Q8GroupedConv::bind(const void*) {}

void Q8GroupedConv::run(const void* x, void* y, pthreadpool_t pool) const {
  const size_t in_pixels = size_t(s_.batch) * s_.in_h * s_.in_w, out_pixels = size_t(s_.batch) * s_.out_h * s_.out_w;
  const size_t in_c = size_t(s_.in_c), out_c = size_t(s_.out_c);
  for (size_t k = 0; k < groups_.size(); ++k) {
    copy_rows(in_pixels, group_in_c_, static_cast<const uint8_t*>(x) + k * group_in_c_, in_c, x_group_.data(),
              group_in_c_);
    groups_[k]->run(x_group_.data(), y_group_.data(), pool);
    copy_rows(out_pixels, group_out_c_, y_group_.data(), group_out_c_, static_cast<uint8_t*>(y) + k * group_out_c_,
              out_c);
  }
}

}  // namespace octet::kernels
