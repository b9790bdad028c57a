#pragma once
// Pad (constant, reflect, edge; negative pads crop) as one pass over the output in memory order,
// planned once. The caller gives the axes in memory order, outermost first, so a channels-last
// map is padded where it lies: its H and W are outer axes and its C runs, which a pad leaves
// whole, are copied as single units.
//
// Planning drops extent-1 axes without pads, folds the unpadded innermost axes into the unit
// that is moved (a channels-last pixel of C values, a whole row) and merges adjacent unpadded
// axes. The innermost remaining axis is written as rows: the input's run by memcpy, the pad
// units around it filled with the value (constant) or copied one by one from their mirrored or
// edge source (reflect, edge). Along every outer axis a pad index whose source index is also
// written unpadded (its "home") copies that already-written output block instead of walking the
// input again; indices whose home was cropped away are walked from the input. A block of the
// constant is one fill.
//
// Large outputs split over the thread pool by the indices of the outermost axes: blocks walked
// from the input or filled run first, then the copied blocks, deepest copying axis first, so a
// block is complete before any other block copies it. Every split writes the bytes one thread
// writes. kernel_name(): "pad_rows".
#include <pthreadpool.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/ref/copy.h"

namespace octet::kernels {

class PadRows {
 public:
  // in_dims and the pads of each axis, in memory order (outermost first); x and y dense in that
  // order. elem_size is 1, 2, 4 or 8 bytes (std::invalid_argument otherwise); pads obey what
  // pad__ref accepts (an output extent below zero, or reflect pads reaching past the input, are
  // the caller's errors).
  PadRows(int rank, const int64_t* in_dims, const int64_t* pads_begin, const int64_t* pads_end, PadMode mode,
          size_t elem_size);

  // value points at one element (constant mode; read at each run, so it may change between runs).
  void run(const void* x, void* y, const void* value, pthreadpool_t pool = nullptr) const;
  static const char* kernel_name() { return "pad_rows"; }

  // After planning, for tests: the axes left and the bytes one unit of the innermost axis holds.
  int planned_rank() const { return int(axes_.size()); }
  int64_t unit_bytes() const { return unit_; }
  // How many blocks a pooled run splits into (1: the calling thread alone).
  size_t task_count() const { return tasks_.size(); }

 private:
  enum class Act : uint8_t { fill, walk, copy };
  struct Step {
    Act act;
    int64_t src;   // walk: the input index
    int64_t home;  // copy: the output index holding the same block
  };
  struct Axis {
    int64_t in, out, begin;
    int64_t in_stride, out_stride;  // bytes
    std::vector<Step> steps;        // one per output index
  };
  struct Task {
    Act act;
    int64_t in_off, out_off, src_off;  // bytes; src_off: copy's source block in y
  };

  void walk(int level, const unsigned char* x, unsigned char* y, const void* value) const;
  void write_row(const unsigned char* x, unsigned char* y, const void* value) const;
  void fill(unsigned char* y, int64_t bytes, const void* value) const;
  void run_task(const Task& t, const unsigned char* x, unsigned char* y, const void* value) const;

  std::vector<Axis> axes_;
  int64_t unit_ = 0;  // bytes per unit of the innermost axis (a multiple of elem_)
  size_t elem_ = 1;
  bool empty_ = false;
  int split_ = 0;  // axes [0, split_) index the tasks
  int64_t task_bytes_ = 0;
  std::vector<Task> tasks_;
  std::vector<size_t> phase_end_;  // tasks_ grouped by phase: [phase_end_[p-1], phase_end_[p])
};

}  // namespace octet::kernels
