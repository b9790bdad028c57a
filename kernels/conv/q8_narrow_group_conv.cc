#include "kernels/conv/q8_narrow_group_conv.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "kernels/conv/dwconv_indirection.h"
#include "kernels/fallback.h"
#include "kernels/packed_cache.h"

namespace octet::kernels {
namespace {

// Output pixels per task: a few of the microkernel's pixel groups; fewer where the threads would
// otherwise share a handful of tasks.
constexpr size_t kTaskPixels = 32;

int group_width(const Conv2dShape& s) { return s.groups > 0 ? s.in_c / s.groups : 0; }

bool is_q8(Q8 t) { return t == Q8::u8 || t == Q8::s8; }

// Each output channel's sum of its weights w [C][G][taps] (the zero-point fold's).
std::vector<int64_t> channel_weight_sums(const Conv2dShape& s, const int8_t* w) {
  const size_t G = size_t(group_width(s)), taps = size_t(s.kernel_h) * s.kernel_w;
  return q8_column_sums(size_t(s.out_c), taps, G, [&](size_t c, size_t t, size_t k) { return w[(c * G + k) * taps + t]; });
}

// The blocks of kernels/conv/q8_gconv_list.h for weights w [C][G][taps], laid out for a row
// summing kr bytes per lane: with `multiplier`, the static header (bias' with the zero point
// zp_r folded, the multipliers); without, zeros (the float output takes its fold and scales at
// run time).
std::vector<uint8_t> pack_blocks(const Conv2dShape& s, int kr, const int8_t* w, const int32_t* bias,
                                 std::span<const float> multiplier, int32_t zp_r) {
  const size_t C = size_t(s.out_c), G = size_t(group_width(s)), taps = size_t(s.kernel_h) * s.kernel_w;
  const size_t blocks = (C + kQ8GconvBlock - 1) / kQ8GconvBlock, block_bytes = q8_gconv_block_bytes(int(G), kr, taps);
  const size_t KR = size_t(kr), chunk_channels = 4 * KR, chunks = kQ8GconvBlock / chunk_channels;
  const size_t parts = G / KR;  // units of KR channels per group
  std::vector<uint8_t> packed(blocks * block_bytes, 0);
  const std::vector<int64_t> sums = multiplier.empty() ? std::vector<int64_t>{} : channel_weight_sums(s, w);
  for (size_t b = 0; b < blocks; ++b) {
    uint8_t* block = packed.data() + b * block_bytes;
    for (size_t n = 0; n < size_t(kQ8GconvBlock); ++n) {
      const size_t o = b * kQ8GconvBlock + n;
      if (o >= C || multiplier.empty()) continue;
      // Wraps modulo 2^32 as the accumulators do.
      const auto folded = static_cast<int32_t>(static_cast<uint32_t>(bias ? bias[o] : 0) -
                                               static_cast<uint32_t>(int64_t(zp_r) * sums[o]));
      const float m = multiplier.size() == 1 ? multiplier[0] : multiplier[o];
      std::memcpy(block + n * 4, &folded, 4);
      std::memcpy(block + (kQ8GconvBlock + n) * 4, &m, 4);
    }
    if (G >= 16) {  // a block in one group, channel order: per tap G / 4 quads x 16 channels x 4
      for (size_t t = 0; t < taps; ++t)
        for (size_t q = 0; q < G / 4; ++q)
          for (size_t n = 0; n < size_t(kQ8GconvBlock); ++n) {
            const size_t o = b * kQ8GconvBlock + n;
            for (size_t j = 0; j < 4; ++j)
              std::memcpy(block + 2 * kQ8GconvBlock * 4 + ((t * (G / 4) + q) * kQ8GconvBlock + n) * 4 + j,
                          &w[(o * G + 4 * q + j) * taps + t], 1);
          }
      continue;
    }
    for (size_t t = 0; t < taps; ++t)
      for (size_t c = 0; c < chunks; ++c) {
        uint8_t* slots = block + 2 * kQ8GconvBlock * 4 + (t * chunks + c) * 16 * G;
        for (size_t slot = 0; slot < 4 * G; ++slot) {
          const size_t unit = slot % 4, m = slot / 4, g = unit / parts, h = unit % parts;
          const size_t o = b * kQ8GconvBlock + c * chunk_channels + g * G + m;
          if (o >= C) continue;
          for (size_t j = 0; j < KR; ++j) {
            const int8_t v = w[(o * G + KR * h + j) * taps + t];
            if (KR == 4) {
              std::memcpy(slots + slot * 4 + j, &v, 1);
            } else {
              const int16_t wide = v;
              std::memcpy(slots + slot * 4 + j * 2, &wide, 2);
            }
          }
        }
      }
  }
  return packed;
}

void check_zero_point(Q8 x_type, int32_t x_zero_point) {
  if (x_zero_point < q8_min(x_type) || x_zero_point > q8_max(x_type))
    throw std::invalid_argument("Q8NarrowGroupConv: x zero point " + std::to_string(x_zero_point) + " is outside " +
                                q8_name(x_type));
}

const Q8GconvKernel& chosen(const Conv2dShape& s, Q8 x_type, Q8 y_type, Isa isa) {
  const Q8GconvKernel* k =
      Q8NarrowGroupConv::supports(s, x_type, y_type) ? choose_q8_gconv_kernel(isa, x_type, group_width(s)) : nullptr;
  if (k == nullptr)
    throw Unsupported("Q8NarrowGroupConv: no narrow-group kernel for groups of " + std::to_string(group_width(s)) +
                      " channels (in_c " + std::to_string(s.in_c) + ", out_c " + std::to_string(s.out_c) +
                      ", groups " + std::to_string(s.groups) + ") under " + isa_name(isa));
  return *k;
}

}  // namespace

const Q8GconvKernel* choose_q8_gconv_kernel(Isa isa, Q8 x_type, int group_width) {
  for (const Q8GconvKernel& k : kQ8GconvKernels)
    if (k.x_type == x_type && q8_gconv_row_fits(k, group_width) && row_runs(k, isa)) return &k;
  return nullptr;
}

bool Q8NarrowGroupConv::supports(const Conv2dShape& s, Q8 x_type, Q8 y_type) {
  const int g = group_width(s);
  return is_q8(x_type) && is_q8(y_type) && s.groups > 1 && (g == 4 || g == 8 || (g >= 16 && g % 16 == 0)) &&
         s.in_c == s.groups * g &&
         s.out_c == s.in_c && !s.has_depth() && s.batch > 0 && s.in_h > 0 && s.in_w > 0 && s.out_h > 0 &&
         s.out_w > 0 && s.kernel_h > 0 && s.kernel_w > 0 && s.stride_h > 0 && s.stride_w > 0 && s.dilation_h > 0 &&
         s.dilation_w > 0;
}

bool Q8NarrowGroupConv::runs(const Conv2dShape& s, Q8 x_type, Q8 y_type, Isa isa) {
  return supports(s, x_type, y_type) && choose_q8_gconv_kernel(isa, x_type, group_width(s)) != nullptr;
}

Q8NarrowGroupConv::Q8NarrowGroupConv(const Conv2dShape& s, Q8 x_type, int32_t x_zero_point, const int8_t* w,
                                     const int32_t* bias, const Requantization& rq, Q8 y_type, Isa isa,
                                     PackedCache* cache)
    : Q8NarrowGroupConv(s, x_type, x_zero_point, w, bias, &rq, nullptr, y_type, chosen(s, x_type, y_type, isa),
                        cache) {}

Q8NarrowGroupConv::Q8NarrowGroupConv(const Conv2dShape& s, Q8 x_type, const int8_t* w, const DequantizedOutput& out,
                                     Isa isa, PackedCache* cache)
    : Q8NarrowGroupConv(s, x_type, 0, w, nullptr, nullptr, &out, x_type, chosen(s, x_type, x_type, isa), cache) {}

Q8NarrowGroupConv::Q8NarrowGroupConv(const Conv2dShape& s, Q8 x_type, int32_t x_zero_point, const int8_t* w,
                                     const int32_t* bias, const Requantization* rq, const DequantizedOutput* out,
                                     Q8 y_type, const Q8GconvKernel& kernel, PackedCache* cache)
    : s_(s), x_type_(x_type), kernel_(&kernel), name_(row_kernel(kernel)),
      x_zero_point_(x_zero_point) {
  if (!supports(s, x_type, y_type) || !q8_gconv_row_fits(kernel, group_width(s)) ||
      kernel.x_type != x_type)
    throw Unsupported(std::string("Q8NarrowGroupConv: ") + kernel.name + " runs " + q8_name(kernel.x_type) +
                      " groups of " + std::to_string(kernel.group_width) + " input and output channels; got " +
                      q8_name(x_type) + ", groups " + std::to_string(s.groups) + ", in_c " + std::to_string(s.in_c) +
                      ", out_c " + std::to_string(s.out_c));
  if (!isa_supported(kernel.isa))
    throw std::invalid_argument(std::string("Q8NarrowGroupConv: ") + kernel.name + " needs " + isa_name(kernel.isa) +
                                ", which this CPU does not support");
  if ((rq == nullptr) == (out == nullptr))
    throw std::invalid_argument("Q8NarrowGroupConv: give a requantization or a float output, not both");
  const size_t C = size_t(s.out_c), G = size_t(group_width(s)), taps = size_t(s.kernel_h) * s.kernel_w;
  const size_t w_count = C * G * taps;
  if (rq != nullptr) {
    if (rq->multiplier.size() != 1 && rq->multiplier.size() != C)
      throw std::invalid_argument("Q8NarrowGroupConv: " + std::to_string(rq->multiplier.size()) +
                                  " requantization multipliers for " + std::to_string(C) + " output channels");
    check_zero_point(x_type, x_zero_point);
    y_zero_point_ = rq->zero_point;
    lo_ = float(rq->qmin - rq->zero_point);
    hi_ = float(rq->qmax - rq->zero_point);
    const int32_t zp_r = x_zero_point + q8_read_shift(kernel.reads, x_type);
    packed_ = shared_packing<std::vector<uint8_t>>(
        cache,
        PackKey("q8_gconv").add(int64_t(kernel.kr)).add(int64_t(G)).add(int64_t(C)).add(int64_t(taps)).add(int64_t(zp_r))
            .add_array(w, w_count).add_array(bias, C).add_array(rq->multiplier.data(), rq->multiplier.size()),
        [&] { return pack_blocks(s, kernel.kr, w, bias, rq->multiplier, zp_r); });
    zero_.assign(C, static_cast<uint8_t>(x_zero_point));
  } else {
    packed_ = shared_packing<std::vector<uint8_t>>(
        cache, PackKey("q8_gconv_float").add(int64_t(kernel.kr)).add(int64_t(G)).add(int64_t(C)).add(int64_t(taps)).add_array(w, w_count),
        [&] { return pack_blocks(s, kernel.kr, w, nullptr, {}, 0); });
    lo_ = out->lo;
    hi_ = out->hi;
    float_out_.emplace(*out, channel_weight_sums(s, w), size_t(kQ8GconvBlock), kernel.reads, kernel.isa);
    zero_.assign(C, 0);
  }
}

void Q8NarrowGroupConv::bind(const void* x) {
  bound_ = x;
  build_tap_pointers(s_, static_cast<const uint8_t*>(x), static_cast<const uint8_t*>(zero_.data()), taps_);
}

struct Q8NarrowGroupConv::Task {
  const Q8GconvKernel* kernel;
  Q8GconvArgs base;
  bool float_out;
  size_t image_in, image_pixels, y_bytes;
  const Q8FloatOutput* fo;
  OutputRange* range;
};

void Q8NarrowGroupConv::task(void* context, size_t image, size_t pixel, size_t count) {
  const Task& t = *static_cast<const Task*>(context);
  Q8GconvArgs a = t.base;
  const size_t C = a.channels;
  a.taps += pixel * a.ks;
  a.pixels = count;
  a.x_offset = ptrdiff_t(image * t.image_in);
  a.y = static_cast<uint8_t*>(a.y) + (image * t.image_pixels + pixel) * C * t.y_bytes;
  if (!t.float_out) {
    t.kernel->fn(a);
    return;
  }
  t.kernel->fn_f32(a);
  auto* y = static_cast<float*>(a.y);
  t.fo->activate(count, C, y, C);  // while the tile is in L1
  if (t.range != nullptr) t.range->add(count * C, y);
}

void Q8NarrowGroupConv::run_tasks(const void* x, void* y, size_t y_bytes, pthreadpool_t pool,
                                  OutputRange* range) const {
  if (x != bound_ || x == nullptr)
    throw std::invalid_argument("Q8NarrowGroupConv::run: the input is not the one bind() was given; call bind(x) first");
  const size_t pixels = size_t(s_.out_h) * s_.out_w, batch = size_t(s_.batch), C = size_t(s_.out_c);
  Task t{kernel_, {}, float_out_.has_value(), size_t(s_.in_h) * s_.in_w * C, pixels, y_bytes,
         float_out_ ? &*float_out_ : nullptr, range};
  Q8GconvArgs& a = t.base;
  a.taps = taps_.data();
  a.channels = C;
  a.ks = size_t(s_.kernel_h) * s_.kernel_w;
  a.group_width = size_t(group_width(s_));
  a.zero = zero_.data();
  a.packed = packed_->data();
  a.y = y;
  a.y_stride = C * y_bytes;
  a.lo = lo_;
  a.hi = hi_;
  a.y_zero_point = y_zero_point_;
  if (float_out_) {
    Q8IgemmArgs g{};
    float_out_->set_args(g, 0);
    a.acc_init = g.acc_init;
    a.scale = g.scale;
    a.out_bias = g.out_bias;
  }
  const size_t threads = pool == nullptr ? 1 : pthreadpool_get_threads_count(pool);
  const size_t tile = batch * ((pixels + kTaskPixels - 1) / kTaskPixels) < 4 * threads ? 8 : kTaskPixels;
  pthreadpool_parallelize_2d_tile_1d(pool, &Q8NarrowGroupConv::task, &t, batch, pixels, tile, 0);
}

void Q8NarrowGroupConv::run(const void* x, void* y, pthreadpool_t pool) const {
  if (float_out_) throw std::logic_error("Q8NarrowGroupConv::run: this conv has a float output (run_dequantized)");
  run_tasks(x, y, 1, pool, nullptr);
}

void Q8NarrowGroupConv::run_dequantized(const void* x, float x_scale, int32_t x_zero_point, float* y,
                                        pthreadpool_t pool, OutputRange* range) {
  if (!float_out_) throw std::logic_error("Q8NarrowGroupConv::run_dequantized: this conv requantizes (run)");
  check_zero_point(x_type_, x_zero_point);
  // The padding bytes must equal the activations' zero point, which a dynamic conv learns per run.
  if (x_zero_point != x_zero_point_) {
    x_zero_point_ = x_zero_point;
    std::fill(zero_.begin(), zero_.end(), static_cast<uint8_t>(x_zero_point));
  }
  float_out_->prepare(x_type_, x_scale, x_zero_point);
  run_tasks(x, y, sizeof(float), pool, range);
}

}  // namespace octet::kernels
