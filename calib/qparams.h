#pragma once
// From a real-valued range to INT8 quantization parameters, the way ONNX Runtime's
// quantization tool computes them (quant_utils.py, compute_scale_zp), so a QDQ model
// exported by octet carries the same scales and zero points ORT's quantize_static would
// write for the same ranges. The method is described in calib/README.md.
#include <cstdint>
#include <span>
#include <vector>

namespace octet::calib {

enum class QType { u8, s8 };

// What a tensor will be quantized to.
struct QuantTarget {
  QType type = QType::u8;
  // Symmetric: the range becomes [-max|x|, max|x|] and the zero point is the middle code
  // (0 for s8, 128 for u8, 127 for narrow u8). Weights are symmetric; activations are not
  // by default.
  bool symmetric = false;
  // Narrow drops one code so the codes are symmetric around the middle: s8 [-127, 127]
  // (ORT's default for symmetric s8 weights), u8 [0, 254] (ORT's symmetric u8 range).
  bool narrow = false;
  int32_t qmin() const;
  int32_t qmax() const;
};

// A real-valued range [min, max] to quantize.
struct Range {
  float min = 0;
  float max = 0;
};

// real = scale * (q - zero_point).
struct QParams {
  float scale = 1;
  int32_t zero_point = 0;
};

// ORT's compute_scale_zp. [min, max] is first extended to contain 0 (so real 0 is exactly
// representable: padding and ReLU zeros stay exact); symmetric targets use max(|min|, |max|)
// on both sides. Then, in double as ORT's numpy code does:
//   scale = (max - min) / (qmax - qmin)        (max - min itself is a float subtraction)
//   zero_point = round_half_even(qmin - min / scale)   asymmetric
//              = round_half_even((qmin + qmax) / 2)    symmetric
// and the scale is stored as float. A range too small for a normal float scale (in
// practice min == max == 0: a tensor that is all zeros) gives scale 1 and zero point 0,
// as ORT does, and sets *degenerate when given. Throws ir::Error on a NaN or infinite
// bound, or when the range is so wide that the scale overflows.
QParams qparams_from_range(Range r, const QuantTarget& t, bool* degenerate = nullptr);

// Per-output-channel parameters for a float weight tensor: one QParams per channel, from
// that channel's own min and max. Element i belongs to channel (i / inner) % channels, i.e.
// the channel axis has `inner` elements after it (Gemm's B without transB has its output
// channels last: inner 1); inner 0 means the channel axis is outermost ([channels, ...]). A
// channel of zeros gets scale 1 and zero point 0. Throws ir::Error when the shape does not
// split that way or a weight is not finite.
std::vector<QParams> weight_qparams_per_channel(std::span<const float> w, int64_t channels,
                                                const QuantTarget& t, int64_t inner = 0);

// One QParams for the whole weight tensor, from its min and max.
QParams weight_qparams_per_tensor(std::span<const float> w, const QuantTarget& t);

}  // namespace octet::calib
