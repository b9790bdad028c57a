#include "apps/serve/speed_table.h"

#include "kernels/isa.h"

namespace octet::serve {

std::vector<SpeedRow> measure_speed(const ir::Graph& fp32, const ir::Graph& int8, const ir::TensorData& input,
                                    const explain::TimingBudget& budget, SessionOptions options,
                                    const std::function<void(const std::string&)>& progress) {
  std::vector<SpeedRow> rows;
  for (kernels::Isa isa : kernels::runnable_isas()) {
    SpeedRow row;
    row.isa = kernels::isa_name(isa);
    if (progress) progress(row.isa);
    options.isa = isa;
    options.threads = 1;
    Session f(fp32, options), q(int8, options);
    row.fp32_ms = explain::ms_per_image(f, input, budget);
    row.int8_ms = explain::ms_per_image(q, input, budget);
    rows.push_back(row);
  }
  return rows;
}

nlohmann::json to_json(const std::vector<SpeedRow>& rows) {
  nlohmann::json j = nlohmann::json::array();
  for (const SpeedRow& r : rows)
    j.push_back({{"isa", r.isa}, {"fp32_ms", r.fp32_ms}, {"int8_ms", r.int8_ms}, {"speedup", r.speedup()}});
  return j;
}

}  // namespace octet::serve
