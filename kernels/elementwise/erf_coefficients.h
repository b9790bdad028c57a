#pragma once
// erf as ONNX Runtime computes it on x86 (MLAS's FMA3 erf kernel, which it runs on every CPU
// with AVX2; its AVX-512 GELU kernel takes the same steps): |x| clamped to kErfClamp; up to
// kErfSplit x + x * S(x^2); above it 1 - exp(-(a + a * B(a))), exp by MLAS's range reduction
// (n = round(t / ln 2) by the 1.5 * 2^23 trick, t - n ln 2 in two parts) and polynomial; every
// multiply-add fused; the sign copied back. The reference (kernels/ref/activation.h, mlas_erf)
// and every SIMD level (kernels/elementwise/eltwise_loops.inc, erf_v) take these steps, so they agree bit for
// bit with each other and with ORT, keeping a DynamicQuantizeLinear after a GELU on ORT's codes.
// Polynomial coefficients highest degree first, as Horner's scheme takes them.

#include <iterator>  // std::size of the coefficient lists

namespace octet::kernels::erf_poly {

inline constexpr float kErfSplit = 0.921875f;
inline constexpr float kErfClamp = 3.925f;
inline constexpr float kErfSmall[] = {-5.99104969e-4f, 4.99339588e-3f, -2.67667342e-2f,
                                      1.12818025e-1f,  -3.76124859e-1f, 1.28379151e-1f};
inline constexpr float kErfBig[] = {1.72948930e-5f, -3.83208680e-4f, 3.88393435e-3f, -2.42545605e-2f,
                                    1.06777847e-1f, 6.34846687e-1f,  1.28717512e-1f};
inline constexpr float kErfExpLower = -88.3762626647949f;
inline constexpr float kErfLog2e = 1.44269504088896341f;
inline constexpr float kErfRoundShift = 1.25829120e+7f;  // 1.5 * 2^23
inline constexpr float kErfLn2Hi = -6.93145752e-1f, kErfLn2Lo = -1.42860677e-6f;
inline constexpr float kErfExp[] = {1.38319808e-3f, 8.37550033e-3f, 4.16689515e-2f, 1.66664466e-1f,
                                    4.99999851e-1f, 1.0f,           1.0f};

// tanh: |x| < kTanhSplit by its Taylor series to x^13 (relative error below 1e-8 there), above
// it (1 - e) / (1 + e) with e = exp(-2|x|).
inline constexpr float kTanhSplit = 0.4f;
inline constexpr float kTanhTaylor[] = {1.0f,
                                        -1.0f / 3.0f,
                                        2.0f / 15.0f,
                                        -17.0f / 315.0f,
                                        62.0f / 2835.0f,
                                        -1382.0f / 155925.0f,
                                        21844.0f / 6081075.0f};

}  // namespace octet::kernels::erf_poly
