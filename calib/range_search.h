#pragma once
// The clipping-range search shared by the entropy (KL) and MSE observers: a family of
// candidate ranges, each scored on the histogram under the target's real quantization grid
// (the scale and zero point qparams_from_range gives that candidate), and the best one kept.
// The method and the reasons for each choice are in calib/README.md, "## Observers".
#include <limits>

#include "calib/histogram.h"
#include "calib/qparams.h"

namespace octet::calib {

// KL(P || Q), TensorRT's calibration criterion. P is the histogram clipped to the range,
// the values outside folded into the edge bins; Q is the histogram inside the range (not
// folded, so clipping costs something) with every group of bins that lands on one
// quantization level replaced by its mean over the group's non-empty bins. Returns +inf
// when Q has no mass where P has (a clip point inside an empty stretch of the histogram).
double kl_divergence(const Histogram& h, Range r, const QuantTarget& t);

// Expected squared error per value of quantize -> dequantize: scale^2 / 12 for values
// inside the representable range, the squared distance to the nearest end for values
// outside it, with values spread uniformly inside each bin. Exact zeros contribute nothing.
double expected_mse(const Histogram& h, Range r, const QuantTarget& t);

enum class Criterion { kl, mse };

// Candidate ranges, all inside `observed` (the histogram's range) and keeping its sign
// structure:
//  - observed min >= 0: [min, t] for upper thresholds t on bin edges;
//  - observed max <= 0: [t, max], the mirror image;
//  - signed: [max(-T, min), min(T, max)] for thresholds T on |x| in steps of one bin.
// Each candidate spans at least kMinSearchBins bins; for KL its quantization step must also
// be at least one bin wide: on a finer grid every bin is a level of its own, KL sees no
// rounding error at all and would favour the narrowest ranges it can still resolve. The full observed range is always a candidate. Ties keep the wider
// range.
inline constexpr int kMinSearchBins = 8;
Range search_range(const Histogram& h, Range observed, const QuantTarget& t, Criterion c);

}  // namespace octet::calib
