#pragma once
// What the Open Inference Protocol tests of `octet serve` share: the two models (TinyNet, and a
// small detection-style graph built here with two outputs of different shapes), their INT8
// forms written by `octet quantize` (static, calibrated on random inputs, and dynamic), octet's
// own Sessions over the same files as the oracle, and a client that speaks the protocol from the
// spec alone over httplib.
#include <httplib.h>

#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/session.h"

namespace octet::testing {

struct KserveModel {
  std::string name;  // in URLs
  std::filesystem::path fp32, int8, dynamic;
  std::map<std::string, std::unique_ptr<Session>> sessions;  // "fp32", "int8", "dynamic"
  TensorSpec input;
  std::vector<TensorSpec> outputs;
  ir::TensorData sample(int64_t rows, uint32_t seed) const;  // a random input of `rows` items
};

// Builds the models in `dir` and loads their Sessions; throws std::runtime_error when a
// quantize run fails.
std::vector<std::unique_ptr<KserveModel>> make_kserve_models(const std::filesystem::path& dir);

// The `octet serve` arguments that serve `models` with their INT8 files.
std::string serve_args(const std::vector<std::unique_ptr<KserveModel>>& models);

struct V2Answer {
  int status = -1;  // -1: no answer
  nlohmann::json header;  // the JSON (the header part of a binary answer)
  std::map<std::string, ir::TensorData> outputs;
  std::string error;  // why the answer could not be read, or the server's {"error"}
};

// POSTs `input` to /v2/models/<model>[/versions/<version>]/infer as JSON data or as binary
// tensors (asking for binary outputs too), and reads the outputs back.
V2Answer v2_infer(httplib::Client& client, const std::string& model, const std::string& version,
                  const std::string& input_name, const ir::TensorData& input, bool binary, const std::string& id = "");

}  // namespace octet::testing
