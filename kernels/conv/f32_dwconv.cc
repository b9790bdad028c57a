#include "kernels/conv/f32_dwconv.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "kernels/cache_budgets.h"
#include "kernels/conv/dwconv_indirection.h"
#include "kernels/fallback.h"
#include "kernels/packed_cache.h"

namespace octet::kernels {
namespace {

constexpr double kPadCopyFactor = 3.0;

struct F32DwRowTask {
  const F32DwConv* conv;
  float* y;
  const F32DwConv::RowHook* after_row;
  size_t first_row = 0;
};

// Output rows [first_row, first_row + rows) of those bind() indexed (all images' rows, or one
// padded image's), a slice of channels at a time.
struct F32DwSliceTask {
  const F32DwConv* conv;
  float* y;
  size_t first_row, rows, parts;
};

struct PadCopyTask {
  const float* x;  // one image
  float* padded;
  size_t row_floats, padded_row_floats, left_floats;
};

// Whether copying each image into a horizontally padded buffer costs less than running the
// border pixels through the indirect microkernel. Per channel: a border tap costs about 1.5
// cycles per vector more than a tap on the row kernel (0.2 a channel); copying an element
// costs about 0.25 cycles (L2 to L2). Measured on Zen 1: pays at 7x7 and 14x14 with 5x5
// kernels, not at 56x56 with 3x3.
bool pad_copy_pays(const Conv2dShape& s, const DwColumns& cols) {
  const double border_taps = double(cols.border()) * s.out_h * s.kernel_h * s.kernel_w;
  const double copied = double(s.in_h) * s.in_w;
  return cols.border() > 0 && border_taps > kPadCopyFactor * copied;
}

}  // namespace

const F32DwConvKernel* choose_f32_dwconv_kernel(Isa isa) {
  return first_runnable(kF32DwConvKernels, isa);
}

bool F32DwConv::supports(const Conv2dShape& s, const Activation& act) {
  (void)act;  // relu / clip are the microkernels' clamp, the rest the per-row epilogue
  return is_depthwise(s);
}

F32DwConv::F32DwConv(const Conv2dShape& s, const float* weights, const float* bias, const Activation& act,
                     Isa isa, PackedCache* cache)
    : s_(s), act_(act), kernel_(choose_f32_dwconv_kernel(isa)) {
  init(weights, bias, cache);
}

F32DwConv::F32DwConv(const Conv2dShape& s, const float* weights, const float* bias, const Activation& act,
                     const F32DwConvKernel& kernel, PackedCache* cache)
    : s_(s), act_(act), kernel_(&kernel) {
  if (!isa_supported(kernel.isa)) {
    throw std::invalid_argument(std::string("F32DwConv: kernel ") + kernel.name + " needs " +
                                isa_name(kernel.isa) + ", which this CPU does not support");
  }
  init(weights, bias, cache);
}

void F32DwConv::init(const float* weights, const float* bias, PackedCache* cache) {
  if (!supports(s_, act_)) {
    throw Unsupported(
        "F32DwConv: expected a depthwise conv (groups == in_c == out_c, positive sizes) with no "
        "activation, ReLU or Clip; got groups " + std::to_string(s_.groups) + ", in_c " +
        std::to_string(s_.in_c) + ", out_c " + std::to_string(s_.out_c));
  }
  const size_t C = static_cast<size_t>(s_.in_c);
  const size_t taps = static_cast<size_t>(s_.kernel_h) * s_.kernel_w;
  min_ = -std::numeric_limits<float>::infinity();
  max_ = std::numeric_limits<float>::infinity();
  if (act_.kind == ActKind::relu) min_ = 0.0f;
  if (act_.kind == ActKind::clip) {
    min_ = act_.min;
    max_ = act_.max;
  }
  if (kernel_ == nullptr) throw Unsupported("F32DwConv: no depthwise microkernel runs under the ISA cap on this CPU");
  epilogue_ = F32Epilogue(act_, kernel_->isa);
  name_ = row_kernel(*kernel_);
  if (epilogue_.active()) name_ = name_ + "+" + epilogue_.kernel_id();
  const size_t tile = static_cast<size_t>(kernel_->channel_tile);
  const size_t blocks = (C + tile - 1) / tile;
  packed_ = shared_packing<std::vector<float>>(
      cache,
      PackKey("f32_dwconv").add(int64_t(tile)).add(int64_t(C)).add(int64_t(taps)).add_array(weights, C * taps).add_array(bias, C),
      [&] {
        std::vector<float> packed(blocks * (taps + 1) * tile, 0.0f);
        for (size_t c = 0; c < C; ++c) {
          float* block = packed.data() + (c / tile) * (taps + 1) * tile + c % tile;
          block[0] = bias ? bias[c] : 0.0f;
          for (size_t t = 0; t < taps; ++t) block[(t + 1) * tile] = weights[c * taps + t];
        }
        return packed;
      });
  cols_ = dw_interior_columns(s_);
  pad_copy_ = pad_copy_pays(s_, cols_);
  if (pad_copy_) {
    const int right = std::max(0, (s_.out_w - 1) * s_.stride_w + (s_.kernel_w - 1) * s_.dilation_w - s_.pad_left -
                                      (s_.in_w - 1));
    padded_ = s_;
    padded_.batch = 1;
    padded_.in_w = s_.pad_left + s_.in_w + right;
    padded_.pad_left = 0;
    cols_ = dw_interior_columns(padded_);
    padded_x_ = aligned_zeroed_floats(static_cast<size_t>(padded_.in_h) * padded_.in_w * C);
  }
  const int row_w = pad_copy_ ? padded_.in_w : s_.in_w;
  pad_row_ = aligned_zeroed_floats(static_cast<size_t>(row_w) * C);
  slice_channels_ = fitting_slice(row_w, (static_cast<size_t>(s_.in_h) * row_w + static_cast<size_t>(s_.out_h) * s_.out_w) *
                                              C * sizeof(float));
}

size_t F32DwConv::fitting_slice(int row_w, size_t maps_bytes) const {
  const CacheBudgets& budgets = cache_budgets();
  if (maps_bytes > budgets.f32_dw_sliced_map) return 0;
  const size_t C = static_cast<size_t>(s_.in_c);
  const size_t tile = static_cast<size_t>(kernel_->channel_tile);
  const size_t row_bytes_per_channel = static_cast<size_t>(s_.kernel_h) * row_w * sizeof(float);
  const size_t fit = budgets.f32_dw_chunk / row_bytes_per_channel / tile * tile;
  return fit >= C ? 0 : std::max(tile, fit);
}

void F32DwConv::bind(const float* x) {
  bound_x_ = x;
  if (pad_copy_) {
    build_dw_indirection(padded_, cols_, padded_x_.get(), pad_row_.get(), row_ptrs_, border_taps_);
  } else {
    build_dw_indirection(s_, cols_, x, pad_row_.get(), row_ptrs_, border_taps_);
  }
}

void F32DwConv::bind_ring(const float* ring, int ring_rows) {
  if (s_.batch != 1 || ring_rows < 1 || ring == nullptr) {
    throw std::invalid_argument("F32DwConv::bind_ring: needs batch 1 and a ring of at least one row");
  }
  pad_copy_ = false;
  padded_x_.reset();
  cols_ = dw_interior_columns(s_);
  pad_row_ = aligned_zeroed_floats(static_cast<size_t>(s_.in_w) * s_.in_c);
  const size_t row = static_cast<size_t>(s_.in_w) * s_.in_c;
  const size_t out_row = static_cast<size_t>(s_.out_w) * s_.in_c;
  slice_channels_ = fitting_slice(s_.in_w, (static_cast<size_t>(std::min(ring_rows, s_.in_h)) * row +
                                             static_cast<size_t>(std::min(ring_rows, s_.out_h)) * out_row) * sizeof(float));
  build_dw_indirection_at(
      s_, cols_, [&](int, int iy) { return ring + static_cast<size_t>(iy % ring_rows) * row; }, pad_row_.get(),
      row_ptrs_, border_taps_);
  bound_x_ = ring;
}

void F32DwConv::run_rows(int first, int count, float* y, pthreadpool_t pool) const {
  if (first < 0 || count < 0 || first + count > s_.out_h || bound_x_ == nullptr || s_.batch != 1) {
    throw std::invalid_argument("F32DwConv::run_rows: rows out of range or no ring bound");
  }
  run_output_rows(static_cast<size_t>(first), static_cast<size_t>(count), y, pool, nullptr);
}

void F32DwConv::pad_copy_task(void* context, size_t row) {
  const PadCopyTask& t = *static_cast<const PadCopyTask*>(context);
  std::memcpy(t.padded + row * t.padded_row_floats + t.left_floats, t.x + row * t.row_floats,
              t.row_floats * sizeof(float));
}

void F32DwConv::run_image_padded(const float* x, float* y, pthreadpool_t pool, const RowHook* after_row) const {
  const size_t C = static_cast<size_t>(s_.in_c);
  const size_t image_in = static_cast<size_t>(s_.in_h) * s_.in_w * C;
  const size_t image_out = static_cast<size_t>(s_.out_h) * s_.out_w * C;
  for (int n = 0; n < s_.batch; ++n) {
    PadCopyTask copy{x + n * image_in, padded_x_.get(), static_cast<size_t>(s_.in_w) * C,
                     static_cast<size_t>(padded_.in_w) * C, static_cast<size_t>(s_.pad_left) * C};
    pthreadpool_parallelize_1d(pool, &F32DwConv::pad_copy_task, &copy, static_cast<size_t>(s_.in_h), 0);
    run_output_rows(0, static_cast<size_t>(s_.out_h), y + n * image_out, pool, after_row);
  }
}

void F32DwConv::row_task(void* context, size_t row) {
  const F32DwRowTask& task = *static_cast<const F32DwRowTask*>(context);
  task.conv->run_row(task.first_row + row, task.y, task.after_row);
}

void F32DwConv::run_row_slice(size_t row, size_t c0, size_t c1, float* y) const {
  const size_t C = static_cast<size_t>(s_.in_c);
  const int taps = s_.kernel_h * s_.kernel_w;
  const size_t tile = static_cast<size_t>(kernel_->channel_tile);
  const float* packed = packed_->data() + c0 / tile * (static_cast<size_t>(taps) + 1) * tile;
  const size_t n = c1 - c0;
  float* y_row = y + row * s_.out_w * C + c0;
  const float* const* border = border_taps_.data() + row * cols_.border() * taps;
  if (cols_.lo > 0) {
    kernel_->indirect({border, c0, static_cast<size_t>(cols_.lo), n, taps, packed, y_row, C, min_, max_});
  }
  if (cols_.hi > cols_.lo) {
    kernel_->row({row_ptrs_.data() + row * s_.kernel_h, c0, static_cast<size_t>(cols_.hi - cols_.lo), n,
                  static_cast<size_t>(s_.stride_w) * C, static_cast<size_t>(s_.dilation_w) * C, s_.kernel_h,
                  s_.kernel_w, packed, y_row + cols_.lo * C, C, min_, max_});
  }
  if (cols_.hi < s_.out_w) {
    kernel_->indirect({border + static_cast<size_t>(cols_.lo) * taps, c0, static_cast<size_t>(s_.out_w - cols_.hi), n,
                       taps, packed, y_row + cols_.hi * C, C, min_, max_});
  }
  epilogue_.run(static_cast<size_t>(s_.out_w), n, y_row, C);  // while the slice is in L1
}

void F32DwConv::run_row(size_t row, float* y, const RowHook* after_row) const {
  run_row_slice(row, 0, static_cast<size_t>(s_.in_c), y);
  if (after_row) {
    const size_t C = static_cast<size_t>(s_.in_c);
    after_row->fn(after_row->context, y + row * s_.out_w * C, s_.out_w * C);
  }
}

void F32DwConv::slice_task(void* context, size_t slice, size_t part) {
  const F32DwSliceTask& t = *static_cast<const F32DwSliceTask*>(context);
  const F32DwConv& c = *t.conv;
  const size_t C = static_cast<size_t>(c.s_.in_c);
  const size_t c0 = slice * c.slice_channels_, c1 = std::min(C, c0 + c.slice_channels_);
  const size_t first = t.first_row + t.rows * part / t.parts, end = t.first_row + t.rows * (part + 1) / t.parts;
  for (size_t row = first; row < end; ++row) c.run_row_slice(row, c0, c1, t.y);
}

void F32DwConv::run_output_rows(size_t first_row, size_t rows, float* y, pthreadpool_t pool,
                                const RowHook* after_row) const {
  if (slice_channels_ == 0 || after_row != nullptr) {
    F32DwRowTask task{this, y, after_row, first_row};
    pthreadpool_parallelize_1d(pool, &F32DwConv::row_task, &task, rows, 0);
    return;
  }
  const size_t C = static_cast<size_t>(s_.in_c);
  const size_t slices = (C + slice_channels_ - 1) / slice_channels_;
  const size_t threads = pool == nullptr ? 1 : pthreadpool_get_threads_count(pool);
  // Enough parts of the rows that every thread has work, each part a run of rows of one slice.
  const size_t parts = std::min(rows, std::max<size_t>(1, (2 * threads + slices - 1) / slices));
  F32DwSliceTask task{this, y, first_row, rows, parts};
  pthreadpool_parallelize_2d(pool, &F32DwConv::slice_task, &task, slices, parts, 0);
}

void F32DwConv::run(const float* x, float* y, pthreadpool_t pool, const RowHook* after_row) const {
  if (x != bound_x_ || x == nullptr) {
    throw std::invalid_argument("F32DwConv::run: the input is not the one bind() was given; call bind(x) first");
  }
  if (pad_copy_) return run_image_padded(x, y, pool, after_row);
  run_output_rows(0, static_cast<size_t>(s_.batch) * s_.out_h, y, pool, after_row);
}

}  // namespace octet::kernels
