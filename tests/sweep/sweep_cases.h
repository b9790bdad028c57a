// The sweep: single-op and small-pattern graphs over each op's attribute space, run by octet and
// by ONNX Runtime (tests/sweep/sweep_main.cc). A case id is <mode>/<Op>/<attributes>, mode fp32
// (float graph, max|octet - ORT| <= 1e-5 max|ORT|), qdq (static INT8 QDQ units, bit-exact) or
// dynamic (dynamic INT8 chains, 1e-5). Adding an op's cases is a generator below registered in
// all_cases(); ids must be unique and stable (tests/sweep/expected.txt is keyed by them).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tests/util/onnx_builder.h"

namespace octet::sweep {

enum class Mode { fp32, qdq, dynamic };

struct Case {
  std::string id;
  Mode mode = Mode::fp32;
  std::function<void(testing::OnnxBuilder&)> build;  // inputs, nodes, outputs
  int64_t opset = 17;
  // The plan may keep scalar (__ref) steps at avx2 and above without it being a gap (e.g. ops
  // with no SIMD kernel by design). False for most cases: a __ref step is recorded as "scalar".
  bool scalar_ok = false;
};

// Every case, in a fixed order.
const std::vector<Case>& all_cases();

// The op part of an id ("fp32/Conv/k3x3_s1" -> "Conv") and its stratum ("fp32/Conv").
std::string stratum_of(const std::string& id);

// The CI subset: per stratum, at most `per_stratum` cases spread evenly over its list
// (deterministic: the first, the last and evenly spaced ones between).
std::vector<const Case*> ci_subset(size_t per_stratum);

}  // namespace octet::sweep
