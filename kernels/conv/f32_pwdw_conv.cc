#include "kernels/conv/f32_pwdw_conv.h"

#include <algorithm>
#include <stdexcept>

#include "kernels/fallback.h"
#include "kernels/packed_cache.h"

namespace octet::kernels {
namespace {

// Input rows that output rows [o, o + band) read: (band - 1) strides plus one kernel extent.
int rows_for_band(const Conv2dShape& s, int band) {
  return (band - 1) * s.stride_h + (s.kernel_h - 1) * s.dilation_h + 1;
}

}  // namespace

struct F32PointwiseDwConv::Task {
  const F32PointwiseDwConv* conv;
  const float* x;
  float* y;
  size_t items, parts;  // items = images * parts; part p of an image: the p-th slice of its output rows
};

F32PointwiseDwConv::Rings F32PointwiseDwConv::rings_for(const Conv2dShape& dw, const PwDwRingLimits& limits) {
  const size_t row_bytes = static_cast<size_t>(dw.in_w) * dw.in_c * sizeof(float);
  const int fit = static_cast<int>(std::max<size_t>(1, limits.ring_bytes / row_bytes));
  Rings r{1, 0, false};
  while (r.band < dw.out_h && rows_for_band(dw, r.band + 1) <= fit) ++r.band;
  // Rows past the image are never computed, so a ring longer than the image is no use.
  r.rows = std::min(rows_for_band(dw, r.band), dw.in_h);
  // A whole image as the ring: the depthwise conv then runs as usual on it, keeping its own
  // choices (the padded copy of small maps).
  r.whole_image = r.rows == dw.in_h || row_bytes * dw.in_h <= limits.whole_image_bytes;
  if (r.whole_image) {
    r.band = dw.out_h;
    r.rows = dw.in_h;
  }
  return r;
}

// Each ring rounded up to 16 floats, so every ring starts on a cache line.
size_t F32PointwiseDwConv::scratch_floats(const Conv2dShape& dw, size_t threads, const PwDwRingLimits& limits) {
  const size_t ring = static_cast<size_t>(rings_for(dw, limits).rows) * dw.in_w * dw.in_c;
  return (ring + 15) / 16 * 16 * std::max<size_t>(1, threads);
}

F32PointwiseDwConv::F32PointwiseDwConv(const Conv2dShape& dw, int in_c, const float* pw_weights,
                                       const float* pw_bias, const Activation& pw_act, const float* dw_weights,
                                       const float* dw_bias, const Activation& dw_act, Isa isa, size_t threads,
                                       const PwDwRingLimits& limits, float* scratch, PackedCache* cache,
                                       const PwDwKernels& forced)
    : s_(dw), batch_(dw.batch), in_c_(in_c) {
  if (!is_depthwise(dw) || in_c < 1) {
    throw Unsupported("F32PointwiseDwConv: expected a depthwise conv after a 1x1 conv with in_c >= 1");
  }
  s_.batch = 1;
  lanes_.resize(std::max<size_t>(1, threads));
  // Every lane reads the same packed depthwise weights: one packing, through a cache of this
  // constructor's own when none is given.
  PackedCache lanes_cache;
  PackedCache* dw_cache = cache != nullptr ? cache : &lanes_cache;
  for (Lane& lane : lanes_) {
    lane.dw = forced.dw != nullptr ? std::make_unique<F32DwConv>(s_, dw_weights, dw_bias, dw_act, *forced.dw, dw_cache)
                                   : std::make_unique<F32DwConv>(s_, dw_weights, dw_bias, dw_act, isa, dw_cache);
  }
  rings_ = rings_for(s_, limits);
  // The microkernel for the rows one GEMM call computes (choose_... throws
  // std::invalid_argument when none runs): the whole image, or in a ring the rows each band
  // adds. Chosen for the whole image instead, Xception's 728->728 at 28x28 (ring bands of two
  // rows, 56 pixels) took f32_gemm_12x16, which pads 56 rows to 60 (28 to 36 where the ring
  // wraps): 9.7 ms in the pair against 8.1 on 7x48 (Zen 4, bench/dispatch_check).
  const int64_t call_rows = rings_.whole_image ? s_.in_h : std::min(rings_.band * s_.stride_h, rings_.rows);
  const int64_t call_pixels = call_rows * s_.in_w;
  pw_ = std::make_unique<F32Gemm>(
      in_c, s_.in_c, pw_weights, /*trans_b=*/true, pw_bias, pw_act,
      forced.pw != nullptr ? *forced.pw : choose_f32_gemm_kernel(isa, call_pixels, s_.in_c, in_c), cache);

  if (scratch == nullptr) {
    own_scratch_ = aligned_zeroed_floats(scratch_floats(s_, lanes_.size(), limits));
    scratch = own_scratch_.get();
  }
  const size_t ring_floats = scratch_floats(s_, 1, limits);
  for (size_t i = 0; i < lanes_.size(); ++i) {
    Lane& lane = lanes_[i];
    lane.ring = scratch + i * ring_floats;
    if (rings_.whole_image) {
      lane.dw->bind(lane.ring);
    } else {
      lane.dw->bind_ring(lane.ring, rings_.rows);
    }
  }
  name_ = "pwdw(" + pw_->kernel_id() + ", " + lanes_[0].dw->kernel_id() + ")";
}

void F32PointwiseDwConv::run_rows(const Lane& lane, const float* x, float* y, int n, int first, int end,
                                  pthreadpool_t pool) const {
  const size_t in_row = static_cast<size_t>(s_.in_w) * in_c_;
  const size_t ring_row = static_cast<size_t>(s_.in_w) * s_.in_c;
  const float* x_image = x + n * in_row * s_.in_h;
  float* y_image = y + static_cast<size_t>(n) * s_.out_h * s_.out_w * s_.out_c;
  if (rings_.whole_image) {
    pw_->run(static_cast<int64_t>(s_.in_h) * s_.in_w, x_image, lane.ring, pool);
    lane.dw->run(lane.ring, y_image, pool);
    return;
  }
  // Input rows [0, produced) are in the ring (or were, and no band reads them again).
  int produced = std::max(0, first * s_.stride_h - s_.pad_top);
  for (int band = first; band < end; band += rings_.band) {
    const int count = std::min(rings_.band, end - band);
    // The rows this band reads end before `need` and start at band * stride_h - pad_top, at
    // most ring_rows - 1 rows back: expanding up to `need` overwrites only slots of rows no
    // band reads again.
    const int last = (band + count - 1) * s_.stride_h - s_.pad_top + (s_.kernel_h - 1) * s_.dilation_h;
    const int need = std::min(s_.in_h, last + 1);
    while (produced < need) {
      const int slot = produced % rings_.rows;
      const int rows = std::min(need - produced, rings_.rows - slot);  // contiguous up to the ring's end
      pw_->run(static_cast<int64_t>(rows) * s_.in_w, x_image + produced * in_row, lane.ring + slot * ring_row,
               pool);
      produced += rows;
    }
    lane.dw->run_rows(band, count, y_image, pool);
  }
}

void F32PointwiseDwConv::lane_task(void* context, size_t lane) {
  const Task& t = *static_cast<const Task*>(context);
  const F32PointwiseDwConv& c = *t.conv;
  const size_t lanes = c.lanes_.size();
  for (size_t item = lane; item < t.items; item += lanes) {
    const int n = static_cast<int>(item / t.parts), part = static_cast<int>(item % t.parts);
    const int first = static_cast<int>(static_cast<size_t>(c.s_.out_h) * part / t.parts);
    const int end = static_cast<int>(static_cast<size_t>(c.s_.out_h) * (part + 1) / t.parts);
    if (first < end) c.run_rows(c.lanes_[lane], t.x, t.y, n, first, end, nullptr);
  }
}

void F32PointwiseDwConv::run(const float* x, float* y, pthreadpool_t pool) const {
  const size_t threads = pool == nullptr ? 1 : std::min(lanes_.size(), pthreadpool_get_threads_count(pool));
  const size_t images = static_cast<size_t>(batch_);
  if (threads <= 1 || (rings_.whole_image && images < threads)) {
    // One lane; with whole images the two convs spread each image over the threads themselves.
    for (int n = 0; n < batch_; ++n) run_rows(lanes_[0], x, y, n, 0, s_.out_h, pool);
    return;
  }
  const size_t parts = images >= threads ? 1 : (threads + images - 1) / images;
  Task task{this, x, y, images * parts, parts};
  pthreadpool_parallelize_1d(pool, &F32PointwiseDwConv::lane_task, &task, std::min(threads, task.items), 0);
}

}  // namespace octet::kernels
