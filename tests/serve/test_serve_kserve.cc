// `octet serve` as an Open Inference Protocol (KServe v2 REST) server, started from the CLI on a
// free loopback port with two models: TinyNet (a classifier, bundled) and a detection-style
// graph built here (two outputs of different shapes), each with the INT8 file `octet quantize`
// wrote. A client written from the spec alone (httplib, JSON and binary tensors) and Triton's own
// tritonclient.http get, for every version (fp32, int8, dynamic), outputs identical bit for bit
// to octet's Session on the same files; the metadata, health and error answers follow the spec.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "tests/serve/kserve_fixture.h"
#include "tests/serve/server_process.h"
#include "tests/serve/serve_fixture.h"
#include "tests/util/cli_runner.h"
#include "io/npy.h"

namespace octet::testing::kserve_tests {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ::testing::HasSubstr;

const char* kVersions[] = {"fp32", "int8", "dynamic"};
using ::testing::Not;

std::string fmt_row(const std::string& model, const std::string& version, bool binary, int64_t rows,
                    const std::string& outputs) {
  char line[256];
  std::snprintf(line, sizeof line, "%-9s %-8s %-7s %-5lld %s bitwise equal\n", model.c_str(), version.c_str(),
                binary ? "binary" : "JSON", static_cast<long long>(rows), outputs.c_str());
  return line;
}

class ServeKserve : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir;
    models_ = new std::vector<std::unique_ptr<KserveModel>>(make_kserve_models(dir_->path));
    server_ = new ServerProcess(serve_args(*models_) +
                                    " --speed-seconds 0 --samples 0 --max-upload-bytes 200000 --max-batch 8",
                                dir_->path / "server.log");
  }
  static void TearDownTestSuite() {
    delete server_;
    delete models_;
    delete dir_;
  }
  void SetUp() override { ASSERT_TRUE(server_->started()) << server_->log_text(); }

  httplib::Client client() const {
    httplib::Client c("127.0.0.1", server_->port());
    c.set_read_timeout(30);
    return c;
  }
  static const KserveModel& model(const std::string& name) {
    for (const auto& m : *models_)
      if (m->name == name) return *m;
    throw std::runtime_error("no model " + name);
  }

  static inline ScratchDir* dir_ = nullptr;
  static inline std::vector<std::unique_ptr<KserveModel>>* models_ = nullptr;
  static inline ServerProcess* server_ = nullptr;
};

TEST_F(ServeKserve, ServerMetadataAndHealth) {
  auto c = client();
  const json meta = get_json(c, "/v2");
  EXPECT_EQ(meta["name"], "octet");
  EXPECT_TRUE(meta["version"].is_string());
  EXPECT_THAT(meta["extensions"].get<std::vector<std::string>>(), ::testing::Contains("binary_tensor_data"));
  for (const char* p : {"/v2/health/live", "/v2/health/ready", "/v2/models/tinynet/ready",
                        "/v2/models/detector/versions/dynamic/ready"}) {
    auto r = c.Get(p);
    ASSERT_TRUE(r) << p;
    EXPECT_EQ(r->status, 200) << p;
  }
  for (const char* p : {"/v2/models/nope/ready", "/v2/models/tinynet/versions/fp16/ready"}) {
    auto r = c.Get(p);
    ASSERT_TRUE(r) << p;
    EXPECT_EQ(r->status, 404) << p;
  }
}

TEST_F(ServeKserve, KeepAliveAnswersDoNotWaitForADelayedAck) {
  // An answer written in two sends (headers, then body) with Nagle on waits for the client's ACK
  // of the first, which a kept-alive connection delays by up to 40 ms (a new connection ACKs at
  // once): 25-45 ms more a request. So requests on one kept-alive connection must cost about
  // what requests on fresh connections do, however fast the build (a sanitized one included).
  const KserveModel& m = model("tinynet");
  const ir::TensorData x = m.sample(1, 5);
  constexpr int kRequests = 30;
  auto mean_ms = [&](bool keep_alive) {
    auto c = client();
    c.set_keep_alive(keep_alive);
    c.set_tcp_nodelay(true);  // the client's own request, headers then body, must not wait either
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kRequests; ++i) {
      const V2Answer a = v2_infer(c, "tinynet", "fp32", m.input.name, x, true);
      EXPECT_EQ(a.status, 200) << a.error;
    }
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / kRequests;
  };
  const double fresh = mean_ms(false), kept = mean_ms(true);
  EXPECT_LT(kept, fresh + 10.0) << "a request on a kept-alive connection took " << kept << " ms, on a new one " << fresh
                                << " ms";
}

TEST_F(ServeKserve, ModelMetadataNamesTensorsWithTheDynamicBatch) {
  auto c = client();
  const json t = get_json(c, "/v2/models/tinynet");
  EXPECT_EQ(t["name"], "tinynet");
  EXPECT_EQ(t["platform"], "onnx_onnxv1");
  EXPECT_EQ(t["versions"], json({"fp32", "int8", "dynamic"}));
  EXPECT_EQ(t["inputs"], json::parse(R"([{"name": "input", "datatype": "FP32", "shape": [-1, 1, 28, 28]}])"));
  EXPECT_EQ(t["outputs"], json::parse(R"([{"name": "logits", "datatype": "FP32", "shape": [-1, 10]}])"));
  const json d = get_json(c, "/v2/models/detector/versions/int8");
  EXPECT_EQ(d["versions"], json({"int8"}));
  EXPECT_EQ(d["inputs"][0]["shape"], json({-1, 3, 16, 16}));
  EXPECT_EQ(d["outputs"][0], json::parse(R"({"name": "boxes", "datatype": "FP32", "shape": [-1, 4, 8, 8]})"));
  EXPECT_EQ(d["outputs"][1], json::parse(R"({"name": "scores", "datatype": "FP32", "shape": [-1, 5]})"));
  auto r = c.Get("/v2/models/detector/versions/int4");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_THAT(json::parse(r->body)["error"].get<std::string>(), HasSubstr("no version 'int4'"));
}

// Each model x version x form against the Session on the same file: the conformance table.
TEST_F(ServeKserve, SpecClientGetsSessionOutputsBitForBit) {
  auto c = client();
  std::string table = "model     version  form    rows  outputs\n";
  for (const auto& m : *models_)
    for (const char* v : kVersions)
      for (bool binary : {false, true})
        for (int64_t rows : {1, 3}) {
          const ir::TensorData x = m->sample(rows, uint32_t(rows * 7 + (binary ? 1 : 0)));
          const std::vector<ir::TensorData> want = m->sessions.at(v)->run({x});
          const V2Answer a = v2_infer(c, m->name, v, m->input.name, x, binary, "req-" + m->name);
          ASSERT_EQ(a.status, 200) << m->name << "/" << v << ": " << a.error;
          EXPECT_EQ(a.header["model_name"], m->name);
          EXPECT_EQ(a.header["model_version"], v);
          EXPECT_EQ(a.header["id"], "req-" + m->name);
          std::string outs;
          for (size_t o = 0; o < m->outputs.size(); ++o) {
            const std::string& name = m->outputs[o].name;
            ASSERT_TRUE(a.outputs.count(name)) << name;
            EXPECT_EQ(a.outputs.at(name).dims, want[o].dims) << m->name << "/" << v << " " << name;
            EXPECT_TRUE(a.outputs.at(name).bytes == want[o].bytes)
                << m->name << "/" << v << " " << name << (binary ? " binary" : " JSON") << " differs from the Session";
            outs += name + ir::dims_str(want[o].dims) + " ";
          }
          table += fmt_row(m->name, v, binary, rows, outs);
        }
  std::printf("%s", table.c_str());
}

TEST_F(ServeKserve, DefaultVersionIsFp32AndOutputsCanBeChosen) {
  auto c = client();
  const KserveModel& d = model("detector");
  const ir::TensorData x = d.sample(2, 5);
  const V2Answer a = v2_infer(c, "detector", "", d.input.name, x, true);
  ASSERT_EQ(a.status, 200) << a.error;
  EXPECT_EQ(a.header["model_version"], "fp32");
  EXPECT_TRUE(a.outputs.at("scores").bytes == d.sessions.at("fp32")->run({x})[1].bytes);
  // Only "scores", as JSON, though the request asks for binary outputs by default.
  json req = {{"inputs", {{{"name", "images"}, {"shape", x.dims}, {"datatype", "FP32"},
                           {"parameters", {{"binary_data_size", x.bytes.size()}}}}}},
              {"parameters", {{"binary_data_output", true}}},
              {"outputs", {{{"name", "scores"}, {"parameters", {{"binary_data", false}}}}}}};
  std::string body = req.dump();
  const httplib::Headers h = {{"Inference-Header-Content-Length", std::to_string(body.size())}};
  body.append(reinterpret_cast<const char*>(x.bytes.data()), x.bytes.size());
  auto r = c.Post("/v2/models/detector/versions/dynamic/infer", h, body, "application/octet-stream");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_FALSE(r->has_header("Inference-Header-Content-Length"));
  const json j = json::parse(r->body);
  ASSERT_EQ(j["outputs"].size(), 1u);
  EXPECT_EQ(j["outputs"][0]["name"], "scores");
  EXPECT_EQ(j["outputs"][0]["shape"], json({2, 5}));
  EXPECT_EQ(j["outputs"][0]["data"].size(), 10u);
}

TEST_F(ServeKserve, BadRequestsAnswerTheRightStatus) {
  auto c = client();
  auto post = [&](const std::string& path, const std::string& body, const httplib::Headers& h = {}) {
    auto r = c.Post(path, h, body, "application/json");
    EXPECT_TRUE(r) << path;
    if (!r) return std::pair<int, std::string>{-1, ""};
    const json j = json::parse(r->body, nullptr, false);
    EXPECT_TRUE(j.is_object() && j.contains("error")) << r->body;
    return std::pair<int, std::string>{r->status, j.is_object() ? j.value("error", "") : ""};
  };
  const std::string infer = "/v2/models/tinynet/versions/fp32/infer";
  auto tensor = [](json shape, const char* datatype, size_t n) {
    return json{{"inputs", {{{"name", "input"}, {"shape", shape}, {"datatype", datatype}, {"data", std::vector<float>(n, 0.5f)}}}}}.dump();
  };
  EXPECT_EQ(post(infer, "{\"inputs\": [").first, 400);
  EXPECT_EQ(post(infer, tensor({1, 1, 28, 27}, "FP32", 756)).first, 400);
  EXPECT_EQ(post(infer, tensor({1, 1, 28, 28}, "FP32", 783)).first, 400);
  EXPECT_EQ(post(infer, tensor({1, 1, 28, 28}, "INT32", 784)).first, 400);
  EXPECT_EQ(post(infer, R"({"inputs": [{"name": "x", "shape": [1], "datatype": "FP32", "data": [1]}]})").first, 400);
  EXPECT_EQ(post(infer, "{\"inputs\": []}", {{"Inference-Header-Content-Length", "abc"}}).first, 400);
  const auto unknown = post("/v2/models/resnet/infer", tensor({1, 1, 28, 28}, "FP32", 784));
  EXPECT_EQ(unknown.first, 404);
  EXPECT_THAT(unknown.second, HasSubstr("'tinynet', 'detector'"));
  EXPECT_EQ(post("/v2/models/tinynet/versions/3/infer", tensor({1, 1, 28, 28}, "FP32", 784)).first, 404);
  EXPECT_EQ(post(infer, std::string(300000, ' ')).first, 413);
  auto r = c.Get(infer);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 405);
  EXPECT_EQ(r->get_header_value("Allow"), "POST");
}

TEST_F(ServeKserve, ThePageStillClassifies) {
  auto c = client();
  const json m = get_json(c, "/api/model");
  EXPECT_EQ(m["model"], "tinynet");
  EXPECT_EQ(m["int8"]["source"], "file");
}

// Triton's own client, binary (its default) and JSON: tests/serve/kserve_client.py.
TEST_F(ServeKserve, TritonClientGetsSessionOutputsBitForBit) {
  const char* env = std::getenv("OCTET_TRITONCLIENT_PYTHON");
  const fs::path python = env ? fs::path(env) : kSourceDir / "third_party" / "tritonclient" / "venv" / "bin" / "python";
  ASSERT_TRUE(fs::exists(python)) << python << " is missing: tools/setup.sh installs tritonclient there "
                                  << "(third_party/tritonclient/requirements.txt)";
  json cases = json::array();
  for (const auto& m : *models_)
    for (const char* v : kVersions) {
      const ir::TensorData x = m->sample(2, 11);
      const std::vector<ir::TensorData> want = m->sessions.at(v)->run({x});
      auto save = [](const fs::path& p, const ir::TensorData& t) {
        npy::Array a = npy::make(npy::DType::f32, t.dims);
        std::memcpy(a.data.data(), t.bytes.data(), t.bytes.size());
        npy::write(p.string(), a);
      };
      const fs::path in = dir_->path / (m->name + "_" + v + "_in.npy");
      save(in, x);
      json outs = json::array();
      for (size_t o = 0; o < want.size(); ++o) {
        const fs::path f = dir_->path / (m->name + "_" + v + "_" + m->outputs[o].name + ".npy");
        save(f, want[o]);
        outs.push_back({{"name", m->outputs[o].name}, {"file", f.string()}});
      }
      cases.push_back({{"model", m->name}, {"version", v}, {"input_name", m->input.name}, {"input", in.string()},
                       {"outputs", outs}});
    }
  std::ofstream(dir_->path / "cases.json") << cases.dump(1);
  const CliResult r = run_shell(python.string() + " " + (kSourceDir / "tests" / "serve" / "kserve_client.py").string() +
                                " 127.0.0.1:" + std::to_string(server_->port()) + " " +
                                (dir_->path / "cases.json").string() + " 2>&1");
  std::printf("%s", r.output.c_str());
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, Not(HasSubstr("FAIL")));
  EXPECT_THAT(r.output, HasSubstr("ok   detector/dynamic JSON scores [2, 5] bitwise"));
}

}  // namespace
}  // namespace octet::testing::kserve_tests
