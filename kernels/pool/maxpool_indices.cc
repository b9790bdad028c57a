#include "kernels/pool/maxpool_indices.h"

#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

namespace octet::kernels {
namespace {

bool valid(const Pool2dShape& s) {
  return s.batch >= 1 && s.channels >= 1 && s.in_h >= 1 && s.in_w >= 1 && s.in_d >= 1 && s.out_h >= 1 && s.out_w >= 1 &&
         s.out_d >= 1 && s.kernel_h >= 1 && s.kernel_w >= 1 && s.kernel_d >= 1;
}

}  // namespace

F32MaxPoolIndices::F32MaxPoolIndices(const Pool2dShape& s, int spatial_rank, bool column_major, Isa isa)
    : s_(s), ukernel_(first_runnable(kF32MaxPoolArgmaxUkernels, isa)), windows_(s, std::numeric_limits<float>::lowest()) {
  if (!ukernel_) throw Unsupported("no max-pool-with-positions microkernel at this level");
  if (!valid(s)) throw Unsupported("an empty pooling shape");
  build_offsets(spatial_rank, column_major);
}

F32MaxPoolIndices::F32MaxPoolIndices(const Pool2dShape& s, int spatial_rank, bool column_major,
                                     const PoolUkernel<F32PoolUkernel>& ukernel)
    : s_(s), ukernel_(&ukernel), windows_(s, std::numeric_limits<float>::lowest()) {
  if (!isa_supported(ukernel.isa))
    throw std::invalid_argument(std::string("F32MaxPoolIndices: kernel ") + ukernel.name + " needs " +
                                isa_name(ukernel.isa) + ", which this CPU does not support");
  if (!valid(s)) throw std::invalid_argument("F32MaxPoolIndices: every size must be >= 1");
  build_offsets(spatial_rank, column_major);
}

void F32MaxPoolIndices::build_offsets(int spatial_rank, bool column_major) {
  const Pool2dShape& s = s_;
  auto offset = [&](int64_t d, int64_t h, int64_t w) {
    return column_major ? d + h * s.in_d + w * s.in_d * s.in_h : (d * s.in_h + h) * s.in_w + w;
  };
  const size_t taps = size_t(s.kernel_d) * s.kernel_h * s.kernel_w;
  offsets_.clear();
  offsets_.reserve(size_t(s.out_d) * s.out_h * s.out_w * (taps + 1));
  for (int oz = 0; oz < s.out_d; ++oz)
    for (int oy = 0; oy < s.out_h; ++oy)
      for (int ox = 0; ox < s.out_w; ++ox) {
        offsets_.push_back(offset(spatial_rank == 3 ? -1 : 0, spatial_rank >= 2 ? -1 : 0, -1));
        for (int kz = 0; kz < s.kernel_d; ++kz)
          for (int ky = 0; ky < s.kernel_h; ++ky)
            for (int kx = 0; kx < s.kernel_w; ++kx)
              offsets_.push_back(offset(oz * s.stride_d - s.pad_front + kz * s.dilation_d,
                                        oy * s.stride_h - s.pad_top + ky * s.dilation_h,
                                        ox * s.stride_w - s.pad_left + kx * s.dilation_w));
      }
}

void F32MaxPoolIndices::bind(const float* x) { windows_.bind(x, true); }

void F32MaxPoolIndices::run(const float* x, float* y, int64_t* indices, pthreadpool_t pool) const {
  windows_.check_bound(x, "F32MaxPoolIndices");
  const size_t C = size_t(s_.channels);
  // The positions go, as floats, into the first half of each pixel's int64 indices, which the
  // conversion below then fills from the last channel down (it reads float c before writing the
  // int64 that covers floats 2c and 2c + 1).
  const ArgmaxPoolOutput out{y, reinterpret_cast<float*>(indices), 2 * C};
  windows_.run(ukernel_->fn, y, pool, &out);
  const size_t pixels = size_t(s_.out_d) * s_.out_h * s_.out_w, taps = size_t(s_.kernel_d) * s_.kernel_h * s_.kernel_w;
  const int64_t plane = int64_t(s_.in_d) * s_.in_h * s_.in_w;
  auto* bytes = reinterpret_cast<unsigned char*>(indices);
  for (size_t n = 0; n < size_t(s_.batch); ++n)
    for (size_t q = 0; q < pixels; ++q) {
      unsigned char* row = bytes + (n * pixels + q) * C * sizeof(int64_t);
      const int64_t* offset = offsets_.data() + q * (taps + 1);
      for (size_t c = C; c-- > 0;) {
        float t;
        std::memcpy(&t, row + c * sizeof(float), sizeof t);
        const int64_t index = int64_t(n * C + c) * plane + offset[static_cast<long>(t) + 1];
        std::memcpy(row + c * sizeof(int64_t), &index, sizeof index);
      }
    }
}

}  // namespace octet::kernels
