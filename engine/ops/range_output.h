#pragma once
// A step that also hands a DynamicQuantizeLinear the range of its float output, as output 1:
// [min, max] (NaN for both when any value is NaN), added by passes::compute_ranges_in_producers
// with the internal attribute below. The step's kernel driver gathers the range from each
// chunk of output right after writing it (kernels/elementwise/output_range.h), so the
// DynamicQuantizeLinear only quantizes: one read of the tensor from memory instead of two.
#include <memory>
#include <string>
#include <vector>

#include "engine/op_registry.h"
#include "engine/ops/batch_use.h"
#include "engine/step_parts.h"
#include "kernels/elementwise/output_range.h"

namespace octet::ops {

inline constexpr char kRangeOutputAttr[] = "range_output";

inline bool has_range_output(const OpContext& c) { return c.node.attrs.has(kRangeOutputAttr); }

// The step's BatchUse given its images' (`use`): a range output spans the images of the run, so
// only a lockstep run (engine/batch_ranges.h), whose DynamicQuantizeLinear combines it with the
// other threads' ranges, may split the batch.
inline BatchUse with_range_output(const OpContext& c, BatchUse use) {
  return with_batch_range(use, has_range_output(c));
}

// Said after the kernel's name in reports when the step gathers its output's range.
inline std::string range_note(const OpContext& c) { return has_range_output(c) ? " + output range" : ""; }

// The range output's info, appended to the step's inferred outputs when it has one.
inline void add_range_output_info(const OpContext& c, std::vector<TensorInfo>& outs) {
  if (has_range_output(c)) outs.push_back({ir::DType::f32, {2}, Layout::row_major});
}

// The step's kernel run(range) with the range reset before and stored after; run(nullptr)
// when the step has no range output. In a profiled run the time spent on the range is
// reported as the step's part "range" (engine/step_parts.h).
template <typename Run>
Kernel with_range_output(const OpContext& c, std::span<void* const> out, Run run) {
  if (!has_range_output(c) || out.size() < 2 || out[1] == nullptr) return [run] { run(nullptr); };
  auto range = std::make_shared<kernels::OutputRange>(c.isa);
  auto* stored = static_cast<float*>(out[1]);
  return [run, range, stored] {
    std::vector<StepPart>* profile = step_parts::sink();
    range->reset();
    range->set_timing(profile != nullptr);
    run(range.get());
    const kernels::F32Range r = range->get();
    stored[0] = r.min;
    stored[1] = r.max;
    if (profile) profile->push_back({"range", range->microseconds()});
  };
}

}  // namespace octet::ops
