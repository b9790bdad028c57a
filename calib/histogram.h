#pragma once
// A fixed-range histogram of one tensor's values over the calibration set, the input of the
// percentile, entropy and MSE observers. The range is the exact [min, max] of the first
// calibration pass, so no rebinning is ever needed and the result does not depend on how
// the data was split into batches.
#include <cstdint>
#include <span>
#include <vector>

namespace octet::calib {

class Histogram {
 public:
  // bins equal-width bins over [lo, hi]; lo < hi, both finite.
  Histogram(double lo, double hi, int bins);

  // Adds every value. Values outside [lo, hi] (a caller whose second pass differs from the
  // first, e.g. by float reassociation) land in the edge bins. Throws ir::Error on NaN/Inf.
  void add(std::span<const float> x);

  int bins() const { return static_cast<int>(counts_.size()); }
  double lo() const { return lo_; }
  double hi() const { return hi_; }
  double width() const { return width_; }
  // Left edge of bin i; edge(bins()) is hi exactly.
  double edge(int i) const;
  // Count of bin i, exact zeros excluded: they are kept apart in zeros() because 0 is
  // always exactly representable (every range is extended to contain it), so after a ReLU
  // the spike at 0 carries no quantization error and must not weigh on the search.
  int64_t count(int i) const { return counts_[static_cast<size_t>(i)]; }
  const std::vector<int64_t>& counts() const { return counts_; }
  int64_t zeros() const { return zeros_; }
  int64_t total() const { return total_; }
  // Bin that value v falls in, clamped to [0, bins() - 1].
  int bin_of(double v) const;

  // The value below which `rank` of the total() values lie (exact zeros included), read off
  // the cumulative histogram with linear interpolation inside the bin that holds it.
  // rank is clamped to [0, total()].
  double value_at_rank(double rank) const;

 private:
  double lo_, hi_, width_;
  double bins_per_unit_;  // 1 / width_, so binning multiplies instead of dividing
  std::vector<int64_t> counts_;
  int64_t zeros_ = 0;
  int64_t total_ = 0;
};

}  // namespace octet::calib
