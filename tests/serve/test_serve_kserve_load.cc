// `octet serve`'s Open Inference Protocol under load, bounded and on loopback: TinyNet served
// from the CLI, 400 infer requests from 32 client threads at once, a quarter of them malformed
// (bad JSON, wrong shape, wrong datatype, oversize, unknown model or version). Every good one
// answers 200 with TinyNet's logits, every bad one its 4xx; no 5xx, no dropped connection, and
// the server's memory grows by less than 64 MiB. Run with --max-batch 1 and with batching; the
// throughput and latency each gets are printed for the record (bench/RESULTS.md), not checked.
// OCTET_KSERVE_LOAD_REQUESTS sets another request count (for those figures).
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "engine/session.h"
#include "tests/util/sanitizer.h"
#include "tests/serve/kserve_fixture.h"
#include "tests/serve/server_process.h"
#include "tests/serve/serve_fixture.h"
#include "tests/util/cli_runner.h"

namespace octet::testing::kserve_load_tests {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int kClients = 32;
constexpr long kRssBoundKib = 64 * 1024;
constexpr size_t kMaxUpload = 100000;

enum class Kind { json_good, binary_good, bad_json, wrong_shape, wrong_datatype, oversize, unknown_model, unknown_version };
constexpr Kind kBad[] = {Kind::bad_json, Kind::wrong_shape, Kind::wrong_datatype, Kind::oversize, Kind::unknown_model,
                         Kind::unknown_version};
int expected_status(Kind k) {
  switch (k) {
    case Kind::json_good:
    case Kind::binary_good: return 200;
    case Kind::oversize: return 413;
    case Kind::unknown_model:
    case Kind::unknown_version: return 404;
    default: return 400;
  }
}

struct Outcome {
  Kind kind;
  int status = -1;
  double ms = 0;
  bool same = false;  // a good one: the Session's logits, bit for bit
  float max_diff = 0;
};

class ServeKserveLoad : public ::testing::TestWithParam<int> {};

TEST_P(ServeKserveLoad, ManyClientsMalformedQuarterNo5xxBoundedMemory) {
  const int max_batch = GetParam();
  const char* env = std::getenv("OCTET_KSERVE_LOAD_REQUESTS");
  const int requests = env ? std::max(8, std::atoi(env)) : 400;
  ScratchDir dir;
  const auto tiny = kSourceDir / "models" / "tinynet.onnx";
  ServerProcess server(tiny.string() + " --mode dynamic --speed-seconds 0 --samples 0 --max-upload-bytes " +
                           std::to_string(kMaxUpload) + " --max-batch " + std::to_string(max_batch),
                       dir.path / "server.log");
  ASSERT_TRUE(server.started()) << server.log_text();
  Session session = Session::load(tiny.string());
  const ir::TensorData image = [&] {
    ir::TensorData t = ir::TensorData::make(ir::DType::f32, {1, 1, 28, 28});
    for (int64_t i = 0; i < t.count(); ++i) t.as<float>()[i] = float((i * 37) % 256) / 255.0f;
    return t;
  }();
  const ir::TensorData want = session.run({image})[0];

  {
    httplib::Client warm("127.0.0.1", server.port());
    for (int i = 0; i < 4; ++i) ASSERT_EQ(v2_infer(warm, "tinynet", "fp32", "input", image, i % 2).status, 200);
  }
  const long rss_before = server.rss_kib();

  std::vector<Outcome> out(static_cast<size_t>(requests));
  for (int i = 0; i < requests; ++i)
    out[size_t(i)].kind = i % 4 == 3 ? kBad[(i / 4) % std::size(kBad)] : (i % 2 ? Kind::binary_good : Kind::json_good);
  std::atomic<int> next{0};
  const auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < kClients; ++t)
    threads.emplace_back([&] {
      httplib::Client c("127.0.0.1", server.port());
      c.set_read_timeout(60);
      c.set_keep_alive(true);
      c.set_tcp_nodelay(true);  // headers and body in one go, as the clients of this protocol send them
      for (int i; (i = next++) < requests;) {
        Outcome& o = out[size_t(i)];
        const auto s0 = Clock::now();
        if (o.kind == Kind::json_good || o.kind == Kind::binary_good) {
          const V2Answer a = v2_infer(c, "tinynet", "fp32", "input", image, o.kind == Kind::binary_good);
          o.status = a.status;
          if (a.status == 200 && a.outputs.count("logits")) {
            const ir::TensorData& got = a.outputs.at("logits");
            o.same = got.bytes == want.bytes;
            for (int64_t k = 0; k < want.count() && got.count() == want.count(); ++k)
              o.max_diff = std::max(o.max_diff, std::abs(got.as<float>()[k] - want.as<float>()[k]));
            if (got.count() != want.count()) o.max_diff = 1e9f;
          }
        } else {
          std::string path = "/v2/models/tinynet/versions/fp32/infer";
          json body = {{"inputs", {{{"name", "input"}, {"shape", {1, 1, 28, 28}}, {"datatype", "FP32"},
                                    {"data", std::vector<float>(784, 0.25f)}}}}};
          if (o.kind == Kind::wrong_shape) body["inputs"][0]["shape"] = {1, 28, 28, 1};
          if (o.kind == Kind::wrong_datatype) body["inputs"][0]["datatype"] = "INT64";
          if (o.kind == Kind::unknown_model) path = "/v2/models/resnet50/infer";
          if (o.kind == Kind::unknown_version) path = "/v2/models/tinynet/versions/7/infer";
          std::string text = body.dump();
          if (o.kind == Kind::bad_json) text = text.substr(0, text.size() / 2);
          if (o.kind == Kind::oversize) text.append(kMaxUpload * 2, ' ');
          const auto r = c.Post(path, text, "application/json");
          o.status = r ? r->status : -1;
        }
        o.ms = std::chrono::duration<double, std::milli>(Clock::now() - s0).count();
      }
    });
  for (auto& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  const long rss_after = server.rss_kib();

  std::vector<double> good_ms;
  int same = 0;
  float worst = 0;
  for (const Outcome& o : out) {
    EXPECT_NE(o.status, -1) << "a dropped connection";
    EXPECT_LT(o.status, 500);
    EXPECT_EQ(o.status, expected_status(o.kind)) << "kind " << int(o.kind);
    if (expected_status(o.kind) == 200) {
      good_ms.push_back(o.ms);
      same += o.same;
      worst = std::max(worst, o.max_diff);
    }
  }
  // Batched or not, a request gets TinyNet's logits for its image (a batch's kernels may sum in
  // another order than one image's, hence the tolerance; bitwise equality is counted).
  EXPECT_LT(worst, 1e-4f);
  EXPECT_GT(rss_before, 0);
  // Under AddressSanitizer its quarantine holds freed memory: the bound says nothing there (as in
  // test_serve_load.cc).
  if (!kUnderAddressSanitizer) {
    EXPECT_LT(rss_after - rss_before, kRssBoundKib) << "RSS " << rss_before << " -> " << rss_after << " KiB";
  }
  std::sort(good_ms.begin(), good_ms.end());
  auto pct = [&](double p) { return good_ms.empty() ? 0.0 : good_ms[size_t(p * double(good_ms.size() - 1))]; };
  std::printf("--max-batch %d: %d requests (%zu good) from %d clients in %.2f s: %.0f requests/s, good p50 %.2f ms, "
              "p99 %.2f ms; %d of %zu good answers bitwise equal to batch-1 Session (max |diff| %.3g); RSS %ld -> %ld "
              "KiB\n",
              max_batch, requests, good_ms.size(), kClients, seconds, double(requests) / seconds, pct(0.5), pct(0.99),
              same, good_ms.size(), double(worst), rss_before, rss_after);
  httplib::Client after("127.0.0.1", server.port());
  EXPECT_EQ(v2_infer(after, "tinynet", "", "input", image, true).status, 200) << "the server must still answer";
  EXPECT_EQ(server.stop(SIGTERM), 0) << server.log_text();
}

INSTANTIATE_TEST_SUITE_P(MaxBatch, ServeKserveLoad, ::testing::Values(1, 8),
                         [](const auto& info) { return "max_batch_" + std::to_string(info.param); });

}  // namespace
}  // namespace octet::testing::kserve_load_tests
