#include "calib/range_search.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace octet::calib {
namespace {

// Bins covered by [r.min, r.max]. Candidate bounds sit on bin edges up to float rounding,
// hence the small tolerance: an edge must not pull in the neighbouring bin.
int first_bin(const Histogram& h, double v) {
  const double i = std::floor((v - h.lo()) / h.width() + 1e-6);
  return static_cast<int>(std::clamp(i, 0.0, static_cast<double>(h.bins() - 1)));
}
int last_bin(const Histogram& h, double v) {
  const double i = std::ceil((v - h.lo()) / h.width() - 1e-6) - 1;
  return static_cast<int>(std::clamp(i, 0.0, static_cast<double>(h.bins() - 1)));
}

// The quantization level a value lands on under qp, in double (the search only needs the
// grouping of bins into levels, not ORT's float arithmetic).
int32_t level_of(double v, const QParams& qp, const QuantTarget& t) {
  const double q = std::nearbyint(v / qp.scale) + qp.zero_point;
  return static_cast<int32_t>(std::clamp(q, static_cast<double>(t.qmin()),
                                         static_cast<double>(t.qmax())));
}

double cube(double v) { return v * v * v; }

}  // namespace

double kl_divergence(const Histogram& h, Range r, const QuantTarget& t) {
  const QParams qp = qparams_from_range(r, t);
  const int i0 = first_bin(h, r.min);
  const int i1 = std::max(i0, last_bin(h, r.max));
  const auto& n = h.counts();

  double below = 0, inside = 0, above = 0;
  for (int i = 0; i < h.bins(); ++i) {
    const double c = static_cast<double>(n[static_cast<size_t>(i)]);
    (i < i0 ? below : i > i1 ? above : inside) += c;
  }
  const double total = below + inside + above;
  if (total == 0) return 0;  // only exact zeros: any grid is exact
  if (inside == 0) return std::numeric_limits<double>::infinity();

  auto p_of = [&](int i) {
    double p = static_cast<double>(n[static_cast<size_t>(i)]);
    if (i == i0) p += below;
    if (i == i1) p += above;
    return p;
  };

  // Walk the bins once; a group is the run of bins whose centres quantize to one level.
  double kl = 0;
  int g0 = i0;
  int32_t level = level_of(h.edge(i0) + 0.5 * h.width(), qp, t);
  for (int i = i0; i <= i1 + 1; ++i) {
    const int32_t next = i <= i1 ? level_of(h.edge(i) + 0.5 * h.width(), qp, t) : level + 1;
    if (next == level) continue;
    double group_mass = 0;
    int nonempty = 0;
    for (int j = g0; j < i; ++j) {
      group_mass += static_cast<double>(n[static_cast<size_t>(j)]);
      if (p_of(j) > 0) ++nonempty;
    }
    for (int j = g0; j < i; ++j) {
      const double p = p_of(j) / total;
      if (p == 0) continue;
      const double q = group_mass / nonempty / inside;
      if (q == 0) return std::numeric_limits<double>::infinity();
      kl += p * std::log(p / q);
    }
    g0 = i;
    level = next;
  }
  return kl;
}

double expected_mse(const Histogram& h, Range r, const QuantTarget& t) {
  const QParams qp = qparams_from_range(r, t);
  const double s = qp.scale;
  // What the grid can represent; the zero point's rounding may put one end slightly
  // inside the requested range, and that is where values really clip.
  const double a = s * (t.qmin() - qp.zero_point);
  const double b = s * (t.qmax() - qp.zero_point);
  const double rounding = s * s / 12;

  double err = 0;
  for (int i = 0; i < h.bins(); ++i) {
    const double n = static_cast<double>(h.count(i));
    if (n == 0) continue;
    const double e0 = h.edge(i), e1 = h.edge(i + 1);
    const double density = n / (e1 - e0);
    const double in_lo = std::max(e0, a), in_hi = std::min(e1, b);
    if (in_hi > in_lo) err += density * (in_hi - in_lo) * rounding;
    if (e0 < a) {  // integral of (a - x)^2 over the part of the bin below a
      const double u = std::min(e1, a);
      err += density * (cube(a - e0) - cube(a - u)) / 3;
    }
    if (e1 > b) {  // integral of (x - b)^2 over the part above b
      const double u = std::max(e0, b);
      err += density * (cube(e1 - b) - cube(u - b)) / 3;
    }
  }
  return h.total() > 0 ? err / static_cast<double>(h.total()) : 0;
}

Range search_range(const Histogram& h, Range observed, const QuantTarget& t, Criterion c) {
  const double w = h.width();
  auto score = [&](Range r) {
    return c == Criterion::kl ? kl_divergence(h, r, t) : expected_mse(h, r, t);
  };
  // Candidates come widest first; each family narrows monotonically, so the first one
  // that is too narrow ends the family.
  auto acceptable = [&](Range r) {
    if (static_cast<double>(r.max) - r.min < kMinSearchBins * w) return false;
    return c != Criterion::kl || qparams_from_range(r, t).scale >= w;
  };

  Range best = observed;
  double best_score = score(observed);
  auto consider = [&](Range r) {
    const double s = score(r);
    if (s < best_score) {
      best = r;
      best_score = s;
    }
  };

  if (observed.min >= 0) {
    for (int k = h.bins() - 1; k >= 1; --k) {
      const Range r{observed.min, static_cast<float>(h.edge(k))};
      if (!acceptable(r)) break;
      consider(r);
    }
  } else if (observed.max <= 0) {
    for (int k = 1; k < h.bins(); ++k) {
      const Range r{static_cast<float>(h.edge(k)), observed.max};
      if (!acceptable(r)) break;
      consider(r);
    }
  } else {
    const double max_abs = std::max(-static_cast<double>(observed.min),
                                     static_cast<double>(observed.max));
    for (int k = static_cast<int>(std::ceil(max_abs / w)) - 1; k >= 1; --k) {
      const double threshold = k * w;
      const Range r{static_cast<float>(std::max(-threshold, static_cast<double>(observed.min))),
                    static_cast<float>(std::min(threshold, static_cast<double>(observed.max)))};
      if (!acceptable(r)) break;
      consider(r);
    }
  }
  return best;
}

}  // namespace octet::calib
