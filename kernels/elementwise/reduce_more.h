#pragma once
// Drivers of kernels/elementwise/reduce_more_list.h: ReduceL1 / L2 / SumSquare / LogSum /
// LogSumExp / Prod over any set of axes of x read through its strides (any layout),
// LpNormalization and CumSum along one axis. Each reproduces ONNX Runtime's order: with every axis reduced
// its aggall (Eigen's packet order), otherwise its generic loop (the reduced elements in the
// row-major order of the reduced axes), the lanes along the innermost kept axis.
#include <pthreadpool.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/kernel_id.h"
#include "kernels/elementwise/reduce_more_list.h"

namespace octet::kernels {

class F32MapReduce {
 public:
  F32MapReduce(MapReduce kind, int rank, const int64_t* dims, const int64_t* strides, const bool* reduced, Isa isa);
  KernelId kernel_id() const;
  std::string kernel_name() const { return kernel_id().name; }
  void run(const float* x, float* y, pthreadpool_t pool) const;

 private:
  MapReduce kind_;
  bool empty_ = false;   // a reduced extent 0: every output is map_reduce_empty_value
  bool whole_ = false;   // every axis reduced over contiguous memory: one Eigen fold of n_
  size_t n_ = 0;
  size_t count_ = 1, lane_stride_ = 1, outputs_ = 0;
  std::vector<int64_t> bases_;    // x's offset at each position of the outer kept axes (y at p * count_)
  std::vector<int64_t> offsets_;  // the reduced elements, row-major over the reduced axes
  const ReduceMoreUkernel<F32MapReduceUkernel>* map_ = nullptr;
  const ReduceMoreUkernel<F32EigenFoldUkernel>* fold_ = nullptr;
};

// LpNormalization (p 1 or 2) of x [outer][len][inner] (dense, row-major) along len, as ORT's
// LpNorm: the norm of each vector in index order (Eigen's lpNorm over a strided map), then
// y = x / norm, 0 where the norm is 0. norms: scratch of outer * inner floats.
class F32LpNorm {
 public:
  F32LpNorm(int p, int64_t outer, int64_t len, int64_t inner, Isa isa);
  KernelId kernel_id() const;
  std::string kernel_name() const { return kernel_id().name; }
  size_t scratch_floats() const { return size_t(outer_ * inner_); }
  void run(const float* x, float* y, float* norms, pthreadpool_t pool) const;

 private:
  MapReduce kind_;
  int64_t outer_, len_, inner_;
  std::vector<int64_t> offsets_;
  const ReduceMoreUkernel<F32MapReduceUkernel>* map_ = nullptr;
  const ReduceMoreUkernel<F32SubDivUkernel>* div_ = nullptr;
};

// CumSum of a row-major x [outer][len][inner] along len (exclusive, reverse): each column of
// each slab one chain of adds in ONNX Runtime's order, a vector lane per column when inner > 1;
// pieces of slabs and columns on the pool.
class F32CumSum {
 public:
  F32CumSum(int64_t outer, int64_t len, int64_t inner, bool exclusive, bool reverse, Isa isa);
  KernelId kernel_id() const;
  std::string kernel_name() const { return kernel_id().name; }
  void run(const float* x, float* y, pthreadpool_t pool) const;

 private:
  size_t outer_, len_, inner_, chunks_;
  bool exclusive_, reverse_;
  const ReduceMoreUkernel<F32CumSumUkernel>* cumsum_ = nullptr;
};

// MeanVarianceNormalization of a row-major x over the axes marked `normalized`, as ORT computes
// it: mean = sum / N, d = x - mean, y = d / sqrt(sum(d * d) / N) (no epsilon: a constant slice
// gives NaN, as in ORT). The sums in ORT's generic order rather than Eigen's column order (within
// a few ulp). scratch: 2 * kept_count() floats.
class F32MeanVarianceNorm {
 public:
  F32MeanVarianceNorm(int rank, const int64_t* dims, const bool* normalized, Isa isa);
  KernelId kernel_id() const;
  std::string kernel_name() const { return kernel_id().name; }
  size_t scratch_floats() const { return 2 * kept_; }
  void run(const float* x, float* y, float* scratch) const;

 private:
  std::unique_ptr<F32MapReduce> sum_, squares_;
  size_t kept_ = 1, run_ = 1, inc_ = 0;
  float n_ = 1.0f;
  std::vector<int64_t> stat_offsets_;  // per run of run_ elements of x: its first statistic
  std::vector<float> ones_;
  const ReduceMoreUkernel<F32SubDivUkernel>* div_ = nullptr;
};

}  // namespace octet::kernels
