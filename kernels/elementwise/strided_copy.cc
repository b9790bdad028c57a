#include "kernels/elementwise/strided_copy.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "kernels/arch.h"
#include "kernels/isa.h"
#include "kernels/ref/copy.h"

namespace octet::kernels {

namespace {

constexpr int64_t kTile = 8;
constexpr int64_t kSlabBytes = 64 * 1024;  // work per thread task

// Where linear index `begin` of the outer dimensions [0, rank) lies: each dimension's index and
// the source and destination offsets in elements.
struct WalkPosition {
  std::array<int64_t, 16> idx{};
  int64_t s = 0, d = 0;
};
WalkPosition walk_start(const std::vector<int64_t>& dims, const std::vector<int64_t>& src,
                        const std::vector<int64_t>& dst, int rank, int64_t begin) {
  WalkPosition p;
  int64_t rest = begin;
  for (int k = rank - 1; k >= 0; --k) {
    p.idx[size_t(k)] = rest % dims[size_t(k)];
    rest /= dims[size_t(k)];
    p.s += p.idx[size_t(k)] * src[size_t(k)];
    p.d += p.idx[size_t(k)] * dst[size_t(k)];
  }
  return p;
}

// Walks the outer dimensions [0, rank) from linear index `begin` for `count` steps, calling
// f(src_offset, dst_offset) in elements: an odometer, so no division per step.
template <class F>
void walk(const std::vector<int64_t>& dims, const std::vector<int64_t>& src, const std::vector<int64_t>& dst,
          int rank, int64_t begin, int64_t count, F&& f) {
  if (count <= 0) return;
  auto [idx, s, d] = walk_start(dims, src, dst, rank, begin);
  for (int64_t n = 0; n < count; ++n) {
    f(s, d);
    for (int k = rank - 1; k >= 0; --k) {
      if (++idx[k] < dims[size_t(k)]) {
        s += src[size_t(k)];
        d += dst[size_t(k)];
        break;
      }
      s -= (dims[size_t(k)] - 1) * src[size_t(k)];
      d -= (dims[size_t(k)] - 1) * dst[size_t(k)];
      idx[k] = 0;
    }
  }
}

// walk's units [begin, begin + count) as f(src offset, dst offset, n) for each stretch of n
// consecutive indices of the innermost walked dimension (rank - 1): one call per row of it.
template <class F>
void walk_rows(const std::vector<int64_t>& dims, const std::vector<int64_t>& src, const std::vector<int64_t>& dst,
               int rank, int64_t begin, int64_t count, F&& f) {
  if (count <= 0) return;
  if (rank == 0) return f(int64_t{0}, int64_t{0}, count);
  auto [idx, s, d] = walk_start(dims, src, dst, rank, begin);
  const int last = rank - 1;
  while (count > 0) {
    const int64_t n = std::min(count, dims[size_t(last)] - idx[last]);
    f(s, d, n);
    count -= n;
    s += n * src[size_t(last)];
    d += n * dst[size_t(last)];
    idx[last] += n;
    for (int k = last; k > 0 && idx[k] == dims[size_t(k)]; --k) {  // carry into the outer dimensions
      s -= dims[size_t(k)] * src[size_t(k)];
      d -= dims[size_t(k)] * dst[size_t(k)];
      idx[k] = 0;
      ++idx[k - 1];
      s += src[size_t(k - 1)];
      d += dst[size_t(k - 1)];
    }
  }
}

// Contiguous planes interleaved into pixels of C values (an image to channels-last). With C a
// constant the compiler vectorizes the interleave, but x86-64's baseline (SSE2) has no byte
// shuffle for it: the x86 copy is compiled for AVX2 and taken where the CPU has it (about 5x
// faster for bytes and 2x for floats than the SSE2 build).
template <class T, int C>
__attribute__((always_inline)) inline void interleave_planes_loop(const T* __restrict x, int64_t plane_stride,
                                                                  T* __restrict y, int64_t pixels) {
  for (int64_t p = 0; p < pixels; ++p)
    for (int c = 0; c < C; ++c) y[p * C + c] = x[c * plane_stride + p];
}

#if OCTET_ARCH_X86
template <class T, int C>
__attribute__((target("avx2"))) void interleave_planes_avx2(const T* x, int64_t plane_stride, T* y, int64_t pixels) {
  interleave_planes_loop<T, C>(x, plane_stride, y, pixels);
}
#endif

template <class T, int C>
void interleave_planes(const T* x, int64_t plane_stride, T* y, int64_t pixels) {
#if OCTET_ARCH_X86
  static const bool avx2 = isa_supported(Isa::avx2);
  if (avx2) return interleave_planes_avx2<T, C>(x, plane_stride, y, pixels);
#endif
  interleave_planes_loop<T, C>(x, plane_stride, y, pixels);
}

// 4-byte elements, 8x8 at a time in registers: eight 8-element columns of x (rows r0..r0+7
// contiguous in x) become eight rows of y in three rounds of pairwise interleaves (32-bit,
// 64-bit, 128-bit). Vector extensions (gcc and clang), not intrinsics: AVX2 unpack / shuffle /
// permute instructions in the x86 clone below, NEON zips on Arm. Element by element, a tile made 64
// scalar loads and stores: 1.4-2x slower for a relayout of a 255- or 64-channel map (Zen 4).
using U32x8 = uint32_t __attribute__((vector_size(32)));

// Columns c0..c0+7 of every row, then the next eight: x is read in order once, and the rows
// below the last full tile are done while their lines are still in cache.
__attribute__((always_inline)) inline void transpose_tiles8_loop(const uint32_t* x, int64_t xs_col, uint32_t* y,
                                                                 int64_t ys_row, int64_t rows, int64_t cols8) {
  const int64_t rows8 = rows / 8 * 8;
  for (int64_t c0 = 0; c0 < cols8; c0 += 8) {
    for (int64_t r0 = 0; r0 < rows8; r0 += 8) {
      U32x8 v[8];
      for (int c = 0; c < 8; ++c) std::memcpy(&v[c], x + r0 + (c0 + c) * xs_col, sizeof(U32x8));
      U32x8 t[8], u[8];
      for (int k = 0; k < 8; k += 2) {
        t[k] = __builtin_shufflevector(v[k], v[k + 1], 0, 8, 1, 9, 4, 12, 5, 13);
        t[k + 1] = __builtin_shufflevector(v[k], v[k + 1], 2, 10, 3, 11, 6, 14, 7, 15);
      }
      for (int k = 0; k < 8; k += 4)
        for (int h = 0; h < 2; ++h) {
          u[k + 2 * h] = __builtin_shufflevector(t[k + h], t[k + h + 2], 0, 1, 8, 9, 4, 5, 12, 13);
          u[k + 2 * h + 1] = __builtin_shufflevector(t[k + h], t[k + h + 2], 2, 3, 10, 11, 6, 7, 14, 15);
        }
      // u[j] (j < 4) holds rows j and j + 4 of columns c0..c0+3; u[j + 4] the same of c0+4..c0+7.
      for (int j = 0; j < 4; ++j) {
        const U32x8 lo = __builtin_shufflevector(u[j], u[j + 4], 0, 1, 2, 3, 8, 9, 10, 11);
        const U32x8 hi = __builtin_shufflevector(u[j], u[j + 4], 4, 5, 6, 7, 12, 13, 14, 15);
        std::memcpy(y + (r0 + j) * ys_row + c0, &lo, sizeof(U32x8));
        std::memcpy(y + (r0 + j + 4) * ys_row + c0, &hi, sizeof(U32x8));
      }
    }
    for (int64_t r = rows8; r < rows; ++r)
      for (int64_t c = c0; c < c0 + 8; ++c) y[r * ys_row + c] = x[r + c * xs_col];
  }
}

#if OCTET_ARCH_X86
__attribute__((target("avx2"))) void transpose_tiles8_avx2(const uint32_t* x, int64_t xs_col, uint32_t* y,
                                                           int64_t ys_row, int64_t rows, int64_t cols8) {
  transpose_tiles8_loop(x, xs_col, y, ys_row, rows, cols8);
}
#endif

void transpose_tiles8(const uint32_t* x, int64_t xs_col, uint32_t* y, int64_t ys_row, int64_t rows, int64_t cols8) {
#if OCTET_ARCH_X86
  static const bool avx2 = isa_supported(Isa::avx2);
  if (avx2) return transpose_tiles8_avx2(x, xs_col, y, ys_row, rows, cols8);
#endif
  transpose_tiles8_loop(x, xs_col, y, ys_row, rows, cols8);
}

// One- and two-byte elements, a square of 16 bytes or 8 shorts at a time: each column of the
// square (N rows of x, contiguous) is one 128-bit vector, and the N vectors become N rows of y in
// log2(N) rounds. Each round interleaves vector k with vector k + N/2 (the low halves into 2k, the
// high halves into 2k + 1), which rotates the bits of an element's (column, row) place by one, so
// after as many rounds as a row index has bits the vectors are y's rows. Byte or word unpacks on
// x86, zips on Arm: the same vector extensions as the float tiles, not intrinsics. Two squares
// side by side in 256-bit registers (in-lane unpacks) measured slower on Zen 4 (AVX2), bytes and
// shorts alike.
template <class T>
struct SquareColumn;
template <>
struct SquareColumn<uint8_t> { using type = uint8_t __attribute__((vector_size(16))); };
template <>
struct SquareColumn<uint16_t> { using type = uint16_t __attribute__((vector_size(16))); };

// Element p / 2 of a (p even) or b (p odd), from the low (H 0) or the high (H 1) half.
template <int H, class V, size_t... P>
__attribute__((always_inline)) inline V zip_half(V a, V b, std::index_sequence<P...>) {
  constexpr int N = int(sizeof...(P));
  return __builtin_shufflevector(a, b, ((P % 2 ? N : 0) + H * N / 2 + P / 2)...);
}

// Rows r..r+N-1 of columns c..c+N-1, x and y at (r, c).
template <class T>
__attribute__((always_inline)) inline void transpose_square(const T* x, int64_t xs_col, T* y, int64_t ys_row) {
  using V = typename SquareColumn<T>::type;
  constexpr int N = int(16 / sizeof(T));
  V v[N], w[N];
  for (int c = 0; c < N; ++c) std::memcpy(&v[c], x + c * xs_col, 16);
  for (int round = 1; round < N; round *= 2) {
    for (int k = 0; k < N / 2; ++k) {
      w[2 * k] = zip_half<0>(v[k], v[k + N / 2], std::make_index_sequence<N>());
      w[2 * k + 1] = zip_half<1>(v[k], v[k + N / 2], std::make_index_sequence<N>());
    }
    for (int k = 0; k < N; ++k) v[k] = w[k];
  }
  for (int j = 0; j < N; ++j) std::memcpy(y + j * ys_row, &v[j], 16);
}

// rows, cols >= N. Column block by column block, as the float tiles; the last square of a row or
// column overlaps the one before instead of leaving a ragged edge (it writes the same values
// again).
template <class T>
__attribute__((always_inline)) inline void transpose_squares_loop(const T* x, int64_t xs_col, T* y, int64_t ys_row,
                                                                  int64_t rows, int64_t cols) {
  constexpr int64_t N = 16 / sizeof(T);
  for (int64_t c0 = 0; c0 < cols; c0 += N) {
    const int64_t c = std::min(c0, cols - N);
    for (int64_t r0 = 0; r0 < rows; r0 += N) {
      const int64_t r = std::min(r0, rows - N);
      transpose_square<T>(x + r + c * xs_col, xs_col, y + r * ys_row + c, ys_row);
    }
  }
}

#if OCTET_ARCH_X86
template <class T>
__attribute__((target("avx2"))) void transpose_squares_avx2(const T* x, int64_t xs_col, T* y, int64_t ys_row,
                                                            int64_t rows, int64_t cols) {
  transpose_squares_loop<T>(x, xs_col, y, ys_row, rows, cols);
}
#endif

template <class T>
void transpose_squares(const T* x, int64_t xs_col, T* y, int64_t ys_row, int64_t rows, int64_t cols) {
#if OCTET_ARCH_X86
  static const bool avx2 = isa_supported(Isa::avx2);
  if (avx2) return transpose_squares_avx2<T>(x, xs_col, y, ys_row, rows, cols);
#endif
  transpose_squares_loop<T>(x, xs_col, y, ys_row, rows, cols);
}

template <class T>
void transpose_block(const T* x, int64_t xs_row, int64_t xs_col, T* y, int64_t ys_row, int64_t ys_col, int64_t rows,
                     int64_t cols) {
  // Two contiguous source rows interleaved (a channels-last channel shuffle of two groups): a
  // loop with constant strides, which the compiler turns into unpack instructions.
  if (cols == 2 && xs_row == 1 && ys_col == 1 && ys_row == 2) {
    const T* x1 = x + xs_col;
    for (int64_t r = 0; r < rows; ++r) {
      y[2 * r] = x[r];
      y[2 * r + 1] = x1[r];
    }
    return;
  }
  if ((cols == 3 || cols == 4) && xs_row == 1 && ys_col == 1 && ys_row == cols) {
    if (cols == 3) interleave_planes<T, 3>(x, xs_col, y, rows);
    else interleave_planes<T, 4>(x, xs_col, y, rows);
    return;
  }
  // A narrow side needs no tiles: walking the destination in order reads `cols` sequential
  // streams, which the prefetchers follow.
  if (cols < kTile) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) y[r * ys_row + c * ys_col] = x[r * xs_row + c * xs_col];
    return;
  }
  if constexpr (sizeof(T) == 4) {
    if (xs_row == 1 && ys_col == 1 && rows >= 8) {
      const int64_t cols8 = cols / 8 * 8;
      transpose_tiles8(reinterpret_cast<const uint32_t*>(x), xs_col, reinterpret_cast<uint32_t*>(y), ys_row, rows,
                       cols8);
      for (int64_t c = cols8; c < cols; ++c)  // the columns right of the last tile: x's lines in order
        for (int64_t r = 0; r < rows; ++r) y[r * ys_row + c] = x[r + c * xs_col];
      return;
    }
  }
  if constexpr (sizeof(T) <= 2) {
    constexpr int64_t n = 16 / sizeof(T);
    if (xs_row == 1 && ys_col == 1 && rows >= n && cols >= n) return transpose_squares(x, xs_col, y, ys_row, rows, cols);
  }
  for (int64_t r0 = 0; r0 < rows; r0 += kTile)
    for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
      const int64_t r1 = std::min(rows, r0 + kTile), c1 = std::min(cols, c0 + kTile);
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t c = c0; c < c1; ++c) y[r * ys_row + c * ys_col] = x[r * xs_row + c * xs_col];
    }
}

template <class T>
void scatter_rows(const T* x, int64_t x_row, int64_t xs, T* y, int64_t y_row, int64_t ys, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r, x += x_row, y += y_row)
    for (int64_t i = 0; i < n; ++i) y[i * ys] = x[i * xs];
}

struct SlabTask {
  const StridedCopy* self;
  const void* src;
  void* dst;
  int64_t per_slab, total;
  Q8LookupRowsFn map;
  const uint8_t* table;
};

}  // namespace

StridedCopy::StridedCopy(int rank, const int64_t* dims, const int64_t* src_strides, const int64_t* dst_strides,
                         int elem_size, Isa isa)
    : elem_(elem_size) {
  if (rank > 16) throw std::invalid_argument("StridedCopy: rank above 16");
  struct Dim { int64_t n, s, d; };
  std::vector<Dim> v;
  bool empty = false;
  for (int k = 0; k < rank; ++k) {
    if (dims[k] == 0) empty = true;
    if (dims[k] != 1) v.push_back({dims[k], src_strides[k], dst_strides[k]});
  }
  if (empty) {
    form_ = Form::runs;
    outer_count_ = 0;
    return;
  }
  // Destination order (outermost first): writes go out sequentially.
  std::stable_sort(v.begin(), v.end(), [](const Dim& a, const Dim& b) { return a.d > b.d; });
  std::vector<Dim> m;
  for (const Dim& x : v) {
    if (!m.empty() && m.back().s == x.s * x.n && m.back().d == x.d * x.n) {
      m.back() = {m.back().n * x.n, x.s, x.d};
      continue;
    }
    m.push_back(x);
  }
  if (m.empty()) m.push_back({1, 1, 1});
  for (const Dim& x : m) {
    dims_.push_back(x.n);
    src_.push_back(x.s);
    dst_.push_back(x.d);
  }
  const int r = int(dims_.size());
  if (src_.back() == 1 && dst_.back() == 1) {
    form_ = Form::runs;
    run_bytes_ = dims_.back() * elem_;
    outer_count_ = 1;
    for (int k = 0; k + 1 < r; ++k) outer_count_ *= dims_[size_t(k)];
    return;
  }
  // A transpose: the destination-contiguous axis is last; find the source-contiguous one.
  if (dst_.back() == 1 && (elem_ == 1 || elem_ == 2 || elem_ == 4 || elem_ == 8)) {
    for (int k = 0; k + 1 < r; ++k)
      if (src_[size_t(k)] == 1) t_src_axis_ = k;
    if (t_src_axis_ >= 0) {
      form_ = Form::transpose;
      t_dst_axis_ = r - 1;
      outer_count_ = 1;
      for (int k = 0; k < r; ++k)
        if (k != t_src_axis_ && k != t_dst_axis_) {
          outer_count_ *= dims_[size_t(k)];
          t_dims_.push_back(dims_[size_t(k)]);
          t_src_.push_back(src_[size_t(k)]);
          t_dst_.push_back(dst_[size_t(k)]);
        }
      return;
    }
  }
  // The innermost dimension is strided in the source only: gather rows, the two innermost
  // dimensions per call (many short rows, as a step-2 slice of a 5-wide axis leaves, in one).
  const bool whole_elements = elem_ == 1 || elem_ == 2 || elem_ == 4 || elem_ == 8;
  if (!whole_elements) {
    elements_name_ = "copy_strided_odd_elem__ref";
  } else if (dst_.back() != 1 || (gather_ = first_runnable(kStridedGatherKernels, isa)) != nullptr) {
    // The destination's innermost dimension strided too (extent-1 pieces concatenated along the
    // last axis: a scatter, for which no level has a store that helps) runs typed scalar stores.
    form_ = dst_.back() != 1 ? Form::scatter : Form::gather;
    if (gather_) gather_fn_ = gather_->for_size(elem_);
    outer_count_ = 1;
    for (int k = 0; k + 2 < r; ++k) outer_count_ *= dims_[size_t(k)];
    return;
  }
  form_ = Form::elements;
  outer_count_ = 1;
  for (int64_t n : dims_) outer_count_ *= n;
}

const char* StridedCopy::kernel_name() const {
  switch (form_) {
    case Form::runs: return "copy_runs";
    case Form::transpose: return "transpose_tiles";
    case Form::gather: return gather_->name;
    case Form::scatter: return "copy_scatter_rows";
    case Form::elements: break;
  }
  return elements_name_;
}

// The element walk is the reference (kernels/ref/copy.h); runs, tiles and gather rows are the
// fast forms.
KernelId StridedCopy::kernel_id() const { return {kernel_name(), form_ == Form::elements}; }

void StridedCopy::run_range(const void* src, void* dst, int64_t begin, int64_t end, const RunMap& map) const {
  const auto* s = static_cast<const unsigned char*>(src);
  auto* d = static_cast<unsigned char*>(dst);
  const int r = int(dims_.size());
  const int64_t e = elem_;
  switch (form_) {
    case Form::runs: {
      // Runs along the innermost walked dimension go out in rows of one stride each.
      const size_t bytes = size_t(run_bytes_);
      // Strides of bytes, signed: a reversed Slice walks its source backwards.
      const ptrdiff_t xs = r >= 2 ? ptrdiff_t(src_[size_t(r - 2)] * e) : 0;
      const ptrdiff_t ys = r >= 2 ? ptrdiff_t(dst_[size_t(r - 2)] * e) : 0;
      auto rows = [&](auto&& copy_rows) {
        walk_rows(dims_, src_, dst_, r - 1, begin, end - begin,
                  [&](int64_t so, int64_t dof, int64_t n) { copy_rows(size_t(n), s + so * e, d + dof * e); });
      };
      if (map.fn) return rows([&](size_t n, const unsigned char* x, unsigned char* y) { map.fn(n, bytes, x, xs, map.table, y, ys); });
      // Short runs of whole 16-byte pieces (a channels-last concat of 16 to 256 channels of
      // bytes, or 4 to 64 floats) as inline vector moves: a memcpy call of a run-time size
      // costs more than the copy there.
      if (bytes % 16 == 0 && bytes <= 256)
        return rows([&](size_t n, const unsigned char* x, unsigned char* y) {
          for (size_t k = 0; k < n; ++k, x += xs, y += ys)
            for (size_t i = 0; i < bytes; i += 16) std::memcpy(y + i, x + i, 16);
        });
      return rows([&](size_t n, const unsigned char* x, unsigned char* y) {
        for (size_t k = 0; k < n; ++k, x += xs, y += ys) std::memcpy(y, x, bytes);
      });
    }
    case Form::transpose: {
      const auto &od = t_dims_, &os = t_src_, &odst = t_dst_;
      // Rows: the source-contiguous axis; columns: the destination-contiguous axis.
      const int64_t rows = dims_[size_t(t_src_axis_)], cols = dims_[size_t(t_dst_axis_)];
      const int64_t xs_row = src_[size_t(t_src_axis_)], xs_col = src_[size_t(t_dst_axis_)];
      const int64_t ys_row = dst_[size_t(t_src_axis_)], ys_col = dst_[size_t(t_dst_axis_)];
      walk(od, os, odst, int(od.size()), begin, end - begin, [&](int64_t so, int64_t dof) {
        const void* x = s + so * e;
        void* y = d + dof * e;
        switch (e) {
          case 1: transpose_block(static_cast<const uint8_t*>(x), xs_row, xs_col, static_cast<uint8_t*>(y), ys_row, ys_col, rows, cols); break;
          case 2: transpose_block(static_cast<const uint16_t*>(x), xs_row, xs_col, static_cast<uint16_t*>(y), ys_row, ys_col, rows, cols); break;
          case 4: transpose_block(static_cast<const uint32_t*>(x), xs_row, xs_col, static_cast<uint32_t*>(y), ys_row, ys_col, rows, cols); break;
          default: transpose_block(static_cast<const uint64_t*>(x), xs_row, xs_col, static_cast<uint64_t*>(y), ys_row, ys_col, rows, cols); break;
        }
      });
      return;
    }
    case Form::gather:
    case Form::scatter: {
      const int64_t n = dims_[size_t(r - 1)], xs = src_[size_t(r - 1)], ys = dst_[size_t(r - 1)];
      const int64_t rows = r >= 2 ? dims_[size_t(r - 2)] : 1;
      const int64_t x_row = r >= 2 ? src_[size_t(r - 2)] : 0, y_row = r >= 2 ? dst_[size_t(r - 2)] : 0;
      walk(dims_, src_, dst_, std::max(0, r - 2), begin, end - begin, [&](int64_t so, int64_t dof) {
        const void* x = s + so * e;
        void* y = d + dof * e;
        if (form_ == Form::gather) return gather_fn_(size_t(rows), size_t(n), x, x_row, xs, y, y_row);
        switch (e) {
          case 1: return scatter_rows(static_cast<const uint8_t*>(x), x_row, xs, static_cast<uint8_t*>(y), y_row, ys, rows, n);
          case 2: return scatter_rows(static_cast<const uint16_t*>(x), x_row, xs, static_cast<uint16_t*>(y), y_row, ys, rows, n);
          case 4: return scatter_rows(static_cast<const uint32_t*>(x), x_row, xs, static_cast<uint32_t*>(y), y_row, ys, rows, n);
          default: return scatter_rows(static_cast<const uint64_t*>(x), x_row, xs, static_cast<uint64_t*>(y), y_row, ys, rows, n);
        }
      });
      return;
    }
    case Form::elements:
      walk(dims_, src_, dst_, r, begin, end - begin,
           [&](int64_t so, int64_t dof) { std::memcpy(d + dof * e, s + so * e, size_t(e)); });
      return;
  }
}

void StridedCopy::run_slab(void* ctx, size_t i) {
  const auto& t = *static_cast<const SlabTask*>(ctx);
  const int64_t begin = int64_t(i) * t.per_slab;
  t.self->run_range(t.src, t.dst, begin, std::min(t.total, begin + t.per_slab), RunMap{t.map, t.table});
}

void StridedCopy::run(const void* src, void* dst, pthreadpool_t pool) const { run_with(src, dst, RunMap{}, pool); }

void StridedCopy::run_mapped(const void* src, void* dst, Q8LookupRowsFn map, const uint8_t* table,
                             pthreadpool_t pool) const {
  if (!maps_runs()) throw std::logic_error("StridedCopy::run_mapped: not a copy of byte runs");
  run_with(src, dst, RunMap{map, table}, pool);
}

void StridedCopy::run_with(const void* src, void* dst, const RunMap& map, pthreadpool_t pool) const {
  if (outer_count_ == 0) return;
  int64_t unit_bytes = elem_;
  if (form_ == Form::runs) unit_bytes = std::max<int64_t>(1, run_bytes_);
  if (form_ == Form::transpose) unit_bytes = dims_[size_t(t_src_axis_)] * dims_[size_t(t_dst_axis_)] * elem_;
  if (form_ == Form::gather || form_ == Form::scatter) {
    unit_bytes = dims_.back() * elem_;
    if (dims_.size() >= 2) unit_bytes *= dims_[dims_.size() - 2];
  }
  const int64_t total_bytes = unit_bytes * outer_count_;
  if (!pool || pthreadpool_get_threads_count(pool) <= 1 || total_bytes < 4 * kSlabBytes) {
    run_range(src, dst, 0, outer_count_, map);
    return;
  }
  SlabTask t{this, src, dst, std::max<int64_t>(1, kSlabBytes / unit_bytes), outer_count_, map.fn, map.table};
  const size_t slabs = size_t((outer_count_ + t.per_slab - 1) / t.per_slab);
  pthreadpool_parallelize_1d(pool, &StridedCopy::run_slab, &t, slabs, 0);
}

}  // namespace octet::kernels
