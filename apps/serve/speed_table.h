#pragma once
// The INT8 / FP32 speed table the page shows: each ISA level this CPU runs (under --isa), both
// models timed at batch 1 on 1 thread, once at start-up (a request's own time depends on how
// many others run beside it; this table does not).
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/session.h"
#include "apps/explain/timing.h"

namespace octet::serve {

struct SpeedRow {
  std::string isa;
  double fp32_ms = 0, int8_ms = 0;  // median milliseconds per image
  double speedup() const { return int8_ms > 0 ? fp32_ms / int8_ms : 0; }  // > 1: INT8 is faster
};

// `options` as the server's sessions have them (--direct-conv, ...); the level and the thread
// count are set here. `budget` bounds the runs of each level and precision; `progress` is
// called before each level with its name.
std::vector<SpeedRow> measure_speed(const ir::Graph& fp32, const ir::Graph& int8, const ir::TensorData& input,
                                    const explain::TimingBudget& budget, SessionOptions options,
                                    const std::function<void(const std::string& isa)>& progress = {});

nlohmann::json to_json(const std::vector<SpeedRow>& rows);

}  // namespace octet::serve
