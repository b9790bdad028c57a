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

// `count` rows of per-channel values (rows[r * channels + c]) each repeated over a chunk of
// `chunk` floats (whole pixels), row r into out[r * chunk, (r + 1) * chunk): a binary kernel then
// runs flat over a dense chunk. Read a row per pixel instead (row stride 0), rows under a vector
// or two ran at about a cycle an element (RepGhostNet's BNs).
inline void channel_rows_over_chunk(const float* rows, size_t count, int64_t channels, size_t chunk, float* out) {
  for (size_t r = 0; r < count; ++r)
    for (size_t i = 0; i < chunk; ++i) out[r * chunk + i] = rows[r * size_t(channels) + i % size_t(channels)];
}

// The scale and shift rows of `row` (batchnorm_affine's 2 * channels) over a chunk each, into
// affine[0, chunk) and affine[chunk, 2 chunk).
inline void batchnorm_rows_over_chunk(const float* row, int64_t channels, size_t chunk, float* affine) {
  channel_rows_over_chunk(row, 2, channels, chunk, affine);
}

}  // namespace octet::ops
