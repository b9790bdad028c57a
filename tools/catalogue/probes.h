// The probe table behind docs/ops.md: for every op octet registers (engine/op_registry.h), one or
// more small graphs whose plan has a step of that op. The catalogue plans each probe at each ISA
// level and reads the kernel its step chose; tests/catalogue checks every registered op has a row.
// A new op is one row here (plus its sweep cases, tests/sweep/sweep_cases.cc).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kernels/isa.h"
#include "tests/util/onnx_builder.h"

namespace octet::catalogue {

struct Probe {
  std::string op;       // the registered op type whose plan step is read
  std::string variant;  // what the graph exercises ("3x3 stride 2", "per-channel broadcast", ...)
  std::function<void(testing::OnnxBuilder&)> build;  // adds inputs, nodes and outputs
  int64_t opset = 17;
  // Set when the op never becomes a step (folded at plan time, removed by a pass): why.
  std::string no_step;
};

const std::vector<Probe>& probes();

struct ProbeResult {
  bool planned = false;  // the graph loaded and planned
  bool has_step = false;  // the plan has a step of probe.op
  std::string kernel;    // that step's kernel ("" when the op names none)
  std::string fallback;  // why it runs the reference kernel, when it says
  std::string error;     // why it did not load or plan
  bool kernel_scalar = false;  // the step runs a scalar reference kernel (PlanStep::scalar)
  bool scalar() const { return kernel_scalar; }
};

// Loads the probe's graph through octet's loader and passes, plans it at batch 1 under `isa`
// (which this CPU must support).
ProbeResult run_probe(const Probe& probe, kernels::Isa isa);

}  // namespace octet::catalogue
