#pragma once
// The F32ConvTranspose tester of test_f32_conv_transpose.cc (2-D) and
// test_f32_conv_transpose3d.cc (3-D: the depth fields of ConvTranspose2dShape; a 2-D shape is
// the 3-D one with a single plane): random data through the driver with one GEMM entry of
// kernels/gemm/f32_gemm_list.h must give the reference's bits, and the reference itself is held
// to the definition (a gather in double) within the float tolerance.
#include <pthreadpool.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/gemm/f32_gemm_list.h"
#include "kernels/ref/conv_transpose.h"

namespace octet::kernels::testing {

// One spatial axis: out = (in - 1) * stride + (k - 1) * dilation + 1 - pads + extra
// (output_padding, or a larger output_shape: the uncovered planes then hold the bias).
struct Extent {
  int in, k, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0, extra = 0;
  int out() const { return (in - 1) * stride + (k - 1) * dilation + 1 - pad_begin - pad_end + extra; }
};

// A shape over depth, height and width ({1, 1} as depth: a 2-D shape).
ConvTranspose2dShape conv_transpose_shape(int batch, int in_c, int out_c, int groups, Extent d, Extent h, Extent w);

std::string describe(const ConvTranspose2dShape& s);
size_t in_count(const ConvTranspose2dShape& s);
size_t out_count(const ConvTranspose2dShape& s);
size_t w_count(const ConvTranspose2dShape& s);

// The definition, gathered in double: y[o] = b + sum over (i, tap) landing on o of x[i] * w.
std::vector<double> conv_transpose_definition(const ConvTranspose2dShape& s, const std::vector<float>& x,
                                              const std::vector<float>& w, const float* b);

// Equal values (the sign of a zero may differ: ORT adds taps into +0) or both NaN.
inline bool same_value(float a, float b) { return a == b || (a != a && b != b); }

// Random x, w and b from `seed` through the driver with `k` (on `pool` when given) against the
// reference, bit for bit; without an activation, the reference against the definition too.
void check_conv_transpose(const ConvTranspose2dShape& s, const F32GemmKernel& k, uint32_t seed, bool bias,
                          const Activation& act, pthreadpool_t pool = nullptr);

}  // namespace octet::kernels::testing
