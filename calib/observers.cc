#include "calib/observers.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "calib/histogram.h"
#include "calib/range_search.h"
#include "core/ir.h"

namespace octet::calib {

Method parse_method(const std::string& name) {
  for (Method m : {Method::minmax, Method::percentile, Method::entropy, Method::mse})
    if (name == method_name(m)) return m;
  throw ir::Error("unknown calibration method '" + name +
                  "': expected minmax, percentile, entropy or mse");
}

const char* method_name(Method m) {
  switch (m) {
    case Method::minmax: return "minmax";
    case Method::percentile: return "percentile";
    case Method::entropy: return "entropy";
    case Method::mse: return "mse";
  }
  return "?";
}

void Observer::require_observed() const {
  if (count_ == 0)
    throw ir::Error("no values observed: the calibration pass saw no values of this tensor");
}

Range Observer::observed() const {
  require_observed();
  return observed_;
}

void Observer::observe_range(std::span<const float> x) {
  if (histogram_started_)
    throw ir::Error("observe_range after observe_histogram: the range pass must see every "
                    "batch before the histogram pass starts");
  if (x.empty()) return;
  float lo = count_ > 0 ? observed_.min : x[0];
  float hi = count_ > 0 ? observed_.max : x[0];
  bool finite = true;
  for (float v : x) {  // branch-free so it vectorizes: tensors have millions of values
    finite &= std::isfinite(v);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (!finite) {
    const auto bad = std::find_if(x.begin(), x.end(), [](float v) { return !std::isfinite(v); });
    throw ir::Error("the tensor had a non-finite value (" + std::to_string(*bad) +
                    ") at element " + std::to_string(bad - x.begin()) +
                    " of this batch; calibration needs finite activations");
  }
  observed_ = Range{lo, hi};
  count_ += static_cast<int64_t>(x.size());
}

namespace {

class MinMaxObserver final : public Observer {
 public:
  bool needs_histogram() const override { return false; }
  Range range(const QuantTarget&) const override { return observed(); }
};

// Percentile, entropy and MSE: pass 2 fills a histogram over the pass-1 range, and range()
// picks a sub-range of it.
class HistogramObserver : public Observer {
 public:
  HistogramObserver(Method m, const ObserverOptions& o) : method_(m), options_(o) {}
  bool needs_histogram() const override { return true; }

  void observe_histogram(std::span<const float> x) override {
    if (count_ == 0)
      throw ir::Error("observe_histogram before observe_range: the range pass must see every "
                      "batch first, the histogram spans its [min, max]");
    histogram_started_ = true;
    if (constant()) return;  // nothing to bin: range() returns [c, c]
    if (!histogram_) histogram_.emplace(observed_.min, observed_.max, options_.bins);
    histogram_->add(x);
  }

  Range range(const QuantTarget& t) const final {
    require_observed();
    if (constant()) return observed_;
    if (!histogram_ || histogram_->total() == 0)
      throw ir::Error(std::string(method_name(method_)) +
                      " calibration needs the histogram pass: call observe_histogram on every "
                      "batch after observe_range");
    return keep_inside_observed(choose(*histogram_, t));
  }

 protected:
  virtual Range choose(const Histogram& h, const QuantTarget& t) const = 0;
  const ObserverOptions& options() const { return options_; }

 private:
  // Guards the contract whatever a method computes: inside the observed range, and a signed
  // tensor keeps 0 inside (so a clipped range never drops a whole sign).
  Range keep_inside_observed(Range r) const {
    r.min = std::clamp(r.min, observed_.min, observed_.max);
    r.max = std::clamp(r.max, observed_.min, observed_.max);
    if (observed_.min < 0 && observed_.max > 0) {
      r.min = std::min(r.min, 0.0f);
      r.max = std::max(r.max, 0.0f);
    }
    if (r.min > r.max) std::swap(r.min, r.max);
    return r;
  }

  Method method_;
  ObserverOptions options_;
  std::optional<Histogram> histogram_;
};

// A non-negative tensor (the usual post-ReLU uint8 activation) is clipped only at the top,
// at the p-th percentile; a non-positive one only at the bottom; a signed one at both ends,
// at the (100 - p)-th and p-th percentiles, so a skewed tensor keeps its short side whole
// instead of being cut at the long side's |x| percentile.
class PercentileObserver final : public HistogramObserver {
 public:
  using HistogramObserver::HistogramObserver;

 protected:
  Range choose(const Histogram& h, const QuantTarget&) const override {
    const double n = static_cast<double>(h.total());
    const double p = options().percentile / 100.0;
    const Range all = observed_;
    const float upper = static_cast<float>(h.value_at_rank(p * n));
    const float lower = static_cast<float>(h.value_at_rank((1.0 - p) * n));
    if (all.min >= 0) return Range{all.min, upper};
    if (all.max <= 0) return Range{lower, all.max};
    return Range{lower, upper};
  }
};

class SearchObserver final : public HistogramObserver {
 public:
  SearchObserver(Method m, const ObserverOptions& o, Criterion c)
      : HistogramObserver(m, o), criterion_(c) {}

 protected:
  Range choose(const Histogram& h, const QuantTarget& t) const override {
    return search_range(h, observed_, t, criterion_);
  }

 private:
  Criterion criterion_;
};

}  // namespace

std::unique_ptr<Observer> make_observer(Method m, const ObserverOptions& o) {
  if (m != Method::minmax && (o.bins < 8 || o.bins > (1 << 24)))
    throw ir::Error("calibration histogram bins must be in [8, 16777216], got " +
                    std::to_string(o.bins));
  switch (m) {
    case Method::minmax:
      return std::make_unique<MinMaxObserver>();
    case Method::percentile:
      if (!(o.percentile > 50.0 && o.percentile <= 100.0))
        throw ir::Error("calibration percentile must be in (50, 100], got " +
                        std::to_string(o.percentile));
      return std::make_unique<PercentileObserver>(m, o);
    case Method::entropy:
      return std::make_unique<SearchObserver>(m, o, Criterion::kl);
    case Method::mse:
      return std::make_unique<SearchObserver>(m, o, Criterion::mse);
  }
  throw ir::Error("unknown calibration method");
}

}  // namespace octet::calib
