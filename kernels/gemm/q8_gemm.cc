#include "kernels/gemm/q8_gemm.h"

#include <algorithm>
#include <stdexcept>

#include "kernels/fallback.h"
#include "kernels/gemm/q8_weight_chunks.h"
#include "kernels/ref/qlinear.h"

namespace octet::kernels {

namespace {

void check_arguments(int64_t k, int64_t n, Q8 a_type, int32_t a_zero_point,
                     const Requantization& rq, Q8 y_type) {
  if (k < 1 || n < 1) {
    throw Unsupported("Q8Gemm: k and n must be positive; got k " + std::to_string(k) +
                                ", n " + std::to_string(n));
  }
  if (a_zero_point < q8_min(a_type) || a_zero_point > q8_max(a_type)) {
    throw std::invalid_argument("Q8Gemm: a zero point " + std::to_string(a_zero_point) +
                                " is outside " + q8_name(a_type));
  }
  check_per_channel("Q8Gemm", "the requantization multiplier", rq.multiplier.size(),
                    static_cast<size_t>(n));
  if (rq.qmin < q8_min(y_type) || rq.qmax > q8_max(y_type) || rq.qmin > rq.qmax) {
    throw std::invalid_argument("Q8Gemm: output clamp [" + std::to_string(rq.qmin) + ", " +
                                std::to_string(rq.qmax) + "] is not inside " + q8_name(y_type));
  }
}

constexpr float kUnitMultiplier[] = {1.0f};
Requantization unit_requantization(Q8 a_type) {
  return Requantization{kUnitMultiplier, 0, q8_min(a_type), q8_max(a_type)};
}

}  // namespace

Q8Gemm::Q8Gemm(int64_t k, int64_t n, Q8 a_type, const int8_t* b, bool trans_b, DequantizedOutput out,
               Isa isa, PackedCache* cache)
    : k_(k), n_(n), a_type_(a_type), y_type_(a_type), a_zero_point_(0) {
  check_arguments(k, n, a_type, 0, unit_requantization(a_type), a_type);
  kernel_ = &require_q8_gemm_kernel("Q8Gemm", isa, a_type, 16, static_cast<size_t>(n), static_cast<size_t>(k));
  init_float_output(b, trans_b, std::move(out), isa, cache);
}

Q8Gemm::Q8Gemm(int64_t k, int64_t n, Q8 a_type, const int8_t* b, bool trans_b, DequantizedOutput out,
               const Q8GemmKernel& kernel, PackedCache* cache)
    : k_(k), n_(n), a_type_(a_type), y_type_(a_type), a_zero_point_(0), kernel_(&kernel) {
  check_arguments(k, n, a_type, 0, unit_requantization(a_type), a_type);
  if (kernel.x_type != a_type || !isa_supported(kernel.isa)) {
    throw std::invalid_argument(std::string("Q8Gemm: kernel ") + kernel.name + " cannot run " +
                                q8_name(a_type) + " activations on this CPU");
  }
  init_float_output(b, trans_b, std::move(out), kernel.isa, cache);
}

void Q8Gemm::init_float_output(const int8_t* b, bool trans_b, DequantizedOutput out, Isa isa, PackedCache* cache) {
  init(b, trans_b, nullptr, unit_requantization(a_type_), cache);
  const size_t k = static_cast<size_t>(k_);
  const size_t n = static_cast<size_t>(n_);
  auto sums = q8_column_sums(n, 1, k, [&](size_t c, size_t, size_t p) {
    return trans_b ? b[c * k + p] : b[p * n + c];
  });
  float_out_.emplace(std::move(out), std::move(sums), static_cast<size_t>(kernel_->nr), kernel_->reads, isa);
}

Q8Gemm::Q8Gemm(int64_t k, int64_t n, Q8 a_type, int32_t a_zero_point, const int8_t* b, bool trans_b,
               const int32_t* bias, const Requantization& rq, Q8 y_type, Isa isa, PackedCache* cache)
    : k_(k), n_(n), a_type_(a_type), y_type_(y_type), a_zero_point_(a_zero_point) {
  check_arguments(k, n, a_type, a_zero_point, rq, y_type);
  // m is not known yet: choose for a batch of a few rows.
  kernel_ = &require_q8_gemm_kernel("Q8Gemm", isa, a_type, 16, static_cast<size_t>(n), static_cast<size_t>(k));
  init(b, trans_b, bias, rq, cache);
}

Q8Gemm::Q8Gemm(int64_t k, int64_t n, Q8 a_type, int32_t a_zero_point, const int8_t* b, bool trans_b,
               const int32_t* bias, const Requantization& rq, Q8 y_type, const Q8GemmKernel& kernel,
               PackedCache* cache)
    : k_(k),
      n_(n),
      a_type_(a_type),
      y_type_(y_type),
      a_zero_point_(a_zero_point),
      kernel_(&kernel) {
  check_arguments(k, n, a_type, a_zero_point, rq, y_type);
  if (kernel.x_type != a_type) {
    throw std::invalid_argument(std::string("Q8Gemm: kernel ") + kernel.name + " takes " +
                                q8_name(kernel.x_type) + " activations, not " + q8_name(a_type));
  }
  if (!isa_supported(kernel.isa)) {
    throw std::invalid_argument(std::string("Q8Gemm: this CPU cannot run ") + kernel.name);
  }
  init(b, trans_b, bias, rq, cache);
}

void Q8Gemm::init(const int8_t* b, bool trans_b, const int32_t* bias, const Requantization& rq,
                  PackedCache* cache) {
  multiplier_.assign(rq.multiplier.begin(), rq.multiplier.end());
  y_zero_point_ = rq.zero_point;
  qmin_ = rq.qmin;
  qmax_ = rq.qmax;
  const size_t k = static_cast<size_t>(k_);
  const size_t n = static_cast<size_t>(n_);
  auto b_at = [&](size_t c, size_t, size_t p) { return trans_b ? b[c * k + p] : b[p * n + c]; };
  name_ = row_kernel(*kernel_);
  packed_ = shared_q8_weights(cache, trans_b ? "gemm_nk" : "gemm_kn", b, k * n, *kernel_, n, 1, k, b_at, bias,
                              multiplier_, a_type_, a_zero_point_);
}

void Q8Gemm::run(int64_t m, const void* a, void* y, pthreadpool_t pool) const {
  if (float_out_) throw std::logic_error("Q8Gemm::run: this GEMM has a float output (run_dequantized)");
  if (m <= 0) return;
  run_tiles(m, a, y, pool);
}

void Q8Gemm::run_dequantized(int64_t m, const void* a, float a_scale, int32_t a_zero_point, float* y,
                             pthreadpool_t pool, OutputRange* range) {
  if (!float_out_) throw std::logic_error("Q8Gemm::run_dequantized: this GEMM requantizes (run)");
  if (a_zero_point < q8_min(a_type_) || a_zero_point > q8_max(a_type_)) {
    throw std::invalid_argument("Q8Gemm: a zero point " + std::to_string(a_zero_point) +
                                " is outside " + q8_name(a_type_));
  }
  if (m <= 0) return;
  float_out_->prepare(a_type_, a_scale, a_zero_point);
  run_tiles(m, a, y, pool, range);
}

void Q8Gemm::run_tiles(int64_t m, const void* a, void* y, pthreadpool_t pool, OutputRange* range) const {
  const size_t mr = static_cast<size_t>(kernel_->mr);
  const size_t nr = static_cast<size_t>(kernel_->nr);
  const size_t rows = static_cast<size_t>(m);
  const size_t k = static_cast<size_t>(k_);
  const size_t n = static_cast<size_t>(n_);
  const uint8_t* a_base = static_cast<const uint8_t*>(a);
  uint8_t* y_base = static_cast<uint8_t*>(y);
  const float lo = static_cast<float>(qmin_ - y_zero_point_);
  const float hi = static_cast<float>(qmax_ - y_zero_point_);
  auto tile = [&](size_t g, size_t blk) {
    const uint8_t* row[kQ8GemmMaxMr];
    Q8IgemmArgs args = q8_gemm_tile_args(a_base, rows, k, n, mr, nr, *packed_, g * mr, blk, row, y_zero_point_);
    const size_t first = g * mr;
    if (float_out_) {
      args.y = y_base + (first * n + blk * nr) * sizeof(float);
      args.y_row_stride = n * sizeof(float);
      float_out_->set_args(args, blk);
      kernel_->fn_f32(args);
      float_out_->activate(args.mr, args.nc, static_cast<float*>(args.y), n);
      return;
    }
    args.y = y_base + first * n + blk * nr;
    args.y_row_stride = n;
    args.lo = lo;
    args.hi = hi;
    kernel_->fn(args);
  };
  const size_t groups = (rows + mr - 1) / mr;
  const size_t blocks = (n + nr - 1) / nr;
  if (range != nullptr && float_out_) {
    // Whole row groups per task, so their output reaches the range while still in cache.
    const size_t per_task = row_groups_per_task(pool, groups);
    auto run_groups = [&](size_t first, size_t count) {
      run_row_groups(first, count, mr, rows, n, static_cast<const float*>(y), range, [&](size_t g) {
        for (size_t b = 0; b < blocks; ++b) tile(g, b);
      });
    };
    pthreadpool_parallelize_1d_tile_1d(pool, run_groups, groups, per_task);
    return;
  }
  run_q8_tiles(pool, groups, blocks, packed_->block_bytes, tile);
}

}  // namespace octet::kernels
