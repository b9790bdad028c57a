#include "kernels/ref/pool2d.h"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/ref/eigen_sum.h"

namespace octet::kernels {

namespace {

bool inside(int v, int lo, int hi) { return v >= lo && v < hi; }

// Max over the window positions inside the input, for any ordered element type.
// Input rows (n, iz, iy) and output rows (n, oz, oy) of a 2-D or 3-D pool, counted from 0.
size_t in_row(const Pool2dShape& s, int n, int iz, int iy) {
  return (static_cast<size_t>(n) * s.in_d + iz) * s.in_h + iy;
}
size_t out_row(const Pool2dShape& s, int n, int oz, int oy) {
  return (static_cast<size_t>(n) * s.out_d + oz) * s.out_h + oy;
}

template <typename T>
void maxpool2d_nhwc(const Pool2dShape& s, const T* input, T* output) {
  for (int n = 0; n < s.batch; ++n) {
    for (int oz = 0; oz < s.out_d; ++oz) {
      for (int oy = 0; oy < s.out_h; ++oy) {
        for (int ox = 0; ox < s.out_w; ++ox) {
          for (int c = 0; c < s.channels; ++c) {
            // A window with no position inside the input yields lowest(), as in ONNX Runtime.
            T best = std::numeric_limits<T>::lowest();
            for (int kz = 0; kz < s.kernel_d; ++kz) {
              const int iz = oz * s.stride_d - s.pad_front + kz * s.dilation_d;
              if (!inside(iz, 0, s.in_d)) continue;
              for (int ky = 0; ky < s.kernel_h; ++ky) {
                const int iy = oy * s.stride_h - s.pad_top + ky * s.dilation_h;
                if (!inside(iy, 0, s.in_h)) continue;
                for (int kx = 0; kx < s.kernel_w; ++kx) {
                  const int ix = ox * s.stride_w - s.pad_left + kx * s.dilation_w;
                  if (!inside(ix, 0, s.in_w)) continue;
                  const T v = input[(in_row(s, n, iz, iy) * s.in_w + ix) * s.channels + c];
                  if (v > best) best = v;
                }
              }
            }
            output[(out_row(s, n, oz, oy) * s.out_w + ox) * s.channels + c] = best;
          }
        }
      }
    }
  }
}

}  // namespace

void f32_maxpool2d_nhwc__ref(const Pool2dShape& s, const float* input, float* output) {
  maxpool2d_nhwc(s, input, output);
}

template <typename T>
void q8_maxpool2d_nhwc__ref(const Pool2dShape& s, const T* input, T* output) {
  maxpool2d_nhwc(s, input, output);
}

template void q8_maxpool2d_nhwc__ref<uint8_t>(const Pool2dShape&, const uint8_t*, uint8_t*);
template void q8_maxpool2d_nhwc__ref<int8_t>(const Pool2dShape&, const int8_t*, int8_t*);

int f32_avgpool_sum_rows(const Pool2dShape& s, int nchwc_block) {
  if (nchwc_block > 0 && s.channels % nchwc_block == 0 && !s.has_depth()) return 1;
  const bool vector_kernel = s.dilation_d == 1 && s.dilation_h == 1 && s.dilation_w == 1 && s.stride_w <= 2 &&
                             s.kernel_d <= 32 && s.kernel_h <= 32 && s.kernel_w <= 32 &&
                             int64_t(s.in_w) + s.pad_left + s.pad_right <= 2045;
  return vector_kernel ? s.kernel_d * s.kernel_h : 1;
}

void f32_avgpool2d_nhwc__ref(const Pool2dShape& s, bool count_include_pad, const float* input, float* output,
                             int sum_rows) {
  const int window = s.kernel_d * s.kernel_h * s.kernel_w;
  const int rows = sum_rows, cols = window / rows;
  std::vector<float> taps(static_cast<size_t>(window));
  for (int n = 0; n < s.batch; ++n) {
    for (int oz = 0; oz < s.out_d; ++oz) {
      for (int oy = 0; oy < s.out_h; ++oy) {
        for (int ox = 0; ox < s.out_w; ++ox) {
          for (int c = 0; c < s.channels; ++c) {
            int in_input = 0;
            int in_padded = 0;
            for (int kz = 0; kz < s.kernel_d; ++kz) {
              const int iz = oz * s.stride_d - s.pad_front + kz * s.dilation_d;
              for (int ky = 0; ky < s.kernel_h; ++ky) {
                const int iy = oy * s.stride_h - s.pad_top + ky * s.dilation_h;
                for (int kx = 0; kx < s.kernel_w; ++kx) {
                  const int ix = ox * s.stride_w - s.pad_left + kx * s.dilation_w;
                  if (inside(iz, -s.pad_front, s.in_d + s.pad_back) && inside(iy, -s.pad_top, s.in_h + s.pad_bottom) &&
                      inside(ix, -s.pad_left, s.in_w + s.pad_right)) {
                    ++in_padded;
                  }
                  float& tap = taps[(static_cast<size_t>(kz) * s.kernel_h + ky) * s.kernel_w + kx];
                  tap = 0.0f;
                  if (inside(iz, 0, s.in_d) && inside(iy, 0, s.in_h) && inside(ix, 0, s.in_w)) {
                    ++in_input;
                    tap = input[(in_row(s, n, iz, iy) * s.in_w + ix) * s.channels + c];
                  }
                }
              }
            }
            float sum = 0.0f;
            for (int j = 0; j < cols; ++j) {
              float column = taps[static_cast<size_t>(j)];
              for (int r = 1; r < rows; ++r) column += taps[static_cast<size_t>(r) * cols + j];
              sum = j == 0 ? column : sum + column;
            }
            const int count = count_include_pad ? in_padded : in_input;
            // An empty window (only possible with pads >= kernel) averages to 0 rather than 0/0.
            output[(out_row(s, n, oz, oy) * s.out_w + ox) * s.channels + c] =
                count > 0 ? sum / static_cast<float>(count) : 0.0f;
          }
        }
      }
    }
  }
}

float f32_sum_eigen_packets4(size_t hw, size_t lead, const float* x, size_t stride) {
  return sum_eigen_packets4(hw, lead, [x, stride](size_t p) { return x[p * stride]; });
}

void f32_global_avgpool_nhwc__ref(int batch, int hw, int channels, const float* input, float* output,
                                  GapOrder order) {
  for (int n = 0; n < batch; ++n) {
    for (int c = 0; c < channels; ++c) {
      const float* x = input + static_cast<size_t>(n) * hw * channels + c;
      const size_t row = static_cast<size_t>(n) * channels + c;
      float sum = 0.0f;
      int p = 0;
      if (order == GapOrder::eigen_packets4) {
        sum = f32_sum_eigen_packets4(size_t(hw), eigen_row_lead(row, size_t(hw)), x, size_t(channels));
        p = hw;
      } else if (order == GapOrder::mlas_lanes4) {
        float s[4] = {};
        for (; p + 4 <= hw; p += 4)
          for (int k = 0; k < 4; ++k) s[k] += x[static_cast<size_t>(p + k) * channels];
        sum = (s[0] + s[2]) + (s[1] + s[3]);
      } else if (order == GapOrder::mlas_sgemm_m1) {
        auto at = [&](int q) { return x[static_cast<size_t>(q) * channels]; };
        for (; p + 4 <= hw; p += 4) sum = (((at(p) + at(p + 1)) + at(p + 2)) + at(p + 3)) + sum;
        if (hw - p >= 2) sum = (at(p) + at(p + 1)) + sum, p += 2;
        if (p < hw) sum = at(p) + sum, ++p;
      }
      for (; p < hw; ++p) sum += x[static_cast<size_t>(p) * channels];
      output[row] = sum / static_cast<float>(hw);
    }
  }
}

}  // namespace octet::kernels
