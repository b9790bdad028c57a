#include "kernels/sample/roi_align.h"

#include <limits>
#include <stdexcept>
#include <string>

namespace octet::kernels {
namespace {

// Samples per microkernel call: a bin with more goes in several chunks.
constexpr size_t kChunk = 64;

}  // namespace

struct F32RoiAlign::Call {
  const F32RoiAlign* self;
  const float* x;
  const float* rois;
  const int64_t* batch_indices;
  float* y;
};

void F32RoiAlign::check() const {
  if (s_.channels == 0) throw Unsupported("no channels");
  if (p_.out_h < 1 || p_.out_w < 1) throw std::invalid_argument("RoiAlign: output extents must be >= 1");
  if (s_.height == 0 || s_.width == 0) throw Unsupported("an empty map");
  if (double(s_.height) * double(s_.width) * double(s_.channels) > double(std::numeric_limits<int32_t>::max()))
    throw Unsupported("a map of more than 2^31 elements (the microkernels' offsets are int32)");
}

F32RoiAlign::F32RoiAlign(const RoiAlignParams& p, const RoiAlignShape& s, Isa isa) : p_(p), s_(s) {
  check();
  ukernel_ = first_runnable(p.mode == RoiAlignMode::max ? kF32RoiAlignMaxUkernels : kF32RoiAlignAvgUkernels, isa);
  if (!ukernel_) throw Unsupported("no RoiAlign microkernel at this level");
}

F32RoiAlign::F32RoiAlign(const RoiAlignParams& p, const RoiAlignShape& s, const RoiAlignUkernel& ukernel)
    : p_(p), s_(s), ukernel_(&ukernel) {
  check();
  if (!isa_supported(ukernel.isa))
    throw std::invalid_argument(std::string("F32RoiAlign: kernel ") + ukernel.name + " needs " + isa_name(ukernel.isa) +
                                ", which this CPU does not support");
}

void F32RoiAlign::roi_task(void* context, size_t r) {
  const Call& call = *static_cast<const Call*>(context);
  const RoiAlignParams& p = call.self->p_;
  const RoiAlignShape& s = call.self->s_;
  const size_t C = s.channels;
  const RoiGeometry g = roi_geometry(p, call.rois + 4 * r);
  const float* image = call.x + size_t(call.batch_indices[r]) * s.height * s.width * C;
  const int64_t samples = g.grid_h > 0 && g.grid_w > 0 ? g.grid_h * g.grid_w : 0;
  int32_t offsets[4 * kChunk];
  float weights[4 * kChunk];
  RoiAlignBinArgs a{image, offsets, weights, 0, C, nullptr, false, 0.0f};
  const float divisor = p.mode == RoiAlignMode::avg ? g.count : 0.0f;
  for (int64_t ph = 0; ph < p.out_h; ++ph) {
    for (int64_t pw = 0; pw < p.out_w; ++pw) {
      a.y = call.y + ((r * size_t(p.out_h) + size_t(ph)) * size_t(p.out_w) + size_t(pw)) * C;
      a.accumulate = false;
      size_t n = 0;
      int64_t done = 0;
      for (int64_t iy = 0; iy < g.grid_h; ++iy) {
        const SampleAxis ay = sample_axis(g.start_h, g.bin_h, ph, iy, g.grid_h, int64_t(s.height));
        for (int64_t ix = 0; ix < g.grid_w; ++ix) {
          const SampleAxis ax = sample_axis(g.start_w, g.bin_w, pw, ix, g.grid_w, int64_t(s.width));
          int32_t* o = offsets + 4 * n;
          float* w = weights + 4 * n;
          if (ay.outside || ax.outside) {
            o[0] = o[1] = o[2] = o[3] = 0;
            w[0] = w[1] = w[2] = w[3] = 0.0f;
          } else {
            const int32_t W = int32_t(s.width), Ci = int32_t(C);
            o[0] = (ay.lo * W + ax.lo) * Ci, o[1] = (ay.lo * W + ax.hi) * Ci;
            o[2] = (ay.hi * W + ax.lo) * Ci, o[3] = (ay.hi * W + ax.hi) * Ci;
            w[0] = ay.h * ax.h, w[1] = ay.h * ax.l, w[2] = ay.l * ax.h, w[3] = ay.l * ax.l;
          }
          ++done;
          if (++n == kChunk && done < samples) {
            a.samples = n;
            a.divisor = 0.0f;
            call.self->ukernel_->fn(a);
            a.accumulate = true;
            n = 0;
          }
        }
      }
      a.samples = n;
      a.divisor = divisor;
      call.self->ukernel_->fn(a);
    }
  }
}

void F32RoiAlign::run(const float* x, const float* rois, const int64_t* batch_indices, float* y,
                      pthreadpool_t pool) const {
  for (size_t r = 0; r < s_.rois; ++r) {
    const int64_t b = batch_indices[r];
    if (b < 0 || size_t(b) >= s_.batch)
      throw std::out_of_range("RoiAlign: batch index " + std::to_string(b) + " outside [0, " + std::to_string(s_.batch) + ")");
    roi_geometry(p_, rois + 4 * r);  // throws on a sampling grid too large to address
  }
  Call call{this, x, rois, batch_indices, y};
  if (pool == nullptr || s_.rois <= 1) {
    for (size_t r = 0; r < s_.rois; ++r) roi_task(&call, r);
  } else {
    pthreadpool_parallelize_1d(pool, &roi_task, &call, s_.rois, 0);
  }
}

}  // namespace octet::kernels
