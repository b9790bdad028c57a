#include "kernels/ref/fp_contract_off.h"

#include "kernels/conv/f32_conv_transpose.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "kernels/fallback.h"
#include "kernels/kernel_list.h"

namespace octet::kernels {
namespace {

// Taps over (kd, kh, kw) and pixels over (d, h, w): a 2-D shape has depth 1.
int taps(const ConvTranspose2dShape& s) { return s.kernel_d * s.kernel_h * s.kernel_w; }
size_t pixels(const ConvTranspose2dShape& s) { return size_t(s.in_d) * s.in_h * s.in_w; }
size_t out_rows(const ConvTranspose2dShape& s) { return size_t(s.out_d) * s.out_h; }
size_t col_width(const ConvTranspose2dShape& s) { return size_t(taps(s)) * (s.out_c / s.groups); }
bool direct(const ConvTranspose2dShape& s) { return s.in_c == s.groups; }
int chunk_count(const ConvTranspose2dShape& s) {
  const int k = s.in_c / s.groups, c = std::max(1, s.k_chunk);
  return (k + c - 1) / c;
}
// x must be copied per GEMM when the GEMM's rows are not x's (a group's or a K block's channels).
bool copies_x(const ConvTranspose2dShape& s) { return s.groups > 1 || chunk_count(s) > 1; }

void check(const ConvTranspose2dShape& s) {
  if (s.batch < 0 || s.in_h < 1 || s.in_w < 1 || s.in_c < 1 || s.out_h < 1 || s.out_w < 1 || s.out_c < 1 ||
      s.kernel_h < 1 || s.kernel_w < 1 || s.stride_h < 1 || s.stride_w < 1 || s.dilation_h < 1 ||
      s.dilation_w < 1 || s.groups < 1 || s.in_c % s.groups || s.out_c % s.groups || s.in_d < 1 || s.out_d < 1 ||
      s.kernel_d < 1 || s.stride_d < 1 || s.dilation_d < 1)
    throw std::invalid_argument("F32ConvTranspose: invalid shape");
  if (F32ConvTranspose::scratch_floats(s) * sizeof(float) > F32ConvTranspose::kMaxScratchBytes)
    throw Unsupported("the column buffer of one image would exceed 256 MiB");
}

}  // namespace

size_t F32ConvTranspose::scratch_floats(const ConvTranspose2dShape& s) {
  if (direct(s)) return 0;
  const size_t cols = pixels(s) * col_width(s);
  const size_t a = copies_x(s) ? pixels(s) * size_t(std::min(s.in_c / s.groups, std::max(1, s.k_chunk))) : 0;
  return cols * (chunk_count(s) > 1 ? 2 : 1) + a;
}

F32ConvTranspose::F32ConvTranspose(const ConvTranspose2dShape& s, const float* weights, const float* bias,
                                   const Activation& act, Isa isa)
    : s_(s), act_(act), clamp_(f32_clamp_for(act)), epilogue_(act, isa), add_(first_runnable(kF32AddClampUkernels, isa)) {
  check(s);
  if (isa == Isa::scalar) throw Unsupported("--isa scalar");
  // Throws Unsupported when the level has no FP32 GEMM tile.
  const F32GemmKernel* kernel =
      &choose_f32_gemm_kernel(isa, int64_t(pixels(s)), int64_t(col_width(s)), s.in_c / s.groups);
  init(weights, [kernel](int64_t k, int64_t n, const float* b) {
    return std::make_unique<F32Gemm>(k, n, b, false, nullptr, Activation{}, *kernel);
  });
  bias_.assign(size_t(s.out_c), 0.0f);
  if (bias) std::copy(bias, bias + s.out_c, bias_.begin());
}

F32ConvTranspose::F32ConvTranspose(const ConvTranspose2dShape& s, const float* weights, const float* bias,
                                   const Activation& act, const F32GemmKernel& kernel)
    : s_(s),
      act_(act),
      clamp_(f32_clamp_for(act)),
      epilogue_(act, kernel.isa),
      add_(first_runnable(kF32AddClampUkernels, kernel.isa)) {
  check(s);
  init(weights, [&kernel](int64_t k, int64_t n, const float* b) {
    return std::make_unique<F32Gemm>(k, n, b, false, nullptr, Activation{}, kernel);
  });
  bias_.assign(size_t(s.out_c), 0.0f);
  if (bias) std::copy(bias, bias + s.out_c, bias_.begin());
}

template <class MakeGemm>
void F32ConvTranspose::init(const float* weights, MakeGemm make_gemm) {
  const int gc_in = s_.in_c / s_.groups, gc_out = s_.out_c / s_.groups, t = taps(s_);
  init_taps();
  if (direct(s_)) {
    taps_.resize(size_t(t) * s_.out_c);
    for (int oc = 0; oc < s_.out_c; ++oc)
      for (int p = 0; p < t; ++p) taps_[size_t(p) * s_.out_c + oc] = weights[size_t(oc) * t + p];
    name_ = portable_kernel("f32_conv_transpose_channelwise");
    if (epilogue_.active()) name_.name += "+" + epilogue_.kernel_name();
    return;
  }
  const size_t n = col_width(s_);
  // One group's weights as B [gc_in][tap][m]: a column per (tap, output channel), so that the
  // gather pass reads each tap's output channels contiguously.
  std::vector<float> b(size_t(gc_in) * n);
  const int step = std::max(1, s_.k_chunk);
  for (int k0 = 0; k0 < gc_in; k0 += step) chunks_.push_back(Chunk{k0, std::min(step, gc_in - k0), {}});
  for (int g = 0; g < s_.groups; ++g) {
    for (int c = 0; c < gc_in; ++c)
      for (int m = 0; m < gc_out; ++m)
        for (int p = 0; p < t; ++p)
          b[size_t(c) * n + size_t(p) * gc_out + m] = weights[(size_t(g * gc_in + c) * gc_out + m) * t + p];
    for (Chunk& ch : chunks_) ch.gemm.push_back(make_gemm(ch.k, int64_t(n), b.data() + size_t(ch.k0) * n));
  }
  name_ = chunks_[0].gemm[0]->kernel_id();
  name_.name = "f32_conv_transpose(" + name_.name + ")";
  if (epilogue_.active()) name_.name += "+" + epilogue_.kernel_name();
}

// y = clamp(y + bias) over one pixel's channels of one group; the activation follows per row
// (act_row): one call over a row's pixels, as the separate step would make over the tensor,
// instead of one per pixel, whose few channels would leave the vector kernel mostly in its tail.
void F32ConvTranspose::finish(float* yp, size_t count, const float* bias) const {
  if (add_) {
    add_->fn(count, yp, bias, yp, clamp_.min, clamp_.max);
  } else {
    for (size_t i = 0; i < count; ++i) {
      const float v = yp[i] + bias[i];
      yp[i] = v < clamp_.min ? clamp_.min : (v > clamp_.max ? clamp_.max : v);
    }
  }
}

// The taps landing on each output row (kz, ky) and column (kx), in ORT's Col2im order (taps row
// by row; in 3-D plane by plane, as Col2imNd). Rows count the output rows of an image, out_h
// per plane.
void F32ConvTranspose::init_taps() {
  const ConvTranspose2dShape& s = s_;
  row_start_.assign(1, 0);
  for (int row = 0; row < s.out_d * s.out_h; ++row) {
    const int oz = row / s.out_h, oy = row % s.out_h;
    for (int kz = 0; kz < s.kernel_d; ++kz) {
      const int tz = oz + s.pad_front - kz * s.dilation_d;
      if (tz < 0 || tz % s.stride_d || tz / s.stride_d >= s.in_d) continue;
      for (int ky = 0; ky < s.kernel_h; ++ky) {
        const int ty = oy + s.pad_top - ky * s.dilation_h;
        if (ty < 0 || ty % s.stride_h || ty / s.stride_h >= s.in_h) continue;
        tap_rows_.push_back({(size_t(tz / s.stride_d) * s.in_h + size_t(ty / s.stride_h)) * s.in_w,
                             (kz * s.kernel_h + ky) * s.kernel_w});
      }
    }
    row_start_.push_back(tap_rows_.size());
  }
  col_start_.assign(1, 0);
  for (int ox = 0; ox < s.out_w; ++ox) {
    for (int kx = 0; kx < s.kernel_w; ++kx) {
      const int tx = ox + s.pad_left - kx * s.dilation_w;
      if (tx < 0 || tx % s.stride_w || tx / s.stride_w >= s.in_w) continue;
      tap_cols_.push_back({tx / s.stride_w, kx});
    }
    col_start_.push_back(tap_cols_.size());
  }
}

// fn(pixel, tap) for each input pixel and tap that land on output pixel (row, ox), in order;
// pixel and tap are indices over (d, h, w) and (kd, kh, kw).
template <class Fn>
void F32ConvTranspose::for_each_tap(int row, int ox, Fn fn) const {
  const TapCol* c0 = tap_cols_.data() + col_start_[size_t(ox)];
  const TapCol* c1 = tap_cols_.data() + col_start_[size_t(ox) + 1];
  for (size_t r = row_start_[size_t(row)]; r < row_start_[size_t(row) + 1]; ++r) {
    const TapRow& t = tap_rows_[r];
    for (const TapCol* c = c0; c < c1; ++c) fn(t.pixel + size_t(c->ix), t.tap + c->kx);
  }
}

// One input channel per group: each tap's products x · w (rounded, as ORT's K = 1 GEMM rounds
// them) added in tap order.
void F32ConvTranspose::direct_row(int row, const float* x, float* y) const {
  const ConvTranspose2dShape& s = s_;
  const size_t c_out = size_t(s.out_c), mult = size_t(s.out_c / s.groups);
  for (int ox = 0; ox < s.out_w; ++ox) {
    float* yp = y + (size_t(row) * s.out_w + ox) * c_out;
    bool any = false;
    for_each_tap(row, ox, [&](size_t pixel, int tap) {
      const float* xp = x + pixel * s.in_c;
      const float* wp = taps_.data() + size_t(tap) * c_out;
      if (mult == 1) {
        if (any) {
          for (size_t c = 0; c < c_out; ++c) yp[c] = yp[c] + xp[c] * wp[c];
        } else {
          for (size_t c = 0; c < c_out; ++c) yp[c] = xp[c] * wp[c];
        }
      } else {
        for (size_t c = 0; c < c_out; ++c) {
          const float v = xp[c / mult] * wp[c];
          yp[c] = any ? yp[c] + v : v;
        }
      }
      any = true;
    });
    if (!any) std::fill(yp, yp + c_out, 0.0f);
    finish(yp, c_out, bias_.data());
  }
  float* out_row = y + size_t(row) * s.out_w * c_out;
  epilogue_.run(1, size_t(s.out_w) * c_out, out_row, size_t(s.out_w) * c_out);
}

// One output pixel's channels of one group, from the cols of the input pixels that land on it.
void F32ConvTranspose::gather_row(int row, const float* cols, float* y, int group) const {
  const ConvTranspose2dShape& s = s_;
  const size_t gc_out = size_t(s.out_c / s.groups);
  const float inf = __builtin_inff();
  auto add = [&](float* dst, const float* src, size_t count, float lo, float hi) {
    if (add_) {
      add_->fn(count, dst, src, dst, lo, hi);
      return;
    }
    for (size_t i = 0; i < count; ++i) {
      const float v = dst[i] + src[i];
      dst[i] = v < lo ? lo : (v > hi ? hi : v);
    }
  };
  for (int ox = 0; ox < s.out_w; ++ox) {
    float* yp = y + (size_t(row) * s.out_w + ox) * s.out_c + size_t(group) * gc_out;
    bool any = false;
    for_each_tap(row, ox, [&](size_t pixel, int tap) {
      const float* src = cols + (pixel * taps(s) + size_t(tap)) * gc_out;
      if (!any) std::memcpy(yp, src, gc_out * sizeof(float));
      else add(yp, src, gc_out, -inf, inf);
      any = true;
    });
    if (!any) std::fill(yp, yp + gc_out, 0.0f);
    finish(yp, gc_out, bias_.data() + size_t(group) * gc_out);
  }
  // The group's channels of the row: out_w runs of gc_out, out_c apart (one run when ungrouped).
  epilogue_.run(size_t(s.out_w), gc_out, y + size_t(row) * s.out_w * s.out_c + size_t(group) * gc_out, size_t(s.out_c));
}

struct ConvTransposeRowTask {
  const F32ConvTranspose* self;
  const float* cols;  // the GEMM's columns, or x for the direct path
  float* y;
  int group;
  static void run(void* ctx, size_t row) {
    auto* t = static_cast<const ConvTransposeRowTask*>(ctx);
    if (t->group < 0) t->self->direct_row(int(row), t->cols, t->y);
    else t->self->gather_row(int(row), t->cols, t->y, t->group);
  }
};

void F32ConvTranspose::run(const float* x, float* y, float* scratch, pthreadpool_t pool) const {
  const ConvTranspose2dShape& s = s_;
  const size_t px = pixels(s), n = col_width(s);
  if (direct(s)) {
    for (int img = 0; img < s.batch; ++img) {
      ConvTransposeRowTask task{this, x + size_t(img) * px * s.in_c, y + size_t(img) * out_rows(s) * s.out_w * s.out_c, -1};
      pthreadpool_parallelize_1d(pool, ConvTransposeRowTask::run, &task, out_rows(s), 0);
    }
    return;
  }
  const int gc_in = s.in_c / s.groups;
  float* cols = scratch;
  float* part = cols + px * n;  // a later K block's products
  float* a = part + (chunks_.size() > 1 ? px * n : 0);
  for (int img = 0; img < s.batch; ++img) {
    const float* xi = x + size_t(img) * px * s.in_c;
    float* yi = y + size_t(img) * out_rows(s) * s.out_w * s.out_c;
    for (int g = 0; g < s.groups; ++g) {
      for (size_t j = 0; j < chunks_.size(); ++j) {
        const Chunk& ch = chunks_[j];
        const float* rows = xi;
        if (copies_x(s)) {
          for (size_t p = 0; p < px; ++p)
            std::memcpy(a + p * ch.k, xi + p * s.in_c + size_t(g) * gc_in + ch.k0, size_t(ch.k) * sizeof(float));
          rows = a;
        }
        ch.gemm[size_t(g)]->run(int64_t(px), rows, j == 0 ? cols : part, pool);
        if (j > 0) {  // MLAS adds each later K block's products to C
          const float inf = __builtin_inff();
          if (add_) {
            add_->fn(px * n, cols, part, cols, -inf, inf);
          } else {
            for (size_t i = 0; i < px * n; ++i) cols[i] += part[i];
          }
        }
      }
      ConvTransposeRowTask task{this, cols, yi, g};
      pthreadpool_parallelize_1d(pool, ConvTransposeRowTask::run, &task, out_rows(s), 0);
    }
  }
}

}  // namespace octet::kernels
