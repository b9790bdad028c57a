#include "kernels/conv/q8_dwconv.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "kernels/conv/dwconv_indirection.h"
#include "kernels/fallback.h"
#include "kernels/packed_cache.h"
#include "kernels/ref/qconv2d.h"

namespace octet::kernels {
namespace {

struct Q8DwRowTask {
  const Q8DwConv* conv;
  uint8_t* y;
  const DwKw4Split* split;  // "kw4" kernels: how the tasks share the rows and channels; else nullptr
};

int32_t wrap_to_int32(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v))); }

// Channels [begin, end) of range `part` of `parts`: whole kDwKw4Block blocks, the last range
// ending at C.
struct ChannelRange {
  size_t begin, end;
};
ChannelRange kw4_channel_range(size_t C, size_t part, size_t parts) {
  const size_t blocks = (C + kDwKw4Block - 1) / kDwKw4Block;
  return {blocks * part / parts * kDwKw4Block, std::min(C, blocks * (part + 1) / parts * kDwKw4Block)};
}

}  // namespace

const Q8DwConvKernel* choose_q8_dwconv_kernel(Isa isa, const Conv2dShape& s) {
  for (const Q8DwConvKernel& k : kQ8DwConvKernels) {
    if (isa_runs(k.isa, isa) && k.fits(s)) {
      return &k;
    }
  }
  return nullptr;
}

bool Q8DwConv::supports(const Conv2dShape& s, Q8 /*x_type*/, Q8 /*y_type*/) { return is_depthwise(s); }

Q8DwConv::Q8DwConv(const Conv2dShape& s, Q8 x_type, int32_t x_zero_point, const int8_t* w, const int32_t* bias,
                   const Requantization& rq, Q8 y_type, Isa isa, PackedCache* cache)
    : s_(s), x_type_(x_type), y_type_(y_type), x_zero_point_(x_zero_point), kernel_(choose_q8_dwconv_kernel(isa, s)) {
  init(w, bias, rq, cache);
}

Q8DwConv::Q8DwConv(const Conv2dShape& s, Q8 x_type, int32_t x_zero_point, const int8_t* w, const int32_t* bias,
                   const Requantization& rq, Q8 y_type, const Q8DwConvKernel& kernel, PackedCache* cache)
    : s_(s), x_type_(x_type), y_type_(y_type), x_zero_point_(x_zero_point), kernel_(&kernel) {
  if (!isa_supported(kernel.isa)) {
    throw std::invalid_argument(std::string("Q8DwConv: kernel ") + kernel.name + " needs " +
                                isa_name(kernel.isa) + ", which this CPU does not support");
  }
  if (!kernel.fits(s)) {
    throw std::invalid_argument(std::string("Q8DwConv: kernel ") + kernel.name +
                                " runs kernels up to 4 wide, or up to 8 where stride_w divides 4 * dilation_w, "
                                "with (kernel_h - 1) * dilation_h < 16; got " +
                                std::to_string(s.kernel_h) + "x" + std::to_string(s.kernel_w) + " stride " +
                                std::to_string(s.stride_w) + " dilation " + std::to_string(s.dilation_h) + "x" +
                                std::to_string(s.dilation_w));
  }
  init(w, bias, rq, cache);
}

void Q8DwConv::init(const int8_t* w, const int32_t* bias, const Requantization& rq, PackedCache* cache) {
  if (!supports(s_, x_type_, y_type_)) {
    throw Unsupported(
        "Q8DwConv: expected a depthwise conv (groups == in_c == out_c, positive sizes); got groups " +
        std::to_string(s_.groups) + ", in_c " + std::to_string(s_.in_c) + ", out_c " + std::to_string(s_.out_c));
  }
  if (x_zero_point_ < q8_min(x_type_) || x_zero_point_ > q8_max(x_type_)) {
    throw std::invalid_argument("Q8DwConv: input zero point " + std::to_string(x_zero_point_) + " is outside " +
                                q8_name(x_type_));
  }
  const size_t C = static_cast<size_t>(s_.in_c);
  const size_t taps = static_cast<size_t>(s_.kernel_h) * s_.kernel_w;
  check_per_channel("Q8DwConv", "the requantization multiplier", rq.multiplier.size(), C);
  if (rq.qmin < q8_min(y_type_) || rq.qmax > q8_max(y_type_) || rq.qmin > rq.qmax) {
    throw std::invalid_argument("Q8DwConv: output clamp [" + std::to_string(rq.qmin) + ", " +
                                std::to_string(rq.qmax) + "] is not inside " + q8_name(y_type_) + "'s range");
  }
  if (kernel_ == nullptr) throw Unsupported("Q8DwConv: no microkernel fits this shape under the ISA cap on this CPU");
  multiplier_.resize(C);
  for (size_t c = 0; c < C; ++c) multiplier_[c] = rq.multiplier_of(c);
  name_ = row_kernel(*kernel_);
  ep_.x_signed = x_type_ == Q8::s8;
  ep_.y_signed = y_type_ == Q8::s8;
  ep_.lo = static_cast<float>(rq.qmin - rq.zero_point);
  ep_.hi = static_cast<float>(rq.qmax - rq.zero_point);
  ep_.zero_point = rq.zero_point;
  ep_.qmin = rq.qmin;
  ep_.qmax = rq.qmax;
  ep_.small_multipliers = std::all_of(multiplier_.begin(), multiplier_.end(),
                                      [](float m) { return std::fabs(m) <= 0.5f; });
  pad_row_.assign(static_cast<size_t>(s_.in_w) * C, static_cast<uint8_t>(x_zero_point_));
  const PackKey key = PackKey("q8_dwconv")
                          .add(int64_t(kernel_->packing))
                          .add(int64_t(kernel_->channel_tile))
                          .add(int64_t(C))
                          .add(s_.kernel_h)
                          .add(s_.kernel_w)
                          .add_array(w, C * taps)
                          .add_array(bias, C)
                          .add_array(multiplier_.data(), C)
                          .add(int64_t(x_type_ == Q8::s8))
                          .add(x_zero_point_);
  if (is_kw4(kernel_->packing)) {
    packed_ = shared_packing<std::vector<int32_t>>(cache, key, [&] { return pack_kw4(w, bias); });
    scratch_stride_ = (dw_kw4_scratch_bytes(s_) + 63) / 64 * 64;
    scratch_.assign(scratch_stride_ * kMaxTasks + 64, 0);
    return;
  }
  packed_ = shared_packing<std::vector<int32_t>>(cache, key, [&] { return pack_taps(w, bias); });
  cols_ = dw_interior_columns(s_);
}

// int32_taps / tap_pairs (kernels/conv/dwconv_list.h): per channel_tile channels [bias'][weight
// words][multiplier].
std::vector<int32_t> Q8DwConv::pack_taps(const int8_t* w, const int32_t* bias) const {
  const size_t C = static_cast<size_t>(s_.in_c);
  const size_t taps = static_cast<size_t>(s_.kernel_h) * s_.kernel_w;
  const size_t tile = static_cast<size_t>(kernel_->channel_tile);
  const size_t blocks = (C + tile - 1) / tile;
  const bool pairs = kernel_->packing == Q8DwPacking::tap_pairs;
  const size_t weight_words = pairs ? (taps + 1) / 2 : taps;
  const size_t block_words = (weight_words + 2) * tile;
  std::vector<int32_t> packed(blocks * block_words, 0);
  for (size_t c = 0; c < C; ++c) {
    int32_t* block = packed.data() + (c / tile) * block_words + c % tile;
    int64_t sum_w = 0;
    for (size_t t = 0; t < taps; ++t) {
      const int8_t wt = w[c * taps + t];
      sum_w += wt;
      // int32_taps: the weight in the low 16 bits, zero above, so vpmaddwd multiplies it with
      // the activation's low half and adds 0 for the high half (q8_dwconv__avx512.cc).
      // tap_pairs: taps 2p and 2p + 1 in the low and high halves (q8_dwconv__avx2.cc).
      const uint32_t half = static_cast<uint16_t>(static_cast<int16_t>(wt));
      const size_t word = pairs ? t / 2 : t;
      const int shift = pairs && t % 2 ? 16 : 0;
      block[(word + 1) * tile] = static_cast<int32_t>(static_cast<uint32_t>(block[(word + 1) * tile]) | half << shift);
    }
    // The padding reads x_zero_point, so sum((x - zp) * w) = sum(x * w) - zp * sum(w) over every
    // tap; computed in int64 and wrapped to int32 like the accumulator itself.
    block[0] = wrap_to_int32((bias ? bias[c] : 0) - static_cast<int64_t>(x_zero_point_) * sum_w);
    std::memcpy(&block[(weight_words + 1) * tile], &multiplier_[c], sizeof(float));
  }
  return packed;
}

// The "kw4" formats (kernels/conv/dwconv_list.h): per 16 channels [bias'][kernel_h * words]
// [multiplier], word ky * words + j holding the bytes w[c][ky][4j .. 4j + 3] (0 past kernel_w).
std::vector<int32_t> Q8DwConv::pack_kw4(const int8_t* w, const int32_t* bias) const {
  const size_t C = static_cast<size_t>(s_.in_c), kh = s_.kernel_h, kw = s_.kernel_w;
  const size_t words = static_cast<size_t>(dw_kw4_words(s_));
  const size_t blocks = (C + 15) / 16, block_words = (kh * words + 2) * 16;
  // The activation value the kernel multiplies: kw4 reads s8 as x ^ 0x80 = x + 128 (u8 as it
  // is), kw4_sdot u8 as x ^ 0x80 = x - 128 (s8 as it is); the fold subtracts that zero point.
  const bool sdot = kernel_->packing == Q8DwPacking::kw4_sdot;
  const int64_t x_offset = x_zero_point_ + (sdot ? (x_type_ == Q8::u8 ? -128 : 0) : (x_type_ == Q8::s8 ? 128 : 0));
  std::vector<int32_t> packed(blocks * block_words, 0);
  const size_t block_channels = sdot ? 0 : C / 64 * 64, half_end = sdot ? 0 : C / 32 * 32;
  for (size_t c = 0; c < C; ++c) {
    // Slot ("group") and lane of channel c. kw4_sdot: channel order. kw4, the chunk layout of
    // q8_dwconv__avx512vnni.cc: inside 64-channel block b, channel 64b + 16j + 4r + i is in
    // lane 4j + i of slot 4b + r; in the 32-channel half block after them, channel 16j + 4r + i
    // (from its start) is in lane 4(2(r % 2) + j) + i of slot r / 2; past those, channel order.
    size_t group = c / 16, lane = c % 16;
    const size_t j = c % 64 / 16 % 2, r = c % 16 / 4, i = c % 4;
    if (c < block_channels) {
      group = c / 64 * 4 + r;
      lane = 4 * (c % 64 / 16) + i;
    } else if (c < half_end) {
      group = block_channels / 16 + r / 2;
      lane = 4 * (2 * (r % 2) + j) + i;
    }
    int32_t* block = packed.data() + group * block_words + lane;
    int64_t sum_w = 0;
    for (size_t ky = 0; ky < kh; ++ky) {
      for (size_t j = 0; j < words; ++j) {
        uint32_t word = 0;
        for (size_t kx = 4 * j; kx < std::min(kw, 4 * j + 4); ++kx) {
          const int8_t wt = w[(c * kh + ky) * kw + kx];
          sum_w += wt;
          word |= static_cast<uint32_t>(static_cast<uint8_t>(wt)) << (8 * (kx - 4 * j));
        }
        block[(ky * words + j + 1) * 16] = static_cast<int32_t>(word);
      }
    }
    block[0] = wrap_to_int32((bias ? bias[c] : 0) - x_offset * sum_w);
    std::memcpy(&block[(kh * words + 1) * 16], &multiplier_[c], sizeof(float));
  }
  return packed;
}

void Q8DwConv::bind(const void* x) {
  bound_x_ = static_cast<const uint8_t*>(x);
  if (kernel_->image_rows) return;
  build_dw_indirection(s_, cols_, bound_x_, pad_row_.data(), row_ptrs_, border_taps_);
}

void Q8DwConv::row_task(void* context, size_t row) {
  const Q8DwRowTask& task = *static_cast<const Q8DwRowTask*>(context);
  if (task.split) {
    task.conv->run_task(row, *task.split, task.y);
  } else {
    task.conv->run_row(row, task.y);
  }
}

DwKw4Split dw_kw4_split(const Conv2dShape& s, size_t tasks) {
  const size_t rows = static_cast<size_t>(s.batch) * s.out_h;
  const size_t C = static_cast<size_t>(s.in_c);
  const size_t blocks = (C + kDwKw4Block - 1) / kDwKw4Block;
  // Work in built input rows: an output row costs about four (per 64 channels of an entry,
  // building takes ~11 instructions, a 3x3 output pixel 12 vpdpbusd and ~28 for the
  // requantization and packs).
  constexpr double kOutputRowCost = 4.0;
  const size_t window = static_cast<size_t>(dw_kw4_ring(s));
  DwKw4Split best;
  double best_cost = -1;
  for (size_t channel_parts = 1; channel_parts <= std::min(tasks, blocks); ++channel_parts) {
    // The busiest channel range: whole blocks but for the last, which may be short.
    size_t widest = 0;
    for (size_t part = 0; part < channel_parts; ++part) {
      const ChannelRange range = kw4_channel_range(C, part, channel_parts);
      widest = std::max(widest, range.end - range.begin);
    }
    const double share = double(widest) / double(C);
    for (size_t row_parts = 1; row_parts <= std::min(tasks / channel_parts, rows); ++row_parts) {
      const size_t part_rows = (rows + row_parts - 1) / row_parts;
      const size_t built = std::min<size_t>(static_cast<size_t>(s.batch) * s.in_h,
                                            (part_rows - 1) * static_cast<size_t>(s.stride_h) + window);
      const double cost = share * (double(built) + kOutputRowCost * double(part_rows));
      if (best_cost < 0 || cost < best_cost) {  // ties keep fewer channel parts, then fewer tasks
        best = {row_parts, channel_parts};
        best_cost = cost;
      }
    }
  }
  return best;
}

// Task `task` runs one contiguous share of the batch * out_h output rows, in pieces that stay
// inside one image, over one range of channel blocks, with its own row buffers.
void Q8DwConv::run_task(size_t task, const DwKw4Split& split, uint8_t* y) const {
  const size_t rows = static_cast<size_t>(s_.batch) * s_.out_h;
  const size_t row_part = task / split.channel_parts, channel_part = task % split.channel_parts;
  size_t r = rows * row_part / split.row_parts;
  const size_t end = rows * (row_part + 1) / split.row_parts;
  const size_t C = static_cast<size_t>(s_.in_c);
  const ChannelRange channels = kw4_channel_range(C, channel_part, split.channel_parts);
  uint8_t* scratch = const_cast<uint8_t*>(scratch_.data());
  scratch += (64 - reinterpret_cast<uintptr_t>(scratch) % 64) % 64 + task * scratch_stride_;
  const size_t image_in = static_cast<size_t>(s_.in_h) * s_.in_w * C;
  const size_t image_out = static_cast<size_t>(s_.out_h) * s_.out_w * s_.out_c;
  while (r < end) {
    const size_t n = r / s_.out_h;
    const int oy = static_cast<int>(r % s_.out_h);
    const int oy_end = static_cast<int>(std::min<size_t>(s_.out_h, oy + (end - r)));
    kernel_->image_rows({&s_, bound_x_ + n * image_in, oy, oy_end, channels.begin, channels.end, packed_->data(),
                         y + n * image_out, scratch, pad_row_.data(), ep_});
    r += oy_end - oy;
  }
}

void Q8DwConv::run_row(size_t row, uint8_t* y) const {
  const size_t C = static_cast<size_t>(s_.in_c);
  const int taps = s_.kernel_h * s_.kernel_w;
  uint8_t* y_row = y + row * s_.out_w * C;
  const uint8_t* const* border = border_taps_.data() + row * cols_.border() * taps;
  if (cols_.lo > 0) {
    kernel_->indirect({border, static_cast<size_t>(cols_.lo), C, taps, packed_->data(), y_row, ep_});
  }
  if (cols_.hi > cols_.lo) {
    kernel_->row({row_ptrs_.data() + row * s_.kernel_h, static_cast<size_t>(cols_.hi - cols_.lo), C,
                  static_cast<size_t>(s_.stride_w) * C, static_cast<size_t>(s_.dilation_w) * C, s_.kernel_h,
                  s_.kernel_w, packed_->data(), y_row + cols_.lo * C, ep_});
  }
  if (cols_.hi < s_.out_w) {
    kernel_->indirect({border + static_cast<size_t>(cols_.lo) * taps, static_cast<size_t>(s_.out_w - cols_.hi), C,
                       taps, packed_->data(), y_row + cols_.hi * C, ep_});
  }
}

void Q8DwConv::run(const void* x, void* y, pthreadpool_t pool) const {
  if (x != bound_x_ || x == nullptr) {
    throw std::invalid_argument("Q8DwConv::run: the input is not the one bind() was given; call bind(x) first");
  }
  const size_t rows = static_cast<size_t>(s_.batch) * s_.out_h;
  if (kernel_->image_rows) {
    // As few tasks as threads: each task builds the input rows of its own windows.
    const size_t threads = pool ? pthreadpool_get_threads_count(pool) : 1;
    const DwKw4Split split = dw_kw4_split(s_, std::min<size_t>(threads, kMaxTasks));
    Q8DwRowTask task{this, static_cast<uint8_t*>(y), &split};
    pthreadpool_parallelize_1d(pool, &Q8DwConv::row_task, &task, split.row_parts * split.channel_parts, 0);
    return;
  }
  Q8DwRowTask task{this, static_cast<uint8_t*>(y), nullptr};
  pthreadpool_parallelize_1d(pool, &Q8DwConv::row_task, &task, rows, 0);
}

}  // namespace octet::kernels
