#include "kernels/elementwise/reduce_more.h"

#include <algorithm>
#include <cmath>

#include "kernels/elementwise/axis_offsets.h"
#include "kernels/elementwise/parallel_pieces.h"
#include "kernels/ref/reduce_more.h"

namespace octet::kernels {

namespace {

// The gathers' 32-bit lane offsets (lane_stride * 16 lanes) must fit.
constexpr size_t kMaxLaneStride = size_t{1} << 26;

}  // namespace

F32MapReduce::F32MapReduce(MapReduce kind, int rank, const int64_t* dims, const int64_t* strides, const bool* reduced,
                           Isa isa)
    : kind_(kind) {
  std::vector<int> kept, folded;
  bool all = true;
  outputs_ = 1;
  for (int d = 0; d < rank; ++d) {
    empty_ = empty_ || (reduced[d] && dims[d] == 0);
    all = all && reduced[d];
    if (!reduced[d]) outputs_ *= size_t(dims[d]);
    if (dims[d] != 1) (reduced[d] ? folded : kept).push_back(d);
  }
  if (empty_ || outputs_ == 0) return;
  // ORT folds a whole tensor (every axis reduced, extents of 1 included) with Eigen; octet does
  // when its memory is that order (row-major, up to extents of 1).
  if (all) {
    n_ = 1;
    bool dense = true;
    for (int i = int(folded.size()) - 1; i >= 0; --i) {
      dense = dense && strides[folded[size_t(i)]] == int64_t(n_);
      n_ *= size_t(dims[folded[size_t(i)]]);
    }
    whole_ = dense;
    if (whole_) {
      fold_ = first_runnable(kF32EigenFoldUkernels, isa);
      return;
    }
  }
  if (!kept.empty()) {
    count_ = size_t(dims[kept.back()]);
    lane_stride_ = size_t(strides[kept.back()]);
    kept.pop_back();
  }
  bases_ = offsets_of(kept, dims, strides);
  offsets_ = offsets_of(folded, dims, strides);
  if (lane_stride_ < kMaxLaneStride) map_ = first_runnable(kF32MapReduceUkernels, isa);
}

KernelId F32MapReduce::kernel_id() const {
  if (empty_ || outputs_ == 0) return portable_kernel("fill");
  if (whole_) return fold_ ? row_kernel(*fold_) : reference_kernel("f32_eigen_fold__ref");
  return map_ ? row_kernel(*map_) : reference_kernel("f32_map_reduce__ref");
}

void F32MapReduce::run(const float* x, float* y, pthreadpool_t pool) const {
  if (outputs_ == 0) return;
  if (empty_) {
    std::fill(y, y + outputs_, map_reduce_empty_value(kind_));
    return;
  }
  if (whole_) {
    y[0] = fold_ ? fold_->fn(kind_, n_, x) : f32_eigen_fold__ref(kind_, n_, x);
    return;
  }
  const size_t work = std::max<size_t>(1, count_ * offsets_.size());
  const size_t per_piece = std::max<size_t>(1, kEltwiseMinPiece / work);
  parallel_pieces(pool, bases_.size(), per_piece, [&](size_t start, size_t n) {
    for (size_t p = start; p < start + n; ++p) {
      if (map_) map_->fn(kind_, count_, lane_stride_, x + bases_[p], offsets_.size(), offsets_.data(), y + p * count_);
      else f32_map_reduce__ref(kind_, count_, lane_stride_, x + bases_[p], offsets_.size(), offsets_.data(), y + p * count_);
    }
  });
}

F32LpNorm::F32LpNorm(int p, int64_t outer, int64_t len, int64_t inner, Isa isa)
    : kind_(p == 1 ? MapReduce::l1 : MapReduce::l2), outer_(outer), len_(len), inner_(inner) {
  // inner == 1: one lane per vector (row), its elements len apart; else one per column.
  for (int64_t k = 0; k < len; ++k) offsets_.push_back(k * (inner == 1 ? 1 : inner));
  const size_t lane_stride = size_t(inner == 1 ? len : 1);
  if (lane_stride < kMaxLaneStride) map_ = first_runnable(kF32MapReduceUkernels, isa);
  div_ = first_runnable(kF32SubDivUkernels, isa);
}

KernelId F32LpNorm::kernel_id() const {
  KernelId norm = map_ ? row_kernel(*map_) : reference_kernel("f32_map_reduce__ref");
  KernelId div = div_ ? row_kernel(*div_) : reference_kernel("f32_sub_div__ref");
  return norm + " + " + div;
}

void F32LpNorm::run(const float* x, float* y, float* norms, pthreadpool_t pool) const {
  if (outer_ * len_ * inner_ == 0) return;
  const size_t len = size_t(len_), inner = size_t(inner_);
  const size_t per_piece = std::max<size_t>(1, kEltwiseMinPiece / std::max<size_t>(1, len * inner));
  parallel_pieces(pool, size_t(outer_), per_piece, [&](size_t start, size_t n) {
    const float* xs = x + start * len * inner;
    float* ys = y + start * len * inner;
    float* ns = norms + start * inner;
    if (inner == 1) {
      if (map_) map_->fn(kind_, n, len, xs, len, offsets_.data(), ns);
      else f32_map_reduce__ref(kind_, n, len, xs, len, offsets_.data(), ns);
      for (size_t r = 0; r < n; ++r) {
        if (div_) div_->fn(len, xs + r * len, nullptr, ns + r, 0, ys + r * len, true);
        else f32_sub_div__ref(len, xs + r * len, nullptr, ns + r, 0, ys + r * len, true);
      }
      return;
    }
    for (size_t o = 0; o < n; ++o) {
      const float* xo = xs + o * len * inner;
      float* no = ns + o * inner;
      if (map_) map_->fn(kind_, inner, 1, xo, len, offsets_.data(), no);
      else f32_map_reduce__ref(kind_, inner, 1, xo, len, offsets_.data(), no);
      for (size_t k = 0; k < len; ++k) {
        if (div_) div_->fn(inner, xo + k * inner, nullptr, no, 1, ys + o * len * inner + k * inner, true);
        else f32_sub_div__ref(inner, xo + k * inner, nullptr, no, 1, ys + o * len * inner + k * inner, true);
      }
    }
  });
}

namespace {

// Columns per piece of a CumSum slab (a multiple of every level's lanes).
constexpr size_t kCumSumChunk = 256;

}  // namespace

F32CumSum::F32CumSum(int64_t outer, int64_t len, int64_t inner, bool exclusive, bool reverse, Isa isa)
    : outer_(size_t(outer)),
      len_(size_t(len)),
      inner_(size_t(inner)),
      chunks_((size_t(inner) + kCumSumChunk - 1) / kCumSumChunk),
      exclusive_(exclusive),
      reverse_(reverse),
      cumsum_(first_runnable(kF32CumSumUkernels, isa)) {}

KernelId F32CumSum::kernel_id() const { return cumsum_ ? row_kernel(*cumsum_) : reference_kernel("f32_cumsum__ref"); }

void F32CumSum::run(const float* x, float* y, pthreadpool_t pool) const {
  if (outer_ * len_ * inner_ == 0) return;
  const size_t piece_elems = len_ * std::min(inner_, kCumSumChunk);
  parallel_pieces(pool, outer_ * chunks_, std::max<size_t>(1, kEltwiseMinPiece / piece_elems), [&](size_t start, size_t n) {
    for (size_t p = start; p < start + n; ++p) {
      const size_t o = p / chunks_, c0 = p % chunks_ * kCumSumChunk;
      const size_t at = o * len_ * inner_ + c0, count = std::min(kCumSumChunk, inner_ - c0);
      if (cumsum_) cumsum_->fn(len_, count, inner_, x + at, y + at, exclusive_, reverse_);
      else f32_cumsum__ref(len_, count, inner_, x + at, y + at, exclusive_, reverse_);
    }
  });
}

F32MeanVarianceNorm::F32MeanVarianceNorm(int rank, const int64_t* dims, const bool* normalized, Isa isa) {
  std::vector<int64_t> strides(size_t(rank), 1);
  for (int d = rank - 2; d >= 0; --d) strides[size_t(d)] = strides[size_t(d) + 1] * dims[d + 1];
  sum_ = std::make_unique<F32MapReduce>(MapReduce::sum, rank, dims, strides.data(), normalized, isa);
  squares_ = std::make_unique<F32MapReduce>(MapReduce::sum_square, rank, dims, strides.data(), normalized, isa);
  int64_t total = 1, n = 1;
  for (int d = 0; d < rank; ++d) {
    total *= dims[d];
    if (normalized[d]) n *= dims[d];
  }
  n_ = float(n);
  kept_ = size_t(n == 0 ? 0 : total / n);
  // Runs: the trailing axes that share the last axis's state. Normalized, a run shares one
  // statistic (inc 0); kept, its statistics are consecutive (inc 1).
  int first = rank;
  while (first > 0 && normalized[first - 1] == normalized[rank - 1]) --first;
  for (int d = first; d < rank; ++d) run_ *= size_t(dims[d]);
  inc_ = rank > 0 && !normalized[rank - 1] ? 1 : 0;
  if (total > 0 && run_ > 0) {
    const size_t runs = size_t(total) / run_;
    stat_offsets_.resize(runs);
    for (size_t q = 0; q < runs; ++q) {
      // The run's first element: its kept index, row-major over the kept axes.
      int64_t rem = int64_t(q * run_), kept_index = 0;
      std::vector<int64_t> idx(static_cast<size_t>(rank));
      for (int d = rank - 1; d >= 0; --d) {
        idx[size_t(d)] = dims[d] ? rem % dims[d] : 0;
        rem = dims[d] ? rem / dims[d] : 0;
      }
      for (int d = 0; d < rank; ++d)
        if (!normalized[d]) kept_index = kept_index * dims[d] + idx[size_t(d)];
      stat_offsets_[q] = kept_index;
    }
  }
  ones_.assign(inc_ ? run_ : 1, 1.0f);
  div_ = first_runnable(kF32SubDivUkernels, isa);
}

KernelId F32MeanVarianceNorm::kernel_id() const {
  KernelId div = div_ ? row_kernel(*div_) : reference_kernel("f32_sub_div__ref");
  return sum_->kernel_id() + " + " + squares_->kernel_id() + " + " + div;
}

void F32MeanVarianceNorm::run(const float* x, float* y, float* scratch) const {
  if (stat_offsets_.empty()) return;
  float* mean = scratch;
  float* sd = scratch + kept_;
  sum_->run(x, mean, nullptr);
  for (size_t j = 0; j < kept_; ++j) mean[j] /= n_;
  auto sub_div = [&](const float* in, const float* a, const float* b, size_t inc, float* out) {
    if (div_) div_->fn(run_, in, a, b, inc, out, false);
    else f32_sub_div__ref(run_, in, a, b, inc, out, false);
  };
  for (size_t q = 0; q < stat_offsets_.size(); ++q)
    sub_div(x + q * run_, mean + stat_offsets_[q], ones_.data(), inc_, y + q * run_);
  squares_->run(y, sd, nullptr);
  for (size_t j = 0; j < kept_; ++j) sd[j] = std::sqrt(sd[j] / n_);
  for (size_t q = 0; q < stat_offsets_.size(); ++q)
    sub_div(y + q * run_, nullptr, sd + stat_offsets_[q], inc_, y + q * run_);
}

}  // namespace octet::kernels
