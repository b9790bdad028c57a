#include "kernels/ref/fp_contract_off.h"  // every float step rounds as written

#include "kernels/ref/qelementwise.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/ref/index_walk.h"

namespace octet::kernels {

namespace {

int64_t offset(int rank, const int64_t* idx, const int64_t* strides) {
  int64_t off = 0;
  for (int d = 0; d < rank; ++d) off += idx[d] * strides[d];
  return off;
}

template <typename T>
void check_clamp(const char* kernel, int32_t y_min, int32_t y_max) {
  if (y_min < qmin_of<T>() || y_max > qmax_of<T>() || y_min > y_max) {
    throw std::invalid_argument(std::string(kernel) + ": output clamp [" + std::to_string(y_min) +
                                ", " + std::to_string(y_max) +
                                "] is not inside the output type's range");
  }
}

// Calls y[i] = f(qa, qb) over the broadcast box.
template <typename T, class F>
void binary_walk(int rank, const int64_t* dims, const T* a, const int64_t* a_strides, const T* b,
                 const int64_t* b_strides, T* y, F&& f) {
  int64_t out = 0;
  for_each_index(rank, dims, [&](const int64_t* idx) {
    const int32_t qa = a[offset(rank, idx, a_strides)];
    const int32_t qb = b[offset(rank, idx, b_strides)];
    y[out++] = static_cast<T>(f(qa, qb));
  });
}

}  // namespace

// Every float expression below is split into named steps so the rounding order reads off
// the code; contraction is off for this file (top), and the FMAs ORT does use are explicit.

template <typename T>
void q8_add_strided__ref(int rank, const int64_t* dims, const T* a, const int64_t* a_strides,
                         QuantParams a_q, const T* b, const int64_t* b_strides, QuantParams b_q,
                         QuantParams y_q, int32_t y_min, int32_t y_max, T* y) {
  check_clamp<T>("q8_add_strided__ref", y_min, y_max);
  binary_walk(rank, dims, a, a_strides, b, b_strides, y, [&](int32_t qa, int32_t qb) {
    const float fa = dequantize_value(qa, a_q.scale, a_q.zero_point);
    const float fb = dequantize_value(qb, b_q.scale, b_q.zero_point);
    const float sum = fa + fb;
    return quantize_value(sum, y_q.scale, y_q.zero_point, y_min, y_max);
  });
}

template <typename T>
void q8_add_ratio_fma_strided__ref(int rank, const int64_t* dims, const T* a,
                                   const int64_t* a_strides, QuantParams a_q, const T* b,
                                   const int64_t* b_strides, QuantParams b_q, QuantParams y_q,
                                   int32_t y_min, int32_t y_max, T* y) {
  check_clamp<T>("q8_add_ratio_fma_strided__ref", y_min, y_max);
  const float ra = a_q.scale / y_q.scale;
  const float rb = b_q.scale / y_q.scale;
  const float zb = rb * static_cast<float>(b_q.zero_point);
  const float zab = std::fma(ra, static_cast<float>(a_q.zero_point), zb);
  const float k = static_cast<float>(y_q.zero_point) - zab;
  binary_walk(rank, dims, a, a_strides, b, b_strides, y, [&](int32_t qa, int32_t qb) {
    const float t = std::fma(static_cast<float>(qb), rb, k);
    const float v = std::fma(static_cast<float>(qa), ra, t);
    return round_add_zero_point_clamp(v, 0, y_min, y_max);
  });
}

template <typename T>
void q8_mul_strided__ref(int rank, const int64_t* dims, const T* a, const int64_t* a_strides,
                         QuantParams a_q, const T* b, const int64_t* b_strides, QuantParams b_q,
                         QuantParams y_q, int32_t y_min, int32_t y_max, T* y) {
  check_clamp<T>("q8_mul_strided__ref", y_min, y_max);
  binary_walk(rank, dims, a, a_strides, b, b_strides, y, [&](int32_t qa, int32_t qb) {
    const float fa = dequantize_value(qa, a_q.scale, a_q.zero_point);
    const float fb = dequantize_value(qb, b_q.scale, b_q.zero_point);
    const float product = fa * fb;
    return quantize_value(product, y_q.scale, y_q.zero_point, y_min, y_max);
  });
}

template <typename T>
void q8_mul_ratio_strided__ref(int rank, const int64_t* dims, const T* a, const int64_t* a_strides,
                               QuantParams a_q, const T* b, const int64_t* b_strides,
                               QuantParams b_q, QuantParams y_q, int32_t y_min, int32_t y_max,
                               T* y) {
  check_clamp<T>("q8_mul_ratio_strided__ref", y_min, y_max);
  const float sab = a_q.scale * b_q.scale;
  const float r = sab / y_q.scale;
  const float zy = static_cast<float>(y_q.zero_point);
  binary_walk(rank, dims, a, a_strides, b, b_strides, y, [&](int32_t qa, int32_t qb) {
    const int32_t product = (qa - a_q.zero_point) * (qb - b_q.zero_point);  // |.| <= 255 * 255
    const float scaled = static_cast<float>(product) * r;
    const float v = scaled + zy;
    return round_add_zero_point_clamp(v, 0, y_min, y_max);
  });
}

template <typename T>
void q8_activation_table__ref(const Activation& act, QuantParams x_q, QuantParams y_q, T* table) {
  for (int i = 0; i < 256; ++i) {
    const T q = static_cast<T>(i);  // for int8: byte i is the value i - 256 when i >= 128
    const float fx = dequantize_value(q, x_q.scale, x_q.zero_point);
    table[i] = quantize_one<T>(apply(act, fx), y_q.scale, y_q.zero_point);
  }
}

template <typename T>
void q8_lookup__ref(int64_t count, const T* x, const T* table, T* y) {
  for (int64_t i = 0; i < count; ++i) y[i] = table[static_cast<uint8_t>(x[i])];
}

#define OCTET_QBINARY(NAME, T)                                                                \
  template void NAME<T>(int, const int64_t*, const T*, const int64_t*, QuantParams, const T*, \
                        const int64_t*, QuantParams, QuantParams, int32_t, int32_t, T*);
#define OCTET_QELEMENTWISE(T)                                                                 \
  OCTET_QBINARY(q8_add_strided__ref, T)                                                       \
  OCTET_QBINARY(q8_add_ratio_fma_strided__ref, T)                                             \
  OCTET_QBINARY(q8_mul_strided__ref, T)                                                       \
  OCTET_QBINARY(q8_mul_ratio_strided__ref, T)                                                 \
  template void q8_activation_table__ref<T>(const Activation&, QuantParams, QuantParams, T*); \
  template void q8_lookup__ref<T>(int64_t, const T*, const T*, T*);

OCTET_QELEMENTWISE(uint8_t)
OCTET_QELEMENTWISE(int8_t)

#undef OCTET_QELEMENTWISE
#undef OCTET_QBINARY

}  // namespace octet::kernels
