#include "kernels/conv/f32_conv.h"

#include <algorithm>
#include <vector>
#include <stdexcept>

#include "kernels/fallback.h"
#include "kernels/packed_cache.h"

namespace octet::kernels {

namespace {

bool plain_gemm_shape(const Conv2dShape& s) {
  return s.kernel_d == 1 && s.kernel_h == 1 && s.kernel_w == 1 && s.stride_d == 1 && s.stride_h == 1 &&
         s.stride_w == 1 && s.pad_front == 0 && s.pad_top == 0 && s.pad_left == 0 && s.out_d == s.in_d &&
         s.out_h == s.in_h && s.out_w == s.in_w;
}

// Output pixels of one image, and kernel taps (depth included: a 3-D conv's taps run over
// (kd, kh, kw) in ONNX's weight order, its pixels over (od, oh, ow)).
size_t image_pixels(const Conv2dShape& s) { return size_t(s.out_d) * s.out_h * s.out_w; }
int64_t kernel_taps(const Conv2dShape& s) { return int64_t(s.kernel_d) * s.kernel_h * s.kernel_w; }

const Conv2dShape& checked_for_igemm(const Conv2dShape& s, const Activation& act) {
  if (!F32Conv::supports(s, act))
    throw Unsupported("F32Conv: unsupported conv (groups " + std::to_string(s.groups) +
                                ", in_c " + std::to_string(s.in_c) + ", out_c " + std::to_string(s.out_c) +
                                "): needs channels that the groups divide and positive sizes");
  return s;
}

const F32GemmKernel& runnable(const F32GemmKernel& kernel) {
  if (!isa_supported(kernel.isa))
    throw std::invalid_argument(std::string(kernel.igemm_name) + " needs " + isa_name(kernel.isa) +
                                ", which this CPU does not support");
  return kernel;
}

struct ConvTask {
  const F32GemmKernel* kernel;
  F32GemmUkernel gemm;  // the kernel's plain or streaming form
  F32IgemmUkernel igemm;
  const float* x;
  float* y;
  const float* w;
  size_t block_stride;
  const float* const* indirection;
  const float* zero;
  size_t in_c, out_c, ks;
  size_t y_stride;  // floats between y's pixels
  size_t image_in, image_pixels;  // floats per input image, output pixels per image
  F32MinMax clamp;
  const F32Epilogue* epilogue;
  const float* residual;  // nullptr, or added to y's tiles before the clamp (which then moves to the epilogue)
  size_t chunk = 0;       // columns per chunk, when the weights run chunk by chunk
  size_t row_tiles = 0;   // tiles of rows over each chunk (all images)
  // Grouped conv: each group reads its group_in_c input channels (a_offset moves to them) and
  // writes its group_out_c output channels; its packed columns start a multiple of NR apart
  // (group_cols, padded), so a column tile never straddles two groups.
  size_t group_in_c = 0, group_out_c = 0, group_cols = 0;

  void finish_tile(size_t rows, size_t cols, float* c) const {
    const size_t at = size_t(c - y);  // the residual is dense: pixel at / y_stride, channel at % y_stride
    if (residual) epilogue->run_residual(rows, cols, c, y_stride, residual + at / y_stride * out_c + at % y_stride, out_c);
    else epilogue->run(rows, cols, c, y_stride);
  }
};

// Plain GEMM: the pixels of all images are the rows.
void run_gemm_tile(void* context, size_t row, size_t col, size_t rows, size_t cols) {
  const auto& t = *static_cast<const ConvTask*>(context);
  float* c = t.y + row * t.y_stride + col;
  t.gemm(rows, cols, t.in_c, t.x + row * t.in_c, t.in_c, t.w + col / t.kernel->nr * t.block_stride, c, t.y_stride,
         t.clamp);
  t.finish_tile(rows, cols, c);
}

// Chunk by chunk, tile `tile` of a chunk's row_tiles prefetches its share of the next chunk.
ScopedStreamAhead next_chunk_ahead(const ConvTask& t, size_t chunk_index, size_t tile) {
  const auto [next, bytes] = f32_next_chunk(t.w, t.block_stride, t.kernel->nr, t.out_c, t.chunk, chunk_index);
  return ScopedStreamAhead(next, bytes, tile, t.row_tiles);
}

void run_gemm_tile_columns_first(void* context, size_t col, size_t row, size_t cols, size_t rows) {
  const auto& t = *static_cast<const ConvTask*>(context);
  const ScopedStreamAhead ahead = next_chunk_ahead(t, col / t.chunk, row / t.kernel->mr);
  run_gemm_tile(context, row, col, rows, cols);
}

// One tile of a grouped conv: `col` counts packed columns, group after group.
void run_grouped_igemm_tile(void* context, size_t image, size_t pixel, size_t col, size_t rows, size_t cols) {
  const auto& t = *static_cast<const ConvTask*>(context);
  const size_t group = col / t.group_cols, first = col % t.group_cols;
  if (first >= t.group_out_c) return;  // the padding columns of the group's last block
  cols = std::min(cols, t.group_out_c - first);
  const size_t mr = t.kernel->mr;
  float* c = t.y + (image * t.image_pixels + pixel) * t.y_stride + group * t.group_out_c + first;
  t.igemm(rows, cols, t.group_in_c, t.ks, t.indirection + pixel / mr * t.ks * mr,
          image * t.image_in + group * t.group_in_c, t.zero, t.w + col / t.kernel->nr * t.block_stride, c, t.y_stride,
          t.clamp);
  t.finish_tile(rows, cols, c);
}

void run_igemm_tile(void* context, size_t image, size_t pixel, size_t col, size_t rows, size_t cols) {
  const auto& t = *static_cast<const ConvTask*>(context);
  const size_t mr = t.kernel->mr;
  float* c = t.y + (image * t.image_pixels + pixel) * t.y_stride + col;
  t.igemm(rows, cols, t.in_c, t.ks, t.indirection + pixel / mr * t.ks * mr, image * t.image_in, t.zero,
          t.w + col / t.kernel->nr * t.block_stride, c, t.y_stride, t.clamp);
  t.finish_tile(rows, cols, c);
}

// One tile of rows over one whole chunk of columns. Run chunk after chunk in one parallel
// loop, threads take whole chunks (each its own stream of weights) and wait for each other once.
// A loop of one parallel call per chunk split each chunk's few row tiles between the threads and
// waited after every chunk: on 2 threads (Zen 5) resnet18_cifar took 3.07-3.53 ms that way
// against 2.81-2.94 now; one thread runs the same order either way.
void run_igemm_chunk_tile(void* context, size_t chunk_index, size_t image, size_t pixel, size_t, size_t rows) {
  const auto& t = *static_cast<const ConvTask*>(context);
  const size_t col = chunk_index * t.chunk, mr = t.kernel->mr;
  const ScopedStreamAhead ahead =
      next_chunk_ahead(t, chunk_index, image * ((t.image_pixels + mr - 1) / mr) + pixel / mr);
  run_igemm_tile(context, image, pixel, col, rows, std::min(t.chunk, t.out_c - col));
}

}  // namespace

// Below 8 input channels a tap is a few floats and the microkernel's per-tap work (MR row
// pointers, the k loop's entry) outweighs its multiply-adds. The padded copy costs a pass over
// x per run, more than merging 3 taps saves (a 3x3 stem with 3 input channels runs slower
// merged), so only rows of 5 or more taps merge.
bool F32Conv::merges_taps(const Conv2dShape& s) {
  return s.kernel_w >= 5 && s.dilation_w == 1 && s.in_c < 8 && s.groups == 1;
}

bool F32Conv::supports(const Conv2dShape& s, const Activation&) {
  return s.groups >= 1 && s.in_c % std::max(s.groups, 1) == 0 && s.out_c % std::max(s.groups, 1) == 0 &&
         s.batch > 0 && s.in_h > 0 && s.in_w > 0 && s.in_c > 0 && s.out_h > 0 && s.out_w > 0 && s.out_c > 0 && s.kernel_h > 0 && s.kernel_w > 0 && s.stride_h > 0 && s.stride_w > 0 &&
         s.dilation_h > 0 && s.dilation_w > 0 && s.in_d > 0 && s.out_d > 0 && s.kernel_d > 0 && s.stride_d > 0 &&
         s.dilation_d > 0 && s.pad_front >= 0;
}

F32Conv::F32Conv(const Conv2dShape& s, const float* weights, const float* bias, const Activation& act, Isa isa,
                 PackedCache* cache)
    : F32Conv(s, weights, bias, act,
              choose_f32_gemm_kernel(isa, static_cast<int64_t>(image_pixels(checked_for_igemm(s, act))),
                                     s.out_c / s.groups, int64_t(kernel_taps(s)) * (s.in_c / s.groups)),
              cache) {}

F32Conv::F32Conv(const Conv2dShape& s, const float* weights, const float* bias, const Activation& act,
                 const F32GemmKernel& kernel, PackedCache* cache)
    : s_(checked_for_igemm(s, act)),
      act_(act),
      clamp_(f32_clamp_for(act)),
      epilogue_(act, kernel.isa),
      kernel_(&runnable(kernel)),
      plain_gemm_(plain_gemm_shape(s) && s.groups == 1),
      merge_kx_(merges_taps(s)),
      group_in_c_(s.in_c / s.groups),
      group_out_c_(s.out_c / s.groups),
      group_cols_((group_out_c_ + kernel.nr - 1) / kernel.nr * kernel.nr),
      weights_(shared_packing<F32PackedWeights>(
          cache, PackKey(merge_kx_ ? "f32_conv_merged_kx" : s.groups > 1 ? "f32_conv_grouped" : "f32_conv")
              .add(kernel.nr)
              .add(s.out_c)
              .add(s.in_c)
              .add(s.groups)
              .add(s.kernel_d)
              .add(s.kernel_h)
              .add(s.kernel_w)
              .add_array(weights, size_t(s.out_c) * (s.in_c / s.groups) * size_t(kernel_taps(s)))
              .add_array(bias, size_t(s.out_c)),
          [&] {
            // kh counts the rows of taps: a 3-D kernel's (kd, kh) rows, kd * kh of them.
            const int64_t kh = int64_t(s.kernel_d) * s.kernel_h, kw = s.kernel_w, in_c = s.in_c;
            if (s.groups > 1) {
              // Group after group, each padded to whole NR blocks: packed column v is output
              // channel g * group_out_c + j of group g = v / group_cols, j = v % group_cols.
              const int64_t gin = group_in_c_, gout = group_out_c_, cols = int64_t(group_cols_);
              std::vector<float> padded_bias(size_t(s.groups * cols), 0.0f);
              for (int64_t v = 0; bias && v < int64_t(padded_bias.size()); ++v)
                if (v % cols < gout) padded_bias[size_t(v)] = bias[v / cols * gout + v % cols];
              return F32PackedWeights(s.groups * cols, kh * kw, gin, kernel.nr, padded_bias.data(),
                                      [&](int64_t v, int64_t tap, int64_t k) {
                                        if (v % cols >= gout) return 0.0f;
                                        const int64_t o = v / cols * gout + v % cols;
                                        return weights[(o * gin + k) * kh * kw + tap];
                                      });
            }
            if (merge_kx_) {
              // One tap per row of taps (ky; kd * kernel_h + ky in 3-D) over [kx][ic] (an NHWC run of kw pixels).
              return F32PackedWeights(s.out_c, kh, kw * in_c, kernel.nr, bias, [&](int64_t o, int64_t ky, int64_t k) {
                return weights[((o * in_c + k % in_c) * kh + ky) * kw + k / in_c];
              });
            }
            return F32PackedWeights(s.out_c, kh * kw, in_c, kernel.nr, bias, [&](int64_t o, int64_t tap, int64_t k) {
              // ONNX [out_c][in_c][kh][kw]; tap = ky * kw + kx (3-D: [kd][kh][kw], (kz * kh + ky) * kw + kx).
              return weights[(o * in_c + k) * kh * kw + tap];
            });
          })),
      zero_(static_cast<size_t>(merge_kx_ ? s.kernel_w * s.in_c : s.in_c / s.groups), 0.0f) {
  if (merge_kx_) {
    // Wide enough for every window: out_w windows start stride_w apart from column 0.
    const int needed = (s.out_w - 1) * s.stride_w + s.kernel_w;
    padded_w_ = static_cast<size_t>(std::max(needed, s.pad_left + s.in_w));
    padded_.assign(size_t(s.batch) * s.in_d * s.in_h * padded_w_ * s.in_c, 0.0f);
  }
  stream_ = f32_weights_stream(weights_->bytes());
  name_ = {plain_gemm_ ? kernel.gemm_name : kernel.igemm_name, kernel.isa == Isa::scalar};
  if (epilogue_.active()) name_ = name_ + "+" + epilogue_.kernel_id();
}

void F32Conv::bind(const float* x) {
  bound_ = x;
  if (plain_gemm_) return;
  // Merged taps: one per ky, pointing into the padded copy (image 0) at the window's first
  // column, padded column = ix + pad_left; its zero columns make every window whole, so only
  // rows above or below the image (or planes before or after it) read the zero row.
  const int taps_x = merge_kx_ ? 1 : s_.kernel_w;
  const float* base = merge_kx_ ? padded_.data() : x;
  const size_t row_w = merge_kx_ ? padded_w_ : static_cast<size_t>(s_.in_w);
  const int shift_x = merge_kx_ ? s_.pad_left : 0;
  const size_t mr = kernel_->mr;
  const size_t ks = static_cast<size_t>(s_.kernel_d) * s_.kernel_h * taps_x;
  const size_t pixels = image_pixels(s_);
  const size_t plane = static_cast<size_t>(s_.out_h) * s_.out_w;
  const size_t tiles = (pixels + mr - 1) / mr;
  indirection_.resize(tiles * ks * mr);
  for (size_t tile = 0; tile < tiles; ++tile) {
    for (size_t r = 0; r < mr; ++r) {
      // Rows past the last pixel repeat it: the kernel reads MR rows, stores only the valid ones.
      const size_t pixel = std::min(tile * mr + r, pixels - 1);
      const int oz = static_cast<int>(pixel / plane);
      const int oy = static_cast<int>(pixel % plane / s_.out_w), ox = static_cast<int>(pixel % s_.out_w);
      for (int kz = 0; kz < s_.kernel_d; ++kz) {
        const int iz = oz * s_.stride_d - s_.pad_front + kz * s_.dilation_d;
        for (int ky = 0; ky < s_.kernel_h; ++ky) {
          const int iy = oy * s_.stride_h - s_.pad_top + ky * s_.dilation_h;
          for (int kx = 0; kx < taps_x; ++kx) {
            const int ix = ox * s_.stride_w - s_.pad_left + kx * s_.dilation_w;
            const size_t tap = (static_cast<size_t>(kz) * s_.kernel_h + ky) * taps_x + kx;
            const bool inside = iz >= 0 && iz < s_.in_d && iy >= 0 && iy < s_.in_h &&
                                (merge_kx_ || (ix >= 0 && ix < s_.in_w));
            const size_t row = static_cast<size_t>(iz) * s_.in_h + static_cast<size_t>(iy);
            indirection_[(tile * ks + tap) * mr + r] =
                inside ? base + (row * row_w + static_cast<size_t>(ix + shift_x)) * s_.in_c : zero_.data();
          }
        }
      }
    }
  }
}

void F32Conv::run(const float* x, float* y, pthreadpool_t pool, const float* residual, size_t y_pixel_stride) const {
  if (!plain_gemm_ && (x != bound_ || bound_ == nullptr))
    throw std::logic_error("F32Conv::run: input address differs from the one passed to bind(); call bind(x) first");
  if (merge_kx_) {
    // The pad columns stay zero from the constructor; only each row's interior changes.
    const size_t row = size_t(s_.in_w) * s_.in_c;
    for (size_t r = 0; r < size_t(s_.batch) * s_.in_d * s_.in_h; ++r)
      std::copy_n(x + r * row, row, padded_.data() + (r * padded_w_ + s_.pad_left) * s_.in_c);
    x = padded_.data();
  }
  const size_t in_c = merge_kx_ ? size_t(s_.kernel_w) * s_.in_c : size_t(s_.in_c), out_c = s_.out_c;
  const size_t pixels = image_pixels(s_);
  ConvTask task{kernel_,
                f32_gemm_form(*kernel_, stream_),
                f32_igemm_form(*kernel_, stream_),
                x,
                y,
                weights_->data(),
                weights_->block_stride(),
                indirection_.data(),
                zero_.data(),
                in_c,
                out_c,
                static_cast<size_t>(s_.kernel_d) * s_.kernel_h * (merge_kx_ ? 1 : s_.kernel_w),
                y_pixel_stride != 0 ? y_pixel_stride : out_c,
                static_cast<size_t>(s_.in_d) * s_.in_h * (merge_kx_ ? padded_w_ : size_t(s_.in_w)) * s_.in_c,
                pixels,
                residual ? kNoClamp : clamp_,
                &epilogue_,
                residual};
  const size_t mr = kernel_->mr;
  const size_t threads = pool == nullptr ? 1 : pthreadpool_get_threads_count(pool);
  const size_t batch = s_.batch;
  if (s_.groups > 1) {
    // Groups are a few columns each: one tile per group's columns (NR at a time when two
    // threads would otherwise share few row tiles), every group of a row tile in turn.
    task.group_in_c = group_in_c_;
    task.group_out_c = group_out_c_;
    task.group_cols = group_cols_;
    const size_t row_tiles = batch * ((pixels + mr - 1) / mr);
    const size_t col_tile = threads > 1 && row_tiles < 4 * threads ? kernel_->nr : group_cols_;
    pthreadpool_parallelize_3d_tile_2d(pool, run_grouped_igemm_tile, &task, batch, pixels, s_.groups * group_cols_, mr,
                                       col_tile, 0);
    return;
  }
  // Packed weights past the budget (f32_gemm_column_chunk) would stream from memory again for
  // every tile of rows: one chunk of output channels then runs over every row before the next.
  const size_t chunk = f32_gemm_column_chunk(*kernel_, in_c, task.ks, out_c, batch * pixels);
  if (plain_gemm_) {
    const size_t rows = batch * pixels;
    if (chunk < out_c) {
      task.chunk = chunk;
      task.row_tiles = (rows + mr - 1) / mr;
      pthreadpool_parallelize_2d_tile_2d(pool, run_gemm_tile_columns_first, &task, out_c, rows, chunk, mr, 0);
      return;
    }
    const size_t col_tile = threads > 1 && (rows + mr - 1) / mr < 4 * threads ? kernel_->nr : out_c;
    pthreadpool_parallelize_2d_tile_2d(pool, run_gemm_tile, &task, rows, out_c, mr, col_tile, 0);
    return;
  }
  if (chunk < out_c) {
    task.chunk = chunk;
    task.row_tiles = batch * ((pixels + mr - 1) / mr);
    pthreadpool_parallelize_3d_tile_2d(pool, run_igemm_chunk_tile, &task, (out_c + chunk - 1) / chunk, batch, pixels,
                                       1, mr, 0);
    return;
  }
  const size_t row_tiles = batch * ((pixels + mr - 1) / mr);
  const size_t col_tile = threads > 1 && row_tiles < 4 * threads ? kernel_->nr : out_c;
  pthreadpool_parallelize_3d_tile_2d(pool, run_igemm_tile, &task, batch, pixels, out_c, mr, col_tile, 0);
}

}  // namespace octet::kernels
