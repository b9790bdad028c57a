#include "apps/explain/timing.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "apps/cli/stats.h"

namespace octet::explain {
namespace {

double median(const std::vector<double>& v) { return v.empty() ? 0.0 : summarize(v).p50; }

// Runs `once` (returning the seconds it measured) under the budget.
template <class Once>
void repeat(const TimingBudget& budget, Once once) {
  double measured = 0;
  for (int r = 0; r < budget.max_runs && (r < budget.min_runs || measured < budget.min_seconds); ++r) {
    if (r > 0 && measured >= budget.max_seconds) break;
    measured += once();
  }
}

}  // namespace

double ms_per_image(Session& session, const ir::TensorData& input, const TimingBudget& budget) {
  const std::vector<ir::TensorData> inputs = {input};
  session.warm_up(inputs);
  std::vector<double> ms;
  repeat(budget, [&] {
    const auto t0 = std::chrono::steady_clock::now();
    session.run(inputs);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ms.push_back(s * 1e3);
    return s;
  });
  return median(ms) / double(std::max<int64_t>(1, input.dims.at(0)));
}

std::vector<StepProfile> profile_steps(Session& session, const ir::TensorData& input, const TimingBudget& budget) {
  const std::vector<ir::TensorData> inputs = {input};
  session.warm_up(inputs);
  std::vector<std::vector<double>> us, range_us;
  repeat(budget, [&] {
    std::vector<StepTiming> timings;
    session.run(inputs, &timings);
    us.resize(timings.size());
    range_us.resize(timings.size());
    double total = 0;
    for (size_t i = 0; i < timings.size(); ++i) {
      us[i].push_back(timings[i].microseconds);
      double range = 0;  // a part may be reported once per chunk: one sum per run
      for (const StepPart& p : timings[i].parts)
        if (std::string(p.name) == "range") range += p.microseconds;
      range_us[i].push_back(range);
      total += timings[i].microseconds;
    }
    return total * 1e-6;
  });
  const Plan& plan = session.plan_for(inputs);
  std::vector<StepProfile> steps;
  for (size_t i = 0; i < plan.steps().size() && i < us.size(); ++i) {
    StepProfile p = describe_step(plan.steps()[i], session.graph());
    p.us = median(us[i]);
    p.range_us = std::min(p.us, median(range_us[i]));
    steps.push_back(std::move(p));
  }
  return steps;
}

}  // namespace octet::explain
