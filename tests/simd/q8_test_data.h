#pragma once
// Random data and requantization parameters shared by the INT8 GEMM / conv kernel tests.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "kernels/gemm/q8_gemm_list.h"
#include "kernels/q8_type.h"
#include "kernels/ref/conv2d.h"
#include "kernels/ref/qmath.h"
#include "tests/simd/simd_test_util.h"

namespace octet::kernels::testing {

// How activations and weights are filled.
enum class Fill {
  random,   // uniform over the type / [-127, 127]
  extreme,  // activations at the far end from the zero point, weights +-127: the int16
            // pair sums of vpmaddubsw would saturate, vpdpbusd / vpmaddwd must not
};

inline std::vector<uint8_t> random_activations(std::mt19937& rng, size_t count, Q8 type,
                                               int32_t zero_point, Fill fill) {
  std::vector<uint8_t> x(count);
  if (fill == Fill::extreme) {
    // The end of the range farthest from the zero point, so |x - zp| is largest.
    const int32_t far =
        zero_point - q8_min(type) > q8_max(type) - zero_point ? q8_min(type) : q8_max(type);
    std::fill(x.begin(), x.end(), static_cast<uint8_t>(far));
    return x;
  }
  std::uniform_int_distribution<int> byte(0, 255);
  for (uint8_t& v : x) v = static_cast<uint8_t>(byte(rng));
  return x;
}

inline std::vector<int8_t> random_weights(std::mt19937& rng, size_t count, Fill fill) {
  std::vector<int8_t> w(count);
  std::uniform_int_distribution<int> value(-127, 127);
  std::bernoulli_distribution sign(0.5);
  for (int8_t& v : w)
    v = static_cast<int8_t>(fill == Fill::extreme ? (sign(rng) ? 127 : -127) : value(rng));
  return w;
}

// For the extreme fill every weight of a channel gets one sign, so |acc| is as large as it can be.
inline void make_channels_one_signed(std::vector<int8_t>& w, size_t channels, bool channel_major) {
  const size_t per = w.size() / channels;
  for (size_t c = 0; c < channels; ++c) {
    const int8_t v = c % 2 == 0 ? 127 : -127;
    for (size_t i = 0; i < per; ++i) {
      if (channel_major) {
        w[c * per + i] = v;
      } else {
        w[i * channels + c] = v;
      }
    }
  }
}

inline std::vector<int32_t> random_bias(std::mt19937& rng, size_t count) {
  std::vector<int32_t> b(count);
  std::uniform_int_distribution<int32_t> value(-100000, 100000);
  for (int32_t& v : b) v = value(rng);
  return b;
}

// The zero points at the ends and the middle of the type.
inline std::vector<int32_t> extreme_zero_points(Q8 type) {
  return type == Q8::u8 ? std::vector<int32_t>{0, 1, 127, 128, 255} : std::vector<int32_t>{-128, -1, 0, 127};
}

inline int32_t extreme_zero_point(std::mt19937& rng, Q8 type) {
  const std::vector<int32_t> values = extreme_zero_points(type);
  std::uniform_int_distribution<size_t> i(0, values.size() - 1);
  return values[i(rng)];
}

inline int32_t random_zero_point(std::mt19937& rng, Q8 type) {
  std::bernoulli_distribution extreme(0.5);
  if (extreme(rng)) return extreme_zero_point(rng, type);
  std::uniform_int_distribution<int32_t> value(q8_min(type), q8_max(type));
  return value(rng);
}

// Multipliers from the observed accumulator range (acc is [rows][channels]): channel c maps
// max |acc| to about half the output range, so outputs cover the whole type and the clamp is
// reached; or, with `powers_of_two`, per channel 2^-10 .. 2^2 whatever the range.
inline std::vector<float> fitted_multipliers(std::mt19937& rng, const std::vector<int32_t>& acc,
                                             size_t channels, bool per_channel,
                                             bool powers_of_two) {
  std::vector<float> m(per_channel ? channels : 1);
  std::uniform_real_distribution<float> jitter(0.6f, 1.7f);
  std::uniform_int_distribution<int> exponent(-10, 2);
  std::vector<int64_t> max_abs(m.size(), 1);
  for (size_t i = 0; i < acc.size(); ++i) {
    int64_t& slot = max_abs[per_channel ? i % channels : 0];
    slot = std::max<int64_t>(slot, std::llabs(static_cast<int64_t>(acc[i])));
  }
  for (size_t c = 0; c < m.size(); ++c) {
    m[c] = powers_of_two ? std::ldexp(1.0f, exponent(rng)) * jitter(rng)
                         : 128.0f / static_cast<float>(max_abs[c]) * jitter(rng);
  }
  return m;
}

// A random clamp [qmin, qmax] within the type that still holds rq.zero_point (what a fused
// Relu or Clip leaves).
inline void narrow_clamp(std::mt19937& rng, Requantization& rq, Q8 y_type) {
  std::uniform_int_distribution<int32_t> lo(q8_min(y_type), rq.zero_point);
  std::uniform_int_distribution<int32_t> hi(rq.zero_point, q8_max(y_type));
  rq.qmin = lo(rng);
  rq.qmax = hi(rng);
}

// Calls f(X{}, Y{}) with X, Y the C++ types (uint8_t / int8_t) of x_type and y_type, so one
// generic lambda reaches every instantiation of a ref kernel.
template <class F>
void with_q8_types(Q8 x_type, Q8 y_type, F&& f) {
  if (x_type == Q8::u8 && y_type == Q8::u8) {
    f(uint8_t{}, uint8_t{});
  } else if (x_type == Q8::u8) {
    f(uint8_t{}, int8_t{});
  } else if (y_type == Q8::u8) {
    f(int8_t{}, uint8_t{});
  } else {
    f(int8_t{}, int8_t{});
  }
}

// The microkernels of the list for activations of x_type that this run tests; prints the ones
// of any type it leaves out (untested_reason), so a log shows what went untested.
inline std::vector<const Q8GemmKernel*> runnable_q8_kernels(Q8 x_type) {
  std::vector<const Q8GemmKernel*> out;
  bool tested_before = false;  // a level an earlier run on a lesser CPU tested (untested_reason)
  for (const Q8GemmKernel& k : kQ8GemmKernels) {
    if (const char* why = untested_reason(k.isa)) {
      print_untested(k.name, k.isa, why);
      tested_before = tested_before || isa_supported(k.isa);
    } else if (k.x_type == x_type) {
      out.push_back(&k);
    }
  }
  skip_when_none_run(out.size(), std::string("INT8 GEMM (") + q8_name(x_type) + " activations)", tested_before);
  return out;
}

// A random valid geometry: kernel 1x1 / 3x3 / 5x5 / 1x3 / 3x1, stride 1-2, dilation 1-2,
// asymmetric pads (sometimes bottom / right only, like the MLPerf ResNet8), 1x1 spatial.
inline Conv2dShape random_conv_shape(std::mt19937& rng, int max_spatial, int max_in_c, int max_out_c) {
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  static const int kernels[][2] = {{1, 1}, {3, 3}, {5, 5}, {1, 3}, {3, 1}, {3, 3}, {1, 1}};
  for (;;) {
    Conv2dShape s;
    s.batch = uniform(1, 10) <= 8 ? 1 : uniform(2, 3);
    const auto& k = kernels[uniform(0, 6)];
    s.kernel_h = k[0];
    s.kernel_w = k[1];
    s.stride_h = s.stride_w = uniform(1, 3) == 3 ? 2 : 1;
    if (uniform(1, 4) == 1) s.stride_w = 3 - s.stride_h;
    s.dilation_h = uniform(1, 5) == 5 ? 2 : 1;
    s.dilation_w = uniform(1, 5) == 5 ? 2 : 1;
    s.in_h = uniform(1, max_spatial);
    s.in_w = uniform(1, max_spatial);
    s.in_c = uniform(1, max_in_c);
    s.out_c = uniform(1, max_out_c);
    const int eff_h = s.dilation_h * (s.kernel_h - 1) + 1;
    const int eff_w = s.dilation_w * (s.kernel_w - 1) + 1;
    const bool bottom_right_only = uniform(1, 5) == 1;
    s.pad_top = bottom_right_only ? 0 : uniform(0, eff_h - 1);
    s.pad_left = bottom_right_only ? 0 : uniform(0, eff_w - 1);
    const int pad_bottom = uniform(0, eff_h - 1);
    const int pad_right = uniform(0, eff_w - 1);
    s.out_h = (s.in_h + s.pad_top + pad_bottom - eff_h) / s.stride_h + 1;
    s.out_w = (s.in_w + s.pad_left + pad_right - eff_w) / s.stride_w + 1;
    if (s.in_h + s.pad_top + pad_bottom < eff_h || s.in_w + s.pad_left + pad_right < eff_w)
      continue;
    return s;
  }
}

}  // namespace octet::kernels::testing
