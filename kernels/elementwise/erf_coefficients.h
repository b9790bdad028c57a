#pragma once
// The polynomials of the SIMD erf (kernels/eltwise_loops.inc, every ISA), fitted for octet by
// least squares on Chebyshev nodes in double precision:
//   |x| <  kErfSplit: erf(x) = x * P(x^2),            max relative error 6e-8 in double on [0, 1]
//   |x| >= kErfSplit: erf(|x|) = 1 - exp(Q(|x| - 2.5)), Q fitting log(erfc) on [0.875, 4], erfc
//                     within 4e-9 relative in double; |x| is clamped to 4, where erf is 1.0f.
// Coefficients lowest degree first.

namespace octet::kernels::erf_poly {

inline constexpr float kErfSplit = 0.875f;
inline constexpr float kErfClamp = 4.0f;
inline constexpr float kErfCenter = 2.5f;
inline constexpr float kSmall[] = {1.1283791665100518f,    -0.37612628843314944f,  0.11283612428176981f,
                                   -0.02685480853526004f,  0.005190053575052783f,  -0.0008024354109740367f,
                                   7.898210157894492e-05f};
inline constexpr float kLarge[] = {-7.806815270982457f,     -5.352680734750428f,    -0.9438937785395363f,
                                   -0.01085820185431429f,   0.00216566166487292f,   -0.0004206453583714964f,
                                   7.676079662755075e-05f,  -1.3014084062235032e-05f, 1.9398280963756065e-06f,
                                   -5.813911885255152e-08f, -5.846183448454667e-08f};

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
