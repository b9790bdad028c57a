// The GoogleTest side of the parity harness: write a model, load it in octet, run octet and
// ONNX Runtime on the same random inputs at several batch sizes, compare every output.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/parity/parity_harness.h"
#include "tests/util/onnx_builder.h"
#include "tests/util/ort_oracle.h"

namespace octet::parity {

#define OCTET_SKIP_WITHOUT_ORT()                                                                  \
  if (std::string why = ::octet::testing::ort_unavailable_reason(); !why.empty()) GTEST_SKIP() << why

class ParityTest : public ::testing::Test {
 protected:
  // Saves the model as <scratch>/<name>.onnx and checks it at each batch size. The scratch
  // folder (model and nothing else) is kept and printed when a check fails, to reproduce it
  // with `octet run` or ORT by hand.
  void check_model(const testing::OnnxBuilder& model, const std::string& name,
                   const std::vector<int64_t>& batches = {1, 5}, uint32_t seed = 42);
};

}  // namespace octet::parity
