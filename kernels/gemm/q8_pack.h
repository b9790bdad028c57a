#pragma once
// What Q8Conv and Q8Gemm share: choosing a microkernel from kQ8GemmKernels, packing the
// weights into its layout (kernels/q8_gemm_list.h) and calling it on one tile.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kernels/packed_cache.h"
#include "kernels/q8_gemm_list.h"

namespace octet::kernels {

// The cheapest supported entry of the highest ISA level <= isa for activations of x_type,
// for an m x n x (ks * kc) problem; nullptr when no entry qualifies (use the ref kernel).
const Q8GemmKernel* choose_q8_gemm_kernel(Isa isa, Q8 x_type, size_t m, size_t n, size_t k);

// 64-byte aligned bytes (zmm loads of packed weights never split a cache line).
class AlignedBytes {
 public:
  AlignedBytes() = default;
  explicit AlignedBytes(size_t size);
  uint8_t* data() { return data_.get(); }
  const uint8_t* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, Free> data_;
  size_t size_ = 0;
};

// Packed weights of n output channels, ks taps of kc input channels each.
struct Q8PackedWeights {
  AlignedBytes bytes;
  size_t block_bytes = 0;  // one block of NR output channels
};

inline size_t packed_size(const Q8PackedWeights& w) { return w.bytes.size(); }

// weight(c, t, k) returns the int8 weight of output channel c, tap t, input channel k.
// bias has n values or is nullptr; multiplier has 1 or n values. x_zero_point is the
// activation zero point in x_type; the fold uses zp_u (see q8_gemm_list.h).
template <typename WeightAt>
Q8PackedWeights pack_q8_weights(const Q8GemmKernel& kernel, size_t n, size_t ks, size_t kc,
                                WeightAt weight, const int32_t* bias,
                                std::span<const float> multiplier, Q8 x_type,
                                int32_t x_zero_point) {
  const size_t nr = static_cast<size_t>(kernel.nr);
  const size_t kr = static_cast<size_t>(kernel.kr);
  const size_t kc_padded = (kc + kr - 1) / kr * kr;
  const size_t blocks = (n + nr - 1) / nr;
  Q8PackedWeights packed;
  packed.block_bytes = nr * 8 + ks * kc_padded * nr * static_cast<size_t>(kernel.w_bytes);
  packed.bytes = AlignedBytes(blocks * packed.block_bytes);
  const int64_t zp_u = x_zero_point + (x_type == Q8::s8 ? 128 : 0);
  for (size_t b = 0; b < blocks; ++b) {
    uint8_t* block = packed.bytes.data() + b * packed.block_bytes;
    int32_t* bias_out = reinterpret_cast<int32_t*>(block);
    float* mult_out = reinterpret_cast<float*>(block + nr * 4);
    uint8_t* w_out = block + nr * 8;
    for (size_t j = 0; j < nr; ++j) {
      const size_t c = b * nr + j;
      if (c >= n) {
        bias_out[j] = 0;
        mult_out[j] = 0.0f;
        continue;
      }
      int64_t sum_w = 0;
      for (size_t t = 0; t < ks; ++t)
        for (size_t k = 0; k < kc; ++k) sum_w += weight(c, t, k);
      const int64_t folded = static_cast<int64_t>(bias != nullptr ? bias[c] : 0) - zp_u * sum_w;
      bias_out[j] = static_cast<int32_t>(static_cast<uint32_t>(folded));  // modulo 2^32
      mult_out[j] = multiplier.size() == 1 ? multiplier[0] : multiplier[c];
    }
    for (size_t t = 0; t < ks; ++t) {
      for (size_t k0 = 0; k0 < kc_padded; k0 += kr) {
        for (size_t j = 0; j < nr; ++j) {
          for (size_t r = 0; r < kr; ++r) {
            const size_t c = b * nr + j;
            const size_t k = k0 + r;
            const int8_t v = c < n && k < kc ? weight(c, t, k) : int8_t{0};
            if (kernel.w_bytes == 1) {
              *w_out++ = static_cast<uint8_t>(v);
            } else {
              const int16_t v16 = v;
              std::memcpy(w_out, &v16, 2);
              w_out += 2;
            }
          }
        }
      }
    }
  }
  return packed;
}

// pack_q8_weights through the packed-weight cache of the planning Session
// (kernels/packed_cache.h). `layout` names how weight(c, t, k) reads the w_count int8 values
// at w, with whatever shape that reading depends on; with every other argument it makes the key.
template <typename WeightAt>
std::shared_ptr<const Q8PackedWeights> shared_q8_weights(const std::string& layout, const int8_t* w, size_t w_count,
                                                         const Q8GemmKernel& kernel, size_t n, size_t ks, size_t kc,
                                                         WeightAt weight, const int32_t* bias,
                                                         std::span<const float> multiplier, Q8 x_type,
                                                         int32_t x_zero_point) {
  const PackKey key = PackKey("q8_gemm")
                          .add(kernel.name)
                          .add(layout)
                          .add(int64_t(n))
                          .add(int64_t(ks))
                          .add(int64_t(kc))
                          .add_array(w, w_count)
                          .add_array(bias, n)
                          .add_array(multiplier.data(), multiplier.size())
                          .add(int64_t(x_type == Q8::s8))
                          .add(x_zero_point);
  return shared_packing<Q8PackedWeights>(
      key, [&] { return pack_q8_weights(kernel, n, ks, kc, weight, bias, multiplier, x_type, x_zero_point); });
}

}  // namespace octet::kernels
