// Forwards to tools/ort_client.h, where the runner is located, spawned and read back.
#include "tests/util/ort_oracle.h"

namespace octet::testing {

std::string ort_unavailable_reason() { return octet::ort::unavailable_reason(); }

std::string ort_version() { return octet::ort::version(); }

std::map<std::string, npy::Array> run_ort(const std::string& model_path,
                                          const std::map<std::string, npy::Array>& inputs,
                                          const OrtOptions& opt) {
  return octet::ort::run(model_path, inputs, opt);
}

}  // namespace octet::testing
