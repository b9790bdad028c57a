#include "kernels/ref/fp_contract_off.h"  // first: every product and sum rounds as ORT's do
#include "kernels/ref/resize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

namespace octet::kernels {

float resize_source_coordinate(CoordinateTransform t, float x, const ResizeAxis& a) {
  const float scale = a.scale, out_len = static_cast<float>(a.out), in_len = static_cast<float>(a.in);
  switch (t) {
    case CoordinateTransform::asymmetric:
      return x / scale;
    case CoordinateTransform::pytorch_half_pixel:
      return out_len > 1 ? (x + 0.5f) / scale - 0.5f : 0.0f;
    case CoordinateTransform::tf_half_pixel_for_nn:
      return (x + 0.5f) / scale;
    case CoordinateTransform::align_corners:
      return out_len == 1 ? 0.0f : x * (in_len - 1) / (out_len - 1);
    case CoordinateTransform::tf_crop_and_resize:
      // A single output samples the middle of the region, in double (ORT's 0.5 literal).
      if (out_len > 1)
        return a.roi_start * (in_len - 1) + (x * (a.roi_end - a.roi_start) * (in_len - 1)) / (out_len - 1);
      return static_cast<float>(0.5 * (a.roi_start + a.roi_end) * (in_len - 1));
    case CoordinateTransform::half_pixel_symmetric: {
      // The adjustment in float, the rest in double (ORT's literals are doubles there).
      const float adjustment = out_len / (scale * in_len);
      const float offset = in_len / 2 * (1 - adjustment);
      return static_cast<float>(offset + (x + 0.5) / scale - 0.5);
    }
    case CoordinateTransform::half_pixel:
      break;
  }
  return (x + 0.5f) / scale - 0.5f;
}

namespace {

int64_t nearest_pixel(NearestRounding r, float v, bool shrinking) {
  switch (r) {
    case NearestRounding::simple:
      return shrinking ? static_cast<int64_t>(std::ceil(v)) : static_cast<int64_t>(v);
    case NearestRounding::round_prefer_ceil:
      return static_cast<int64_t>(std::round(v));
    case NearestRounding::floor:
      return static_cast<int64_t>(std::floor(v));
    case NearestRounding::ceil:
      return static_cast<int64_t>(std::ceil(v));
    case NearestRounding::round_prefer_floor:
      break;
  }
  // A tie (v = n + 0.5, tested with n the truncation, as ORT does) goes down.
  if (v == static_cast<float>(static_cast<int64_t>(v)) + 0.5f) return static_cast<int64_t>(std::floor(v));
  return static_cast<int64_t>(std::round(v));
}

bool extrapolates(CoordinateTransform t, float v, const ResizeAxis& a) {
  return t == CoordinateTransform::tf_crop_and_resize && (v < 0 || v > static_cast<float>(a.in - 1));
}

template <class T>
T truncate_to(float v) {
  if constexpr (std::is_same_v<T, float>) {
    return v;
  } else {
    constexpr float lo = std::is_same_v<T, uint8_t> ? 0.0f : -128.0f;
    constexpr float hi = std::is_same_v<T, uint8_t> ? 255.0f : 127.0f;
    return static_cast<T>(static_cast<int32_t>(std::clamp(v, lo, hi)));  // truncation toward zero
  }
}

}  // namespace

std::vector<int32_t> nearest_source_indices(const ResizeAxis& a, CoordinateTransform t, NearestRounding r) {
  std::vector<int32_t> src(static_cast<size_t>(a.out));
  for (int64_t o = 0; o < a.out; ++o) {
    if (a.scale == 1.0f) {
      src[o] = static_cast<int32_t>(std::min(o, a.in - 1));
      continue;
    }
    const float v = resize_source_coordinate(t, static_cast<float>(o), a);
    if (extrapolates(t, v, a)) {
      src[o] = -1;
      continue;
    }
    const int64_t i = nearest_pixel(r, v, a.scale < 1);
    src[o] = static_cast<int32_t>(std::clamp<int64_t>(i, 0, a.in - 1));
  }
  return src;
}

LinearTaps linear_taps(const ResizeAxis& a, CoordinateTransform t) {
  LinearTaps taps;
  const size_t n = static_cast<size_t>(a.out);
  taps.i0.resize(n);
  taps.i1.resize(n);
  taps.w0.resize(n);
  taps.w1.resize(n);
  const int32_t last = static_cast<int32_t>(a.in - 1);
  if (t == CoordinateTransform::tf_crop_and_resize) taps.outside.assign(n, 0);
  for (size_t o = 0; o < n; ++o) {
    float v = a.scale == 1.0f ? static_cast<float>(o) : resize_source_coordinate(t, static_cast<float>(o), a);
    if (extrapolates(t, v, a)) taps.outside[o] = 1;
    v = std::max(0.0f, std::min(v, static_cast<float>(last)));
    const int32_t i0 = std::min(static_cast<int32_t>(v), last);
    const int32_t i1 = std::min(i0 + 1, last);
    taps.i0[o] = i0;
    taps.i1[o] = i1;
    if (i0 == i1) {
      taps.w0[o] = taps.w1[o] = 0.5f;
    } else {
      taps.w0[o] = std::fabs(v - static_cast<float>(i1));  // the nearer i0, the larger its weight
      taps.w1[o] = std::fabs(v - static_cast<float>(i0));
    }
  }
  return taps;
}

void cubic_coefficients(float s, float a, float out[4]) {
  // Keys' kernel at distances 1 + s, s, 1 - s and 2 - s, in ORT's order of float operations.
  const float near = s, far = 1 - s, near1 = s + 1, far1 = 2 - s;
  out[0] = ((a * near1 - 5 * a) * near1 + 8 * a) * near1 - 4 * a;
  out[1] = ((a + 2) * near - (a + 3)) * near * near + 1;
  out[2] = ((a + 2) * far - (a + 3)) * far * far + 1;
  out[3] = ((a * far1 - 5 * a) * far1 + 8 * a) * far1 - 4 * a;
}

CubicTaps cubic_taps(const ResizeAxis& a, CoordinateTransform t, float cubic_coeff_a, bool exclude_outside) {
  CubicTaps taps;
  const size_t n = static_cast<size_t>(a.out);
  taps.index.resize(4 * n);
  taps.coeff.resize(4 * n);
  taps.sum.assign(n, 1.0f);
  if (t == CoordinateTransform::tf_crop_and_resize) taps.outside.assign(n, 0);
  for (size_t o = 0; o < n; ++o) {
    const float v = a.scale == 1.0f ? static_cast<float>(o) : resize_source_coordinate(t, static_cast<float>(o), a);
    if (extrapolates(t, v, a)) {
      taps.outside[o] = 1;  // indices 0, coefficients 0: never read
      continue;
    }
    const float floor_v = std::floor(v);
    const int64_t base = static_cast<int64_t>(floor_v);
    float* c = &taps.coeff[4 * o];
    cubic_coefficients(v - floor_v, cubic_coeff_a, c);
    float sum = 0;
    for (int k = 0; k < 4; ++k) {
      const int64_t i = base - 1 + k;
      if (exclude_outside && (i < 0 || i >= a.in)) c[k] = 0.0f;
      sum += c[k];
      taps.index[4 * o + size_t(k)] = static_cast<int32_t>(std::clamp<int64_t>(i, 0, a.in - 1));
    }
    if (exclude_outside) taps.sum[o] = sum;
  }
  return taps;
}

template <class T>
T extrapolated(float v) {
  if constexpr (std::is_same_v<T, float>) {
    return v;
  } else {
    constexpr float lo = std::is_same_v<T, uint8_t> ? 0.0f : -128.0f;
    constexpr float hi = std::is_same_v<T, uint8_t> ? 255.0f : 127.0f;
    return static_cast<T>(static_cast<int32_t>(std::clamp(v, lo, hi)));
  }
}
template float extrapolated<float>(float);
template uint8_t extrapolated<uint8_t>(float);
template int8_t extrapolated<int8_t>(float);

void resize_nearest_nhwc__ref(const Resize2dShape& s, const int32_t* rows, const int32_t* cols,
                              size_t element_bytes, const void* x, void* y, const void* fill) {
  const size_t pixel = element_bytes * static_cast<size_t>(s.channels);
  const auto* in = static_cast<const unsigned char*>(x);
  auto* out = static_cast<unsigned char*>(y);
  for (int n = 0; n < s.batch; ++n) {
    const unsigned char* image = in + static_cast<size_t>(n) * s.in_h * s.in_w * pixel;
    for (int oy = 0; oy < s.out_h; ++oy) {
      const unsigned char* row = image + static_cast<size_t>(std::max(rows[oy], 0)) * s.in_w * pixel;
      for (int ox = 0; ox < s.out_w; ++ox, out += pixel) {
        if (rows[oy] < 0 || cols[ox] < 0) {
          for (size_t c = 0; c < pixel; c += element_bytes) std::memcpy(out + c, fill, element_bytes);
        } else {
          std::memcpy(out, row + static_cast<size_t>(cols[ox]) * pixel, pixel);
        }
      }
    }
  }
}

template <class T>
void resize_linear_nhwc__ref(const Resize2dShape& s, const LinearTaps& rows, const LinearTaps& cols, const T* x,
                             T* y, float extrapolation_value) {
  const size_t C = static_cast<size_t>(s.channels), row_len = static_cast<size_t>(s.in_w) * C;
  for (int n = 0; n < s.batch; ++n) {
    const T* image = x + static_cast<size_t>(n) * s.in_h * row_len;
    for (int oy = 0; oy < s.out_h; ++oy) {
      const T* top = image + static_cast<size_t>(rows.i0[oy]) * row_len;
      const T* bottom = image + static_cast<size_t>(rows.i1[oy]) * row_len;
      const float wy0 = rows.w0[oy], wy1 = rows.w1[oy];
      for (int ox = 0; ox < s.out_w; ++ox) {
        const size_t a = static_cast<size_t>(cols.i0[ox]) * C, b = static_cast<size_t>(cols.i1[ox]) * C;
        // The four weights, each a rounded product, then the sum left to right.
        const float c00 = cols.w0[ox] * wy0, c01 = cols.w1[ox] * wy0;
        const float c10 = cols.w0[ox] * wy1, c11 = cols.w1[ox] * wy1;
        const bool outside = resize_outside(rows.outside, size_t(oy)) || resize_outside(cols.outside, size_t(ox));
        for (size_t c = 0; c < C; ++c, ++y) {
          const float v = c00 * static_cast<float>(top[a + c]) + c01 * static_cast<float>(top[b + c]) +
                          c10 * static_cast<float>(bottom[a + c]) + c11 * static_cast<float>(bottom[b + c]);
          *y = outside ? extrapolated<T>(extrapolation_value) : truncate_to<T>(v);
        }
      }
    }
  }
}

template void resize_linear_nhwc__ref<float>(const Resize2dShape&, const LinearTaps&, const LinearTaps&, const float*,
                                             float*, float);
template void resize_linear_nhwc__ref<uint8_t>(const Resize2dShape&, const LinearTaps&, const LinearTaps&,
                                               const uint8_t*, uint8_t*, float);
template void resize_linear_nhwc__ref<int8_t>(const Resize2dShape&, const LinearTaps&, const LinearTaps&,
                                              const int8_t*, int8_t*, float);

void resize_cubic_nhwc__ref(const Resize2dShape& s, const CubicTaps& rows, const CubicTaps& cols, const float* x,
                            float* y, float extrapolation_value) {
  const size_t C = static_cast<size_t>(s.channels), row_len = static_cast<size_t>(s.in_w) * C;
  for (int n = 0; n < s.batch; ++n) {
    const float* image = x + static_cast<size_t>(n) * s.in_h * row_len;
    for (int oy = 0; oy < s.out_h; ++oy) {
      const float* cy = &rows.coeff[4 * size_t(oy)];
      const float sum_y = rows.sum[size_t(oy)];
      for (int ox = 0; ox < s.out_w; ++ox) {
        const bool outside = resize_outside(rows.outside, size_t(oy)) || resize_outside(cols.outside, size_t(ox));
        float wx[4];
        for (size_t j = 0; j < 4; ++j) wx[j] = cols.coeff[4 * size_t(ox) + j] / cols.sum[size_t(ox)];
        for (size_t c = 0; c < C; ++c, ++y) {
          if (outside) {
            *y = extrapolation_value;
            continue;
          }
          float v = 0;
          for (size_t i = 0; i < 4; ++i) {
            const float* row = image + size_t(rows.index[4 * size_t(oy) + i]) * row_len;
            float r = 0;
            for (size_t j = 0; j < 4; ++j) r += wx[j] * row[size_t(cols.index[4 * size_t(ox) + j]) * C + c];
            v += r * cy[i] / sum_y;
          }
          *y = v;
        }
      }
    }
  }
}

void resize_nearest_any__ref(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& out_dims,
                             const std::vector<std::vector<int32_t>>& maps, size_t element_bytes, const void* x,
                             void* y, const void* fill) {
  const size_t rank = in_dims.size();
  std::vector<int64_t> in_strides(rank, 1);
  for (size_t d = rank; d-- > 1;) in_strides[d - 1] = in_strides[d] * in_dims[d];
  int64_t total = 1;
  for (int64_t e : out_dims) total *= e;
  std::vector<int64_t> index(rank, 0);
  const auto* in = static_cast<const unsigned char*>(x);
  auto* out = static_cast<unsigned char*>(y);
  for (int64_t o = 0; o < total; ++o, out += element_bytes) {
    int64_t src = 0;
    bool outside = false;
    for (size_t d = 0; d < rank; ++d) {
      const int32_t i = maps[d][static_cast<size_t>(index[d])];
      outside = outside || i < 0;
      src += int64_t(i) * in_strides[d];
    }
    std::memcpy(out, outside ? fill : in + static_cast<size_t>(src) * element_bytes, element_bytes);
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < out_dims[d]) break;
      index[d] = 0;
    }
  }
}

}  // namespace octet::kernels
