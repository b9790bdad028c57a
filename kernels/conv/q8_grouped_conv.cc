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
                             const int32_t* bias, const Requantization& rq, Q8 y_type, Isa isa,
                             PackedCache* cache)
    : s_(s) {
  const size_t w_per_group = start(x_type, y_type);
  if (rq.multiplier.size() != 1 && rq.multiplier.size() != size_t(s.out_c))
    throw std::invalid_argument("Q8GroupedConv: " + std::to_string(rq.multiplier.size()) +
                                " requantization multipliers for " + std::to_string(s.out_c) + " output channels");
  const Conv2dShape g = one_group(s);
  for (int k = 0; k < s.groups; ++k) {
    Requantization part = rq;
    if (rq.multiplier.size() > 1) part.multiplier = rq.multiplier.subspan(size_t(k) * group_out_c_, group_out_c_);
    groups_.push_back(std::make_unique<Q8Conv>(g, x_type, x_zero_point, w + size_t(k) * w_per_group,
                                               bias ? bias + size_t(k) * group_out_c_ : nullptr, part, y_type, isa,
                                               cache));
  }
  finish(1);
}

Q8GroupedConv::Q8GroupedConv(const Conv2dShape& s, Q8 x_type, const int8_t* w, const DequantizedOutput& out, Isa isa,
                             PackedCache* cache)
    : s_(s) {
  const size_t w_per_group = start(x_type, x_type);
  const Conv2dShape g = one_group(s);
  // A group's slice of per-channel values (a single value is every group's).
  auto slice = [&](const std::vector<float>& v, size_t k) {
    if (v.size() <= 1) return v;
    return std::vector<float>(v.begin() + std::ptrdiff_t(k * group_out_c_),
                              v.begin() + std::ptrdiff_t((k + 1) * group_out_c_));
  };
  for (int k = 0; k < s.groups; ++k) {
    DequantizedOutput part{slice(out.w_scale, size_t(k)), slice(out.bias, size_t(k)), out.lo, out.hi, out.act};
    groups_.push_back(std::make_unique<Q8Conv>(g, x_type, w + size_t(k) * w_per_group, std::move(part), isa, cache));
  }
  finish(sizeof(float));
}

size_t Q8GroupedConv::start(Q8 x_type, Q8 y_type) {
  if (!supports(s_, x_type, y_type))
    throw Unsupported("Q8GroupedConv: needs groups > 1 that divide " + std::to_string(s_.in_c) + " input and " +
                      std::to_string(s_.out_c) + " output channels, got " + std::to_string(s_.groups));
  group_in_c_ = size_t(s_.in_c / s_.groups);
  group_out_c_ = size_t(s_.out_c / s_.groups);
  return group_out_c_ * group_in_c_ * size_t(s_.kernel_d) * size_t(s_.kernel_h) * size_t(s_.kernel_w);
}

void Q8GroupedConv::finish(size_t y_bytes) {
  x_group_.resize(size_t(s_.batch) * s_.in_d * s_.in_h * s_.in_w * group_in_c_);
  y_group_.resize(size_t(s_.batch) * s_.out_d * s_.out_h * s_.out_w * group_out_c_ * y_bytes);
  for (auto& conv : groups_) conv->bind(x_group_.data());
  name_ = groups_.front()->kernel_id() + " (" + std::to_string(s_.groups) + " groups)";
}

void Q8GroupedConv::bind(const void*) {}

template <class RunGroup>
void Q8GroupedConv::run_groups(const void* x, void* y, size_t y_bytes, const RunGroup& run_group) const {
  const size_t in_pixels = size_t(s_.batch) * s_.in_d * s_.in_h * s_.in_w;
  const size_t out_pixels = size_t(s_.batch) * s_.out_d * s_.out_h * s_.out_w;
  const size_t in_c = size_t(s_.in_c), out_c = size_t(s_.out_c), row = group_out_c_ * y_bytes;
  for (size_t k = 0; k < groups_.size(); ++k) {
    copy_rows(in_pixels, group_in_c_, static_cast<const uint8_t*>(x) + k * group_in_c_, in_c, x_group_.data(),
              group_in_c_);
    run_group(*groups_[k], x_group_.data(), y_group_.data());
    copy_rows(out_pixels, row, y_group_.data(), row, static_cast<uint8_t*>(y) + k * row, out_c * y_bytes);
  }
}

void Q8GroupedConv::run(const void* x, void* y, pthreadpool_t pool) const {
  run_groups(x, y, 1, [&](Q8Conv& conv, const void* xg, void* yg) { conv.run(xg, yg, pool); });
}

void Q8GroupedConv::run_dequantized(const void* x, float x_scale, int32_t x_zero_point, float* y, pthreadpool_t pool,
                                    OutputRange* range) {
  run_groups(x, y, sizeof(float), [&](Q8Conv& conv, const void* xg, void* yg) {
    conv.run_dequantized(xg, x_scale, x_zero_point, static_cast<float*>(yg), pool, range);
  });
}

}  // namespace octet::kernels
