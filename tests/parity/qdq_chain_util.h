// What the parity tests of float chains between a DequantizeLinear and a QuantizeLinear share
// (test_parity_float_chain_table.cc, test_parity_qdq_batchnorm.cc): per-tensor Q/DQ pairs of
// either 8-bit type, and the count of a plan's steps of one op at every level this CPU runs.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "engine/session.h"
#include "kernels/isa.h"
#include "tests/parity/parity_harness.h"
#include "tests/util/onnx_builder.h"

namespace octet::parity::qdq_chain {

struct Quant {
  std::string scale, zp;
};

inline Quant quant(testing::OnnxBuilder& b, bool s8, float scale, int zp) {
  return {b.initializer("", {}, {scale}),
          b.initializer("", s8 ? testing::TensorValue::s8({}, {zp}) : testing::TensorValue::u8({}, {zp}))};
}

inline std::string q(testing::OnnxBuilder& b, const std::string& x, const Quant& p) {
  return b.node("QuantizeLinear", {x, p.scale, p.zp});
}
inline std::string dq(testing::OnnxBuilder& b, const std::string& x, const Quant& p) {
  return b.node("DequantizeLinear", {x, p.scale, p.zp});
}

// ORT's bytes at every level on one random-normal input "x" of `dims` times `gain` (wide enough
// to reach both ends of the 8-bit range).
inline void expect_ort_bytes_on_wide_input(const testing::OnnxBuilder& b, const std::string& name, const ir::Dims& dims,
                                           uint32_t seed, float gain) {
  auto inputs = random_inputs({dims}, dims[0], seed);
  for (float& v : std::span(const_cast<float*>(inputs[0].as<float>()), size_t(inputs[0].count()))) v *= gain;
  expect_ort_bytes_at_every_level(b, name, {{"x", inputs[0]}});
}

// Saves b as <scratch>/<name>.onnx, loads it at every runnable level and hands `count` (the
// plan's steps of an op at input dims) and the level to `check`.
inline void at_every_level(const testing::OnnxBuilder& b, const std::string& name, const ir::Dims& dims,
                           const std::function<void(const std::function<int(const std::string&)>&, kernels::Isa)>& check) {
  ScratchDir dir;
  const std::string path = (dir.path() / (name + ".onnx")).string();
  b.save(path);
  for (kernels::Isa isa : kernels::runnable_isas()) {
    SessionOptions o;
    o.isa = isa;
    Session session = Session::load(path, o);
    const auto count = [&](const std::string& op) {
      int n = 0;
      for (const PlanStep& s : session.plan_for(std::vector<ir::Dims>{dims}).steps()) n += s.op == op;
      return n;
    };
    check(count, isa);
  }
}

}  // namespace octet::parity::qdq_chain
