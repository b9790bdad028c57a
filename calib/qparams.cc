#include "calib/qparams.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/ir.h"

namespace octet::calib {

int32_t QuantTarget::qmin() const {
  if (type == QType::u8) return 0;
  return narrow ? -127 : -128;
}

int32_t QuantTarget::qmax() const {
  if (type == QType::u8) return narrow ? 254 : 255;
  return 127;
}

namespace {

std::string describe(Range r) {
  return "[" + std::to_string(r.min) + ", " + std::to_string(r.max) + "]";
}

}  // namespace

QParams qparams_from_range(Range r, const QuantTarget& t, bool* degenerate) {
  if (!std::isfinite(r.min) || !std::isfinite(r.max))
    throw ir::Error("quantization range " + describe(r) +
                    " is not finite: the calibration data produced a NaN or infinite bound");
  if (r.min > r.max)
    throw ir::Error("quantization range " + describe(r) + " has min > max");

  // Every step below mirrors ORT's numpy code, including which operations happen in float32
  // (the bounds and their difference) and which in float64 (scale and zero point).
  float rmin = std::min(r.min, 0.0f);
  float rmax = std::max(r.max, 0.0f);
  if (t.symmetric) {
    const float absmax = std::max(std::fabs(rmin), std::fabs(rmax));
    rmin = -absmax;
    rmax = absmax;
  }
  const int32_t qmin = t.qmin();
  const int32_t qmax = t.qmax();
  const float span = rmax - rmin;
  const double scale = static_cast<double>(span) / static_cast<double>(qmax - qmin);
  if (!std::isfinite(scale) || scale > std::numeric_limits<float>::max())
    throw ir::Error("quantization range " + describe(r) +
                    " is too wide: its scale does not fit a float");

  if (degenerate) *degenerate = false;
  if (scale < std::numeric_limits<float>::min()) {
    // An all-zero tensor: any scale represents it exactly. ORT writes scale 1, zero point 0.
    if (degenerate) *degenerate = true;
    return QParams{1.0f, 0};
  }
  double zp = t.symmetric ? std::nearbyint((qmin + qmax) / 2.0)
                          : std::nearbyint(qmin - static_cast<double>(rmin) / scale);
  // The range contains 0, so zp is inside [qmin, qmax] already; the clamp only guards the
  // last-ulp cases of the float64 division.
  zp = std::clamp(zp, static_cast<double>(qmin), static_cast<double>(qmax));
  return QParams{static_cast<float>(scale), static_cast<int32_t>(zp)};
}

namespace {

Range finite_min_max(std::span<const float> w, const char* what, int64_t channel) {
  Range r{0.0f, 0.0f};
  bool first = true;
  for (size_t i = 0; i < w.size(); ++i) {
    const float v = w[i];
    if (!std::isfinite(v)) {
      std::string where = channel >= 0 ? " in output channel " + std::to_string(channel) : "";
      throw ir::Error(std::string(what) + ": weight element " + std::to_string(i) + where +
                      " is " + std::to_string(v) + "; weights must be finite to be quantized");
    }
    if (first) {
      r = Range{v, v};
      first = false;
    } else {
      r.min = std::min(r.min, v);
      r.max = std::max(r.max, v);
    }
  }
  return r;
}

}  // namespace

std::vector<QParams> weight_qparams_per_channel(std::span<const float> w, int64_t channels,
                                                const QuantTarget& t, int64_t inner) {
  if (channels <= 0)
    throw ir::Error("per-channel weight quantization: channel count must be positive, got " +
                    std::to_string(channels));
  if (inner == 0 && w.size() % static_cast<size_t>(channels) == 0) inner = int64_t(w.size()) / channels;
  if (inner <= 0 || w.size() % static_cast<size_t>(channels * inner) != 0)
    throw ir::Error("per-channel weight quantization: " + std::to_string(w.size()) +
                    " weights do not split into " + std::to_string(channels) + " output channels");
  std::vector<Range> ranges(static_cast<size_t>(channels));
  std::vector<bool> seen(static_cast<size_t>(channels), false);
  for (size_t i = 0; i < w.size(); ++i) {
    const auto c = static_cast<size_t>((int64_t(i) / inner) % channels);
    const float v = w[i];
    if (!std::isfinite(v))
      throw ir::Error("per-channel weight quantization: weight element " + std::to_string(i) + " in output channel " +
                      std::to_string(c) + " is " + std::to_string(v) + "; weights must be finite to be quantized");
    ranges[c] = seen[c] ? Range{std::min(ranges[c].min, v), std::max(ranges[c].max, v)} : Range{v, v};
    seen[c] = true;
  }
  std::vector<QParams> out;
  out.reserve(ranges.size());
  for (const Range& r : ranges) out.push_back(qparams_from_range(r, t));
  return out;
}

QParams weight_qparams_per_tensor(std::span<const float> w, const QuantTarget& t) {
  return qparams_from_range(finite_min_max(w, "per-tensor weight quantization", -1), t);
}

}  // namespace octet::calib
