// The page of `octet serve` in a real browser: the server started from the CLI (calibrating
// TinyNet on 32 Fashion-MNIST training images), Debian's headless Chromium opening
// /?sample=N, which makes the page fetch test image N and upload it to /api/classify as a form's
// "image" field, as the file picker does. The DOM Chromium built must show both predictions,
// the same as the API's, and the speed table; the screenshot must not be blank. Skips when
// chromium or Fashion-MNIST is absent. With OCTET_SERVE_KEEP=DIR the screenshot and the DOM are
// copied to DIR for a person to look at.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <regex>

#include "tests/serve/server_process.h"
#include "tests/serve/serve_fixture.h"
#include "tests/util/cli_runner.h"
#include "tests/util/screenshot_ink.h"

namespace octet::testing {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ::testing::HasSubstr;

bool have_chromium() { return run_shell("command -v chromium >/dev/null 2>&1").status == 0; }

// As tests/explain/test_report_browser.cc runs it: no sandbox (root in a container), no GPU, a
// throw-away profile; `timeout` bounds a hung browser. The virtual-time budget lets the page's
// fetches finish before the DOM is dumped or the screenshot taken.
std::string chromium(const ScratchDir& dir, const std::string& what) {
  return "timeout 60 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars "
         "--no-first-run --virtual-time-budget=15000 --user-data-dir=" +
         (dir.path / "profile").string() + " " + what;
}

// The text of every element with this class under the element with this id, in order.
std::vector<std::string> texts(const std::string& dom, const std::string& id, const std::string& cls) {
  const size_t at = dom.find("id=\"" + id + "\"");
  if (at == std::string::npos) return {};
  const size_t end = dom.find("</div></div>", at);
  const std::string part = dom.substr(at, end == std::string::npos ? std::string::npos : end - at);
  std::vector<std::string> out;
  const std::regex re("class=\"" + cls + "\">([^<]*)<");
  for (std::sregex_iterator it(part.begin(), part.end(), re), stop; it != stop; ++it) out.push_back((*it)[1]);
  return out;
}

TEST(ServeBrowser, ThePageShowsBothPredictionsOfAnUploadedTestImage) {
  if (!have_chromium()) GTEST_SKIP() << "chromium is not installed (tools/setup.sh installs it): browser check skipped";
  if (!have_fashion_mnist()) GTEST_SKIP() << kNoFashionMnist;
  ScratchDir dir;
  ServerProcess server(kTinyNet.string() + " --calib fashion-mnist:train --calib-count 32 --speed-seconds 0.1 " +
                           "--no-progress",
                       dir.path / "server.log");
  ASSERT_TRUE(server.started()) << "octet serve did not start:\n" << server.log_text();
  const std::string log = server.log_text();
  EXPECT_THAT(log, HasSubstr("quantized in"));
  EXPECT_THAT(log, HasSubstr("first 32 of fashion-mnist train"));

  httplib::Client client("127.0.0.1", server.port());
  const json model = get_json(client, "/api/model");
  ASSERT_FALSE(model.is_null());
  const json samples = get_json(client, "/api/samples");
  ASSERT_GE(samples["samples"].size(), 8u);
  const int n = 7;  // a test image of its own class
  auto image = client.Get(("/api/samples/" + std::to_string(n) + ".png").c_str());
  ASSERT_TRUE(image && image->status == 200);
  auto api = client.Post("/api/classify", image->body, "image/png");
  ASSERT_TRUE(api && api->status == 200);
  const json want = json::parse(api->body);

  const std::string url = server.url() + "?sample=" + std::to_string(n);
  const fs::path png = dir.path / "serve_page.png", dom_file = dir.path / "serve_page.html";
  const auto dom = run_shell(chromium(dir, "--dump-dom " + url) + " 2>" + (dir.path / "dom.log").string());
  ASSERT_EQ(dom.status, 0) << "chromium --dump-dom failed";
  std::ofstream(dom_file) << dom.output;
  const auto shot =
      run_shell(chromium(dir, "--screenshot=" + png.string() + " --window-size=1200,900 " + url) + " 2>&1");
  EXPECT_EQ(shot.status, 0) << shot.output;
  if (const char* keep = std::getenv("OCTET_SERVE_KEEP"); keep && *keep)
    for (const fs::path& f : {png, dom_file})
      if (fs::exists(f)) fs::copy_file(f, fs::path(keep) / f.filename(), fs::copy_options::overwrite_existing);

  EXPECT_THAT(dom.output, HasSubstr("data-state=\"done\"")) << "the page did not finish classifying:\n" << dom.output;
  for (const char* p : {"fp32", "int8"}) {
    const auto labels = texts(dom.output, p, "label"), pcts = texts(dom.output, p, "pct");
    ASSERT_EQ(labels.size(), 3u) << p << " has no top-3 on the page";
    ASSERT_EQ(pcts.size(), 3u);
    for (size_t k = 0; k < 3; ++k) {
      EXPECT_EQ(labels[k], want[p]["top"][k]["label"].get<std::string>()) << p << " #" << k;
      EXPECT_THAT(pcts[k], ::testing::EndsWith("%"));
    }
  }
  const std::string f = want["fp32"]["top"][0]["label"], q = want["int8"]["top"][0]["label"];
  const std::string truth = samples["samples"][n]["label"];
  const std::string verdict = want["agree"] ? "FP32 and INT8 agree: " + f : "FP32 says " + f + ", INT8 says " + q;
  EXPECT_THAT(dom.output, HasSubstr(verdict));
  EXPECT_THAT(dom.output, HasSubstr("True class: " + truth));
  for (const json& row : model["speed"]) {
    EXPECT_THAT(dom.output, HasSubstr("<td>" + row["isa"].get<std::string>() + "</td>"));
  }
  EXPECT_EQ(model["speed"].size(), model["isa_levels"].size());

  // The screenshot: the page painted (text, bars, thumbnails), not a blank or an error page.
  const auto ink = screenshot_ink(png.string());
  ASSERT_TRUE(ink) << "no screenshot: " << shot.output;
  EXPECT_EQ(ink->width, 1200);
  EXPECT_GT(ink->colours, 50u);
  EXPECT_GT(ink->inked, 0.02);
  std::cout << "page: test image " << n << " (" << truth << "), FP32 " << f
            << ", INT8 " << q << "; screenshot " << ink->width << "x" << ink->height << ", " << ink->colours
            << " colours, " << 100.0 * ink->inked << "% inked\n";
  EXPECT_EQ(server.stop(SIGINT), 0) << server.log_text();
}

}  // namespace
}  // namespace octet::testing
