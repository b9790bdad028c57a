#include "kernels/conv/f32_narrow_group_conv.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "kernels/fallback.h"
#include "kernels/gemm/f32_gemm.h"
#include "kernels/packed_cache.h"

namespace octet::kernels {
namespace {

// Output pixels per task: a few of the microkernel's pixel groups, so the epilogue runs on a
// tile still in L1; fewer where the threads would otherwise share a handful of tasks.
constexpr size_t kTaskPixels = 32;
// Kernel rows the row task keeps its pointers for on the stack.
constexpr int kMaxRowKernelH = 16;

int group_width(const Conv2dShape& s) { return s.groups > 0 ? s.in_c / s.groups : 0; }

struct GconvTask {
  const F32GconvKernel* kernel;
  const Conv2dShape* s;
  const float* x;
  int lo, hi;
  const float* const* taps;
  const float* zero;
  const float* packed;
  float* y;
  const float* residual;
  const F32Epilogue* epilogue;
  size_t channels, ks, image_in, image_pixels;
  float min, max;
};

}  // namespace

const F32GconvKernel* choose_f32_gconv_kernel(Isa isa, int group_width) {
  for (const F32GconvKernel& k : kF32GconvKernels)
    if (k.group_width == group_width && row_runs(k, isa)) return &k;
  return nullptr;
}

bool F32NarrowGroupConv::supports(const Conv2dShape& s, const Activation&) {
  const int g = group_width(s);
  return s.groups > 1 && (g == 2 || g == 4) && s.in_c == s.groups * g && s.out_c == s.in_c && !s.has_depth() &&
         s.batch > 0 && s.in_h > 0 && s.in_w > 0 && s.out_h > 0 && s.out_w > 0 && s.kernel_h > 0 && s.kernel_w > 0 &&
         s.stride_h > 0 && s.stride_w > 0 && s.dilation_h > 0 && s.dilation_w > 0;
}

double F32NarrowGroupConv::cycles(const Conv2dShape& s, const F32GconvKernel& k) {
  const double pixels = double(s.batch) * s.out_h * s.out_w;
  const double vectors = double((s.out_c + k.channel_tile - 1) / k.channel_tile);
  const double fmas = pixels * vectors * s.kernel_h * s.kernel_w * k.group_width;
  // The row kernel broadcasts each input column once for the up to 3 pixels that read it:
  // (P - 1) * stride + 3 columns per kernel row for P pixels' 3 P taps.
  const double per_fma = f32_gconv_row_fits(s) ? double((kF32GconvPixels - 1) * s.stride_w + 3) / (3 * kF32GconvPixels) : 1.0;
  const double shuffles = k.channel_tile == k.group_width ? 0.0 : fmas * per_fma;
  return std::max(fmas / 2.0, shuffles) / vector_rate(k.isa);
}

double F32NarrowGroupConv::tile_cycles(const Conv2dShape& s, Isa isa) {
  const int64_t m = int64_t(s.out_h) * s.out_w, n = group_width(s), k = int64_t(s.kernel_h) * s.kernel_w * n;
  return double(s.batch) * s.groups * f32_gemm_compute_cycles(choose_f32_gemm_kernel(isa, m, n, k), m, n, k);
}

bool F32NarrowGroupConv::faster_than_tile(const Conv2dShape& s, Isa isa) {
  if (!supports(s, Activation{})) return false;
  const F32GconvKernel* k = choose_f32_gconv_kernel(isa, group_width(s));
  if (k == nullptr) return false;
  try {
    return cycles(s, *k) < tile_cycles(s, isa);
  } catch (const Unsupported&) {  // no GEMM tile at this level: nothing to beat
    return true;
  }
}

F32NarrowGroupConv::F32NarrowGroupConv(const Conv2dShape& s, const float* weights, const float* bias,
                                       const Activation& act, Isa isa, PackedCache* cache)
    : F32NarrowGroupConv(s, weights, bias, act, [&]() -> const F32GconvKernel& {
        const F32GconvKernel* k = supports(s, act) ? choose_f32_gconv_kernel(isa, group_width(s)) : nullptr;
        if (k == nullptr)
          throw Unsupported("F32NarrowGroupConv: no narrow-group kernel for groups of " +
                            std::to_string(group_width(s)) + " channels (in_c " + std::to_string(s.in_c) +
                            ", out_c " + std::to_string(s.out_c) + ") under " + isa_name(isa));
        return *k;
      }(), cache) {}

F32NarrowGroupConv::F32NarrowGroupConv(const Conv2dShape& s, const float* weights, const float* bias,
                                       const Activation& act, const F32GconvKernel& kernel, PackedCache* cache)
    : s_(s), act_(act), kernel_(&kernel), name_(row_kernel(kernel)), epilogue_(act, kernel.isa) {
  if (!supports(s, act) || kernel.group_width != group_width(s))
    throw Unsupported(std::string("F32NarrowGroupConv: ") + kernel.name + " runs groups of " +
                      std::to_string(kernel.group_width) + " input and output channels; got groups " +
                      std::to_string(s.groups) + ", in_c " + std::to_string(s.in_c) + ", out_c " +
                      std::to_string(s.out_c));
  if (!isa_supported(kernel.isa))
    throw std::invalid_argument(std::string("F32NarrowGroupConv: ") + kernel.name + " needs " +
                                isa_name(kernel.isa) + ", which this CPU does not support");
  const F32MinMax clamp = f32_clamp_for(act);
  min_ = clamp.min;
  max_ = clamp.max;
  if (epilogue_.active()) name_ = name_ + "+" + epilogue_.kernel_id();
  const size_t C = size_t(s.out_c), G = size_t(kernel.group_width), tile = size_t(kernel.channel_tile);
  const size_t taps = size_t(s.kernel_h) * s.kernel_w, blocks = (C + tile - 1) / tile;
  packed_ = shared_packing<std::vector<float>>(
      cache,
      PackKey("f32_gconv").add(int64_t(tile)).add(int64_t(G)).add(int64_t(C)).add(int64_t(taps))
          .add_array(weights, C * G * taps).add_array(bias, C),
      [&] {
        const size_t block_floats = (taps * G + 1) * tile;
        std::vector<float> packed(blocks * block_floats, 0.0f);
        for (size_t o = 0; o < C; ++o) {
          float* block = packed.data() + o / tile * block_floats + o % tile;
          block[0] = bias ? bias[o] : 0.0f;
          for (size_t t = 0; t < taps; ++t)
            for (size_t c = 0; c < G; ++c) block[(1 + t * G + c) * tile] = weights[(o * G + c) * taps + t];
        }
        return packed;
      });
  rows_ = f32_gconv_row_fits(s) && s.kernel_h <= kMaxRowKernelH;
  const DwColumns cols = dw_interior_columns(s);
  lo_ = cols.lo;
  hi_ = cols.hi;
  // The row kernel reads a whole window row of the interior pixels from the pad row.
  const size_t row_floats = rows_ ? (size_t(std::max(hi_ - lo_, 0)) * s.stride_w + 3) * C : 0;
  zero_.assign(std::max(blocks * tile, row_floats), 0.0f);
}

void F32NarrowGroupConv::bind(const float* x) {
  bound_ = x;
  build_tap_pointers(s_, x, static_cast<const float*>(zero_.data()), taps_);
}

void F32NarrowGroupConv::tile_task(void* context, size_t image, size_t pixel, size_t count) {
  const GconvTask& t = *static_cast<const GconvTask*>(context);
  const size_t offset = (image * t.image_pixels + pixel) * t.channels;
  float* y = t.y + offset;
  t.kernel->indirect({t.taps + pixel * t.ks, count, t.channels, int(t.ks), image * t.image_in, t.zero, t.packed, y,
                 t.residual ? t.residual + offset : nullptr, t.min, t.max});
  t.epilogue->run(count, t.channels, y, t.channels);  // while the tile is in L1
}

// One output row: the border pixels on the indirect kernel, the interior on the row kernel.
void F32NarrowGroupConv::row_task(void* context, size_t image, size_t oy) {
  const GconvTask& t = *static_cast<const GconvTask*>(context);
  const Conv2dShape& s = *t.s;
  const size_t out_w = size_t(s.out_w), C = t.channels, first = oy * out_w;
  const size_t offset = (image * t.image_pixels + first) * C;
  float* y = t.y + offset;
  const float* r = t.residual ? t.residual + offset : nullptr;
  const auto indirect = [&](size_t p0, size_t count) {
    if (count == 0) return;
    t.kernel->indirect({t.taps + (first + p0) * t.ks, count, C, int(t.ks), image * t.image_in, t.zero, t.packed,
                        y + p0 * C, r ? r + p0 * C : nullptr, t.min, t.max});
  };
  indirect(0, size_t(t.lo));
  if (t.hi > t.lo) {
    const float* rows[kMaxRowKernelH];
    const float* image_x = t.x + image * t.image_in;
    for (int ky = 0; ky < s.kernel_h; ++ky) {
      const int iy = int(oy) * s.stride_h - s.pad_top + ky * s.dilation_h;
      rows[ky] =
          iy >= 0 && iy < s.in_h ? image_x + (size_t(iy) * s.in_w + size_t(t.lo * s.stride_w - s.pad_left)) * C : t.zero;
    }
    t.kernel->row({rows, size_t(t.hi - t.lo), C, s.kernel_h, s.stride_w, t.packed, y + size_t(t.lo) * C,
                   r ? r + size_t(t.lo) * C : nullptr, t.min, t.max});
  }
  indirect(size_t(t.hi), out_w - size_t(t.hi));
  t.epilogue->run(out_w, C, y, C);  // while the row is in L1
}

void F32NarrowGroupConv::run(const float* x, float* y, pthreadpool_t pool, const float* residual) const {
  if (x != bound_ || x == nullptr)
    throw std::invalid_argument("F32NarrowGroupConv::run: the input is not the one bind() was given; call bind(x) first");
  const size_t pixels = size_t(s_.out_h) * s_.out_w, batch = size_t(s_.batch);
  GconvTask task{kernel_, &s_, x, lo_, hi_, taps_.data(), zero_.data(), packed_->data(), y, residual, &epilogue_, size_t(s_.out_c),
               size_t(s_.kernel_h) * s_.kernel_w, size_t(s_.in_h) * s_.in_w * s_.in_c, pixels, min_, max_};
  if (rows_) {
    pthreadpool_parallelize_2d(pool, &F32NarrowGroupConv::row_task, &task, batch, size_t(s_.out_h), 0);
    return;
  }
  const size_t threads = pool == nullptr ? 1 : pthreadpool_get_threads_count(pool);
  const size_t tile = batch * ((pixels + kTaskPixels - 1) / kTaskPixels) < 4 * threads ? 8 : kTaskPixels;
  pthreadpool_parallelize_2d_tile_1d(pool, &F32NarrowGroupConv::tile_task, &task, batch, pixels,
                                     tile, 0);
}

}  // namespace octet::kernels
