// The HTTP answers of `octet serve`, in process: the server of apps/serve/routes.cc over
// TinyNet (FP32, and INT8 by dynamic quantization: no dataset needed) on a loopback port, asked
// by httplib's client (or by hand, for requests it will not send). Every refusal is a 4xx with a
// JSON {"error": ...} that says why.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "calib/calibrate.h"
#include "tests/serve/raw_http.h"
#include "calib/quantize.h"
#include "loader/onnx_loader.h"
#include "apps/cli/model_inputs.h"
#include "apps/serve/routes.h"
#include "apps/serve/stb_codecs.h"

namespace octet::serve {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ::testing::HasSubstr;

const fs::path kTinyNet = fs::path(OCTET_SOURCE_DIR) / "models" / "tinynet.onnx";

std::string png_of(uint8_t value, int w = 28, int h = 28) {
  const std::vector<uint8_t> gray(size_t(w) * size_t(h), value);
  return encode_png(gray.data(), w, h, 1);
}

class ServeRoutes : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const ir::Graph fp32 = loader::load_onnx(kTinyNet.string());
    const ir::Graph int8 = calib::quantize_dynamic(calib::prepare_for_quantization(fp32), {});
    state_ = new ServerState;
    state_->card = find_model_card(kTinyNet.string()).value_or(ModelCard{});
    state_->limits.max_bytes = 20000;
    state_->gallery.data = "one gray square";
    state_->gallery.samples.push_back({3, png_of(90)});
    const TensorSpec input = cli::image_input(fp32, kTinyNet.string());
    const ir::TensorData probe = prepare_image(png_of(0), input, state_->card, state_->limits).input;
    classifier_ = new Classifier(Session(fp32), Session(int8), state_->card.classes, false, probe);
    state_->classifier = classifier_;
    state_->model = {{"model", "tinynet"}};
    server_ = new GuardedServer(ConnectionLimits{});
    setup_server(*server_, *state_, 4);
    port_ = bind_server(*server_, "127.0.0.1", 0);
    thread_ = new std::thread([] { server_->listen_after_bind(); });
  }
  static void TearDownTestSuite() {
    server_->stop();
    thread_->join();
    delete thread_;
    delete server_;
    delete classifier_;
    delete state_;
  }
  void SetUp() override { ASSERT_GT(port_, 0) << "could not bind a loopback port"; }

  httplib::Client client() const { return httplib::Client("127.0.0.1", port_); }

  // A refusal: its status, and the message of its JSON body.
  static std::string error_of(const httplib::Result& r) {
    if (!r) return "no answer: " + httplib::to_string(r.error());
    EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
    const json j = json::parse(r->body, nullptr, false);
    return j.is_object() && j.contains("error") && j["error"].is_string() ? j["error"].get<std::string>()
                                                                          : "not a JSON error: " + r->body;
  }

  static inline ServerState* state_ = nullptr;
  static inline Classifier* classifier_ = nullptr;
  static inline GuardedServer* server_ = nullptr;
  static inline std::thread* thread_ = nullptr;
  static inline int port_ = 0;
};

TEST_F(ServeRoutes, ThePageIsSelfContained) {
  auto r = client().Get("/");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_THAT(r->get_header_value("Content-Type"), HasSubstr("text/html"));
  EXPECT_THAT(r->body, HasSubstr("/api/classify"));
  // No script, style, image or font from elsewhere: no absolute URL in any attribute or url().
  EXPECT_FALSE(std::regex_search(r->body, std::regex(R"((src|href)\s*=\s*["']?(https?:)?//)")));
  EXPECT_FALSE(std::regex_search(r->body, std::regex(R"(url\(\s*["']?(https?:)?//)")));
  EXPECT_FALSE(std::regex_search(r->body, std::regex(R"(@import)")));
  EXPECT_THAT(r->get_header_value("Content-Security-Policy"), HasSubstr("default-src 'self'"));
}

TEST_F(ServeRoutes, ClassifiesARawBodyAndAMultipartField) {
  const std::string image = png_of(200);
  auto raw = client().Post("/api/classify", image, "image/png");
  ASSERT_TRUE(raw);
  ASSERT_EQ(raw->status, 200) << raw->body;
  const json a = json::parse(raw->body);
  for (const char* p : {"fp32", "int8"}) {
    ASSERT_EQ(a[p]["top"].size(), 3u) << a.dump();
    double previous = 1.0;
    for (const json& t : a[p]["top"]) {
      EXPECT_LE(t["probability"].get<double>(), previous);
      previous = t["probability"];
      EXPECT_EQ(t["label"], state_->card.classes.at(t["class"].get<size_t>()));
    }
    EXPECT_GT(a[p]["ms"].get<double>(), 0.0);
  }
  EXPECT_EQ(a["agree"], a["fp32"]["top"][0]["class"] == a["int8"]["top"][0]["class"]);
  EXPECT_EQ(a["image"], json({{"width", 28}, {"height", 28}, {"channels", 1}, {"resized", false}}));

  httplib::MultipartFormDataItems form = {{"image", image, "shoe.png", "image/png"}};
  auto multipart = client().Post("/api/classify", form);
  ASSERT_TRUE(multipart);
  ASSERT_EQ(multipart->status, 200) << multipart->body;
  const json b = json::parse(multipart->body);
  EXPECT_EQ(b["fp32"]["top"], a["fp32"]["top"]);
  EXPECT_EQ(b["int8"]["top"], a["int8"]["top"]);
}

TEST_F(ServeRoutes, BadUploadsAnswer4xxWithAReason) {
  auto c = client();
  auto empty = c.Post("/api/classify", "", "image/png");
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->status, 400);
  EXPECT_THAT(error_of(empty), HasSubstr("empty"));

  auto text = c.Post("/api/classify", "just some words", "text/plain");
  ASSERT_TRUE(text);
  EXPECT_EQ(text->status, 415);
  EXPECT_THAT(error_of(text), HasSubstr("not a readable image"));

  const std::string image = png_of(10);
  auto truncated = c.Post("/api/classify", image.substr(0, image.size() - 20), "image/png");
  ASSERT_TRUE(truncated);
  EXPECT_EQ(truncated->status, 400);
  EXPECT_THAT(error_of(truncated), HasSubstr("upload"));

  // Over the upload limit but within the request limit: the handler's answer.
  auto big = c.Post("/api/classify", std::string(30000, 'x'), "application/octet-stream");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);
  EXPECT_THAT(error_of(big), HasSubstr("at most 20000 bytes"));
  // Over the request limit: httplib's answer, read to the end and given a JSON reason too.
  auto huge = c.Post("/api/classify", std::string(20000 + kMultipartRoom + 1, 'x'), "application/octet-stream");
  ASSERT_TRUE(huge);
  EXPECT_EQ(huge->status, 413);
  EXPECT_THAT(error_of(huge), HasSubstr("--max-upload-bytes"));

  httplib::MultipartFormDataItems other = {{"picture", image, "a.png", "image/png"}};
  auto no_field = c.Post("/api/classify", other);
  ASSERT_TRUE(no_field);
  EXPECT_EQ(no_field->status, 400);
  EXPECT_THAT(error_of(no_field), HasSubstr("no field 'image' (it has 'picture')"));
  httplib::MultipartFormDataItems empty_field = {{"image", "", "a.png", "image/png"}};
  auto empty_part = c.Post("/api/classify", empty_field);
  ASSERT_TRUE(empty_part);
  EXPECT_EQ(empty_part->status, 400);
}

TEST_F(ServeRoutes, UnknownPathsAndMethodsAnswerJson) {
  auto c = client();
  auto missing = c.Get("/nothing/here");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_THAT(error_of(missing), HasSubstr("/nothing/here"));
  auto get = c.Get("/api/classify");
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 405);
  EXPECT_THAT(error_of(get), HasSubstr("POST"));
  auto sample = c.Get("/api/samples/7.png");
  ASSERT_TRUE(sample);
  EXPECT_EQ(sample->status, 404);
  EXPECT_THAT(error_of(sample), HasSubstr("the gallery has 1"));
}

TEST_F(ServeRoutes, WrongMethodsOnKnownPathsAnswer405WithAllow) {
  auto c = client();
  auto put = c.Put("/api/classify", png_of(3), "image/png");
  ASSERT_TRUE(put);
  EXPECT_EQ(put->status, 405);
  EXPECT_EQ(put->get_header_value("Allow"), "POST");
  EXPECT_THAT(error_of(put), HasSubstr("PUT is not allowed on /api/classify"));
  for (const char* path : {"/", "/api/model", "/api/samples", "/api/samples/0.png"}) {
    auto del = c.Delete(path);
    ASSERT_TRUE(del);
    EXPECT_EQ(del->status, 405) << path;
    EXPECT_EQ(del->get_header_value("Allow"), "GET, HEAD") << path;
    auto post = c.Post(path, "x", "text/plain");
    ASSERT_TRUE(post);
    EXPECT_EQ(post->status, 405) << path;
  }
  auto patch = c.Patch("/api/model", "{}", "application/json");
  ASSERT_TRUE(patch);
  EXPECT_EQ(patch->status, 405);
  auto options = c.Options("/api/classify");
  ASSERT_TRUE(options);
  EXPECT_EQ(options->status, 204);
  EXPECT_EQ(options->get_header_value("Allow"), "POST");
  auto head = c.Head("/api/model");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  auto put_nowhere = c.Put("/no/such/thing", "x", "text/plain");
  ASSERT_TRUE(put_nowhere);
  EXPECT_EQ(put_nowhere->status, 404);
  // The connection is still in step after the refused bodies.
  auto model = c.Get("/api/model");
  ASSERT_TRUE(model);
  EXPECT_EQ(model->status, 200);
}

// The body's framing is checked before it is read, so that no client can make the server read
// forever, skip 2^64 bytes or inflate a compressed body.
TEST_F(ServeRoutes, BodyFramingIsCheckedBeforeTheBodyIsRead) {
  struct Case {
    const char* headers;
    int status;
    const char* says;
  };
  const std::string start = "POST /api/classify HTTP/1.1\r\nHost: t\r\nContent-Type: image/png\r\n";
  for (const Case& k : {Case{"Content-Length: -1\r\n", 400, "Content-Length '-1' is not a number of bytes"},
                        Case{"Content-Length: 12abc\r\n", 400, "not a number of bytes"},
                        Case{"Content-Length: 99999999999999999999\r\n", 400, "not a number of bytes"},
                        Case{"Content-Length: 5\r\nContent-Length: 6\r\n", 400, "several different Content-Length"},
                        Case{"Content-Length: 90000000\r\n", 413, "--max-upload-bytes"},
                        Case{"", 411, "Content-Length"},
                        Case{"Transfer-Encoding: gzip\r\n", 501, "Transfer-Encoding 'gzip'"},
                        Case{"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n", 400, "both"},
                        Case{"Content-Length: 20\r\nContent-Encoding: gzip\r\n", 415, "Content-Encoding 'gzip'"}}) {
    testing::RawConnection raw(port_);
    const auto t0 = std::chrono::steady_clock::now();
    raw.send(start + k.headers + "\r\n");
    const std::string answer = raw.read_all(5);
    EXPECT_EQ(testing::http_status(answer), k.status) << k.headers << answer;
    EXPECT_THAT(testing::http_body(answer), HasSubstr(k.says)) << k.headers;
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.0) << k.headers;
  }
  // A chunked body is read, but not past the request limit.
  testing::RawConnection raw(port_);
  raw.send(start + "Transfer-Encoding: chunked\r\n\r\n");
  const std::string chunk = std::string("8000\r\n") + std::string(0x8000, 'x') + "\r\n";
  for (size_t sent = 0; sent < 20000 + kMultipartRoom + (size_t{128} << 10); sent += 0x8000)
    if (!raw.send(chunk)) break;
  const std::string answer = raw.read_all(5);
  EXPECT_EQ(testing::http_status(answer), 413) << answer;
}

TEST_F(ServeRoutes, ModelAndGallery) {
  auto c = client();
  auto model = c.Get("/api/model");
  ASSERT_TRUE(model);
  EXPECT_EQ(json::parse(model->body)["model"], "tinynet");
  auto samples = c.Get("/api/samples");
  ASSERT_TRUE(samples);
  const json s = json::parse(samples->body);
  ASSERT_EQ(s["samples"].size(), 1u);
  EXPECT_EQ(s["samples"][0], json({{"index", 0}, {"class", 3}, {"label", "Dress"}, {"url", "/api/samples/0.png"}}));
  auto png = c.Get("/api/samples/0.png");
  ASSERT_TRUE(png);
  EXPECT_EQ(png->get_header_value("Content-Type"), "image/png");
  EXPECT_EQ(png->body, state_->gallery.samples[0].png);
}

}  // namespace
}  // namespace octet::serve
