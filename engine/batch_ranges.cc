#include "engine/batch_ranges.h"

#include <algorithm>
#include <cmath>
#include <thread>

namespace octet {

namespace {

kernels::F32Range merged(kernels::F32Range a, kernels::F32Range b) {
  if (std::isnan(a.min) || std::isnan(b.min)) return {NAN, NAN};
  return {std::min(a.min, b.min), std::max(a.max, b.max)};
}

}  // namespace

kernels::F32Range BatchRangeExchange::combine(kernels::F32Range mine) {
  unsigned round;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    round = round_.load(std::memory_order_relaxed);
    gathered_ = arrived_ == 0 ? mine : merged(gathered_, mine);
    if (++arrived_ == parties_) {
      result_ = gathered_;
      arrived_ = 0;
      round_.store(round + 1, std::memory_order_release);
      return result_;
    }
  }
  // The threads of a lockstep run each hold one core and the steps between two ranges take tens
  // of microseconds or more: spin first (a sleeping thread takes as long again to wake), then
  // yield, in case the threads outnumber the free cores.
  for (unsigned spins = 0; round_.load(std::memory_order_acquire) == round; ++spins) {
    if (abandoned_.load(std::memory_order_relaxed)) throw Abandoned();
    if (spins > 20000) std::this_thread::yield();
  }
  // result_ cannot change before this thread's next combine(): a round ends only when every
  // party has arrived.
  return result_;
}

void BatchRangeExchange::abandon() { abandoned_.store(true, std::memory_order_relaxed); }

BatchRangeExchange*& batch_ranges::current() {
  thread_local BatchRangeExchange* exchange = nullptr;
  return exchange;
}

}  // namespace octet
