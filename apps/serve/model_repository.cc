#include "apps/serve/model_repository.h"

#include <fmt/format.h>

#include <algorithm>

#include "apps/serve/v2_protocol.h"

namespace octet::serve {

const ModelVersion* ServedModel::version(const std::string& v) const {
  for (const ModelVersion& mv : versions)
    if (mv.name == v) return &mv;
  return nullptr;
}

namespace {

// The same names and element types, and the same extents where both say.
bool same_tensors(const std::vector<TensorSpec>& a, const std::vector<TensorSpec>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].dtype != b[i].dtype) return false;
    if (!a[i].dims.empty() && !b[i].dims.empty() && a[i].dims.size() != b[i].dims.size()) return false;
  }
  return true;
}

}  // namespace

void ModelRepository::add(std::string name, std::string file,
                          std::vector<std::pair<std::string, std::shared_ptr<Session>>> versions,
                          const std::string& default_version, Batcher::Options batching) {
  if (find(name))
    throw ir::Error(fmt::format("two models are named '{}': give one of them another with --name", name));
  auto m = std::make_unique<ServedModel>();
  m->name = std::move(name);
  m->file = std::move(file);
  m->inputs = versions.at(0).second->inputs();
  m->outputs = versions.at(0).second->outputs();
  for (auto& [v, session] : versions) {
    if (!same_tensors(session->inputs(), m->inputs) || !same_tensors(session->outputs(), m->outputs))
      throw ir::Error(fmt::format("{}: version '{}' takes or gives other tensors than the FP32 model", m->name, v));
    Batcher::Options o = batching;
    if (o.max_batch > 1 && !session->slices_batches()) o.max_batch = 1;
    std::shared_ptr<Session> s = session;
    auto batcher = std::make_unique<Batcher>([s](const std::vector<ir::TensorData>& in) { return s->run(in); }, o);
    m->versions.push_back({v, std::move(session), std::move(batcher)});
  }
  if (!m->version(default_version)) {
    std::string names;
    for (const ModelVersion& v : m->versions) names += (names.empty() ? "" : ", ") + v.name;
    throw ir::Error(fmt::format("--default-version {}: {} has the versions {}", default_version, m->name, names));
  }
  m->default_version = default_version;
  models_.push_back(std::move(m));
}

const ServedModel* ModelRepository::find(const std::string& name) const {
  for (const auto& m : models_)
    if (m->name == name) return m.get();
  return nullptr;
}

nlohmann::json model_metadata(const ServedModel& m) {
  nlohmann::json versions = nlohmann::json::array(), inputs = nlohmann::json::array(),
                 outputs = nlohmann::json::array();
  for (const ModelVersion& v : m.versions) versions.push_back(v.name);
  for (const TensorSpec& s : m.inputs) inputs.push_back(v2::tensor_metadata(s));
  for (const TensorSpec& s : m.outputs) outputs.push_back(v2::tensor_metadata(s));
  return {{"name", m.name}, {"versions", versions}, {"platform", "onnx_onnxv1"}, {"inputs", inputs},
          {"outputs", outputs}};
}

}  // namespace octet::serve
