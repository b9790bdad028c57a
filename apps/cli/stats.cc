#include "apps/cli/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace octet {
namespace {

// Percentile of sorted samples with linear interpolation between ranks (numpy's default).
double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  double rank = p / 100.0 * double(sorted.size() - 1);
  size_t lo = size_t(std::floor(rank)), hi = size_t(std::ceil(rank));
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - double(lo));
}

}  // namespace

LatencyStats summarize(std::vector<double> samples) {
  LatencyStats s;
  s.samples = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / double(samples.size());
  double var = 0;
  for (double x : samples) var += (x - s.mean) * (x - s.mean);
  s.stddev = samples.size() > 1 ? std::sqrt(var / double(samples.size() - 1)) : 0.0;
  s.cv = s.mean > 0 ? s.stddev / s.mean : 0.0;
  s.p50 = percentile(samples, 50);
  s.p95 = percentile(samples, 95);
  s.iqr = percentile(samples, 75) - percentile(samples, 25);
  s.min = samples.front();
  s.max = samples.back();
  return s;
}

LatencyStats per_item(const LatencyStats& s, double n) {
  LatencyStats r = s;
  for (double* v : {&r.mean, &r.stddev, &r.p50, &r.p95, &r.iqr, &r.min, &r.max}) *v /= n;
  return r;
}

}  // namespace octet
