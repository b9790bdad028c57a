// `octet serve` under load, as a person would run it: the server started from the CLI on a free
// loopback port with an INT8 model `octet quantize` wrote, then 200 requests from 16 client
// threads at once, good Fashion-MNIST test images (PNG in a multipart field, PGM as the raw
// body) mixed with truncated, oversized, pixel-bomb, non-image and empty uploads. Every good one
// must answer 200 with the class octet's own Session gives for that image, every bad one 4xx
// with a JSON reason, none 5xx; the server's memory must stay bounded and it must still answer,
// then stop cleanly on SIGTERM. The figures are printed for the record.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>

#include "engine/session.h"
#include "tests/serve/server_process.h"
#include "tests/serve/serve_fixture.h"
#include "tests/util/cli_runner.h"
#include "tests/util/sanitizer.h"
#include "apps/cli/model_inputs.h"
#include "io/model_card.h"
#include "apps/serve/stb_codecs.h"

namespace octet::testing {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;


constexpr size_t kMaxUpload = 100000;  // --max-upload-bytes for this server
constexpr long kRssBoundKib = 64 * 1024;

enum class Kind { png, pgm, truncated, over_limit, over_request, pixel_bomb, not_image, empty };
const char* name(Kind k) {
  switch (k) {
    case Kind::png: return "good PNG (multipart)";
    case Kind::pgm: return "good PGM (raw body)";
    case Kind::truncated: return "truncated PNG";
    case Kind::over_limit: return "oversized (150 KB)";
    case Kind::over_request: return "oversized (1 MB)";
    case Kind::pixel_bomb: return "oversized (5000x5000 header)";
    case Kind::not_image: return "not an image";
    case Kind::empty: return "empty";
  }
  return "?";
}
bool good(Kind k) { return k == Kind::png || k == Kind::pgm; }
int expected_status(Kind k) {
  switch (k) {
    case Kind::png:
    case Kind::pgm: return 200;
    case Kind::truncated:
    case Kind::empty: return 400;
    case Kind::over_limit:
    case Kind::over_request:
    case Kind::pixel_bomb: return 413;
    case Kind::not_image: return 415;
  }
  return 0;
}

struct Request {
  Kind kind;
  int64_t image = -1;  // dataset index for the good ones
  std::string body;
  bool multipart = false;  // the field "image" of a form, else the raw body
};

struct Answer {
  int status = -1;  // -1: no answer (connection error)
  std::string body;
  double ms = 0;
};

// The top-1 class octet's Session gives each image (batch 1, as the server runs them).
std::vector<int> engine_classes(const std::string& model, const data::Dataset& d) {
  Session s = Session::load(model);
  const ModelCard card = find_model_card(kTinyNet.string()).value();
  const ir::TensorData all = cli::make_inputs(d, card, s.inputs().at(0));
  std::vector<int> out;
  for (int64_t i = 0; i < d.count(); ++i) {
    const auto scores = s.run({cli::slice(all, i, i + 1)}).at(0);
    const float* p = scores.as<float>();
    out.push_back(int(std::max_element(p, p + scores.count()) - p));
  }
  return out;
}

std::vector<Request> mixed_requests(const data::Dataset& d) {
  std::vector<Request> r;
  for (int64_t i = 0; i < 60; ++i) r.push_back({Kind::png, i, png_bytes(d, i), true});
  for (int64_t i = 60; i < 120; ++i) r.push_back({Kind::pgm, i, pgm_bytes(d, i)});
  for (int i = 0; i < 20; ++i) {
    const std::string png = png_bytes(d, 200 + i);
    r.push_back({Kind::truncated, -1, png.substr(0, png.size() * size_t(1 + i % 3) / 4), i % 2 == 0});
  }
  for (int i = 0; i < 7; ++i) r.push_back({Kind::over_limit, -1, std::string(150000, char(i))});
  for (int i = 0; i < 7; ++i) r.push_back({Kind::over_request, -1, std::string(1 << 20, char(i))});
  const uint8_t black = 0;
  std::string bomb = serve::encode_png(&black, 1, 1, 1);
  for (size_t at : {size_t(16), size_t(20)}) bomb.replace(at, 4, std::string("\x00\x00\x13\x88", 4));  // 5000
  for (int i = 0; i < 6; ++i) r.push_back({Kind::pixel_bomb, -1, bomb});
  const char* junk[] = {"hello", "{\"image\": [1, 2, 3]}", "<html>not a picture</html>", "%PDF-1.4 not a picture",
                        "\x89PNX\r\n\x1a\n"};
  for (int i = 0; i < 20; ++i)
    r.push_back({Kind::not_image, -1, std::string(junk[i % 5]) + std::to_string(i), i % 2 == 0});
  for (int i = 0; i < 20; ++i) r.push_back({Kind::empty, -1, "", i % 2 == 0});
  // Interleaved, so good and bad requests overlap on the server's threads.
  std::vector<Request> mixed;
  for (size_t step = 0; step < 7; ++step)
    for (size_t i = step; i < r.size(); i += 7) mixed.push_back(std::move(r[i]));
  return mixed;
}

Answer send(httplib::Client& c, const Request& q) {
  const auto t0 = Clock::now();
  const httplib::MultipartFormDataItems form = {{"image", q.body, "upload", "image/png"}};
  const char* type = q.kind == Kind::pgm ? "image/x-portable-graymap" : "application/octet-stream";
  httplib::Result r = q.multipart ? c.Post("/api/classify", form) : c.Post("/api/classify", q.body, type);
  Answer a;
  a.ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  if (r) {
    a.status = r->status;
    a.body = r->body;
  }
  return a;
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const size_t rank = size_t(std::ceil(p / 100.0 * double(v.size())));
  return v.empty() ? 0 : v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

TEST(ServeLoad, TwoHundredMixedRequestsFromSixteenThreads) {
  if (!have_fashion_mnist()) GTEST_SKIP() << kNoFashionMnist;
  ScratchDir dir;
  const std::string int8 = (dir.path / "tinynet_int8.onnx").string();
  const auto q = run_shell(std::string(OCTET_CLI) + " quantize " + kTinyNet.string() + " -o " + int8 +
                           " --calib-count 32 --no-progress 2>&1");
  ASSERT_EQ(q.status, 0) << q.output;

  data::LoadOptions lo;
  lo.limit = 240;
  const data::Dataset d = data::load_dataset("fashion-mnist:test", lo);
  const std::vector<int> fp32_class = engine_classes(kTinyNet.string(), d), int8_class = engine_classes(int8, d);

  ServerProcess server(kTinyNet.string() + " --int8 " + int8 + " --max-upload-bytes " + std::to_string(kMaxUpload) +
                           " --http-threads 8 --speed-seconds 0 --samples 0",
                       dir.path / "server.log");
  ASSERT_TRUE(server.started()) << "octet serve did not start:\n" << server.log_text();

  const std::vector<Request> requests = mixed_requests(d);
  ASSERT_EQ(requests.size(), 200u);
  // Warm-up: a round of concurrent good requests, so the plans each overlapping run needs exist
  // before the memory is measured.
  auto run_all = [&](const std::vector<Request>& batch, int threads) {
    std::vector<Answer> answers(batch.size());
    std::atomic<size_t> next{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&] {
        httplib::Client c("127.0.0.1", server.port());
        c.set_read_timeout(30);
        c.set_tcp_nodelay(true);  // as browsers send: a request's headers and body at once
        for (size_t i; (i = next++) < batch.size();) answers[i] = send(c, batch[i]);
      });
    for (auto& t : pool) t.join();
    return answers;
  };
  std::vector<Request> warm;
  for (const Request& r : requests)
    if (good(r.kind) && warm.size() < 32) warm.push_back(r);
  for (const Answer& a : run_all(warm, 16)) ASSERT_EQ(a.status, 200) << a.body;
  const long rss_before = server.rss_kib();

  const auto t0 = Clock::now();
  const std::vector<Answer> answers = run_all(requests, 16);
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  const long rss_after = server.rss_kib();

  std::map<std::string, std::map<int, int>> by_kind;  // kind -> status -> count
  std::vector<double> all_ms, good_ms, bad_ms;
  int server_errors = 0, no_answer = 0, wrong_class = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    const Request& q = requests[i];
    const Answer& a = answers[i];
    ++by_kind[name(q.kind)][a.status];
    all_ms.push_back(a.ms);
    (good(q.kind) ? good_ms : bad_ms).push_back(a.ms);
    if (a.status < 0) ++no_answer;
    if (a.status >= 500) ++server_errors;
    EXPECT_EQ(a.status, expected_status(q.kind)) << name(q.kind) << " (request " << i << "): " << a.body;
    const json j = json::parse(a.body, nullptr, false);
    if (a.status < 0) continue;
    EXPECT_TRUE(j.is_object()) << "not JSON: " << a.body;
    if (!j.is_object()) continue;
    if (good(q.kind) && a.status == 200) {
      const int f = j["fp32"]["top"][0]["class"], n = j["int8"]["top"][0]["class"];
      EXPECT_EQ(f, fp32_class[size_t(q.image)]) << "FP32, test image " << q.image;
      EXPECT_EQ(n, int8_class[size_t(q.image)]) << "INT8, test image " << q.image;
      EXPECT_EQ(j["agree"].get<bool>(), f == n);
      wrong_class += f != fp32_class[size_t(q.image)] || n != int8_class[size_t(q.image)];
    } else if (!good(q.kind)) {
      EXPECT_TRUE(j.contains("error") && j["error"].is_string() && !j["error"].get<std::string>().empty()) << a.body;
    }
  }
  EXPECT_EQ(server_errors, 0);
  EXPECT_EQ(no_answer, 0);

  // Still answering afterwards, and the answer is the same as under load.
  httplib::Client after("127.0.0.1", server.port());
  EXPECT_FALSE(get_json(after, "/api/model").is_null());
  const Answer again = send(after, requests[0]);
  EXPECT_EQ(again.status, 200);

  std::printf("load test: %zu requests from 16 threads in %.2f s (%.0f requests/s), server with 8 classification threads\n",
              requests.size(), seconds, double(requests.size()) / seconds);
  for (const auto& [kind, statuses] : by_kind) {
    std::printf("  %-30s", kind.c_str());
    for (const auto& [status, n] : statuses) std::printf("  %d x %d", n, status);
    std::printf("\n");
  }
  std::printf("  5xx: %d, no answer: %d, good answers with another class than the engine's: %d\n", server_errors,
              no_answer, wrong_class);
  std::printf("  latency all p50 %.2f ms p99 %.2f ms; good p50 %.2f ms p99 %.2f ms; bad p50 %.2f ms p99 %.2f ms\n",
              percentile(all_ms, 50), percentile(all_ms, 99), percentile(good_ms, 50), percentile(good_ms, 99),
              percentile(bad_ms, 50), percentile(bad_ms, 99));
  std::printf("  server RSS %.1f MiB before, %.1f MiB after (%+.1f MiB)%s\n", double(rss_before) / 1024,
              double(rss_after) / 1024, double(rss_after - rss_before) / 1024,
              kUnderAddressSanitizer ? " (AddressSanitizer build: not checked, its quarantine holds freed memory)" : "");
  ASSERT_GT(rss_before, 0);
  if (!kUnderAddressSanitizer) {
    EXPECT_LT(rss_after - rss_before, kRssBoundKib);
  }

  EXPECT_EQ(server.stop(SIGTERM), 0) << server.log_text();
}

}  // namespace
}  // namespace octet::testing
