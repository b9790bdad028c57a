#include "kernels/gemm/f32_batched_gemm.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <string>

#include "kernels/fallback.h"
#include "kernels/gemm/f32_gemm.h"

namespace octet::kernels {
namespace {

struct Task {
  const F32GemmKernel* kernel;
  const float* a;
  const float* w;
  size_t block_stride;
  float* y;
  size_t k, n;
  F32MinMax clamp;
  const F32Epilogue* epilogue;
  const float* residual;
};

void run_tile(void* context, size_t row, size_t col, size_t rows, size_t cols) {
  const auto& t = *static_cast<const Task*>(context);
  float* c = t.y + row * t.n + col;
  t.kernel->gemm(rows, cols, t.k, t.a + row * t.k, t.k, t.w + col / t.kernel->nr * t.block_stride, c, t.n, t.clamp);
  if (t.residual) t.epilogue->run_residual(rows, cols, c, t.n, t.residual + row * t.n + col);
  else t.epilogue->run(rows, cols, c, t.n);
}

}  // namespace

F32BatchedGemm::F32BatchedGemm(int64_t m, int64_t k, int64_t n, Isa isa, bool trans_b, const Activation& act)
    : m_(m), k_(k), n_(n), trans_b_(trans_b), clamp_(f32_clamp_for(act)) {
  if (m <= 0 || k <= 0 || n <= 0)
    throw Unsupported("F32BatchedGemm: m, k and n must be positive, got " + std::to_string(m) + ", " +
                      std::to_string(k) + ", " + std::to_string(n));
  kernel_ = &choose_f32_gemm_kernel(isa, m, n, k);
  epilogue_ = F32Epilogue(act, kernel_->isa);
  name_ = KernelId{kernel_->gemm_name, kernel_->isa == Isa::scalar} + " (B packed per run)" +
          (epilogue_.active() ? "+" + epilogue_.kernel_id() : KernelId{});
  const int64_t blocks = (n + kernel_->nr - 1) / kernel_->nr;
  block_stride_ = size_t(kernel_->nr + k * kernel_->nr);
  const size_t bytes = (size_t(blocks) * block_stride_ * sizeof(float) + 63) / 64 * 64;
  packed_.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
  if (!packed_) throw std::bad_alloc();
}

void F32BatchedGemm::run(const float* a, const float* b, float* y, pthreadpool_t pool, const F32GemmAddends& add) const {
  const int64_t nr = kernel_->nr;
  const float alpha = add.alpha;
  float* out = packed_.get();
  for (int64_t first = 0; first < n_; first += nr) {
    const int64_t cols = std::min(nr, n_ - first);
    // The bias row the microkernel starts from.
    if (add.bias) std::memcpy(out, add.bias + first, size_t(cols) * sizeof(float));
    else std::fill(out, out + cols, 0.0f);
    std::fill(out + cols, out + nr, 0.0f);
    out += nr;
    if (trans_b_) {
      // b is [n][k]: each of the block's columns is a contiguous row of b.
      for (int64_t j = 0; j < cols; ++j) {
        const float* col = b + (first + j) * k_;
        for (int64_t kk = 0; kk < k_; ++kk) out[kk * nr + j] = alpha * col[kk];
      }
      for (int64_t kk = 0; kk < k_; ++kk) std::fill(out + kk * nr + cols, out + (kk + 1) * nr, 0.0f);
      out += k_ * nr;
      continue;
    }
    for (int64_t kk = 0; kk < k_; ++kk, out += nr) {
      const float* row = b + kk * n_ + first;
      if (alpha == 1.0f) std::memcpy(out, row, size_t(cols) * sizeof(float));
      else for (int64_t j = 0; j < cols; ++j) out[j] = alpha * row[j];
      if (cols < nr) std::fill(out + cols, out + nr, 0.0f);
    }
  }
  Task task{kernel_, a, packed_.get(), block_stride_, y, size_t(k_), size_t(n_),
            add.residual ? kNoClamp : clamp_, &epilogue_, add.residual};
  pthreadpool_parallelize_2d_tile_2d(pool, run_tile, &task, size_t(m_), size_t(n_), size_t(kernel_->mr),
                                     size_t(n_), 0);
}

}  // namespace octet::kernels
