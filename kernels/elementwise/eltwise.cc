// The INT8 parameter derivations below must round exactly as the reference kernels' do.
#include "kernels/ref/fp_contract_off.h"

#include "kernels/elementwise/eltwise.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "kernels/cache_budgets.h"
#include "kernels/elementwise/axis_offsets.h"
#include "kernels/quantize/quantize.h"
#include "kernels/ref/layernorm.h"
#include "kernels/ref/pool2d.h"
#include "kernels/ref/qelementwise.h"
#include "kernels/ref/qpool2d.h"
#include "kernels/ref/qreduce.h"
#include "kernels/ref/reduce.h"

namespace octet::kernels {

namespace {

// Calls kernel(rows, a_offset, b_offset, y_offset) over every [rows][cols] tile of t, split
// into pieces of about kEltwiseMinPiece elements. Offsets are in elements.
template <class Tile>
void run_tiled(const BinaryTiling& t, pthreadpool_t pool, const Tile& tile) {
  const int64_t outer = t.outer_count();
  const int64_t tile_elements = t.rows * t.cols;
  auto outer_offsets = [&](int64_t index, int64_t* a_off, int64_t* b_off) {
    *a_off = *b_off = 0;
    for (int d = t.outer_rank - 1; d >= 0; --d) {
      const int64_t i = index % t.outer_dims[d];
      index /= t.outer_dims[d];
      *a_off += i * t.outer_a[d];
      *b_off += i * t.outer_b[d];
    }
  };
  if (outer == 1 && t.rows == 1) {
    // One contiguous run (the same-shape case): pieces along it.
    const size_t piece = std::max<size_t>(kEltwiseMinPiece, 64);
    parallel_pieces(pool, size_t(t.cols), piece, [&](size_t start, size_t count) {
      tile(int64_t{1}, int64_t(count), int64_t(start), int64_t(start), int64_t(start));
    });
    return;
  }
  // Pieces of whole rows, never crossing an outer index.
  const size_t rows_per_piece = std::max<size_t>(1, kEltwiseMinPiece / size_t(std::max<int64_t>(1, t.cols)));
  const size_t pieces_per_outer = (size_t(t.rows) + rows_per_piece - 1) / rows_per_piece;
  parallel_pieces(pool, size_t(outer) * pieces_per_outer, 1, [&](size_t start, size_t count) {
    for (size_t p = start; p < start + count; ++p) {
      const int64_t o = int64_t(p / pieces_per_outer);
      const int64_t r0 = int64_t((p % pieces_per_outer) * rows_per_piece);
      const int64_t rows = std::min<int64_t>(int64_t(rows_per_piece), t.rows - r0);
      int64_t a_off, b_off;
      outer_offsets(o, &a_off, &b_off);
      tile(rows, t.cols, a_off + r0 * t.a_row_stride, b_off + r0 * t.b_row_stride,
           o * tile_elements + r0 * t.cols);
    }
  });
}

// Any broadcast on a vector-vector microkernel: y in blocks of whole rows (the last merged
// dimension) of at most kPackBytes, or in pieces of one row when a row is longer. An operand
// that is one contiguous run over the block is read in place; any other (a row repeated, a
// value constant along the row, a transposed or strided read) is gathered into a block buffer
// first. call(count, a, b, y) then computes the block in one go, so short rows cost one call
// per block, not one per row.
constexpr size_t kPackBytes = 4096;

template <class T>
const T* gather_block(const MergedBox& m, const T* x, const int64_t* s, bool dense, int64_t r0, int64_t c0,
                      int64_t nr, int64_t nc, T* buf) {
  const int n = m.rank;
  const int64_t cols = m.dims[n - 1];
  if (dense) return x + r0 * cols + c0;  // strides are y's: the block is one run
  int64_t idx[kMaxRank] = {}, off = 0, rest = r0;
  for (int d = n - 2; d >= 0; --d) {
    idx[d] = rest % m.dims[d];
    rest /= m.dims[d];
    off += idx[d] * s[d];
  }
  const int64_t inner = s[n - 1];
  if (nr == 1 && inner == 1) return x + off + c0;
  for (int64_t i = 0; i < nr; ++i) {
    const T* src = x + off + c0 * inner;
    T* dst = buf + i * nc;
    if (inner == 1) std::memcpy(dst, src, size_t(nc) * sizeof(T));
    else if (inner == 0) std::fill(dst, dst + nc, *src);
    else
      for (int64_t j = 0; j < nc; ++j) dst[j] = src[j * inner];
    for (int d = n - 2; d >= 0; --d) {  // the next row
      off += s[d];
      if (++idx[d] < m.dims[d]) break;
      off -= idx[d] * s[d];
      idx[d] = 0;
    }
  }
  return buf;
}

// True when `s` walks `dims` densely in row-major order (extents of 1 aside).
bool dense(int rank, const int64_t* dims, const int64_t* s) {
  int64_t expect = 1;
  for (int d = rank - 1; d >= 0; --d) {
    if (dims[d] > 1 && s[d] != expect) return false;
    expect *= dims[d];
  }
  return true;
}

template <class T, class Call>
void run_packed(const MergedBox& m, const T* a, const T* b, T* y, pthreadpool_t pool, const Call& call) {
  if (m.empty) return;
  constexpr int64_t block = int64_t(kPackBytes / sizeof(T));
  const int n = m.rank;
  if (n == 0) {
    call(size_t{1}, a, b, y);
    return;
  }
  const int64_t cols = m.dims[n - 1];
  int64_t rows = 1;
  for (int d = 0; d < n - 1; ++d) rows *= m.dims[d];
  const bool split_rows = cols > block;
  const int64_t pieces_per_row = split_rows ? (cols + block - 1) / block : 1;
  const int64_t rows_per_block = split_rows ? 1 : block / cols;
  const int64_t blocks = split_rows ? rows * pieces_per_row : (rows + rows_per_block - 1) / rows_per_block;
  const bool a_dense = dense(n, m.dims, m.a), b_dense = dense(n, m.dims, m.b);
  const size_t blocks_per_piece = std::max<size_t>(1, kEltwiseMinPiece / size_t(block));
  parallel_pieces(pool, size_t(blocks), blocks_per_piece, [&](size_t start, size_t count) {
    alignas(64) T abuf[block];
    alignas(64) T bbuf[block];
    for (size_t p = start; p < start + count; ++p) {
      int64_t r0, c0, nr, nc;
      if (split_rows) {
        r0 = int64_t(p) / pieces_per_row;
        c0 = (int64_t(p) % pieces_per_row) * block;
        nr = 1;
        nc = std::min(block, cols - c0);
      } else {
        r0 = int64_t(p) * rows_per_block;
        c0 = 0;
        nr = std::min(rows_per_block, rows - r0);
        nc = cols;
      }
      const T* pa = gather_block(m, a, m.a, a_dense, r0, c0, nr, nc, abuf);
      const T* pb = gather_block(m, b, m.b, b_dense, r0, c0, nr, nc, bbuf);
      call(size_t(nr * nc), pa, pb, y + r0 * cols + c0);
    }
  });
}

void copy_box(int rank, const int64_t* dims, const int64_t* a, const int64_t* b, int64_t* dims_out,
              int64_t* a_out, int64_t* b_out) {
  if (rank < 0 || rank > kMaxRank) throw std::invalid_argument("eltwise: rank above 8 is not supported");
  std::copy(dims, dims + rank, dims_out);
  std::copy(a, a + rank, a_out);
  std::copy(b, b + rank, b_out);
}

const char* binary_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::add: return "add";
    case BinaryOp::sub: return "sub";
    case BinaryOp::mul: return "mul";
    case BinaryOp::div: return "div";
    case BinaryOp::prelu: return "prelu";
  }
  return "?";
}

}  // namespace

int64_t BinaryTiling::outer_count() const {
  int64_t n = 1;
  for (int d = 0; d < outer_rank; ++d) n *= outer_dims[d];
  return n;
}

MergedBox merge_box(int rank, const int64_t* dims, const int64_t* a_strides, const int64_t* b_strides) {
  // Size-1 dimensions do not move any pointer; drop them, then merge a dimension into the
  // one after it when both inputs step through the pair as through one dimension.
  MergedBox m;
  for (int i = 0; i < rank; ++i) {
    if (dims[i] == 0) {
      m.empty = true;
      return m;
    }
    if (dims[i] == 1) continue;
    const int n = m.rank;
    if (n > 0 && m.a[n - 1] == a_strides[i] * dims[i] && m.b[n - 1] == b_strides[i] * dims[i]) {
      m.dims[n - 1] *= dims[i];
      m.a[n - 1] = a_strides[i];
      m.b[n - 1] = b_strides[i];
      continue;
    }
    m.dims[n] = dims[i];
    m.a[n] = a_strides[i];
    m.b[n] = b_strides[i];
    ++m.rank;
  }
  return m;
}

BinaryTiling tile_binary(int rank, const int64_t* dims, const int64_t* a_strides, const int64_t* b_strides) {
  BinaryTiling t;
  const MergedBox m = merge_box(rank, dims, a_strides, b_strides);
  if (m.empty) {  // empty output: nothing to do, any tiling serves
    t.fits = true;
    return t;
  }
  const int n = m.rank;
  const int64_t *d = m.dims, *sa = m.a, *sb = m.b;
  t.rows = 1;
  if (n == 0) {  // a single element
    t.fits = true;
    t.cols = 1;
    return t;
  }
  if (sa[n - 1] != 1 || sb[n - 1] != 1) return t;
  t.fits = true;
  t.cols = d[n - 1];
  if (n >= 2) {
    t.rows = d[n - 2];
    t.a_row_stride = sa[n - 2];
    t.b_row_stride = sb[n - 2];
  }
  t.outer_rank = std::max(0, n - 2);
  for (int i = 0; i < t.outer_rank; ++i) {
    t.outer_dims[i] = d[i];
    t.outer_a[i] = sa[i];
    t.outer_b[i] = sb[i];
  }
  return t;
}

// ---- FP32 ----

namespace {

const EltwiseUkernel<F32BinaryUkernel>* f32_binary_ukernel(BinaryOp op, Isa isa) {
  switch (op) {
    case BinaryOp::add: return first_runnable(kF32AddUkernels, isa);
    case BinaryOp::sub: return first_runnable(kF32SubUkernels, isa);
    case BinaryOp::mul: return first_runnable(kF32MulUkernels, isa);
    case BinaryOp::div: return first_runnable(kF32DivUkernels, isa);
    case BinaryOp::prelu: return first_runnable(kF32PReluUkernels, isa);
  }
  return nullptr;
}

// True when every extent above 1 has stride 0 in `s`: the operand is one element.
bool single_element(int rank, const int64_t* dims, const int64_t* s) {
  for (int d = 0; d < rank; ++d)
    if (dims[d] > 1 && s[d] != 0) return false;
  return true;
}

// The longest innermost run that `moving` walks contiguously while `fixed` stays put (stride 0;
// size-1 dimensions are skipped): x op scalar per run for a gate or a layer scale. Returns the
// run's length and sets outer_rank to the dimensions left outside it.
int64_t constant_run(int rank, const int64_t* dims, const int64_t* moving, const int64_t* fixed, int& outer_rank) {
  int k = rank;
  int64_t run = 1;
  while (k > 0 && (dims[k - 1] == 1 || (moving[k - 1] == run && fixed[k - 1] == 0))) run *= dims[--k];
  outer_rank = k;
  return run;
}

}  // namespace

F32Binary::F32Binary(BinaryOp op, int rank, const int64_t* dims, const int64_t* a_strides,
                     const int64_t* b_strides, Isa isa)
    : op_(op), rank_(rank) {
  copy_box(rank, dims, a_strides, b_strides, dims_, a_strides_, b_strides_);
  tiling_ = tile_binary(rank, dims, a_strides, b_strides);
  if (!tiling_.fits && op == BinaryOp::prelu) {
    // The innermost dimensions a walks contiguously while the slope stays put.
    int k = rank;
    int64_t run = 1;
    while (k > 0 && (dims[k - 1] == 1 || (a_strides[k - 1] == run && b_strides[k - 1] == 0))) run *= dims[--k];
    if (run == 0) return;
    if (run >= kMinScalarRun) {
      slope_rows_ = first_runnable(kF32LeakyReluUkernels, isa);
      run_outer_rank_ = k;
      run_ = run;
      return;
    }
  }
  if (!tiling_.fits && op == BinaryOp::prelu) {
    merged_ = merge_box(rank, dims, a_strides, b_strides);
    ukernel_ = f32_binary_ukernel(op, isa);
    packed_ = ukernel_ != nullptr;
    return;
  }
  if (!tiling_.fits) {
    // x op scalar, scalar op x (x / 2, x - 0.5): the scalar is spread over a row of kSplat
    // copies at each run, read with row stride 0, and x is cut into rows of that length.
    const bool b_scalar = single_element(rank, dims, b_strides) && dense(rank, dims, a_strides);
    const bool a_scalar = !b_scalar && single_element(rank, dims, a_strides) && dense(rank, dims, b_strides);
    if (!a_scalar && !b_scalar) {
      // One operand constant along the innermost run the other walks contiguously (ConvNeXt's
      // layer scale [C,1,1] over row-major NCHW): each run is x op scalar on the microkernel.
      for (const Splat side : {Splat::b, Splat::a}) {
        const int64_t* moving = side == Splat::b ? a_strides : b_strides;
        const int64_t* fixed = side == Splat::b ? b_strides : a_strides;
        int outer_rank = 0;
        const int64_t run = constant_run(rank, dims, moving, fixed, outer_rank);
        if (run < kMinScalarRun) continue;
        splat_ = side;
        run_outer_rank_ = outer_rank;
        run_ = run;
        ukernel_ = f32_binary_ukernel(op, isa);
        return;
      }
      // Both operands broadcast, a short run or a strided read: packed blocks.
      merged_ = merge_box(rank, dims, a_strides, b_strides);
      ukernel_ = f32_binary_ukernel(op, isa);
      packed_ = ukernel_ != nullptr;
      return;
    }
    splat_ = a_scalar ? Splat::a : Splat::b;
    int64_t n = 1;
    for (int d = 0; d < rank; ++d) n *= dims[d];
    tiling_ = BinaryTiling{};
    tiling_.fits = true;
    tiling_.cols = std::min<int64_t>(n, kSplat);
    tiling_.rows = n / tiling_.cols;
    splat_tail_ = n - tiling_.rows * tiling_.cols;
    (a_scalar ? tiling_.b_row_stride : tiling_.a_row_stride) = tiling_.cols;
    splat_row_.resize(size_t(tiling_.cols));
  }
  ukernel_ = f32_binary_ukernel(op, isa);
}

KernelId F32Binary::kernel_id() const {
  if (slope_rows_) return row_kernel(*slope_rows_) + " (slope per run)";
  if (ukernel_ && run_ > 0) return row_kernel(*ukernel_) + " (scalar per run)";
  if (packed_) return row_kernel(*ukernel_) + " (packed rows)";
  return ukernel_ ? row_kernel(*ukernel_) : reference_kernel(std::string("f32_binary_strided__ref(") + binary_name(op_) + ")");
}

std::pair<int64_t, int64_t> F32Binary::run_offsets(size_t run) const {
  int64_t rest = int64_t(run), a_off = 0, b_off = 0;
  for (int d = run_outer_rank_ - 1; d >= 0; --d) {
    const int64_t i = rest % dims_[d];
    rest /= dims_[d];
    a_off += i * a_strides_[d];
    b_off += i * b_strides_[d];
  }
  return {a_off, b_off};
}

void F32Binary::run(const float* a, const float* b, float* y, pthreadpool_t pool, OutputRange* range) const {
  if (slope_rows_) {
    int64_t runs = 1;
    for (int d = 0; d < run_outer_rank_; ++d) runs *= dims_[d];
    const size_t runs_per_piece = std::max<size_t>(1, kEltwiseMinPiece / size_t(run_));
    parallel_pieces(pool, size_t(runs), runs_per_piece, [&](size_t start, size_t count) {
      for (size_t r = start; r < start + count; ++r) {
        const auto [a_off, b_off] = run_offsets(r);
        float* yr = y + int64_t(r) * run_;
        slope_rows_->fn(size_t(run_), a + a_off, yr, b[b_off], 0.0f);
        if (range) range->add(size_t(run_), yr);
      }
    });
    return;
  }
  if (!ukernel_) {
    f32_binary_strided__ref(op_, rank_, dims_, a, a_strides_, b, b_strides_, Activation{}, y);
    if (range) {
      int64_t n = 1;
      for (int d = 0; d < rank_; ++d) n *= dims_[d];
      range->add(size_t(n), y);
    }
    return;
  }
  if (run_ > 0) {
    run_scalar_per_run(a, b, y, pool, range);
    return;
  }
  if (packed_) {
    const F32BinaryUkernel fn = ukernel_->fn;
    run_packed(merged_, a, b, y, pool, [&](size_t count, const float* pa, const float* pb, float* py) {
      fn(1, count, pa, 0, pb, 0, py);
      if (range) range->add(count, py);
    });
    return;
  }
  if (splat_ != Splat::none) {
    // The run's scalar, then the operands as [rows][cols] (+ a tail) over the spread row.
    std::fill(splat_row_.begin(), splat_row_.end(), splat_ == Splat::a ? *a : *b);
    if (splat_ == Splat::a) a = splat_row_.data();
    else b = splat_row_.data();
  }
  const F32BinaryUkernel fn = ukernel_->fn;
  const BinaryTiling& t = tiling_;
  run_tiled(t, pool, [&](int64_t rows, int64_t cols, int64_t a_off, int64_t b_off, int64_t y_off) {
    fn(size_t(rows), size_t(cols), a + a_off, size_t(t.a_row_stride), b + b_off, size_t(t.b_row_stride),
       y + y_off);
    // y's tile is dense (rows x cols from y_off) and still in cache.
    if (range) range->add(size_t(rows * cols), y + y_off);
  });
  if (splat_tail_ > 0) {
    const int64_t done = t.rows * t.cols;
    const float* ta = splat_ == Splat::a ? a : a + done;
    const float* tb = splat_ == Splat::b ? b : b + done;
    fn(1, size_t(splat_tail_), ta, 0, tb, 0, y + done);
    if (range) range->add(size_t(splat_tail_), y + done);
  }
}

void F32Binary::run_scalar_per_run(const float* a, const float* b, float* y, pthreadpool_t pool,
                                   OutputRange* range) const {
  int64_t runs = 1;
  for (int d = 0; d < run_outer_rank_; ++d) runs *= dims_[d];
  const F32BinaryUkernel fn = ukernel_->fn;
  const bool b_fixed = splat_ == Splat::b;
  const size_t runs_per_piece = std::max<size_t>(1, kEltwiseMinPiece / size_t(run_));
  parallel_pieces(pool, size_t(runs), runs_per_piece, [&](size_t start, size_t count) {
    // The run's scalar spread over a row read with row stride 0: [rows][chunk] + a tail.
    float row[kScalarRunChunk];
    const int64_t chunk = std::min<int64_t>(run_, kScalarRunChunk);
    const int64_t rows = run_ / chunk, tail = run_ - rows * chunk;
    for (size_t r = start; r < start + count; ++r) {
      const auto [a_off, b_off] = run_offsets(r);
      std::fill(row, row + chunk, b_fixed ? b[b_off] : a[a_off]);
      const float* ra = b_fixed ? a + a_off : row;
      const float* rb = b_fixed ? row : b + b_off;
      const size_t sa = b_fixed ? size_t(chunk) : 0, sb = b_fixed ? 0 : size_t(chunk);
      float* yr = y + int64_t(r) * run_;
      fn(size_t(rows), size_t(chunk), ra, sa, rb, sb, yr);
      if (tail > 0)
        fn(1, size_t(tail), b_fixed ? ra + rows * chunk : row, 0, b_fixed ? row : rb + rows * chunk, 0,
           yr + rows * chunk);
      if (range) range->add(size_t(run_), yr);
    }
  });
}

F32Epilogue::F32Epilogue(const Activation& act, Isa isa)
    : act_(act),
      add_clamp_(first_runnable(kF32AddClampUkernels, isa)),
      bounds_(f32_clamp_for(act)) {
  if (act.scale_shift) scale_shift_ = first_runnable(kF32ScaleShiftUkernels, isa);
  switch (act.kind) {
    case ActKind::sigmoid: sigmoid_ = first_runnable(kF32SigmoidUkernels, isa); break;
    case ActKind::silu: act_ukernel_ = first_runnable(kF32SiluUkernels, isa); break;
    case ActKind::gelu: act_ukernel_ = first_runnable(kF32GeluUkernels, isa); break;
    case ActKind::gelu_tanh: act_ukernel_ = first_runnable(kF32GeluTanhUkernels, isa); break;
    default: act_ukernel_ = first_runnable(f32_act_ukernels(act.kind), isa); break;
  }
}

KernelId F32Epilogue::kernel_id() const {
  KernelId id;
  if (own_kind()) {
    if (act_ukernel_) id = row_kernel(*act_ukernel_);
    else if (sigmoid_) id = row_kernel(*sigmoid_);
    else id = reference_kernel("f32_unary__ref");
  }
  if (act_.scale_shift) {
    const KernelId affine = scale_shift_ ? row_kernel(*scale_shift_) : reference_kernel("f32_scale_shift__ref");
    id = own_kind() ? id + "+" + affine : affine;
  }
  return id;
}

void F32Epilogue::run(size_t n, const float* x, float* y) const {
  if (own_kind()) {
    if (!act_ukernel_ && !sigmoid_) {
      f32_unary__ref(act_, int64_t(n), x, y);  // apply(): the scale and shift included
      return;
    }
    if (act_ukernel_) act_ukernel_->fn(n, x, y, act_.alpha, act_.beta);
    else sigmoid_->fn(n, x, y);
    x = y;
  }
  if (!act_.scale_shift) return;
  if (scale_shift_) {
    scale_shift_->fn(n, x, y, act_.scale, act_.shift);
    return;
  }
  for (size_t i = 0; i < n; ++i) y[i] = apply_scale_shift(act_, x[i]);
}

void F32Epilogue::run(size_t rows, size_t cols, float* y, size_t ld) const {
  if (!active()) return;
  if (ld == cols) {
    run(rows * cols, y, y);
    return;
  }
  for (size_t r = 0; r < rows; ++r) run(cols, y + r * ld, y + r * ld);
}

void F32Epilogue::add_clamp(size_t n, float* y, const float* r) const {
  if (add_clamp_) {
    add_clamp_->fn(n, y, r, y, bounds_.min, bounds_.max);
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    const float v = y[i] + r[i];
    y[i] = v < bounds_.min ? bounds_.min : (v > bounds_.max ? bounds_.max : v);  // NaN passes, as in the microkernels
  }
}

void F32Epilogue::run_residual(size_t rows, size_t cols, float* y, size_t ld, const float* r, size_t r_ld) const {
  if (r_ld == 0) r_ld = ld;
  if (ld == cols && r_ld == cols) {
    cols *= rows;
    rows = 1;
  }
  for (size_t i = 0; i < rows; ++i, y += ld, r += r_ld) {
    add_clamp(cols, y, r);
    if (active()) run(cols, y, y);
  }
}

F32Unary::F32Unary(ActKind kind, Isa isa) : kind_(kind), isa_(isa) {
  if (kind == ActKind::relu || kind == ActKind::clip) clamp_ = first_runnable(kF32ClampUkernels, isa);
}

KernelId F32Unary::kernel_id() const {
  if (clamp_) return row_kernel(*clamp_);
  const F32Epilogue other(Activation{kind_}, isa_);
  return other.active() ? other.kernel_id() : reference_kernel("f32_unary__ref");
}

void F32Unary::run(const Activation& act, int64_t n, const float* x, float* y, pthreadpool_t pool) const {
  float lo = 0.0f, hi = INFINITY;
  if (kind_ == ActKind::clip) {
    lo = act.min;
    hi = act.max;
  }
  // The ref's Clip returns min when min > max; max-then-min would return max.
  const bool use_clamp = clamp_ && (act.kind == ActKind::relu || (act.kind == ActKind::clip && !(lo > hi)));
  // The other activations on the epilogue's microkernels (it takes HardSigmoid's alpha, beta
  // from act, and picks its kernel in a few comparisons).
  const F32Epilogue other(act, isa_);
  parallel_pieces(pool, size_t(n), kEltwiseMinPiece, [&](size_t start, size_t count) {
    if (use_clamp) clamp_->fn(count, x + start, y + start, lo, hi);
    else if (other.active()) other.run(count, x + start, y + start);
    else f32_unary__ref(act, int64_t(count), x + start, y + start);
  });
}

F32GlobalAvgPool::F32GlobalAvgPool(int batch, int hw, int channels, GapOrder order, Isa isa)
    : batch_(batch), hw_(hw), channels_(channels), order_(order) {
  if (hw > 0) ukernel_ = first_runnable(kF32GapUkernels, isa);
}

KernelId F32GlobalAvgPool::kernel_id() const {
  return ukernel_ ? row_kernel(*ukernel_) : reference_kernel("f32_global_avgpool_nhwc__ref");
}

void F32GlobalAvgPool::run(const float* x, float* y, pthreadpool_t pool) const {
  if (!ukernel_) {
    f32_global_avgpool_nhwc__ref(batch_, hw_, channels_, x, y, order_);
    return;
  }
  const size_t image = size_t(hw_) * size_t(channels_);
  parallel_pieces(pool, size_t(batch_), 1, [&](size_t start, size_t count) {
    for (size_t n = start; n < start + count; ++n)
      ukernel_->fn(size_t(hw_), size_t(channels_), x + n * image, y + n * size_t(channels_), order_,
                   n * size_t(channels_));
  });
}

F32RowSums::F32RowSums(size_t n, Isa isa) : n_(n) {
  if (n >= kLongRow) long_ = first_runnable(kF32EigenSumsUkernels, isa);
  else if (n > 0) ukernel_ = first_runnable(kF32RowSumsUkernels, isa);
}

F32EigenSums::F32EigenSums(Isa isa) : ukernel_(first_runnable(kF32EigenSumsUkernels, isa)) {}

KernelId F32EigenSums::kernel_id() const {
  return ukernel_ ? row_kernel(*ukernel_) : reference_kernel("f32_eigen_sums__ref");
}

void F32EigenSums::run(size_t rows, size_t n, const float* const* x, const size_t* lead, const float* center,
                       float* sums) const {
  if (ukernel_) ukernel_->fn(rows, n, x, lead, center, sums);
  else f32_eigen_sums__ref(rows, n, x, lead, center, sums);
}


F32ChannelMoments::F32ChannelMoments(size_t channels, Isa isa) : channels_(channels) {
  if (channels > 0) ukernel_ = first_runnable(kF32ChannelMomentsUkernels, isa);
}

KernelId F32ChannelMoments::kernel_id() const {
  return ukernel_ ? row_kernel(*ukernel_) : reference_kernel("f32_channel_moments__ref");
}

void F32ChannelMoments::run(size_t pixels, const float* x, const float* center, double* sum, double* sum_sq) const {
  if (ukernel_) ukernel_->fn(pixels, channels_, x, center, sum, sum_sq);
  else f32_channel_moments__ref(pixels, channels_, x, center, sum, sum_sq);
}

KernelId F32RowSums::kernel_id() const {
  if (long_) return row_kernel(*long_);
  return ukernel_ ? row_kernel(*ukernel_) : reference_kernel("f32_row_sums_eigen__ref");
}

void F32RowSums::run(size_t rows, const float* x, float* y, size_t first_row, float divisor,
                     pthreadpool_t pool) const {
  // Pieces of whole groups of 32 rows (two vectors at every level) and about kEltwiseMinPiece
  // elements; each piece passes its own first row, so the leads stay ORT's.
  if (long_) {
    // Pieces of whole calls (kEigenSumsRows rows) of about kEltwiseMinPiece elements.
    const size_t per_piece = std::max<size_t>(kEigenSumsRows, kEltwiseMinPiece / n_ / kEigenSumsRows * kEigenSumsRows);
    parallel_pieces(pool, rows, per_piece, [&](size_t start, size_t count) {
      for (size_t r = start; r < start + count; r += kEigenSumsRows) {
        const size_t m = std::min(kEigenSumsRows, start + count - r);
        const float* rows_x[kEigenSumsRows];
        size_t lead[kEigenSumsRows];
        float sums[kEigenSumsRows];
        for (size_t i = 0; i < m; ++i) {
          rows_x[i] = x + (r + i) * n_;
          lead[i] = eigen_row_lead(first_row + r + i, n_);
        }
        long_->fn(m, n_, rows_x, lead, nullptr, sums);
        for (size_t i = 0; i < m; ++i) y[r + i] = sums[i] / divisor;
      }
    });
    return;
  }
  const size_t group = 32;
  const size_t rows_per_piece = std::max<size_t>(group, (kEltwiseMinPiece / std::max<size_t>(1, n_)) / group * group);
  const size_t n = n_;
  parallel_pieces(pool, rows, rows_per_piece, [&](size_t start, size_t count) {
    if (ukernel_) ukernel_->fn(count, n, x + start * n, y + start, first_row + start, divisor);
    else f32_row_sums_eigen__ref(count, n, x + start * n, y + start, first_row + start, divisor);
  });
}

namespace {


}  // namespace

namespace {
std::span<const EltwiseUkernel<F32StridedSumsUkernel>> strided_reduce_rows(StridedReduceKind kind) {
  return kind == StridedReduceKind::sum   ? kF32StridedSumsUkernels
         : kind == StridedReduceKind::max ? kF32StridedMaxUkernels
                                          : kF32StridedMinUkernels;
}
}  // namespace

F32StridedReduce::F32StridedReduce(int rank, const int64_t* dims, const int64_t* strides, const bool* reduced,
                                   float divisor, Isa isa, StridedReduceKind kind)
    : divisor_(divisor), kind_(kind) {
  std::vector<int> kept, summed;
  bool empty = false;
  for (int d = 0; d < rank; ++d) {
    empty = empty || dims[d] == 0;
    if (dims[d] != 1) (reduced[d] ? summed : kept).push_back(d);
  }
  if (empty) {  // no outputs (a kept extent 0), or sums of no terms: 0 / divisor each
    int64_t outputs = 1;
    for (int d = 0; d < rank; ++d)
      if (!reduced[d]) outputs *= dims[d];
    bases_.assign(size_t(outputs), 0);
    ukernel_ = first_runnable(strided_reduce_rows(kind), isa);
    return;
  }
  if (!kept.empty()) {
    count_ = size_t(dims[kept.back()]);
    lane_stride_ = size_t(strides[kept.back()]);
    kept.pop_back();
  }
  bases_ = offsets_of(kept, dims, strides);
  offsets_ = offsets_of(summed, dims, strides);
  if (lane_stride_ < (size_t{1} << 26)) ukernel_ = first_runnable(strided_reduce_rows(kind), isa);
}

KernelId F32StridedReduce::kernel_id() const {
  if (ukernel_) return row_kernel(*ukernel_);
  return reference_kernel(kind_ == StridedReduceKind::sum ? "f32_strided_sums__ref" : "f32_strided_extremum__ref");
}

void F32StridedReduce::run(const float* x, float* y, pthreadpool_t pool) const {
  const size_t work = std::max<size_t>(1, count_ * offsets_.size());
  const size_t per_piece = std::max<size_t>(1, kEltwiseMinPiece / work);
  parallel_pieces(pool, bases_.size(), per_piece, [&](size_t start, size_t n) {
    for (size_t p = start; p < start + n; ++p) {
      if (ukernel_)
        ukernel_->fn(count_, lane_stride_, x + bases_[p], offsets_.size(), offsets_.data(), y + p * count_, divisor_);
      else if (kind_ == StridedReduceKind::sum)
        f32_strided_sums__ref(count_, lane_stride_, x + bases_[p], offsets_.size(), offsets_.data(), y + p * count_,
                              divisor_);
      else
        f32_strided_extremum__ref(kind_ == StridedReduceKind::min ? Extremum::min : Extremum::max, count_, lane_stride_,
                                  x + bases_[p], offsets_.size(), offsets_.data(), y + p * count_);
    }
  });
}

F32LayerNorm::F32LayerNorm(size_t n, Isa isa) : n_(n) {
  if (n > 0 && n < (size_t{1} << 27)) ukernel_ = first_runnable(kF32LayerNormUkernels, isa);
}

KernelId F32LayerNorm::kernel_id() const {
  return ukernel_ ? row_kernel(*ukernel_) : reference_kernel("f32_layernorm__ref");
}

void F32LayerNorm::run(size_t rows, const float* x, const float* scale, const float* bias, float epsilon, float* y,
                       float* mean, float* inv_std, pthreadpool_t pool) const {
  // Pieces of whole groups of 16 rows (a multiple of every kernel's lane count) and about
  // kEltwiseMinPiece elements.
  const size_t group = 16;
  const size_t rows_per_piece = std::max<size_t>(group, (kEltwiseMinPiece / std::max<size_t>(1, n_)) / group * group);
  const size_t n = n_;
  parallel_pieces(pool, rows, rows_per_piece, [&](size_t start, size_t count) {
    float* m = mean ? mean + start : nullptr;
    float* s = inv_std ? inv_std + start : nullptr;
    if (ukernel_) ukernel_->fn(count, n, x + start * n, scale, bias, epsilon, y + start * n, m, s);
    else f32_layernorm__ref(count, n, x + start * n, scale, bias, epsilon, y + start * n, m, s);
  });
}

// ---- INT8 ----

Q8AddParams q8_add_params(QuantParams a, QuantParams b, QuantParams y, int32_t y_min, int32_t y_max) {
  // q8_add_ratio_fma_strided__ref's constants, step for step.
  const float ra = a.scale / y.scale;
  const float rb = b.scale / y.scale;
  const float zb = rb * static_cast<float>(b.zero_point);
  const float zab = std::fma(ra, static_cast<float>(a.zero_point), zb);
  const float k = static_cast<float>(y.zero_point) - zab;
  return {ra, rb, k, static_cast<float>(y_min), static_cast<float>(y_max)};
}

Q8MulParams q8_mul_params(QuantParams a, QuantParams b, QuantParams y, int32_t y_min, int32_t y_max) {
  const float sab = a.scale * b.scale;
  const float r = sab / y.scale;
  return {a.zero_point, b.zero_point, r, static_cast<float>(y.zero_point), static_cast<float>(y_min),
          static_cast<float>(y_max)};
}

Q8GapParams q8_gap_params(int hw, QuantParams x, QuantParams y, Q8 type) {
  // q8_global_avgpool_nhwc__ref's multiplier and bias; the int32 sums wrap like the ref's
  // int64 sum converted to int32.
  const float yhw = y.scale * static_cast<float>(hw);
  const float multiplier = x.scale / yhw;
  const auto bias = static_cast<int32_t>(-static_cast<int64_t>(x.zero_point) * hw);
  return {bias, multiplier, y.zero_point, static_cast<float>(q8_min(type) - y.zero_point),
          static_cast<float>(q8_max(type) - y.zero_point)};
}

Q8Binary::Q8Binary(Kind kind, Q8 type, int rank, const int64_t* dims, const int64_t* a_strides,
                   const int64_t* b_strides, Isa isa)
    : kind_(kind), type_(type), rank_(rank) {
  copy_box(rank, dims, a_strides, b_strides, dims_, a_strides_, b_strides_);
  tiling_ = tile_binary(rank, dims, a_strides, b_strides);
  if (!tiling_.fits) {
    // One operand constant along the innermost run the other walks contiguously.
    for (const bool b_fixed : {true, false}) {
      const int64_t* moving = b_fixed ? a_strides : b_strides;
      const int64_t* fixed = b_fixed ? b_strides : a_strides;
      int outer_rank = 0;
      const int64_t run = constant_run(rank, dims, moving, fixed, outer_rank);
      if (run < kMinRun) continue;
      run_outer_rank_ = outer_rank;
      run_ = run;
      b_fixed_ = b_fixed;
      break;
    }
    if (run_ == 0) {
      // Both operands broadcast, a short run or a strided read: packed blocks.
      merged_ = merge_box(rank, dims, a_strides, b_strides);
      packed_ = true;
    }
  }
  if (kind == Kind::add) add_ = type == Q8::u8 ? first_runnable(kQu8AddUkernels, isa) : first_runnable(kQs8AddUkernels, isa);
  else mul_ = type == Q8::u8 ? first_runnable(kQu8MulUkernels, isa) : first_runnable(kQs8MulUkernels, isa);
  if (!add_ && !mul_) {
    run_ = 0;
    packed_ = false;
  }
}

KernelId Q8Binary::kernel_id() const {
  const char* per_run = run_ > 0 ? " (scalar per run)" : packed_ ? " (packed rows)" : "";
  if (add_) return row_kernel(*add_) + per_run;
  if (mul_) return row_kernel(*mul_) + per_run;
  return reference_kernel(kind_ == Kind::add ? "q8_add_ratio_fma_strided__ref" : "q8_mul_ratio_strided__ref");
}

namespace {

template <class T>
void q8_binary_ref(Q8Binary::Kind kind, int rank, const int64_t* dims, const void* a, const int64_t* as,
                   QuantParams a_q, const void* b, const int64_t* bs, QuantParams b_q, QuantParams y_q,
                   int32_t y_min, int32_t y_max, void* y) {
  auto ta = static_cast<const T*>(a);
  auto tb = static_cast<const T*>(b);
  auto ty = static_cast<T*>(y);
  if (kind == Q8Binary::Kind::add)
    q8_add_ratio_fma_strided__ref(rank, dims, ta, as, a_q, tb, bs, b_q, y_q, y_min, y_max, ty);
  else
    q8_mul_ratio_strided__ref(rank, dims, ta, as, a_q, tb, bs, b_q, y_q, y_min, y_max, ty);
}

void check_q8_clamp(Q8 type, int32_t y_min, int32_t y_max) {
  if (y_min < q8_min(type) || y_max > q8_max(type) || y_min > y_max)
    throw std::invalid_argument("Q8Binary: output clamp [" + std::to_string(y_min) + ", " + std::to_string(y_max) +
                                "] is not inside the " + q8_name(type) + " range");
}

}  // namespace

void Q8Binary::run(const void* a, QuantParams a_q, const void* b, QuantParams b_q, QuantParams y_q, int32_t y_min,
                   int32_t y_max, void* y, pthreadpool_t pool) const {
  if (!add_ && !mul_) {
    if (type_ == Q8::u8)
      q8_binary_ref<uint8_t>(kind_, rank_, dims_, a, a_strides_, a_q, b, b_strides_, b_q, y_q, y_min, y_max, y);
    else
      q8_binary_ref<int8_t>(kind_, rank_, dims_, a, a_strides_, a_q, b, b_strides_, b_q, y_q, y_min, y_max, y);
    return;
  }
  check_q8_clamp(type_, y_min, y_max);
  auto pa = static_cast<const int8_t*>(a);  // byte pointers: one element is one byte
  auto pb = static_cast<const int8_t*>(b);
  auto py = static_cast<int8_t*>(y);
  const BinaryTiling& t = tiling_;
  if (run_ > 0) {
    if (add_) run_per_run(add_->fn, q8_add_params(a_q, b_q, y_q, y_min, y_max), pa, pb, py, pool);
    else run_per_run(mul_->fn, q8_mul_params(a_q, b_q, y_q, y_min, y_max), pa, pb, py, pool);
    return;
  }
  if (packed_) {
    if (add_) {
      const Q8AddParams p = q8_add_params(a_q, b_q, y_q, y_min, y_max);
      const Q8AddUkernel fn = add_->fn;
      run_packed(merged_, pa, pb, py, pool,
                 [&](size_t count, const int8_t* ra, const int8_t* rb, int8_t* ry) { fn(1, count, ra, 0, rb, 0, ry, p); });
    } else {
      const Q8MulParams p = q8_mul_params(a_q, b_q, y_q, y_min, y_max);
      const Q8MulUkernel fn = mul_->fn;
      run_packed(merged_, pa, pb, py, pool,
                 [&](size_t count, const int8_t* ra, const int8_t* rb, int8_t* ry) { fn(1, count, ra, 0, rb, 0, ry, p); });
    }
    return;
  }
  if (add_) {
    const Q8AddParams p = q8_add_params(a_q, b_q, y_q, y_min, y_max);
    const Q8AddUkernel fn = add_->fn;
    run_tiled(t, pool, [&](int64_t rows, int64_t cols, int64_t a_off, int64_t b_off, int64_t y_off) {
      fn(size_t(rows), size_t(cols), pa + a_off, size_t(t.a_row_stride), pb + b_off, size_t(t.b_row_stride),
         py + y_off, p);
    });
  } else {
    const Q8MulParams p = q8_mul_params(a_q, b_q, y_q, y_min, y_max);
    const Q8MulUkernel fn = mul_->fn;
    run_tiled(t, pool, [&](int64_t rows, int64_t cols, int64_t a_off, int64_t b_off, int64_t y_off) {
      fn(size_t(rows), size_t(cols), pa + a_off, size_t(t.a_row_stride), pb + b_off, size_t(t.b_row_stride),
         py + y_off, p);
    });
  }
}

template <class Fn, class Params>
void Q8Binary::run_per_run(Fn fn, const Params& p, const int8_t* a, const int8_t* b, int8_t* y,
                           pthreadpool_t pool) const {
  int64_t runs = 1;
  for (int d = 0; d < run_outer_rank_; ++d) runs *= dims_[d];
  const size_t runs_per_piece = std::max<size_t>(1, kEltwiseMinPiece / size_t(run_));
  parallel_pieces(pool, size_t(runs), runs_per_piece, [&](size_t start, size_t count) {
    // The run's constant spread over a row read with row stride 0: [rows][chunk] + a tail.
    int8_t row[kRunChunk];
    const int64_t chunk = std::min<int64_t>(run_, kRunChunk);
    const int64_t rows = run_ / chunk, tail = run_ - rows * chunk;
    for (size_t r = start; r < start + count; ++r) {
      int64_t rest = int64_t(r), a_off = 0, b_off = 0;
      for (int d = run_outer_rank_ - 1; d >= 0; --d) {
        const int64_t i = rest % dims_[d];
        rest /= dims_[d];
        a_off += i * a_strides_[d];
        b_off += i * b_strides_[d];
      }
      std::memset(row, b_fixed_ ? b[b_off] : a[a_off], size_t(chunk));
      const int8_t* ra = b_fixed_ ? a + a_off : row;
      const int8_t* rb = b_fixed_ ? row : b + b_off;
      const size_t sa = b_fixed_ ? size_t(chunk) : 0, sb = b_fixed_ ? 0 : size_t(chunk);
      int8_t* yr = y + int64_t(r) * run_;
      fn(size_t(rows), size_t(chunk), ra, sa, rb, sb, yr, p);
      if (tail > 0)
        fn(1, size_t(tail), b_fixed_ ? ra + rows * chunk : row, 0, b_fixed_ ? row : rb + rows * chunk, 0,
           yr + rows * chunk, p);
    }
  });
}

namespace {

// True when the extents above 1 of `dims`, sorted by stride, tile memory densely from 0: x's
// elements are the first count elements from its start, in some layout.
bool dense_layout(int rank, const int64_t* dims, const int64_t* strides) {
  std::vector<std::pair<int64_t, int64_t>> m;  // (stride, extent)
  for (int d = 0; d < rank; ++d)
    if (dims[d] > 1) m.push_back({strides[d], dims[d]});
  std::sort(m.begin(), m.end());
  int64_t expect = 1;
  for (const auto& [stride, extent] : m) {
    if (stride != expect) return false;
    expect *= extent;
  }
  return true;
}

}  // namespace

Q8ReduceMean::Q8ReduceMean(Q8 type, int rank, const int64_t* dims, const int64_t* strides, const bool* reduced,
                           Isa isa, bool ort_nhwc)
    : type_(type), rank_(rank) {
  if (rank < 0 || rank > kMaxRank) throw std::invalid_argument("Q8ReduceMean: rank above 8 is not supported");
  std::copy(dims, dims + rank, dims_);
  std::copy(strides, strides + rank, strides_);
  std::copy(reduced, reduced + rank, reduced_);
  for (int d = 0; d < rank; ++d) {
    count_ *= dims[d];
    (reduced[d] ? n_ : outputs_) *= dims[d];
  }
  if (ort_nhwc && rank == 4 && !reduced[0] && !reduced[1] && reduced[2] && reduced[3]) {
    // ORT sums one image's pixels in order, a batch's on MLAS's M = 1 SGEMM (kernels/ref/pool2d.h).
    nhwc_order_ = dims[0] == 1 ? GapOrder::sequential : GapOrder::mlas_sgemm_m1;
    const int64_t d[4] = {dims[0], dims[2], dims[3], dims[1]}, st[4] = {strides[0], strides[2], strides[3], strides[1]};
    std::copy(d, d + 4, dims_);
    std::copy(st, st + 4, strides_);
    reduced_[1] = reduced_[2] = true;
    reduced_[3] = false;
  }
  if (count_ == 0 || n_ == 0) return;  // nothing to read: the reference's answer
  quantize_ = choose_q8_quantize(isa);
  if (!quantize_) return;
  if (nhwc_order_) {
    // x gathered to dense [N, H, W, C] bytes unless it already is (a conv's channels-last
    // output), then each image's [hw][C] floats pooled in ORT's order. Past int sizes: the
    // reference, in the same order.
    if (count_ > INT32_MAX) return;
    gather_ = !dense(4, dims_, strides_);
    gap_ = std::make_unique<F32GlobalAvgPool>(int(dims_[0]), int(dims_[1] * dims_[2]), int(dims_[3]), *nhwc_order_, isa);
    fx_.resize(size_t(count_));
    fy_.resize(size_t(outputs_));
    if (gather_) gathered_.resize(size_t(count_));
    return;
  }
  std::vector<int64_t> row_major(size_t(rank), 1);
  for (int d = rank - 2; d >= 0; --d) row_major[size_t(d)] = row_major[size_t(d) + 1] * dims[d + 1];
  const bool is_row_major = dense(rank, dims, strides);
  if (reduce_mean_rows_case(rank, dims, reduced)) {
    const bool spatial_nhwc = rank == 4 && !reduced[0] && !reduced[1] && reduced[2] && reduced[3] &&
                              strides[1] == 1 && strides[3] == dims[1] && strides[2] == dims[1] * dims[3] &&
                              (dims[0] == 1 || strides[0] == dims[1] * dims[2] * dims[3]);
    if (!is_row_major && spatial_nhwc && count_ <= INT32_MAX) {
      gap_ = std::make_unique<F32GlobalAvgPool>(int(dims[0]), int(dims[2] * dims[3]), int(dims[1]),
                                                GapOrder::eigen_packets4, isa);
    } else {
      gather_ = !is_row_major;
        rows_ = std::make_unique<F32RowSums>(size_t(n_), isa);
    }
  } else {
    gather_ = !dense_layout(rank, dims, strides);
    strided_ = std::make_unique<F32StridedReduce>(rank, dims, gather_ ? row_major.data() : strides, reduced,
                                                  float(n_), isa);
  }
  fx_.resize(size_t(count_));
  fy_.resize(size_t(outputs_));
  if (gather_) gathered_.resize(size_t(count_));
}

Q8ReduceMean::~Q8ReduceMean() = default;

KernelId Q8ReduceMean::kernel_id() const {
  if (nhwc_order_ && (!quantize_ || !gap_)) return reference_kernel("q8_reduce_mean_hw_nhwc__ref");
  if (!quantize_ || (!rows_ && !gap_ && !strided_)) return reference_kernel("q8_reduce_mean_strided__ref");
  const KernelId sum = rows_ ? rows_->kernel_id() : gap_ ? gap_->kernel_id() : strided_->kernel_id();
  KernelId id{std::string(quantize_->dequantize_name) + (gather_ ? " (gathered)" : "") + " + " +
                  sum.name + " + " + quantize_->name,
              sum.scalar || quantize_->isa == Isa::scalar};
  return id;
}

void Q8ReduceMean::run(const void* x, QuantParams x_q, QuantParams y_q, void* y, pthreadpool_t pool) const {
  if (nhwc_order_ && (!quantize_ || !gap_)) {
    if (type_ == Q8::u8)
      q8_reduce_mean_hw_nhwc__ref(dims_, static_cast<const uint8_t*>(x), strides_, x_q, y_q, *nhwc_order_,
                                  static_cast<uint8_t*>(y));
    else
      q8_reduce_mean_hw_nhwc__ref(dims_, static_cast<const int8_t*>(x), strides_, x_q, y_q, *nhwc_order_,
                                  static_cast<int8_t*>(y));
    return;
  }
  if (!quantize_ || (!rows_ && !gap_ && !strided_)) {
    if (type_ == Q8::u8)
      q8_reduce_mean_strided__ref(rank_, dims_, reduced_, static_cast<const uint8_t*>(x), strides_, x_q, y_q,
                                  static_cast<uint8_t*>(y));
    else
      q8_reduce_mean_strided__ref(rank_, dims_, reduced_, static_cast<const int8_t*>(x), strides_, x_q, y_q,
                                  static_cast<int8_t*>(y));
    return;
  }
  const void* src = x;
  if (gather_) {
    // x's bytes in row-major order, the last dimension innermost.
    auto from = static_cast<const int8_t*>(x);
    int8_t* to = gathered_.data();
    int64_t idx[kMaxRank] = {}, off = 0;
    const int64_t last = rank_ > 0 ? dims_[rank_ - 1] : 1, step = rank_ > 0 ? strides_[rank_ - 1] : 0;
    for (int64_t done = 0; done < count_; done += last) {
      for (int64_t j = 0; j < last; ++j) *to++ = from[off + j * step];
      for (int d = rank_ - 2; d >= 0; --d) {
        off += strides_[d];
        if (++idx[d] < dims_[d]) break;
        off -= idx[d] * strides_[d];
        idx[d] = 0;
      }
    }
    src = gathered_.data();
  }
  const bool is_signed = type_ == Q8::s8;
  if (rows_) {
    // Rows dequantized a few at a time and summed while they are still in L1 / L2; each chunk
    // passes its first row, so the sums keep ORT's row leads. Short rows: at least 32 a chunk
    // (the row sums put a row in each lane); long ones a call of the long-row kernel at least.
    const size_t n = size_t(n_);
    const size_t rows_per_chunk = n >= F32RowSums::kLongRow
                                      ? std::max<size_t>(kEigenSumsRows, 16384 / n / kEigenSumsRows * kEigenSumsRows)
                                      : std::max<size_t>(32, 16384 / n);
    parallel_pieces(pool, size_t(outputs_), rows_per_chunk, [&](size_t start, size_t count) {
      for (size_t r = start; r < start + count; r += rows_per_chunk) {
        const size_t rows = std::min(rows_per_chunk, start + count - r);
        float* fx = fx_.data() + r * n;
        quantize_->dequantize(rows * n, static_cast<const int8_t*>(src) + r * n, is_signed, x_q.scale, x_q.zero_point,
                              fx);
        rows_->run(rows, fx, fy_.data() + r, r, float(n_), nullptr);
      }
    });
  } else {
    q8_dequantize(*quantize_, size_t(count_), src, is_signed, x_q.scale, x_q.zero_point, fx_.data(), pool);
  }
  if (gap_) gap_->run(fx_.data(), fy_.data(), pool);
  else if (strided_) strided_->run(fx_.data(), fy_.data(), pool);
  q8_quantize(*quantize_, type_, size_t(outputs_), fy_.data(), y_q.scale, y_q.zero_point, y, pool);
}

Q8GlobalAvgPool::Q8GlobalAvgPool(Q8 type, int batch, int hw, int channels, Isa isa)
    : type_(type), batch_(batch), hw_(hw), channels_(channels) {
  if (hw > 0) ukernel_ = type == Q8::u8 ? first_runnable(kQu8GapUkernels, isa) : first_runnable(kQs8GapUkernels, isa);
}

KernelId Q8GlobalAvgPool::kernel_id() const {
  return ukernel_ ? row_kernel(*ukernel_) : reference_kernel("q8_global_avgpool_nhwc__ref");
}

void Q8GlobalAvgPool::run(const void* x, QuantParams x_q, QuantParams y_q, void* y, pthreadpool_t pool) const {
  if (!ukernel_) {
    if (type_ == Q8::u8)
      q8_global_avgpool_nhwc__ref(batch_, hw_, channels_, static_cast<const uint8_t*>(x), x_q, y_q,
                                  static_cast<uint8_t*>(y));
    else
      q8_global_avgpool_nhwc__ref(batch_, hw_, channels_, static_cast<const int8_t*>(x), x_q, y_q,
                                  static_cast<int8_t*>(y));
    return;
  }
  const Q8GapParams p = q8_gap_params(hw_, x_q, y_q, type_);
  const size_t image = size_t(hw_) * size_t(channels_);
  auto px = static_cast<const int8_t*>(x);
  auto py = static_cast<int8_t*>(y);
  parallel_pieces(pool, size_t(batch_), 1, [&](size_t start, size_t count) {
    for (size_t n = start; n < start + count; ++n)
      ukernel_->fn(size_t(hw_), size_t(channels_), px + n * image, py + n * size_t(channels_), p);
  });
}

}  // namespace octet::kernels
