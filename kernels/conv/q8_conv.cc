#include "kernels/conv/q8_conv.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "kernels/elementwise/parallel_pieces.h"
#include "kernels/fallback.h"
#include "kernels/gemm/q8_weight_chunks.h"
#include "kernels/quantize/lookup.h"
#include "kernels/ref/qelementwise.h"
#include "kernels/ref/qlinear.h"

namespace octet::kernels {

namespace {

// Largest kernel_h * kernel_w * in_c that runs as a GEMM over packed windows (im2col).
constexpr size_t kIm2colMaxWindow = 64;

// Copies `count` windows of one output row: window i starts at src + i * step_x in the padded
// copy; chunk t (at offsets[t] from there) goes to dst + i * stride + t * kc in whole 16-byte
// pieces, in tap order (see init_im2col for where the overshoot lands). Fixed tap and piece
// counts let the common first layers (3x3 / 5x5 / 7x7 with a few channels) unroll.
template <size_t kTaps, size_t kPieces>
void copy_windows(const WindowCopy& c, const uint8_t* src, size_t count, uint8_t* dst) {
  const size_t taps = kTaps != 0 ? kTaps : c.taps;
  const size_t pieces = kPieces != 0 ? kPieces : c.pieces;
  const size_t kc = c.kc, step_x = c.step_x, stride = c.stride;
  size_t offsets[kTaps != 0 ? kTaps : 1];
  if constexpr (kTaps != 0) {
    for (size_t t = 0; t < kTaps; ++t) offsets[t] = c.offsets[t];
  }
  for (size_t i = 0; i < count; ++i) {
    for (size_t t = 0; t < taps; ++t) {
      const uint8_t* from = src + (kTaps != 0 ? offsets[t] : c.offsets[t]);
      uint8_t* to = dst + t * kc;
      for (size_t b = 0; b < pieces; ++b) std::memcpy(to + 16 * b, from + 16 * b, 16);
    }
    src += step_x;
    dst += stride;
  }
}

WindowCopyFn choose_window_copy(size_t taps, size_t pieces) {
  if (pieces == 1 && taps == 3) return copy_windows<3, 1>;
  if (pieces == 1 && taps == 5) return copy_windows<5, 1>;
  if (pieces == 1 && taps == 7) return copy_windows<7, 1>;
  if (pieces == 2 && taps == 3) return copy_windows<3, 2>;
  return copy_windows<0, 0>;
}

void check_arguments(const Conv2dShape& s, Q8 x_type, int32_t x_zero_point,
                     const Requantization& rq, Q8 y_type) {
  if (!Q8Conv::supports(s, x_type, y_type)) {
    throw Unsupported(
        "Q8Conv: only dense (groups == 1) convolutions with positive sizes; got groups " +
        std::to_string(s.groups) + ", in_c " + std::to_string(s.in_c) + ", out_c " +
        std::to_string(s.out_c));
  }
  if (x_zero_point < q8_min(x_type) || x_zero_point > q8_max(x_type)) {
    throw std::invalid_argument("Q8Conv: x zero point " + std::to_string(x_zero_point) +
                                " is outside " + q8_name(x_type));
  }
  check_per_channel("Q8Conv", "the requantization multiplier", rq.multiplier.size(),
                    static_cast<size_t>(s.out_c));
  if (rq.qmin < q8_min(y_type) || rq.qmax > q8_max(y_type) || rq.qmin > rq.qmax) {
    throw std::invalid_argument("Q8Conv: output clamp [" + std::to_string(rq.qmin) + ", " +
                                std::to_string(rq.qmax) + "] is not inside " + q8_name(y_type));
  }
}

// The float-output conv checks its shape and x type with a pass-through requantization.
constexpr float kUnitMultiplier[] = {1.0f};
Requantization unit_requantization(Q8 x_type) {
  return Requantization{kUnitMultiplier, 0, q8_min(x_type), q8_max(x_type)};
}

}  // namespace

// Output pixels of the whole batch (a 3-D conv's (od, oh, ow) included).
static size_t q8_conv_pixels(const Conv2dShape& s) { return static_cast<size_t>(s.batch) * s.out_d * s.out_h * s.out_w; }

// How the GEMM lays out a conv's taps (init() and the kernel choice read the same rules): a
// tap per kernel row (kx merged: kw x in_c bytes) when dilation_w is 1, else per (ky, kx) of
// in_c bytes; a 2-D conv whose whole window fits kIm2colMaxWindow bytes is one im2col'd tap.
// A 3-D conv merges its kernel rows as a 2-D one does and has no im2col path.
struct Q8ConvTaps {
  bool merge_kx;
  size_t taps, kc;  // before im2col
  bool im2col;
  // The k bytes of one tap of the GEMM: the AMX rows step through each tap 64 bytes at a time.
  size_t gemm_tap_bytes() const { return im2col ? taps * kc : kc; }
};
static Q8ConvTaps q8_conv_taps(const Conv2dShape& s) {
  Q8ConvTaps t;
  const size_t in_c = static_cast<size_t>(s.in_c), kw = static_cast<size_t>(s.kernel_w);
  const size_t rows = static_cast<size_t>(s.kernel_d) * s.kernel_h;
  t.merge_kx = s.dilation_w == 1;
  t.taps = t.merge_kx ? rows : rows * kw;
  t.kc = t.merge_kx ? kw * in_c : in_c;
  t.im2col = !s.has_depth() && t.taps > 1 && s.kernel_h * kw * in_c <= kIm2colMaxWindow;
  return t;
}

bool Q8Conv::supports(const Conv2dShape& s, Q8, Q8) {
  return s.groups == 1 && s.batch >= 1 && s.in_h >= 1 && s.in_w >= 1 && s.in_c >= 1 &&
         s.out_h >= 1 && s.out_w >= 1 && s.out_c >= 1 && s.kernel_h >= 1 && s.kernel_w >= 1 &&
         s.stride_h >= 1 && s.stride_w >= 1 && s.dilation_h >= 1 && s.dilation_w >= 1 &&
         s.in_d >= 1 && s.out_d >= 1 && s.kernel_d >= 1 && s.stride_d >= 1 && s.dilation_d >= 1 && s.pad_front >= 0;
}

Q8Conv::Q8Conv(const Conv2dShape& s, Q8 x_type, int32_t x_zero_point, const int8_t* w,
               const int32_t* bias, const Requantization& rq, Q8 y_type, Isa isa, PackedCache* cache)
    : s_(s), x_type_(x_type), y_type_(y_type), x_zero_point_(x_zero_point) {
  check_arguments(s, x_type, x_zero_point, rq, y_type);
  const size_t pixels = q8_conv_pixels(s);
  kernel_ = &require_q8_gemm_kernel("Q8Conv", isa, x_type, pixels, static_cast<size_t>(s.out_c),
                                    static_cast<size_t>(s.kernel_d) * s.kernel_h * s.kernel_w * s.in_c,
                                    q8_conv_taps(s).gemm_tap_bytes());
  init(w, bias, rq, cache);
}

Q8Conv::Q8Conv(const Conv2dShape& s, Q8 x_type, int32_t x_zero_point, const int8_t* w,
               const int32_t* bias, const Requantization& rq, Q8 y_type, const Q8GemmKernel& kernel,
               PackedCache* cache)
    : s_(s), x_type_(x_type), y_type_(y_type), x_zero_point_(x_zero_point), kernel_(&kernel) {
  check_arguments(s, x_type, x_zero_point, rq, y_type);
  if (kernel.x_type != x_type) {
    throw std::invalid_argument(std::string("Q8Conv: kernel ") + kernel.name + " takes " +
                                q8_name(kernel.x_type) + " activations, not " + q8_name(x_type));
  }
  if (!isa_supported(kernel.isa)) {
    throw std::invalid_argument(std::string("Q8Conv: this CPU cannot run ") + kernel.name);
  }
  init(w, bias, rq, cache);
}

Q8Conv::Q8Conv(const Conv2dShape& s, Q8 x_type, const int8_t* w, DequantizedOutput out, Isa isa,
               PackedCache* cache)
    : s_(s), x_type_(x_type), y_type_(x_type), x_zero_point_(0) {
  check_arguments(s, x_type, 0, unit_requantization(x_type), x_type);
  const size_t pixels = q8_conv_pixels(s);
  kernel_ = &require_q8_gemm_kernel("Q8Conv", isa, x_type, pixels, static_cast<size_t>(s.out_c),
                                    static_cast<size_t>(s.kernel_d) * s.kernel_h * s.kernel_w * s.in_c,
                                    q8_conv_taps(s).gemm_tap_bytes());
  init_float_output(w, std::move(out), isa, cache);
}

Q8Conv::Q8Conv(const Conv2dShape& s, Q8 x_type, const int8_t* w, DequantizedOutput out,
               const Q8GemmKernel& kernel, PackedCache* cache)
    : s_(s), x_type_(x_type), y_type_(x_type), x_zero_point_(0), kernel_(&kernel) {
  check_arguments(s, x_type, 0, unit_requantization(x_type), x_type);
  if (kernel.x_type != x_type || !isa_supported(kernel.isa)) {
    throw std::invalid_argument(std::string("Q8Conv: kernel ") + kernel.name + " cannot run " +
                                q8_name(x_type) + " activations on this CPU");
  }
  init_float_output(w, std::move(out), kernel.isa, cache);
}

void Q8Conv::init_float_output(const int8_t* w, DequantizedOutput out, Isa isa, PackedCache* cache) {
  init(w, nullptr, unit_requantization(x_type_), cache);
  const size_t per_channel = static_cast<size_t>(s_.in_c) * s_.kernel_d * s_.kernel_h * s_.kernel_w;
  column_sums_ = q8_column_sums(static_cast<size_t>(s_.out_c), 1, per_channel,
                                [&](size_t c, size_t, size_t k) { return w[c * per_channel + k]; });
  float_out_.emplace(std::move(out), column_sums_, static_cast<size_t>(kernel_->nr), kernel_->reads, isa);
}

void Q8Conv::init(const int8_t* w, const int32_t* bias, const Requantization& rq, PackedCache* cache) {
  multiplier_.assign(rq.multiplier.begin(), rq.multiplier.end());
  y_zero_point_ = rq.zero_point;
  qmin_ = rq.qmin;
  qmax_ = rq.qmax;
  const size_t in_c = static_cast<size_t>(s_.in_c);
  // A 3-D conv's taps are read from x or from a copy padded in H and W only (taps of the
  // planes before or after the input read the zero row).
  const bool depth = s_.has_depth();
  const size_t kd = static_cast<size_t>(s_.kernel_d);
  const size_t taps = kd * s_.kernel_h * s_.kernel_w;
  name_ = row_kernel(*kernel_);
  const size_t kh = static_cast<size_t>(s_.kernel_h);
  const size_t kw = static_cast<size_t>(s_.kernel_w);
  const size_t tap_rows = kd * kh;  // kernel rows: (kz, ky), kz * kernel_h + ky
  const Q8ConvTaps layout = q8_conv_taps(s_);
  merge_kx_ = layout.merge_kx;
  taps_ = layout.taps;
  kc_ = layout.kc;
  // ONNX order [c][ic][(kz,) ky][kx]; a tap row is NHWC: [kx][ic] (merged) or [ic] (one tap per ky, kx).
  auto weight_merged = [&](size_t c, size_t row, size_t k) {
    return w[((c * in_c + k % in_c) * tap_rows + row) * kw + k / in_c];
  };
  auto weight_per_tap = [&](size_t c, size_t t, size_t k) { return w[(c * in_c + k) * taps + t]; };
  const size_t out_c = static_cast<size_t>(s_.out_c);
  const size_t w_count = out_c * in_c * taps;
  // How the weight lambdas below read w: [out_c][in_c][kd][kh][kw] with these extents.
  const std::string shape = "/" + std::to_string(in_c) + "x" + (depth ? std::to_string(kd) + "x" : "") +
                            std::to_string(kh) + "x" + std::to_string(kw);
  im2col_ = layout.im2col;
  if (im2col_) {
    // One tap of gemm_kc_ bytes: chunk t of the window at k = t * kc_ .. (t + 1) * kc_ - 1.
    // The weights of k >= taps_ * kc_ are zero, so whatever bytes the window row holds there
    // (pixel data copied along, see pack_windows) add nothing and the zero-point fold (a sum
    // over the weights) stays exact.
    const size_t window = taps_ * kc_;
    gemm_kc_ = (window + 3) / 4 * 4;
    auto weight_window = [&](size_t c, size_t, size_t k) -> int8_t {
      if (k >= window) return 0;
      return merge_kx_ ? weight_merged(c, k / kc_, k % kc_) : weight_per_tap(c, k / kc_, k % kc_);
    };
    packed_ = shared_q8_weights(cache, (merge_kx_ ? "conv_im2col_merged" : "conv_im2col_per_tap") + shape, w, w_count,
                                *kernel_, out_c, 1, gemm_kc_, weight_window, bias, multiplier_, x_type_, x_zero_point_);
  } else if (merge_kx_) {
    packed_ = shared_q8_weights(cache, "conv_merged" + shape, w, w_count, *kernel_, out_c, taps_, kc_, weight_merged,
                                bias, multiplier_, x_type_, x_zero_point_);
  } else {
    packed_ = shared_q8_weights(cache, "conv_per_tap" + shape, w, w_count, *kernel_, out_c, taps_, kc_, weight_per_tap,
                                bias, multiplier_, x_type_, x_zero_point_);
  }
  const uint8_t zp_byte = static_cast<uint8_t>(x_zero_point_);
  padding_value_ = x_zero_point_;
  // kr spare bytes: the kernels may read the K tail of this row with one full load.
  zero_row_.assign(kc_ + static_cast<size_t>(kernel_->kr), zp_byte);

  const int pad_bottom =
      std::max(0, (s_.out_h - 1) * s_.stride_h + (s_.kernel_h - 1) * s_.dilation_h + 1 - s_.in_h -
                      s_.pad_top);
  const int pad_right =
      std::max(0, (s_.out_w - 1) * s_.stride_w + (s_.kernel_w - 1) * s_.dilation_w + 1 - s_.in_w -
                      s_.pad_left);
  const bool pads = s_.pad_top > 0 || s_.pad_left > 0 || pad_bottom > 0 || pad_right > 0;
  // The im2col path always reads a padded copy (with no padding, a plain copy: its 16-byte
  // chunk loads may then run past the window, into the copy's spare bytes, never past x).
  // A 3-D conv's copy pads each plane: [batch][in_d][padded_h][padded_w][in_c].
  if (im2col_ || (merge_kx_ && pads)) {
    padded_h_ = s_.pad_top + s_.in_h + pad_bottom;
    padded_w_ = s_.pad_left + s_.in_w + pad_right;
    chunk_copy_ = (kc_ + 15) / 16 * 16;
    const size_t spare = std::max(static_cast<size_t>(kernel_->kr), im2col_ ? chunk_copy_ : 0);
    padded_ = AlignedBytes(static_cast<size_t>(s_.batch) * s_.in_d * padded_h_ * padded_w_ * in_c + spare);
    std::memset(padded_.data(), zp_byte, padded_.size());
    if (im2col_) {
      init_im2col();
    } else {
      build_indirection(padded_.data(), padded_h_, padded_w_, 0, 0);
    }
  }
}

void Q8Conv::init_im2col() {
  const size_t in_c = static_cast<size_t>(s_.in_c);
  const size_t row = static_cast<size_t>(padded_w_) * in_c;
  chunk_offset_.clear();
  for (int ky = 0; ky < s_.kernel_h; ++ky) {
    for (int kx = 0; kx < (merge_kx_ ? 1 : s_.kernel_w); ++kx) {
      chunk_offset_.push_back(static_cast<size_t>(ky) * s_.dilation_h * row +
                              static_cast<size_t>(kx) * s_.dilation_w * in_c);
    }
  }
  // Each chunk is copied in whole 16-byte pieces, in tap order: a piece's overshoot lands in
  // the next chunk's place (rewritten next) or, for the last chunk, in the row's spare bytes,
  // never in another row (rows are packed by different threads).
  window_stride_ = std::max(gemm_kc_, (taps_ - 1) * kc_ + chunk_copy_);
  window_stride_ = (window_stride_ + 3) / 4 * 4;
  copy_fn_ = choose_window_copy(taps_, chunk_copy_ / 16);
  const size_t mr = static_cast<size_t>(kernel_->mr);
  const size_t pixels = q8_conv_pixels(s_);
  const size_t groups = (pixels + mr - 1) / mr;
  windows_ = AlignedBytes(pixels * window_stride_);
  indirection_.resize(groups * mr);
  for (size_t i = 0; i < groups * mr; ++i) {
    // Rows past the last pixel repeat it: the kernel computes them and stores nothing.
    indirection_[i] = windows_.data() + std::min(i, pixels - 1) * window_stride_;
  }
}

// Packs the windows of pixels [first, last) from the padded copy, one output-row run at a time.
void Q8Conv::pack_windows(size_t first, size_t last, const uint8_t* padded) const {
  const size_t in_c = static_cast<size_t>(s_.in_c);
  const size_t out_w = static_cast<size_t>(s_.out_w);
  const size_t out_h = static_cast<size_t>(s_.out_h);
  const size_t step_x = static_cast<size_t>(s_.stride_w) * in_c;
  const size_t step_y = static_cast<size_t>(s_.stride_h) * padded_w_ * in_c;
  const size_t image = static_cast<size_t>(padded_h_) * padded_w_ * in_c;
  WindowCopy copy{chunk_offset_.data(), taps_, kc_, chunk_copy_ / 16, step_x, window_stride_};
  uint8_t* dst = windows_.data() + first * window_stride_;
  for (size_t p = first; p < last;) {
    const size_t ox = p % out_w;
    const size_t oy = p / out_w % out_h;
    const size_t n = p / out_w / out_h;
    const size_t run = std::min(out_w - ox, last - p);
    const uint8_t* src = padded + n * image + oy * step_y + ox * step_x;
    copy_fn_(copy, src, run, dst);
    dst += run * window_stride_;
    p += run;
  }
}

void Q8Conv::build_indirection(const uint8_t* base, int image_h, int image_w, int pad_top,
                               int pad_left) {
  const size_t mr = static_cast<size_t>(kernel_->mr);
  const size_t pixels = q8_conv_pixels(s_);
  const size_t groups = (pixels + mr - 1) / mr;
  const int taps_x = merge_kx_ ? 1 : s_.kernel_w;
  indirection_.resize(groups * taps_ * mr);
  for (size_t g = 0; g < groups; ++g) {
    for (size_t i = 0; i < mr; ++i) {
      // Rows past the last pixel repeat it: the kernel computes them and stores nothing.
      const size_t p = std::min(g * mr + i, pixels - 1);
      // (A 3-D conv's planes: from x, or the padded copy's planes, padded in H and W only.)
      const size_t ox = p % s_.out_w;
      const size_t oy = p / s_.out_w % s_.out_h;
      const size_t oz = p / s_.out_w / s_.out_h % s_.out_d;
      const size_t n = p / s_.out_w / s_.out_h / s_.out_d;
      for (int kz = 0; kz < s_.kernel_d; ++kz) {
        const int iz = static_cast<int>(oz) * s_.stride_d - s_.pad_front + kz * s_.dilation_d;
        for (int ky = 0; ky < s_.kernel_h; ++ky) {
          const int iy = static_cast<int>(oy) * s_.stride_h - pad_top + ky * s_.dilation_h;
          for (int kx = 0; kx < taps_x; ++kx) {
            const int ix = static_cast<int>(ox) * s_.stride_w - pad_left + kx * s_.dilation_w;
            const size_t t = (static_cast<size_t>(kz) * s_.kernel_h + ky) * taps_x + kx;
            const bool inside = iz >= 0 && iz < s_.in_d && iy >= 0 && iy < image_h && ix >= 0 && ix < image_w;
            const size_t row = (n * s_.in_d + static_cast<size_t>(iz)) * image_h + iy;
            indirection_[(g * taps_ + t) * mr + i] = inside ? base + (row * image_w + ix) * s_.in_c : zero_row_.data();
          }
        }
      }
    }
  }
}

void Q8Conv::bind(const void* x) {
  if (padded_.size() > 0) return;
  bound_x_ = static_cast<const uint8_t*>(x);
  build_indirection(bound_x_, s_.in_h, s_.in_w, s_.pad_top, s_.pad_left);
}

void Q8Conv::run(const void* x, void* y, pthreadpool_t pool, size_t y_pixel_stride) const {
  if (float_out_) throw std::logic_error("Q8Conv::run: this conv has a float output (run_dequantized)");
  run_tiles(x, y, pool, nullptr, y_pixel_stride);
}

// The padding bytes must equal the activations' zero point, which a dynamic conv learns per run.
void Q8Conv::set_padding_value(int32_t x_zero_point) {
  if (x_zero_point == padding_value_) return;
  const uint8_t byte = static_cast<uint8_t>(x_zero_point);
  if (padded_.size() > 0) std::memset(padded_.data(), byte, padded_.size());
  std::fill(zero_row_.begin(), zero_row_.end(), byte);
  padding_value_ = x_zero_point;
}

void Q8Conv::run_dequantized(const void* x, float x_scale, int32_t x_zero_point, float* y,
                             pthreadpool_t pool, OutputRange* range, size_t y_pixel_stride) {
  if (range != nullptr && y_pixel_stride != 0 && y_pixel_stride != size_t(s_.out_c))
    throw std::logic_error("Q8Conv::run_dequantized: a range is taken over a dense output only");
  if (!float_out_) throw std::logic_error("Q8Conv::run_dequantized: this conv requantizes (run)");
  if (x_zero_point < q8_min(x_type_) || x_zero_point > q8_max(x_type_)) {
    throw std::invalid_argument("Q8Conv: x zero point " + std::to_string(x_zero_point) +
                                " is outside " + q8_name(x_type_));
  }
  set_padding_value(x_zero_point);
  float_out_->prepare(x_type_, x_scale, x_zero_point);
  run_tiles(x, y, pool, range, y_pixel_stride);
}

void Q8Conv::set_output_table(const uint8_t* table, Isa isa) {
  if (float_out_) throw std::logic_error("Q8Conv::set_output_table: a float-output conv has no bytes to look up");
  output_table_ = table;
  output_lookup_ = choose_q8_lookup(isa);
  name_ = name_ + "+" + (output_lookup_ ? row_kernel(*output_lookup_) : reference_kernel("q8_lookup__ref"));
}

void Q8Conv::run_tiles(const void* x, void* y, pthreadpool_t pool, OutputRange* range, size_t y_pixel_stride) const {
  const size_t mr = static_cast<size_t>(kernel_->mr);
  const size_t nr = static_cast<size_t>(kernel_->nr);
  const size_t pixels = q8_conv_pixels(s_);
  const size_t out_c = static_cast<size_t>(s_.out_c);
  const size_t row_bytes = static_cast<size_t>(s_.in_w) * s_.in_c;
  const uint8_t* x_bytes = static_cast<const uint8_t*>(x);
  ptrdiff_t a_offset = 0;
  const uint8_t* a_end = nullptr;
  if (padded_.size() > 0) {
    // The frame keeps x_zero_point from the constructor; only the interior changes.
    // Rows over the pool in pieces of about kEltwiseMinPiece bytes (each row its own slice).
    uint8_t* padded = padded_.data();
    const size_t in_h = static_cast<size_t>(s_.in_h);
    const size_t rows_per_piece = std::max<size_t>(1, kEltwiseMinPiece / std::max<size_t>(row_bytes, 1));
    parallel_pieces(pool, static_cast<size_t>(s_.batch) * s_.in_d * in_h, rows_per_piece, [&](size_t first, size_t count) {
      for (size_t r = first; r < first + count; ++r) {
        const size_t plane = r / in_h, iy = r % in_h;  // plane: n * in_d + iz
        const size_t to = ((plane * padded_h_ + s_.pad_top + iy) * padded_w_ + s_.pad_left) * s_.in_c;
        std::memcpy(padded + to, x_bytes + r * row_bytes, row_bytes);
      }
    });
    a_end = padded + padded_.size();
  } else {
    if (bound_x_ == nullptr) throw std::logic_error("Q8Conv::run: bind() was never called");
    a_offset = x_bytes - bound_x_;
    a_end = x_bytes + static_cast<size_t>(s_.batch) * s_.in_d * s_.in_h * row_bytes;
  }
  uint8_t* y_base = static_cast<uint8_t*>(y);
  const size_t ys = y_pixel_stride != 0 ? y_pixel_stride : out_c;  // elements between y's pixels
  const float lo = static_cast<float>(qmin_ - y_zero_point_);
  const float hi = static_cast<float>(qmax_ - y_zero_point_);
  const size_t ks = im2col_ ? 1 : taps_;
  const size_t kc = im2col_ ? gemm_kc_ : kc_;
  auto tile = [&](size_t g, size_t b) {
    Q8IgemmArgs args;
    args.mr = std::min(mr, pixels - g * mr);
    args.nc = std::min(nr, out_c - b * nr);
    args.kc = kc;
    args.ks = ks;
    args.a = indirection_.data() + g * ks * mr;
    args.zero = zero_row_.data();
    args.a_offset = a_offset;
    args.a_end = a_end;
    args.w = packed_->bytes.data() + b * packed_->block_bytes;
    args.y_zero_point = y_zero_point_;
    if (float_out_) {
      args.y = y_base + (g * mr * ys + b * nr) * sizeof(float);
      args.y_row_stride = ys * sizeof(float);
      float_out_->set_args(args, b);
      kernel_->fn_f32(args);
      float_out_->activate(args.mr, args.nc, static_cast<float*>(args.y), ys);
      return;
    }
    args.y = y_base + g * mr * ys + b * nr;
    args.y_row_stride = ys;
    args.lo = lo;
    args.hi = hi;
    kernel_->fn(args);
  };
  // The fused lookup over the rows of group g, blocks [first, end), once they are all written:
  // one call over the rows when the blocks span them (a call per 16-64 byte tile row cost more
  // than the separate step it replaces).
  auto look_up = [&](size_t g, size_t first, size_t end) {
    const size_t rows = std::min(mr, pixels - g * mr);
    const size_t col = first * nr, cols = std::min(out_c, end * nr) - col;
    uint8_t* at = y_base + g * mr * ys + col;
    auto bytes = [&](size_t n, uint8_t* p) {
      if (output_lookup_) output_lookup_->fn(n, p, output_table_, p);
      else q8_lookup__ref(int64_t(n), p, output_table_, p);
    };
    if (cols == out_c && ys == out_c) bytes(rows * out_c, at);
    else for (size_t r = 0; r < rows; ++r) bytes(cols, at + r * ys);
  };
  const size_t groups = (pixels + mr - 1) / mr;
  const size_t blocks = (out_c + nr - 1) / nr;
  // Whole pixel groups (every block of their rows); with a range, their output goes to it in
  // chunks while still in cache.
  auto run_groups = [&](size_t first, size_t count) {
    run_row_groups(first, count, mr, pixels, out_c, static_cast<const float*>(y), range, [&](size_t g) {
      for (size_t b = 0; b < blocks; ++b) tile(g, b);
      if (output_table_) look_up(g, 0, blocks);
    });
  };
  const size_t per_task = row_groups_per_task(pool, groups);
  if (im2col_) {
    // Each task packs the windows of its pixel groups, then multiplies them: the kernel's
    // 4-byte loads of a row straddle the overlapping 16-byte stores that built it, which the
    // store buffer cannot forward (a stall each), so rows are read only after many more stores.
    a_offset = 0;
    a_end = windows_.data() + windows_.size();
    const uint8_t* padded = padded_.data();
    auto pack_and_run = [&](size_t start, size_t count) {
      pack_windows(start * mr, std::min((start + count) * mr, pixels), padded);
      run_groups(start, count);
    };
    pthreadpool_parallelize_1d_tile_1d(pool, pack_and_run, groups, per_task);
    return;
  }
  if (range != nullptr && float_out_) {
    pthreadpool_parallelize_1d_tile_1d(pool, run_groups, groups, per_task);
    return;
  }
  if (output_table_) run_q8_tiles(pool, groups, blocks, packed_->block_bytes, tile, look_up);
  else run_q8_tiles(pool, groups, blocks, packed_->block_bytes, tile);
}

}  // namespace octet::kernels
