#include "tests/parity/parity_fixture.h"

#include <exception>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "engine/session.h"
#include "tests/util/ort_oracle.h"
#include "io/tensor_io.h"

namespace octet::parity {
namespace {

// After a run of several models: the worst line per model, so a whole run can be quoted at once.
class SummaryPrinter : public ::testing::Environment {
 public:
  void TearDown() override {
    const auto& lines = reported();
    if (lines.size() < 2) return;
    std::map<std::string, const Line*> worst;
    for (const auto& l : lines) {
      const Line*& w = worst[l.model];
      if (!w || l.figures.ratio() > w->figures.ratio()) w = &l;
    }
    std::cout << "[ PARITY   ] summary, worst output per model (" << lines.size() << " checks):\n";
    for (const auto& [model, l] : worst)
      std::cout << "[ PARITY   ]   " << model << " (batch " << l->batch << ", " << l->output << "): "
                << describe(l->figures) << "\n";
    std::cout << std::flush;
  }
};

[[maybe_unused]] ::testing::Environment* const summary_printer =
    ::testing::AddGlobalTestEnvironment(new SummaryPrinter);

}  // namespace

void ParityTest::check_model(const testing::OnnxBuilder& model, const std::string& name,
                             const std::vector<int64_t>& batches, uint32_t seed) {
  ScratchDir dir;
  const std::string path = (dir.path() / (name + ".onnx")).string();
  model.save(path);

  std::unique_ptr<Session> session;
  try {
    session = std::make_unique<Session>(Session::load(path));
  } catch (const std::exception& e) {
    dir.keep();
    FAIL() << "octet cannot load " << name << ": " << e.what();
  }

  std::vector<ir::Dims> input_dims;
  for (const auto& in : session->inputs()) input_dims.push_back(in.dims);

  bool all_ok = true;
  for (int64_t batch : batches) {
    SCOPED_TRACE(name + " at batch " + std::to_string(batch));
    const auto inputs = random_inputs(input_dims, batch, seed + uint32_t(batch));

    std::vector<ir::TensorData> ours;
    try {
      ours = session->run(inputs);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "octet fails to run " << name << " at batch " << batch << ": " << e.what();
      all_ok = false;
      continue;
    }

    std::map<std::string, npy::Array> ort_in;
    for (size_t i = 0; i < inputs.size(); ++i) ort_in[session->inputs()[i].name] = to_npy(inputs[i]);
    const auto theirs = testing::run_ort(path, ort_in);

    ASSERT_EQ(ours.size(), session->outputs().size());
    for (size_t i = 0; i < ours.size(); ++i) {
      const std::string& out_name = session->outputs()[i].name;
      auto it = theirs.find(out_name);
      if (it == theirs.end()) {
        ADD_FAILURE() << "ONNX Runtime returned no output '" << out_name << "'";
        all_ok = false;
        continue;
      }
      const Figures f = compare(ours[i], it->second);
      report({name, batch, out_name, f});
      const std::string key = "b" + std::to_string(batch) + "." + out_name;
      RecordProperty(key + ".max_abs_diff", describe(f));

      EXPECT_TRUE(f.shape_ok) << out_name << ": " << f.shape_note;
      EXPECT_LE(f.max_abs_diff, kRelTolerance * f.max_abs_ref)
          << out_name << ": max |octet - ORT| " << f.max_abs_diff << " exceeds " << kRelTolerance
          << " x max |ORT| " << f.max_abs_ref << " (ratio " << f.ratio() << ")";
      EXPECT_EQ(f.top1_agree, f.top1_rows) << out_name << ": top-1 differs";
      EXPECT_GT(f.max_abs_ref, 0.0) << out_name << ": ORT's output is all zero, the check is vacuous";
      all_ok = all_ok && f.within_tolerance() && f.top1_identical() && f.max_abs_ref > 0;
    }
  }
  if (!all_ok) dir.keep();
}

}  // namespace octet::parity
