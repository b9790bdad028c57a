#include "kernels/ref/fp_contract_off.h"  // the corrected path requantizes in scalar code, as the ref

#include "kernels/gemm/q8_matmul.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "kernels/fallback.h"
#include "kernels/gemm/q8_weight_chunks.h"

namespace octet::kernels {

namespace {

constexpr float kMatMulUnitMultiplier[] = {1.0f};

int32_t wrap_int32(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v))); }

void check_matmul_range(const char* what, int32_t v, Q8 type) {
  if (v < q8_min(type) || v > q8_max(type))
    throw std::invalid_argument(std::string("Q8MatMul: ") + what + " " + std::to_string(v) + " is outside " +
                                q8_name(type));
}

}  // namespace

Q8MatMul::Q8MatMul(int64_t k, int64_t n, Q8 a_type, int32_t a_zero_point, Q8 b_type, const void* b,
                   std::span<const int32_t> b_zero_point, const Requantization* rq, Q8 y_type, int64_t max_m,
                   Isa isa, PackedCache* cache)
    : k_(k),
      n_(n),
      max_m_(max_m),
      a_type_(a_type),
      b_type_(b_type),
      y_type_(y_type),
      a_zero_point_(a_zero_point),
      int32_out_(rq == nullptr) {
  if (k < 1 || n < 1 || max_m < 1)
    throw Unsupported("Q8MatMul: m, k and n must be positive; got m " + std::to_string(max_m) + ", k " +
                      std::to_string(k) + ", n " + std::to_string(n));
  check_matmul_range("a zero point", a_zero_point, a_type);
  check_per_channel("Q8MatMul", "b_zero_point (per column)", b_zero_point.size(), static_cast<size_t>(n));
  const int32_t shift = b_type == Q8::u8 ? 128 : 0;
  for (int32_t zp : b_zero_point) {
    check_matmul_range("b zero point", zp, b_type);
    w_zero_point_.push_back(zp - shift);
    corrected_ = corrected_ || zp != shift;
  }
  std::span<const float> pack_multiplier = kMatMulUnitMultiplier;
  if (rq != nullptr) {
    check_per_channel("Q8MatMul", "the requantization multiplier", rq->multiplier.size(), static_cast<size_t>(n));
    if (rq->qmin < q8_min(y_type) || rq->qmax > q8_max(y_type) || rq->qmin > rq->qmax)
      throw std::invalid_argument("Q8MatMul: output clamp [" + std::to_string(rq->qmin) + ", " +
                                  std::to_string(rq->qmax) + "] is not inside " + q8_name(y_type));
    multiplier_.assign(rq->multiplier.begin(), rq->multiplier.end());
    y_zero_point_ = rq->zero_point;
    qmin_ = rq->qmin;
    qmax_ = rq->qmax;
    if (!corrected_) pack_multiplier = multiplier_;
  }
  kernel_ = &require_q8_gemm_kernel("Q8MatMul", isa, a_type, static_cast<size_t>(max_m), static_cast<size_t>(n),
                                    static_cast<size_t>(k));
  name_ = row_kernel(*kernel_);
  const size_t kk = static_cast<size_t>(k), nn = static_cast<size_t>(n);
  const Q8WeightsToPack to_pack{nn, 1, kk, nullptr, nullptr, pack_multiplier, a_type, a_zero_point};
  dense_.assign(kk * nn, 0);
  if (b != nullptr) {
    dense_weights(b);
    auto at = [&](size_t c, size_t, size_t p) { return dense_[c * kk + p]; };
    packed_ = shared_q8_weights(cache, "gemm_nk", dense_.data(), dense_.size(), *kernel_, nn, 1, kk, at, nullptr,
                                pack_multiplier, a_type, a_zero_point);
    dense_ = {};
  } else {
    if (kernel_->pack != &pack_q8_kr_blocks)
      throw Unsupported(std::string("Q8MatMul: ") + kernel_->name + " has its own packing; B known at run time needs pack_q8_kr_blocks");
    Q8WeightsToPack zeros = to_pack;
    zeros.w = dense_.data();
    repack_q8_kr_blocks(*kernel_, zeros, run_packed_);  // sizes the bytes every run reuses
  }
  if (corrected_) row_sum_.assign(static_cast<size_t>(max_m), 0);
  if (corrected_ && !int32_out_) acc_.assign(static_cast<size_t>(max_m) * nn, 0);
}

void Q8MatMul::dense_weights(const void* b) {
  const size_t k = static_cast<size_t>(k_), n = static_cast<size_t>(n_);
  const auto* bytes = static_cast<const uint8_t*>(b);
  // b - 128 for a u8 B is its sign bit flipped; an s8 B is copied.
  const uint8_t flip = b_type_ == Q8::u8 ? 0x80 : 0;
  for (size_t p = 0; p < k; ++p)
    for (size_t c = 0; c < n; ++c) dense_[c * k + p] = static_cast<int8_t>(bytes[p * n + c] ^ flip);
}

void Q8MatMul::pack(const void* b) {
  if (packed_) throw std::logic_error("Q8MatMul::pack: this product's B is constant");
  dense_weights(b);
  std::span<const float> multiplier = kMatMulUnitMultiplier;
  if (!int32_out_ && !corrected_) multiplier = multiplier_;
  repack_q8_kr_blocks(*kernel_,
                      {static_cast<size_t>(n_), 1, static_cast<size_t>(k_), dense_.data(), nullptr, multiplier,
                       a_type_, a_zero_point_},
                      run_packed_);
}

void Q8MatMul::run(int64_t m, const void* a, void* y, pthreadpool_t pool) {
  if (m <= 0) return;
  if (m > max_m_)
    throw std::invalid_argument("Q8MatMul::run: " + std::to_string(m) + " rows, at most " + std::to_string(max_m_));
  const Q8PackedWeights& packed = packed_ ? *packed_ : run_packed_;
  const size_t mr = static_cast<size_t>(kernel_->mr);
  const size_t nr = static_cast<size_t>(kernel_->nr);
  const size_t rows = static_cast<size_t>(m);
  const size_t k = static_cast<size_t>(k_);
  const size_t n = static_cast<size_t>(n_);
  const uint8_t* a_base = static_cast<const uint8_t*>(a);
  if (corrected_) {
    for (size_t i = 0; i < rows; ++i) {
      int64_t sum = 0;
      const uint8_t* row = a_base + i * k;
      if (a_type_ == Q8::u8) {
        for (size_t p = 0; p < k; ++p) sum += row[p];
      } else {
        for (size_t p = 0; p < k; ++p) sum += static_cast<int8_t>(row[p]);
      }
      row_sum_[i] = wrap_int32(sum - static_cast<int64_t>(k) * a_zero_point_);
    }
  }
  const bool fused = !int32_out_ && !corrected_;
  uint8_t* y_bytes = static_cast<uint8_t*>(y);
  int32_t* acc = int32_out_ ? static_cast<int32_t*>(y) : acc_.data();
  const float lo = static_cast<float>(qmin_ - y_zero_point_);
  const float hi = static_cast<float>(qmax_ - y_zero_point_);
  auto tile = [&](size_t g, size_t blk) {
    const uint8_t* row[kQ8GemmMaxMr];
    Q8IgemmArgs args = q8_gemm_tile_args(a_base, rows, k, n, mr, nr, packed, g * mr, blk, row, y_zero_point_);
    const size_t first = g * mr;
    args.lo = lo;
    args.hi = hi;
    if (fused) {
      args.y = y_bytes + first * n + blk * nr;
      args.y_row_stride = n;
      kernel_->fn(args);
      return;
    }
    args.y = acc + first * n + blk * nr;
    args.y_row_stride = n * sizeof(int32_t);
    kernel_->fn_i32(args);
    if (!corrected_) return;
    for (size_t i = first; i < first + args.mr; ++i) {
      const uint32_t r = static_cast<uint32_t>(row_sum_[i]);
      for (size_t j = blk * nr; j < blk * nr + args.nc; ++j) {
        const uint32_t zw = static_cast<uint32_t>(w_zero_point_[w_zero_point_.size() == 1 ? 0 : j]);
        const int32_t v = static_cast<int32_t>(static_cast<uint32_t>(acc[i * n + j]) - zw * r);
        if (int32_out_) {
          acc[i * n + j] = v;
        } else {
          const float mult = multiplier_[multiplier_.size() == 1 ? 0 : j];
          y_bytes[i * n + j] = static_cast<uint8_t>(requantize_value(v, mult, y_zero_point_, qmin_, qmax_));
        }
      }
    }
  };
  const size_t groups = (rows + mr - 1) / mr;
  const size_t blocks = (n + nr - 1) / nr;
  run_q8_tiles(pool, groups, blocks, packed.block_bytes, tile);
}

}  // namespace octet::kernels
