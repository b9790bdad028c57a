#include "kernels/elementwise/output_range.h"

#include <chrono>
#include <cmath>
#include <limits>

namespace octet::kernels {

OutputRange::OutputRange(Isa isa) : k_(choose_q8_quantize(isa)) { reset(); }

void OutputRange::reset() {
  min_.store(std::numeric_limits<float>::infinity(), std::memory_order_relaxed);
  max_.store(-std::numeric_limits<float>::infinity(), std::memory_order_relaxed);
  nan_.store(false, std::memory_order_relaxed);
  nanoseconds_.store(0, std::memory_order_relaxed);
}

void OutputRange::add(size_t n, const float* y) {
  if (n == 0) return;
  if (!timing_) {
    fold(n, y);
    return;
  }
  const auto t0 = std::chrono::steady_clock::now();
  fold(n, y);
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0);
  nanoseconds_.fetch_add(ns.count(), std::memory_order_relaxed);
}

void OutputRange::fold(size_t n, const float* y) {
  const F32Range r = f32_range(k_, n, y);
  if (std::isnan(r.min)) {
    nan_.store(true, std::memory_order_relaxed);
    return;
  }
  // Most chunks widen nothing: one load each, and a compare-exchange only when they do.
  float cur = min_.load(std::memory_order_relaxed);
  while (r.min < cur && !min_.compare_exchange_weak(cur, r.min, std::memory_order_relaxed)) {
  }
  cur = max_.load(std::memory_order_relaxed);
  while (r.max > cur && !max_.compare_exchange_weak(cur, r.max, std::memory_order_relaxed)) {
  }
}

F32Range OutputRange::get() const {
  if (nan_.load(std::memory_order_relaxed))
    return {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::quiet_NaN()};
  return {min_.load(std::memory_order_relaxed), max_.load(std::memory_order_relaxed)};
}

KernelId OutputRange::kernel_id() const {
  return k_ != nullptr ? KernelId{std::string("f32_range__") + isa_name(k_->isa), k_->isa == Isa::scalar}
                       : reference_kernel("f32_range__ref");
}

}  // namespace octet::kernels
