#pragma once
// DynamicQuantizeLinear's range pass moved into the producer's epilogue: a conv, GEMM or
// elementwise driver hands each chunk of float output it has just written (still in L1 / L2)
// to an OutputRange, so the range costs no second read of the whole tensor from memory. On a
// batch of 64 images that tensor is megabytes: the separate pass reads it back from L3 or DRAM.
// The result is exactly f32_range__ref of the whole output (min / max are order-independent;
// a NaN anywhere makes both NaN).
#include <pthreadpool.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <string>

#include "kernels/kernel_id.h"
#include "kernels/quantize/quantize.h"

namespace octet::kernels {

class OutputRange {
 public:
  explicit OutputRange(Isa isa);
  // Empty range; call before the producer runs.
  void reset();
  // Folds in the range of y[0..n). Safe from several threads at once.
  void add(size_t n, const float* y);
  F32Range get() const;
  // The kernel the chunks go through ("f32_range__ref" when none runs here).
  KernelId kernel_id() const;
  std::string kernel_name() const { return kernel_id().name; }
  // Profiling: with timing on, add() also sums the time it spends (over every thread), so a
  // profile can show the range apart from the producer's own work. Off by default (two clock
  // reads per chunk). reset() clears the sum.
  void set_timing(bool on) { timing_ = on; }
  double microseconds() const { return static_cast<double>(nanoseconds_.load(std::memory_order_relaxed)) / 1e3; }

 private:
  void fold(size_t n, const float* y);

  const Q8QuantizeKernel* k_;
  std::atomic<float> min_, max_;
  std::atomic<bool> nan_;
  bool timing_ = false;
  std::atomic<int64_t> nanoseconds_{0};
};

// Output chunks at least this many floats long (16 KB) keep the per-chunk reduction and merge
// small against the chunk while it still fits in L1.
inline constexpr size_t kOutputRangeChunk = 4096;

// Row groups per task when a driver hands whole row groups to pthreadpool_parallelize_1d_tile_1d:
// all of them on one thread, else about four tasks per thread (for balance).
inline size_t row_groups_per_task(pthreadpool_t pool, size_t groups) {
  const size_t threads = pthreadpool_get_threads_count(pool);
  return threads <= 1 ? groups : std::max<size_t>(1, groups / (4 * threads));
}

// Runs row groups first .. first + count - 1 of a row-major float output (group g: rows g * mr
// up to rows, each row_floats long) by run_group(g), and, with a range, hands it every
// kOutputRangeChunk floats of finished rows.
template <typename RunGroup>
void run_row_groups(size_t first, size_t count, size_t mr, size_t rows, size_t row_floats, const float* y,
                    OutputRange* range, RunGroup&& run_group) {
  size_t pending = first * mr;  // the first row not yet in the range
  for (size_t g = first; g < first + count; ++g) {
    run_group(g);
    if (range == nullptr) continue;
    const size_t done = std::min((g + 1) * mr, rows);
    if ((done - pending) * row_floats >= kOutputRangeChunk || g + 1 == first + count) {
      range->add((done - pending) * row_floats, y + pending * row_floats);
      pending = done;
    }
  }
}

}  // namespace octet::kernels
