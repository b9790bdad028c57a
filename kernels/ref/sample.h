#pragma once
// RoiAlign and GridSample over channels-last maps, in ONNX Runtime's arithmetic (its CPU kernels
// object_detection/roialign.cc and tensor/grid_sample.cc), step for step, so the results are
// bit-identical; the SIMD kernels (kernels/sample/sample_list.h) take the taps and weights
// computed here and repeat the sums over channels.
//
// RoiAlign: per roi, start = roi * spatial_scale - offset (0.5 for half_pixel), size = end -
// start (at least 1 for output_half_pixel), bin = size / output extent, samples per bin
// sampling_ratio or ceil(size / output extent) a side. A sample at yy = (start + p * bin) +
// (i + 0.5) * bin / grid (likewise x) outside [-1, extent] contributes 0 * x[0] at its four
// taps; else it is clamped to [0, extent - 1] and weighted hy * hx, hy * lx, ly * hx, ly * lx.
// avg: (0 + t_0 + t_1 + ...) / count with t = ((w1 a + w2 b) + w3 c) + w4 d;
// max: the largest of every weighted tap, as ORT's runtime computes it (not of the samples'
// interpolated values: ORT warns that this "will be fixed", and its 1.30 still takes it).
// GridSample: grid (x, y) in [-1, 1] to pixels (align_corners or not), padding applied to each
// integer tap (zeros, border clamp, or ORT's reflection of the tap's index), then
// nearest (round half to even), bilinear dy2 (dx2 p11 + dx1 p12) + dy1 (dx2 p21 + dx1 p22), or
// bicubic (Keys, a = -0.75: rows first, then the column of row results). Bilinear with zeros
// padding and align_corners 0 takes ORT's fast path (since 1.26; the 1.30 runtime runs it):
// ((dy2 dx2) p11 + (dy2 dx1) p12 + (dy1 dx2) p21) + (dy1 dx1) p22, and 0 where no tap is in the map.
#include <cstddef>
#include <cstdint>

namespace octet::kernels {

enum class RoiAlignMode : uint8_t { avg, max };

struct RoiAlignParams {
  RoiAlignMode mode = RoiAlignMode::avg;
  int64_t out_h = 1, out_w = 1;
  int64_t sampling_ratio = 0;  // 0: adaptive, ceil(roi extent / output extent)
  float spatial_scale = 1.0f;
  bool half_pixel = true;  // coordinate_transformation_mode half_pixel; false: output_half_pixel
};

struct RoiAlignShape {
  size_t batch = 1, channels = 1, height = 1, width = 1;
  size_t rois = 0;
};

// One roi's geometry (its sampling grid).
struct RoiGeometry {
  float start_h, start_w, bin_h, bin_w;
  int64_t grid_h, grid_w;  // samples per bin along each axis (<= 0: none)
  float count;             // the avg divisor, max(grid_h * grid_w, 1)
};
RoiGeometry roi_geometry(const RoiAlignParams& p, const float* roi);

// One sample coordinate along an axis: its two taps and their weights, or outside the map.
struct SampleAxis {
  int32_t lo = 0, hi = 0;
  float l = 0.0f, h = 0.0f;  // weights of hi and lo
  bool outside = true;
};
// The coordinate of sample i of bin p (start + p * bin + (i + 0.5) * bin / grid), on an axis of
// `extent` pixels.
SampleAxis sample_axis(float start, float bin, int64_t p, int64_t i, int64_t grid, int64_t extent);

// x: [batch][height][width][channels]; rois: [rois][4] (x1, y1, x2, y2); batch_indices: [rois];
// y: [rois][out_h][out_w][channels]. A batch index outside [0, batch) throws std::out_of_range.
void roi_align_nhwc__ref(const RoiAlignParams& p, const RoiAlignShape& s, const float* x, const float* rois,
                         const int64_t* batch_indices, float* y);

enum class GridSampleMode : uint8_t { linear, nearest, cubic };
enum class GridSamplePadding : uint8_t { zeros, border, reflection };

struct GridSampleParams {
  GridSampleMode mode = GridSampleMode::linear;
  GridSamplePadding padding = GridSamplePadding::zeros;
  bool align_corners = false;
};

struct GridSampleShape {
  size_t batch = 1, channels = 1, in_h = 1, in_w = 1, out_h = 1, out_w = 1;
};

// The map's pixel coordinate of a normalised grid value along an axis of `extent` pixels.
float grid_denormalize(float n, int64_t extent, bool align_corners);
// The pixel a tap at integer coordinate i reads along an axis of `extent` pixels, or -1 (zeros
// padding outside the map). ORT's reflection is reproduced; where its arithmetic would leave the
// map (a grid value far outside, NaN, an axis of one pixel) the index is clamped into it.
int64_t grid_tap(int64_t i, int64_t extent, const GridSampleParams& p);
// A float coordinate to an integer as x86's cvttss2si does (toward zero; NaN and out-of-range
// values give INT64_MIN), which ORT's casts compile to, without the undefined behaviour.
int64_t grid_index(float v);
// Whether bilinear sampling takes ORT's fast path (weights multiplied out, kernels/sample/sample_list.h).
inline bool grid_linear4(const GridSampleParams& p) {
  return p.mode == GridSampleMode::linear && p.padding == GridSamplePadding::zeros && !p.align_corners;
}
// Keys' cubic coefficients (a = -0.75) for the fraction t, in ORT's order of operations.
void grid_cubic_coeffs(float t, float c[4]);

// x: [batch][in_h][in_w][channels]; grid: [batch][out_h][out_w][2] (x, y);
// y: [batch][out_h][out_w][channels].
void grid_sample_nhwc__ref(const GridSampleParams& p, const GridSampleShape& s, const float* x, const float* grid,
                           float* y);

}  // namespace octet::kernels
