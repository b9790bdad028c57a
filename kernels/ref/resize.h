#pragma once
// Resize (ONNX opsets 10-19) and Upsample (7-9), nearest, linear and cubic, with ONNX Runtime's
// float arithmetic: the source coordinate of each output index, its rounding to a pixel
// (nearest), its two taps and weights (linear) or its four (cubic) are computed here once per
// axis, step for step as ORT does, so the indices and weights, and hence the outputs, are ORT's
// bit for bit.
//
// Linear takes ORT's four weights, each the product of a row and a column weight rounded to
// float, and sums the four taps left to right: y = ((c00 * x00 + c01 * x01) + c10 * x10) + c11 * x11,
// every product and sum rounded on its own (no fused multiply-add). On 8-bit data the float
// result is truncated toward zero (ORT's static_cast), which is why an 8-bit linear resize is
// not the rounded value of the float one.
//
// Cubic is ORT's NCHW bicubic (ResizeBiCubic), float only: Keys' kernel with coefficient `a`
// at the fraction of the source coordinate, taps at floor - 1 ... floor + 2 clamped into the
// input. Each of the four tap rows is first interpolated along x with the weights c / sum_x,
// r = ((0 + wx0 * x0) + wx1 * x1) + ..., then y = sum over rows, from 0, of (r * cy) / sum_y.
// The sums are 1, or with exclude_outside the sums of the coefficients left on taps inside the
// input (the others set to 0).
//
// tf_crop_and_resize maps into the region of interest [roi_start, roi_end] of each axis; an
// output whose source coordinate falls outside [0, in - 1] on either axis takes the
// extrapolation value (converted to the element type) in every mode.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace octet::kernels {

enum class ResizeMode : uint8_t { nearest, linear, cubic };

enum class CoordinateTransform : uint8_t {
  half_pixel,
  half_pixel_symmetric,
  pytorch_half_pixel,
  align_corners,
  asymmetric,
  tf_half_pixel_for_nn,
  tf_crop_and_resize,
};

// How nearest rounds a source coordinate. `simple` is Resize-10's and Upsample's: truncation
// when enlarging, ceil when shrinking.
enum class NearestRounding : uint8_t { simple, round_prefer_floor, round_prefer_ceil, floor, ceil };

// One resized axis: its input and output extents, the scale (output / input, or the scales
// input's value) and, for tf_crop_and_resize, the region of interest (fractions of the input).
struct ResizeAxis {
  int64_t in = 1, out = 1;
  float scale = 1.0f;
  float roi_start = 0.0f, roi_end = 1.0f;
};

// The source coordinate of output index `x` (ORT's formulas, in its float / double steps).
float resize_source_coordinate(CoordinateTransform t, float x, const ResizeAxis& a);

// For each output index, the input index nearest resize reads (clamped into the input), or -1
// where tf_crop_and_resize extrapolates. A scale of exactly 1 maps every index to itself,
// whatever the transform (ORT's rule).
std::vector<int32_t> nearest_source_indices(const ResizeAxis& a, CoordinateTransform t, NearestRounding r);

// For each output index, the two input indices linear resize reads and their weights:
// value = w0 * x[i0] + w1 * x[i1]. An index on the last input pixel reads it twice, 0.5 each.
// `outside` (tf_crop_and_resize only, else empty): the output takes the extrapolation value.
struct LinearTaps {
  std::vector<int32_t> i0, i1;
  std::vector<float> w0, w1;
  std::vector<uint8_t> outside;
};
LinearTaps linear_taps(const ResizeAxis& a, CoordinateTransform t);

// For each output index o, the four input indices cubic resize reads (index[4 * o + k], clamped
// into the input), their coefficients (coeff[4 * o + k], 0 for a tap outside the input with
// exclude_outside) and the sum the coefficients are divided by (sum[o]).
struct CubicTaps {
  std::vector<int32_t> index;
  std::vector<float> coeff;
  std::vector<float> sum;
  std::vector<uint8_t> outside;  // as LinearTaps::outside
};
CubicTaps cubic_taps(const ResizeAxis& a, CoordinateTransform t, float cubic_coeff_a, bool exclude_outside);

// Keys' cubic convolution weights of the taps at -1, 0, 1, 2 for a fraction s in [0, 1).
void cubic_coefficients(float s, float a, float out[4]);

// True when the transform extrapolates and output index o of this axis maps outside the input.
inline bool resize_outside(const std::vector<uint8_t>& outside, size_t o) { return !outside.empty() && outside[o]; }

// A 2-D resize of NHWC maps: every image and channel resized alike over (H, W).
struct Resize2dShape {
  int batch = 1;
  int in_h = 1, in_w = 1, out_h = 1, out_w = 1, channels = 1;
};

// Nearest over NHWC maps of elements of `element_bytes` bytes: output pixel (oy, ox) is a copy
// of input pixel (rows[oy], cols[ox]); where either is -1, every channel is `fill` (one element).
void resize_nearest_nhwc__ref(const Resize2dShape& s, const int32_t* rows, const int32_t* cols,
                              size_t element_bytes, const void* x, void* y, const void* fill = nullptr);

// Linear over NHWC maps; T is float, uint8_t or int8_t (8-bit: truncated toward zero).
template <class T>
void resize_linear_nhwc__ref(const Resize2dShape& s, const LinearTaps& rows, const LinearTaps& cols, const T* x,
                             T* y, float extrapolation_value = 0.0f);

// Cubic over NHWC float maps.
void resize_cubic_nhwc__ref(const Resize2dShape& s, const CubicTaps& rows, const CubicTaps& cols, const float* x,
                            float* y, float extrapolation_value = 0.0f);

// The element type's value of the extrapolation value (ORT's static_cast; 8-bit saturates here
// where ORT's conversion of an out-of-range float is undefined).
template <class T>
T extrapolated(float v);

// Nearest over a dense row-major tensor of any rank: axis d of output index o reads input index
// maps[d][o_d]; an index of -1 on any axis writes `fill` (element_bytes bytes; tf_crop_and_resize's
// extrapolation value). For resizes the NHWC kernels do not take (a resized batch or channel axis).
void resize_nearest_any__ref(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& out_dims,
                             const std::vector<std::vector<int32_t>>& maps, size_t element_bytes, const void* x,
                             void* y, const void* fill = nullptr);

}  // namespace octet::kernels
