#include "apps/serve/v2_routes.h"

#include <fmt/format.h>

#include <chrono>
#include <optional>
#include <semaphore>

#include "apps/serve/json_reply.h"
#include "apps/serve/no_paths.h"
#include "apps/serve/request_error.h"
#include "apps/serve/routes.h"
#include "apps/serve/v2_protocol.h"
#include "core/version.h"

namespace octet::serve {
namespace {

using json = nlohmann::json;

// A model's name or version: a path segment.
#define OCTET_V2_MODEL R"(/v2/models/([^/]+)(?:/versions/([^/]+))?)"

std::string served_names(const ModelRepository& models) {
  std::string names;
  for (const auto& m : models.models()) names += (names.empty() ? "'" : ", '") + m->name + "'";
  return names;
}

// The model and version a /v2/models/... path names; RequestError(404) when it serves none.
std::pair<const ServedModel*, const ModelVersion*> resolve(const ModelRepository& models, const httplib::Request& req) {
  const std::string name = req.matches[1].str();
  const ServedModel* m = models.find(name);
  if (!m) throw RequestError(404, fmt::format("no model '{}' here (served: {})", name, served_names(models)));
  const std::string v = req.matches[2].matched ? req.matches[2].str() : m->default_version;
  const ModelVersion* mv = m->version(v);
  if (!mv) {
    std::string versions;
    for (const ModelVersion& x : m->versions) versions += (versions.empty() ? "'" : ", '") + x.name + "'";
    throw RequestError(404, fmt::format("model '{}' has no version '{}' (its versions: {})", name, v, versions));
  }
  return {m, mv};
}

struct InferSlots {
  explicit InferSlots(int n) : free(n) {}
  std::counting_semaphore<> free;
};

void infer(const ServerState& state, InferSlots& slots, const httplib::Request& req, httplib::Response& res) {
  const auto [model, version] = resolve(*state.models, req);
  if (!slots.free.try_acquire_for(std::chrono::duration<double>(kClassifyWaitSeconds)))
    return send_error(res, 503,
                      fmt::format("every inference slot stayed busy for {:g} s (--http-threads); try again",
                                  kClassifyWaitSeconds));
  struct Release {
    std::counting_semaphore<>& s;
    ~Release() { s.release(); }
  } release{slots.free};

  std::optional<size_t> header_length;
  if (req.has_header("Inference-Header-Content-Length"))
    header_length = v2::parse_header_length(req.get_header_value("Inference-Header-Content-Length"));
  // The parsed JSON takes several times its text (a number is a 16-byte node in a vector), the
  // tensors at most the body's bytes again: held in the budget while the request is handled.
  std::optional<MemoryBudget::Lease> lease;
  if (MemoryBudget* memory = state.limits.memory) {
    const size_t need = header_length.value_or(req.body.size()) * 8 + req.body.size();
    if (need > memory->capacity())
      throw RequestError(413, fmt::format("an inference request of {} bytes needs more than this server's "
                                          "--memory-budget of {} MiB (send tensors as binary data)",
                                          req.body.size(), memory->capacity() >> 20));
    lease = memory->reserve(need, state.limits.memory_wait);
    if (!lease)
      throw RequestError(503, fmt::format("other requests hold this server's memory (--memory-budget {} MiB); try "
                                          "again shortly",
                                          memory->capacity() >> 20));
  }
  v2::InferRequest request = v2::parse_infer_request(req.body, header_length);
  std::vector<ir::TensorData> inputs = v2::inputs_in_model_order(model->inputs, request);
  const std::vector<v2::RequestedOutput> wanted = v2::outputs_to_send(model->outputs, request);
  std::vector<ir::TensorData> outputs;
  try {
    outputs = version->batcher->run(std::move(inputs));
  } catch (const ir::Error& e) {
    // The engine refused these inputs (e.g. extents the graph cannot take).
    throw RequestError(400, without_paths(e.what()));
  }
  std::vector<const ir::TensorData*> tensors;
  for (const v2::RequestedOutput& o : wanted)
    for (size_t i = 0; i < model->outputs.size(); ++i)
      if (model->outputs[i].name == o.name) tensors.push_back(&outputs.at(i));
  v2::EncodedResponse encoded = v2::encode_infer_response(model->name, version->name, request.id, wanted, tensors);
  res.status = 200;
  res.set_header("Cache-Control", "no-store");
  if (encoded.header_length) {
    res.set_header("Inference-Header-Content-Length", std::to_string(*encoded.header_length));
    res.set_content(std::move(encoded.body), "application/octet-stream");
  } else {
    res.set_content(std::move(encoded.body), "application/json");
  }
}

// Runs `f`, answering a RequestError as its JSON error.
template <class F>
void answer(httplib::Response& res, F&& f) {
  try {
    f();
  } catch (const RequestError& e) {
    send_error(res, e.status, e.what());
  }
}

}  // namespace

const std::vector<std::string>& v2_get_paths() {
  static const std::vector<std::string> paths = {"/v2", "/v2/health/live", "/v2/health/ready", OCTET_V2_MODEL,
                                                 OCTET_V2_MODEL "/ready"};
  return paths;
}

const std::string& v2_infer_path() {
  static const std::string path = OCTET_V2_MODEL "/infer";
  return path;
}

void add_v2_routes(httplib::Server& server, const ServerState& state, int infer_slots) {
  auto slots = std::make_shared<InferSlots>(infer_slots);
  server.Get("/v2", [](const httplib::Request&, httplib::Response& res) {
    send_json(res, {{"name", "octet"}, {"version", OCTET_VERSION}, {"extensions", {"binary_tensor_data"}}});
  });
  // Live and ready carry their answer in the status; the body is empty, as the spec allows.
  for (const char* p : {"/v2/health/live", "/v2/health/ready"})
    server.Get(p, [](const httplib::Request&, httplib::Response& res) { res.status = 200; });
  server.Get(OCTET_V2_MODEL "/ready", [&state](const httplib::Request& req, httplib::Response& res) {
    answer(res, [&] {
      resolve(*state.models, req);
      res.status = 200;
    });
  });
  server.Get(OCTET_V2_MODEL, [&state](const httplib::Request& req, httplib::Response& res) {
    answer(res, [&] {
      const auto [model, version] = resolve(*state.models, req);
      json j = model_metadata(*model);
      if (req.matches[2].matched) j["versions"] = {version->name};
      send_json(res, j);
    });
  });
  server.Post(v2_infer_path(), [&state, slots](const httplib::Request& req, httplib::Response& res) {
    answer(res, [&] { infer(state, *slots, req, res); });
  });
}

}  // namespace octet::serve
