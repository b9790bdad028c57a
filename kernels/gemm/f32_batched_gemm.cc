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
};

void run_tile(void* context, size_t row, size_t col, size_t rows, size_t cols) {
  const auto& t = *static_cast<const Task*>(context);
  t.kernel->gemm(rows, cols, t.k, t.a + row * t.k, t.k, t.w + col / t.kernel->nr * t.block_stride,
                 t.y + row * t.n + col, t.n, kNoClamp);
}

}  // namespace

F32BatchedGemm::F32BatchedGemm(int64_t m, int64_t k, int64_t n, Isa isa) : m_(m), k_(k), n_(n) {
  if (m <= 0 || k <= 0 || n <= 0)
    throw Unsupported("F32BatchedGemm: m, k and n must be positive, got " + std::to_string(m) + ", " +
                      std::to_string(k) + ", " + std::to_string(n));
  kernel_ = &choose_f32_gemm_kernel(isa, m, n);
  name_ = KernelId{kernel_->gemm_name, kernel_->isa == Isa::scalar} + " (B packed per run)";
  const int64_t blocks = (n + kernel_->nr - 1) / kernel_->nr;
  block_stride_ = size_t(kernel_->nr + k * kernel_->nr);
  const size_t bytes = (size_t(blocks) * block_stride_ * sizeof(float) + 63) / 64 * 64;
  packed_.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
  if (!packed_) throw std::bad_alloc();
}

void F32BatchedGemm::run(const float* a, const float* b, float* y, pthreadpool_t pool) const {
  const int64_t nr = kernel_->nr;
  float* out = packed_.get();
  for (int64_t first = 0; first < n_; first += nr) {
    const int64_t cols = std::min(nr, n_ - first);
    std::fill(out, out + nr, 0.0f);  // the bias row the microkernel starts from
    out += nr;
    for (int64_t kk = 0; kk < k_; ++kk, out += nr) {
      std::memcpy(out, b + kk * n_ + first, size_t(cols) * sizeof(float));
      if (cols < nr) std::fill(out + cols, out + nr, 0.0f);
    }
  }
  Task task{kernel_, a, packed_.get(), block_stride_, y, size_t(k_), size_t(n_)};
  pthreadpool_parallelize_2d_tile_2d(pool, run_tile, &task, size_t(m_), size_t(n_), size_t(kernel_->mr),
                                     size_t(n_), 0);
}

}  // namespace octet::kernels
