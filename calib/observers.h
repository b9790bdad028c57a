#pragma once
// Calibration observers: they watch one FP32 tensor over the calibration set and say which
// range [min, max] to quantize it with. MinMax keeps the observed range; percentile, entropy
// (TensorRT's KL divergence) and MSE clip outliers using a histogram. What each method does
// and why is written in calib/README.md, "## Observers".
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "calib/qparams.h"

namespace octet::calib {

enum class Method { minmax, percentile, entropy, mse };

// "minmax" | "percentile" | "entropy" | "mse"; anything else throws ir::Error listing them.
Method parse_method(const std::string& name);
const char* method_name(Method m);

struct ObserverOptions {
  double percentile = 99.999;  // Method::percentile; in (50, 100]
  int bins = 2048;             // histogram bins; at least 8
};

// Calibration is two passes over the calibration set, so histograms never need rebinning:
//   pass 1: observe_range() on every batch: exact min and max;
//   pass 2, only when needs_histogram(): observe_histogram() on every batch, binned over
//           the pass-1 [min, max];
// then range(target) gives the clipping range for that target's quantization grid.
// Non-finite values throw ir::Error saying so; the caller adds the tensor's name.
class Observer {
 public:
  virtual ~Observer() = default;
  virtual bool needs_histogram() const = 0;
  // Pass 1: min, max and the number of values. Throws after pass 2 has begun, since the
  // histogram's range would no longer match.
  void observe_range(std::span<const float> x);
  // Pass 2; a no-op for observers that need no histogram.
  virtual void observe_histogram(std::span<const float> x) {}
  // The range to quantize with, inside observed() and with its sign structure (never a
  // negative min for a non-negative tensor; lo <= 0 <= hi for a signed one). A constant
  // tensor gets [c, c]. Throws ir::Error "no values observed" before pass 1.
  virtual Range range(const QuantTarget& t) const = 0;
  // Pass-1 min and max.
  Range observed() const;
  int64_t count() const { return count_; }

 protected:
  void require_observed() const;
  bool constant() const { return observed_.min == observed_.max; }
  Range observed_;
  int64_t count_ = 0;
  bool histogram_started_ = false;
};

std::unique_ptr<Observer> make_observer(Method m, const ObserverOptions& o = {});

}  // namespace octet::calib
