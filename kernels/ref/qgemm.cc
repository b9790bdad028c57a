#include "kernels/ref/fp_contract_off.h"  // every float step rounds as written

#include "kernels/ref/qgemm.h"

#include <cstddef>
#include <vector>

namespace octet::kernels {

template <typename TA, typename TB>
void q8_gemm_int32__ref(const GemmShape& s, const TA* a, std::span<const int32_t> a_zero_point,
                        const TB* b, std::span<const int32_t> b_zero_point, const int32_t* c,
                        int64_t c_stride_m, int64_t c_stride_n, int32_t* y) {
  check_per_channel("q8_gemm_int32__ref", "a_zero_point (per row)", a_zero_point.size(),
                    static_cast<size_t>(s.m));
  check_per_channel("q8_gemm_int32__ref", "b_zero_point (per column)", b_zero_point.size(),
                    static_cast<size_t>(s.n));
  const int64_t lda = s.lda != 0 ? s.lda : (s.trans_a ? s.m : s.k);
  const int64_t ldb = s.ldb != 0 ? s.ldb : (s.trans_b ? s.k : s.n);
  for (int i = 0; i < s.m; ++i) {
    const int32_t za = a_zero_point.size() == 1 ? a_zero_point[0] : a_zero_point[i];
    for (int j = 0; j < s.n; ++j) {
      const int32_t zb = b_zero_point.size() == 1 ? b_zero_point[0] : b_zero_point[j];
      int64_t sum = c != nullptr ? c[i * c_stride_m + j * c_stride_n] : 0;
      for (int p = 0; p < s.k; ++p) {
        const int32_t av = s.trans_a ? a[p * lda + i] : a[i * lda + p];
        const int32_t bv = s.trans_b ? b[j * ldb + p] : b[p * ldb + j];
        sum += static_cast<int64_t>(av - za) * (bv - zb);
      }
      y[static_cast<size_t>(i) * s.n + j] = static_cast<int32_t>(sum);  // modulo 2^32, like vpaddd
    }
  }
}

template <typename TA, typename TB, typename TY>
void q8_qlinear_matmul__ref(const GemmShape& s, const TA* a, std::span<const float> a_scale,
                            std::span<const int32_t> a_zero_point, const TB* b,
                            std::span<const float> b_scale, std::span<const int32_t> b_zero_point,
                            float y_scale, int32_t y_zero_point, TY* y) {
  check_per_channel("q8_qlinear_matmul__ref", "a_scale (per row)", a_scale.size(),
                    static_cast<size_t>(s.m));
  check_per_channel("q8_qlinear_matmul__ref", "b_scale (per column)", b_scale.size(),
                    static_cast<size_t>(s.n));
  std::vector<int32_t> acc(static_cast<size_t>(s.m) * s.n);
  q8_gemm_int32__ref(s, a, a_zero_point, b, b_zero_point, nullptr, 0, 0, acc.data());
  for (int i = 0; i < s.m; ++i) {
    const float sa = a_scale.size() == 1 ? a_scale[0] : a_scale[i];
    for (int j = 0; j < s.n; ++j) {
      const float sb = b_scale.size() == 1 ? b_scale[0] : b_scale[j];
      const size_t idx = static_cast<size_t>(i) * s.n + j;
      y[idx] = static_cast<TY>(requantize_value(acc[idx], requant_multiplier(sa, sb, y_scale),
                                                y_zero_point, qmin_of<TY>(), qmax_of<TY>()));
    }
  }
}

template <typename TA, typename TB, typename TY>
void q8_gemm__ref(const GemmShape& s, const TA* a, int32_t a_zero_point, const TB* b,
                  std::span<const int32_t> b_zero_point, const int32_t* c, int64_t c_stride_m,
                  int64_t c_stride_n, const Requantization& rq, TY* y) {
  check_requantization<TY>("q8_gemm__ref", rq, static_cast<size_t>(s.n));
  std::vector<int32_t> acc(static_cast<size_t>(s.m) * s.n);
  const int32_t za[] = {a_zero_point};
  q8_gemm_int32__ref(s, a, std::span<const int32_t>(za), b, b_zero_point, c, c_stride_m, c_stride_n,
                     acc.data());
  for (int i = 0; i < s.m; ++i) {
    for (int j = 0; j < s.n; ++j) {
      const size_t idx = static_cast<size_t>(i) * s.n + j;
      y[idx] = static_cast<TY>(
          requantize_value(acc[idx], rq.multiplier_of(j), rq.zero_point, rq.qmin, rq.qmax));
    }
  }
}

#define OCTET_QGEMM_INT32(TA, TB)                                                                 \
  template void q8_gemm_int32__ref<TA, TB>(const GemmShape&, const TA*, std::span<const int32_t>, \
                                           const TB*, std::span<const int32_t>, const int32_t*,   \
                                           int64_t, int64_t, int32_t*);
#define OCTET_QGEMM(TA, TB, TY)                                                                 \
  template void q8_qlinear_matmul__ref<TA, TB, TY>(                                             \
      const GemmShape&, const TA*, std::span<const float>, std::span<const int32_t>, const TB*, \
      std::span<const float>, std::span<const int32_t>, float, int32_t, TY*);                   \
  template void q8_gemm__ref<TA, TB, TY>(const GemmShape&, const TA*, int32_t, const TB*,       \
                                         std::span<const int32_t>, const int32_t*, int64_t,     \
                                         int64_t, const Requantization&, TY*);

#define OCTET_Q8_ACC OCTET_QGEMM_INT32
#define OCTET_Q8_REQ OCTET_QGEMM
#include "kernels/ref/q8_type_combinations.inc"
#undef OCTET_Q8_ACC
#undef OCTET_Q8_REQ

#undef OCTET_QGEMM_INT32
#undef OCTET_QGEMM

}  // namespace octet::kernels
