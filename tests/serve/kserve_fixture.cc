#include "tests/serve/kserve_fixture.h"

#include <cstring>
#include <random>
#include <stdexcept>

#include "loader/onnx_loader.h"
#include "tests/util/cli_runner.h"
#include "tests/util/onnx_builder.h"
#include "io/npy.h"

namespace octet::testing {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// images [N,3,16,16] -> boxes [N,4,8,8] (a strided 1x1 conv over the features) and scores [N,5]
// (pooled features through a Gemm and a Sigmoid): a detector's two heads, in miniature.
void save_detector(const fs::path& path) {
  OnnxBuilder b(13, "tiny_detector", 7);
  const auto x = b.input("images", {-1, 3, 16, 16});
  const auto w1 = b.random_normal_init("w1", {8, 3, 3, 3}, 0, 0.3f);
  const auto b1 = b.random_normal_init("b1", {8}, 0, 0.1f);
  const auto f = b.node("Relu", {b.node("Conv", {x, w1, b1}, {{"pads", {1, 1, 1, 1}}})});
  const auto w2 = b.random_normal_init("w2", {4, 8, 1, 1}, 0, 0.3f);
  const auto b2 = b.random_normal_init("b2", {4}, 0, 0.1f);
  const auto boxes = b.node_multi("Conv", {f, w2, b2}, 1, {{"strides", {2, 2}}}, "boxes_conv", {"boxes"}).front();
  const auto pooled = b.node("Flatten", {b.node("GlobalAveragePool", {f})});
  const auto w3 = b.random_normal_init("w3", {8, 5}, 0, 0.5f);
  const auto b3 = b.random_normal_init("b3", {5}, 0, 0.1f);
  const auto scores = b.node_multi("Sigmoid", {b.node("Gemm", {pooled, w3, b3})}, 1, {}, "scores_sigmoid", {"scores"});
  b.output(boxes, {-1, 4, 8, 8});
  b.output(scores.front(), {-1, 5});
  b.save(path.string());
}

void write_npy(const fs::path& path, const ir::TensorData& t) {
  npy::Array a = npy::make(npy::DType::f32, t.dims);
  std::memcpy(a.data.data(), t.bytes.data(), t.bytes.size());
  npy::write(path.string(), a);
}

void quantize(const fs::path& model, const fs::path& out, const std::string& how) {
  const CliResult r = run_cli("quantize " + model.string() + " -o " + out.string() + " --no-progress " + how, true);
  if (r.status != 0) throw std::runtime_error("octet quantize " + model.string() + " failed:\n" + r.output);
}

}  // namespace

ir::TensorData KserveModel::sample(int64_t rows, uint32_t seed) const {
  ir::Dims dims = input.dims;
  dims[0] = rows;
  ir::TensorData t = ir::TensorData::make(ir::DType::f32, dims);
  std::mt19937 gen(seed);
  for (float& v : std::span<float>(t.as<float>(), size_t(t.count()))) v = float(gen() % 1000) / 999.0f;
  return t;
}

std::vector<std::unique_ptr<KserveModel>> make_kserve_models(const fs::path& dir) {
  std::vector<std::unique_ptr<KserveModel>> models;
  auto add = [&](const std::string& name, const fs::path& fp32) {
    auto m = std::make_unique<KserveModel>();
    m->name = name;
    m->fp32 = fp32;
    m->int8 = dir / (name + "_int8.onnx");
    m->dynamic = dir / (name + "_dynamic.onnx");
    Session probe = Session::load(fp32.string());
    m->input = probe.inputs().at(0);
    // Calibration on random inputs: a static INT8 model whatever the data (the test wants
    // octet's answers, not accuracy).
    ir::TensorData calib = m->sample(16, 99);
    write_npy(dir / (name + "_calib.npy"), calib);
    quantize(fp32, m->int8, "--calib npy:" + (dir / (name + "_calib.npy")).string());
    quantize(fp32, m->dynamic, "--mode dynamic");
    m->sessions["fp32"] = std::make_unique<Session>(Session::load(fp32.string()));
    m->sessions["int8"] = std::make_unique<Session>(Session::load(m->int8.string()));
    m->sessions["dynamic"] = std::make_unique<Session>(Session::load(m->dynamic.string()));
    m->outputs = m->sessions["fp32"]->outputs();
    models.push_back(std::move(m));
  };
  add("tinynet", fs::path(OCTET_SOURCE_DIR) / "models" / "tinynet.onnx");
  save_detector(dir / "detector.onnx");
  add("detector", dir / "detector.onnx");
  return models;
}

std::string serve_args(const std::vector<std::unique_ptr<KserveModel>>& models) {
  std::string args, int8;
  for (const auto& m : models) {
    args += m->fp32.string() + " ";
    int8 += " --int8 " + m->int8.string();
  }
  return args + int8.substr(1);
}

V2Answer v2_infer(httplib::Client& client, const std::string& model, const std::string& version,
                  const std::string& input_name, const ir::TensorData& input, bool binary, const std::string& id) {
  json request = {{"inputs", {{{"name", input_name}, {"shape", input.dims}, {"datatype", "FP32"}}}}};
  if (!id.empty()) request["id"] = id;
  std::string body;
  httplib::Headers headers;
  if (binary) {
    request["inputs"][0]["parameters"] = {{"binary_data_size", input.bytes.size()}};
    request["parameters"] = {{"binary_data_output", true}};
    body = request.dump();
    headers.emplace("Inference-Header-Content-Length", std::to_string(body.size()));
    body.append(reinterpret_cast<const char*>(input.bytes.data()), input.bytes.size());
  } else {
    json data = json::array();
    for (float v : input.values<float>()) data.push_back(v);
    request["inputs"][0]["data"] = data;
    body = request.dump();
  }
  const std::string path = "/v2/models/" + model + (version.empty() ? "" : "/versions/" + version) + "/infer";
  const auto r = client.Post(path, headers, body, binary ? "application/octet-stream" : "application/json");
  V2Answer a;
  if (!r) {
    a.error = "no answer: " + httplib::to_string(r.error());
    return a;
  }
  a.status = r->status;
  size_t json_bytes = r->body.size();
  if (r->has_header("Inference-Header-Content-Length"))
    json_bytes = std::stoull(r->get_header_value("Inference-Header-Content-Length"));
  a.header = json::parse(r->body.substr(0, json_bytes), nullptr, false);
  if (a.header.is_discarded()) {
    a.error = "not JSON: " + r->body.substr(0, 200);
    return a;
  }
  if (a.status != 200) {
    a.error = a.header.value("error", "no error message");
    return a;
  }
  size_t offset = json_bytes;
  for (const json& o : a.header["outputs"]) {
    ir::TensorData t;
    if (o["datatype"] != "FP32") {
      a.error = "output datatype " + o["datatype"].dump();
      return a;
    }
    t.dtype = ir::DType::f32;
    t.dims = o["shape"].get<ir::Dims>();
    t.bytes.resize(size_t(t.count()) * 4);
    if (o.contains("parameters") && o["parameters"].contains("binary_data_size")) {
      const size_t n = o["parameters"]["binary_data_size"];
      if (n != t.bytes.size() || offset + n > r->body.size()) {
        a.error = "binary_data_size " + std::to_string(n) + " does not fit";
        return a;
      }
      std::memcpy(t.bytes.data(), r->body.data() + offset, n);
      offset += n;
    } else {
      std::vector<float> v;
      for (const json& x : o["data"]) v.push_back(float(x.get<double>()));
      if (v.size() * 4 != t.bytes.size()) {
        a.error = "data has " + std::to_string(v.size()) + " elements";
        return a;
      }
      std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
    }
    a.outputs[o["name"]] = std::move(t);
  }
  return a;
}

}  // namespace octet::testing
