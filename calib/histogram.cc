#include "calib/histogram.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/ir.h"

namespace octet::calib {

Histogram::Histogram(double lo, double hi, int bins)
    : lo_(lo),
      hi_(hi),
      width_((hi - lo) / bins),
      bins_per_unit_(bins / (hi - lo)),
      counts_(static_cast<size_t>(bins), 0) {
  if (bins < 1 || !std::isfinite(lo) || !std::isfinite(hi) || !(lo < hi) || !(width_ > 0))
    throw ir::Error("histogram needs a finite range lo < hi and at least one bin, got [" +
                    std::to_string(lo) + ", " + std::to_string(hi) + "] with " +
                    std::to_string(bins) + " bins");
}

double Histogram::edge(int i) const {
  return i >= bins() ? hi_ : lo_ + width_ * i;
}

int Histogram::bin_of(double v) const {
  const double i = (v - lo_) * bins_per_unit_;
  if (!(i > 0)) return 0;
  return i >= bins() ? bins() - 1 : static_cast<int>(i);  // truncation is floor here
}

void Histogram::add(std::span<const float> x) {
  for (size_t k = 0; k < x.size(); ++k) {
    const float v = x[k];
    if (!std::isfinite(v))
      throw ir::Error("the tensor had a non-finite value (" + std::to_string(v) +
                      ") at element " + std::to_string(k) + " of this batch");
    ++total_;
    if (v == 0.0f)
      ++zeros_;
    else
      ++counts_[static_cast<size_t>(bin_of(v))];
  }
}

double Histogram::value_at_rank(double rank) const {
  rank = std::clamp(rank, 0.0, static_cast<double>(total_));
  const int zero_bin = bin_of(0.0);
  double below = 0;
  for (int i = 0; i < bins(); ++i) {
    const double n = static_cast<double>(counts_[static_cast<size_t>(i)]) +
                     (i == zero_bin ? static_cast<double>(zeros_) : 0.0);
    if (n > 0 && below + n >= rank) {
      const double v = edge(i) + width_ * (rank - below) / n;
      return std::clamp(v, lo_, hi_);
    }
    below += n;
  }
  return hi_;
}

}  // namespace octet::calib
