#pragma once
// Timing of one Session for the explain report: milliseconds per image at a batch size, and the
// per-step profile of one image (medians over repeated runs).
#include <vector>

#include "engine/session.h"
#include "apps/explain/step_category.h"

namespace octet::explain {

struct TimingBudget {
  int min_runs = 5;           // at least this many timed runs
  int max_runs = 200;         // at most
  double min_seconds = 0.25;  // keep running until this much time was measured
  double max_seconds = 1.0;   // but stop after this much, even short of min_runs (a slow level)
};

// Median milliseconds per image of session.run on `input` (its dim 0 is the batch), after the
// session's warm-up (Session::warm_up: on threads, past the runs that settle each step's threads).
double ms_per_image(Session& session, const ir::TensorData& input, const TimingBudget& budget);

// Every step of the plan for `input` with its median time and its category (the range pass of
// a dynamic quantization, wherever it runs, split out as dynamic_range).
std::vector<StepProfile> profile_steps(Session& session, const ir::TensorData& input, const TimingBudget& budget);

}  // namespace octet::explain
