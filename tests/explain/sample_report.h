#pragma once
// A realistic octet-explain/1 report (docs/explain.md), built in code for the renderer's tests:
// 2 ISA levels, 3 precisions, 2 batches, 12 steps per profile, 10 activation tensors (one culprit,
// one exact with no sqnr_db), an ORT comparison and 3 recommendations.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace octet::explain::testing {

struct SampleOptions {
  std::string cpu = "AMD EPYC 7B13";
  std::string arch = "x86_64";
  std::vector<std::string> levels{"scalar", "avx2"};
};

nlohmann::json sample_report(const SampleOptions& options = {});

// The number of <svg> charts the page of `report` must show: the speed-up chart when there are
// speed-ups, one time chart per (batch, threads) of the profiles with categories, and the SQNR
// chart when accuracy has tensors.
size_t expected_chart_count(const nlohmann::json& report);

// An octet-atlas/1 document (docs/atlas.md) of two models, "sample" and "sample_b", each the
// sample report summed up by explain::atlas_model; its columns are the levels × batches × 1 thread.
nlohmann::json sample_atlas(const SampleOptions& options = {});

}  // namespace octet::explain::testing
