// Every activation of kernels/elementwise/activation_list.h against ONNX Runtime, from its row alone: the op
// at its attributes' defaults (at opset max(13, its first)), on random values at two scales and a
// block of adversarial ones (NaN, +-inf, -0, huge, tiny, subnormal, the formulas' turning
// points), at every ISA level this CPU has. Each value within 1e-5 of ORT's relative, plus the
// row's absolute bound (and 1e-37 for subnormal results); NaN where ORT gives NaN, the same
// infinity. At every SIMD level the op's step runs the row's vector kernel.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "engine/plan.h"
#include "engine/session.h"
#include "kernels/isa.h"
#include "kernels/ref/activation.h"
#include "tests/parity/parity_fixture.h"
#include "io/tensor_io.h"

namespace octet::parity {
namespace activation_list_parity {

std::vector<float> adversarial_values() {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  return {0.0f,   -0.0f,  inf,     -inf,    nan,     1e-30f, -1e-30f, 1e-42f, -1e-42f, 1e30f,  -1e30f,
          3.4e38f, -3.4e38f, 88.0f, -88.0f,  100.0f,  -100.0f, -104.5f, 1e-7f,  -1e-7f,  20.0f,  -20.0f,
          20.5f,  -20.5f, 9.0f,    -9.0f,   3.0f,    -3.0f,  6.0f,    -6.0f,  40.0f,   -40.0f, 0.375f};
}

TEST(ActivationListParity, EveryRowAgreesWithOrtAtEveryLevel) {
  OCTET_SKIP_WITHOUT_ORT();
  const ir::Dims dims = {2, 13, 7, 9};
  for (const kernels::ActivationRow& row : kernels::kActivationRows) {
    testing::OnnxBuilder b(std::max(13, row.since));
    const std::string y = b.node(row.op, {b.input("x", {-1, 13, 7, 9})});
    b.output(y);
    ScratchDir dir;
    const std::string path = (dir.path() / (std::string(row.op) + ".onnx")).string();
    b.save(path);

    auto inputs = random_inputs({dims}, dims[0], 33);
    const std::span<float> x(const_cast<float*>(inputs[0].as<float>()), size_t(inputs[0].count()));
    const auto adv = adversarial_values();
    for (size_t i = 0; i < x.size(); ++i) x[i] *= i < x.size() / 2 ? 3.0f : 25.0f;
    for (size_t i = 0; i < adv.size() * 8; ++i) x[i * 3 + 1] = adv[i % adv.size()];

    const auto theirs = testing::run_ort(path, {{"x", to_npy(inputs[0])}});
    const npy::Array& want = theirs.at(y);
    double worst = 0.0;
    for (kernels::Isa isa : kernels::runnable_isas()) {
      SessionOptions o;
      o.isa = isa;
      Session session = Session::load(path, o);
      const auto mine = session.run(inputs);
      ASSERT_EQ(mine.at(0).count(), int64_t(x.size()));
      const float* got = mine[0].as<float>();
      const float* ort = want.as<float>();
      for (size_t i = 0; i < x.size(); ++i) {
        const std::string at = std::string(row.op) + " at " + kernels::isa_name(isa) + ", x = " + std::to_string(x[i]);
        if (std::isnan(ort[i]) || std::isinf(ort[i])) {
          if (std::isnan(ort[i])) EXPECT_TRUE(std::isnan(got[i])) << at << ": octet " << got[i] << ", ORT NaN";
          else EXPECT_EQ(got[i], ort[i]) << at;
          continue;
        }
        const double diff = std::fabs(double(got[i]) - ort[i]);
        ASSERT_LE(diff, 1e-5 * std::fabs(ort[i]) + row.abs + 1e-37) << at << ": octet " << got[i] << ", ORT " << ort[i];
        if (std::fabs(ort[i]) > 1e-30) worst = std::max(worst, diff / std::fabs(ort[i]));
      }
      if (isa == kernels::Isa::scalar) continue;
      for (const PlanStep& s : session.plan_for(std::vector<ir::Dims>{dims}).steps()) {
        if (s.op == row.op) {
          EXPECT_EQ(s.kernel.rfind(std::string(row.kernel) + "__", 0), 0u) << s.kernel;
        }
      }
    }
    std::printf("%s: max relative difference to ORT %.2e\n", row.op, worst);
  }
}

}  // namespace activation_list_parity
}  // namespace octet::parity
