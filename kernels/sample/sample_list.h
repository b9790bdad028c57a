#pragma once
// Every RoiAlign and GridSample microkernel (FP32, channels-last): the one list the drivers
// (kernels/sample/roi_align.h, grid_sample.h), the tests (tests/simd/test_sample.cc) and the
// benchmark (bench/sample_bench.cc) iterate; one row per templated level
// (kernels/template_levels.h), from kernels/sample/sample_level.inc.
//
// The coordinates, taps and weights are the drivers' (kernels/ref/sample.h computes them as ONNX
// Runtime does); a microkernel sums the weighted taps over a vector of channels at a time, each
// product and sum rounded on its own (no FMA) in ORT's order, so the results are bit-identical
// to roi_align_nhwc__ref and grid_sample_nhwc__ref:
//   roialign avg: acc = 0 (or y, continuing a bin), acc = acc + (((w0 a + w1 b) + w2 c) + w3 d)
//                 per sample, y = acc / divisor on the bin's last chunk;
//   roialign max: acc = the first sample's (or y), acc = max(acc, max(max(max(w0 a, w1 b), w2 c),
//                 w3 d)) with std::max's choice on NaN (the first operand), which is the vector
//                 max with its operands swapped;
//   grid_sample linear: y = dy2 (dx2 p11 + dx1 p12) + dy1 (dx2 p21 + dx1 p22);
//   grid_sample linear4 (zeros padding, align_corners 0: ORT's fast path since 1.26, with the
//                 weights multiplied out first): y = ((w11 p11 + w12 p12) + w21 p21) + w22 p22;
//   grid_sample cubic: v_i = ((cx0 p_i0 + cx1 p_i1) + cx2 p_i2) + cx3 p_i3 per row i,
//                      y = ((cy0 v_0 + cy1 v_1) + cy2 v_2) + cy3 v_3.
// A tap is a pointer to a pixel's channels (a row of zeros for a tap outside the map under zeros
// padding). Nearest sampling copies whole pixels (the driver's memcpy), with no microkernel.
#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/elementwise/eltwise_list.h"
#include "kernels/isa.h"
#include "kernels/kernel_list.h"

namespace octet::kernels {

struct RoiAlignBinArgs {
  const float* x;          // the roi's image, [height][width][channels]
  const int32_t* offsets;  // 4 per sample: element offsets of its taps (pixel * channels)
  const float* weights;    // 4 per sample
  size_t samples, channels;
  float* y;                // the bin's channels
  bool accumulate;         // continue from y (a later chunk of the bin's samples)
  float divisor;           // avg: > 0 on the bin's last chunk
};

struct GridSampleArgs {
  const float* const* taps;  // per pixel: linear 4 (p11, p12, p21, p22), cubic 16 (row by row)
  const float* weights;      // per pixel: linear 4 (dx2, dx1, dy2, dy1), linear4 4 (w11, w12, w21, w22),
                             // cubic 8 (cx[4], cy[4])
  size_t pixels, channels;
  float* y;                  // [pixels][channels]
};

using RoiAlignUkernel = EltwiseUkernel<void (*)(const RoiAlignBinArgs&)>;
using GridSampleUkernel = EltwiseUkernel<void (*)(const GridSampleArgs&)>;

#define OCTET_SAMPLE_DECLARE(isa, unused)               \
  namespace isa {                                       \
  void f32_roialign_avg(const RoiAlignBinArgs&);        \
  void f32_roialign_max(const RoiAlignBinArgs&);        \
  void f32_gridsample_linear(const GridSampleArgs&);    \
  void f32_gridsample_linear4(const GridSampleArgs&);   \
  void f32_gridsample_cubic(const GridSampleArgs&);     \
  }
OCTET_TEMPLATE_LEVELS(OCTET_SAMPLE_DECLARE, )
#undef OCTET_SAMPLE_DECLARE

#define OCTET_SAMPLE_ENTRY(isa, OP) {#OP "__" #isa, Isa::isa, &isa::OP},
#define OCTET_SAMPLE_TABLE(NAME, OP, ENTRY)                                                        \
  inline constexpr ENTRY NAME##Rows[] = {OCTET_TEMPLATE_LEVELS(OCTET_SAMPLE_ENTRY, OP) ENTRY{}}; \
  inline constexpr std::span<const ENTRY> NAME = rows_before_terminator(NAME##Rows);

OCTET_SAMPLE_TABLE(kF32RoiAlignAvgUkernels, f32_roialign_avg, RoiAlignUkernel)
OCTET_SAMPLE_TABLE(kF32RoiAlignMaxUkernels, f32_roialign_max, RoiAlignUkernel)
OCTET_SAMPLE_TABLE(kF32GridSampleLinearUkernels, f32_gridsample_linear, GridSampleUkernel)
OCTET_SAMPLE_TABLE(kF32GridSampleLinear4Ukernels, f32_gridsample_linear4, GridSampleUkernel)
OCTET_SAMPLE_TABLE(kF32GridSampleCubicUkernels, f32_gridsample_cubic, GridSampleUkernel)

#undef OCTET_SAMPLE_TABLE
#undef OCTET_SAMPLE_ENTRY

}  // namespace octet::kernels
