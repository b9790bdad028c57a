#pragma once
// The models `octet serve` answers for over the Open Inference Protocol: each by name, each in
// up to three versions, its precisions: "fp32", "int8" (static) and "dynamic" (dynamic INT8),
// each a Session behind a Batcher. No HTTP here (apps/serve/v2_routes.cc is that side).
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/session.h"
#include "apps/serve/batcher.h"

namespace octet::serve {

struct ModelVersion {
  std::string name;  // "fp32", "int8", "dynamic"
  std::shared_ptr<Session> session;
  std::unique_ptr<Batcher> batcher;
};

struct ServedModel {
  std::string name;  // in URLs: the file's stem, or --name
  std::string file;  // the FP32 file's name (never its path)
  std::vector<TensorSpec> inputs, outputs;  // the FP32 model's; every version takes and gives the same
  std::vector<ModelVersion> versions;       // in the order "fp32", "int8", "dynamic"
  std::string default_version;

  const ModelVersion* version(const std::string& name) const;
};

class ModelRepository {
 public:
  // Adds a model with its versions' sessions; each version gets a Batcher with `batching`,
  // except one whose images are not computed apart (Session::slices_batches false, e.g. dynamic
  // quantization's batch-wide range), which runs each request alone. `default_version` must be
  // one of the versions. Throws ir::Error on a duplicate name or a version that takes other
  // inputs or gives other outputs than the FP32 model.
  void add(std::string name, std::string file, std::vector<std::pair<std::string, std::shared_ptr<Session>>> versions,
           const std::string& default_version, Batcher::Options batching);

  const ServedModel* find(const std::string& name) const;
  const std::vector<std::unique_ptr<ServedModel>>& models() const { return models_; }

 private:
  std::vector<std::unique_ptr<ServedModel>> models_;
};

// GET /v2/models/<name>[/versions/<v>]: name, versions, platform, inputs, outputs.
nlohmann::json model_metadata(const ServedModel& m);

}  // namespace octet::serve
