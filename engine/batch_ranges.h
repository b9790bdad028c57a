#pragma once
// The batch shared out over threads in lockstep (Session::run_images_in_parallel): each thread
// runs its own images through a plan of its own, and a DynamicQuantizeLinear, whose scale comes
// from the range of the whole tensor (every image of the batch), takes its range from all the
// threads' shares at once: each thread hands in the range of its images and waits until every
// thread has, then all quantize with the range of the batch, as one plan over it would.
#include <atomic>
#include <mutex>
#include <stdexcept>

#include "kernels/ref/qlinear.h"

namespace octet {

class BatchRangeExchange {
 public:
  explicit BatchRangeExchange(int parties) : parties_(parties) {}
  BatchRangeExchange(const BatchRangeExchange&) = delete;
  BatchRangeExchange& operator=(const BatchRangeExchange&) = delete;

  // Thrown by combine() in the parties still waiting when another gave up.
  struct Abandoned : std::runtime_error {
    Abandoned() : std::runtime_error("another thread of the batch failed") {}
  };

  // Every party calls this once per range of a run, in the same order (the same plan's steps),
  // and gets the range over all parties' (NaN when any was). Throws Abandoned when a party gave up.
  kernels::F32Range combine(kernels::F32Range mine);
  // A party failed before its next combine(): the others' waits stop and throw.
  void abandon();

 private:
  const int parties_;
  std::mutex mutex_;  // arrived_, gathered_
  int arrived_ = 0;
  kernels::F32Range gathered_;
  // The last finished round's range: stable until every party has called combine() again.
  kernels::F32Range result_;
  std::atomic<unsigned> round_{0};
  std::atomic<bool> abandoned_{false};
};

namespace batch_ranges {
// The exchange of the lockstep run on this thread; nullptr outside one (a plan over the whole
// batch then has the whole range already).
BatchRangeExchange*& current();
// `mine` combined over the lockstep run this thread takes part in, or `mine` outside one.
inline kernels::F32Range over_batch(kernels::F32Range mine) {
  BatchRangeExchange* e = current();
  return e ? e->combine(mine) : mine;
}
}  // namespace batch_ranges

}  // namespace octet
