#pragma once
// Resize (ONNX opsets 10-19) and Upsample (7-9), nearest and linear, with ONNX Runtime's float
// arithmetic: the source coordinate of each output index, its rounding to a pixel (nearest) or
// its two taps and weights (linear) are computed here once per axis, step for step as ORT does,
// so the indices and weights, and hence the outputs, are ORT's bit for bit.
//
// Linear takes ORT's four weights, each the product of a row and a column weight rounded to
// float, and sums the four taps left to right: y = ((c00 * x00 + c01 * x01) + c10 * x10) + c11 * x11,
// every product and sum rounded on its own (no fused multiply-add). On 8-bit data the float
// result is truncated toward zero (ORT's static_cast), which is why an 8-bit linear resize is
// not the rounded value of the float one.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace octet::kernels {

enum class ResizeMode : uint8_t { nearest, linear };

enum class CoordinateTransform : uint8_t {
  half_pixel,
  half_pixel_symmetric,
  pytorch_half_pixel,
  align_corners,
  asymmetric,
  tf_half_pixel_for_nn,
};

// How nearest rounds a source coordinate. `simple` is Resize-10's and Upsample's: truncation
// when enlarging, ceil when shrinking.
enum class NearestRounding : uint8_t { simple, round_prefer_floor, round_prefer_ceil, floor, ceil };

// One resized axis: its input and output extents and the scale (output / input, or the scales
// input's value).
struct ResizeAxis {
  int64_t in = 1, out = 1;
  float scale = 1.0f;
};

// The source coordinate of output index `x` (ORT's formulas, in its float / double steps).
float resize_source_coordinate(CoordinateTransform t, float x, const ResizeAxis& a);

// For each output index, the input index nearest resize reads (clamped into the input).
// A scale of exactly 1 maps every index to itself, whatever the transform (ORT's rule).
std::vector<int32_t> nearest_source_indices(const ResizeAxis& a, CoordinateTransform t, NearestRounding r);

// For each output index, the two input indices linear resize reads and their weights:
// value = w0 * x[i0] + w1 * x[i1]. An index on the last input pixel reads it twice, 0.5 each.
struct LinearTaps {
  std::vector<int32_t> i0, i1;
  std::vector<float> w0, w1;
};
LinearTaps linear_taps(const ResizeAxis& a, CoordinateTransform t);

// A 2-D resize of NHWC maps: every image and channel resized alike over (H, W).
struct Resize2dShape {
  int batch = 1;
  int in_h = 1, in_w = 1, out_h = 1, out_w = 1, channels = 1;
};

// Nearest over NHWC maps of elements of `element_bytes` bytes: output pixel (oy, ox) is a copy
// of input pixel (rows[oy], cols[ox]).
void resize_nearest_nhwc__ref(const Resize2dShape& s, const int32_t* rows, const int32_t* cols,
                              size_t element_bytes, const void* x, void* y);

// Linear over NHWC maps; T is float, uint8_t or int8_t (8-bit: truncated toward zero).
template <class T>
void resize_linear_nhwc__ref(const Resize2dShape& s, const LinearTaps& rows, const LinearTaps& cols, const T* x,
                             T* y);

// Nearest over a dense row-major tensor of any rank: axis d of output index o reads input index
// maps[d][o_d]. For resizes the NHWC kernels do not take (a resized batch or channel axis).
void resize_nearest_any__ref(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& out_dims,
                             const std::vector<std::vector<int32_t>>& maps, size_t element_bytes, const void* x,
                             void* y);

}  // namespace octet::kernels
