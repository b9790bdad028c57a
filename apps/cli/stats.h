#pragma once
// Summary statistics of latency samples.
#include <string>
#include <vector>

namespace octet {

struct LatencyStats {
  size_t samples = 0;
  double mean = 0, stddev = 0, cv = 0;  // cv = stddev / mean
  double p50 = 0, p95 = 0, iqr = 0;     // percentiles by linear interpolation
  double min = 0, max = 0;
};

LatencyStats summarize(std::vector<double> samples);
// Divides every figure except cv by `n` (e.g. per-batch milliseconds to per-image).
LatencyStats per_item(const LatencyStats& s, double n);

}  // namespace octet
