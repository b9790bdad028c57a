#pragma once
// The per-channel scale and shift of an inference BatchNormalization, rounded as ONNX Runtime
// rounds them, shared by BatchNormalization (engine/ops/elementwise.cc) and the quantized form
// QLinearBatchNormalization (engine/ops/qbatchnorm_op.cc) so both compute the same bits.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "engine/op_registry.h"
#include "kernels/pool/pool2d.h"

namespace octet::ops {

// ORT's NCHWc pass rewrites a BN into a 1x1 depthwise conv where the loader's hint
// ir::kOrtNchwcBlocksAttr holds this CPU's block (a BN on a pool, a Concat of pools or an
// activation after a float conv): the conv's weight is scale / sqrt(var + eps), one rounding.
inline bool batchnorm_as_ort_conv(const ir::Node& n) {
  return n.attrs.has(ir::kOrtNchwcBlocksAttr) &&
         std::ranges::count(n.attrs.ints(ir::kOrtNchwcBlocksAttr), kernels::ort_nchwc_block()) > 0;
}

// affine[0, channels): scale' = inv_std * scale (inv_std = 1 / sqrt(var + eps)), or
// scale / sqrt(var + eps) as ORT's conv rewrite has it; affine[channels, 2 channels):
// shift' = B - mean * scale'. Applied as a multiply then an add, two roundings, as ORT does.
inline void batchnorm_affine(const float* scale, const float* bias, const float* mean, const float* var, float eps,
                             bool ort_conv, int64_t channels, float* affine) {
  for (int64_t ch = 0; ch < channels; ++ch) {
    const float std_dev = std::sqrt(var[ch] + eps);
    const float scaled = ort_conv ? scale[ch] / std_dev : (1.0f / std_dev) * scale[ch];
    const float moved = mean[ch] * scaled;
    affine[ch] = scaled;
    affine[channels + ch] = bias[ch] - moved;
  }
}

// The scale and shift rows of `row` (batchnorm_affine's 2 * channels) repeated over a chunk of
// `chunk` floats (whole pixels) each, into affine[0, chunk) and affine[chunk, 2 chunk): the
// multiply and the add then run flat over a dense chunk. Read a row per pixel instead (row
// stride 0), rows under a vector or two ran at about a cycle an element.
inline void batchnorm_rows_over_chunk(const float* row, int64_t channels, size_t chunk, float* affine) {
  for (size_t i = 0; i < chunk; ++i) {
    affine[i] = row[i % size_t(channels)];
    affine[chunk + i] = row[size_t(channels) + i % size_t(channels)];
  }
}

}  // namespace octet::ops
