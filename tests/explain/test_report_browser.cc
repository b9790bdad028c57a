// The sample page in a real browser: Debian's headless Chromium takes a screenshot and dumps
// the DOM it built. Checks that the page loads, paints more than a blank page, and that the
// parsed document still has the six sections and every chart. Skips when chromium is absent
// (tools/setup.sh installs it). With OCTET_EXPLAIN_KEEP=DIR, the pages and the screenshot are
// copied to DIR for a person to look at.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include "tests/explain/page_checks.h"
#include "tests/explain/sample_report.h"
#include "tests/util/cli_runner.h"
#include "tests/util/screenshot_ink.h"
#include "apps/explain/atlas.h"
#include "apps/explain/report_html.h"

namespace fs = std::filesystem;
using namespace octet::explain::testing;
using octet::testing::run_shell;
using octet::testing::ScratchDir;

namespace {

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

bool have_chromium() { return run_shell("command -v chromium").status == 0; }

// Headless Chromium as root in a container: no sandbox, no GPU, /tmp instead of a small
// /dev/shm, a throw-away profile so no run touches the user's. `timeout` bounds a hung browser
// well below ctest's limit.
std::string chromium(const ScratchDir& dir, const std::string& what) {
  return "timeout 90 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars "
         "--no-first-run --user-data-dir=" +
         (dir.path / "profile").string() + " " + what;
}

void expect_parsed_page(const std::string& dom, size_t charts) {
  const auto at = section_positions(dom);
  for (size_t i = 0; i < at.size(); ++i) {
    EXPECT_NE(at[i], std::string::npos) << section_ids()[i];
    if (i && at[i] != std::string::npos && at[i - 1] != std::string::npos) {
      EXPECT_GT(at[i], at[i - 1]);
    }
  }
  EXPECT_EQ(count(dom, "<svg"), charts);
  for (const auto& s : svg_sizes(dom)) EXPECT_TRUE(s.width > 0 && s.height > 0);
}

// Renders `html` in Chromium: the DOM it parsed, and a screenshot (unless `screenshot` is empty).
std::string render(const ScratchDir& dir, const std::string& html, const std::string& name,
                   const fs::path& screenshot) {
  const fs::path page = dir.path / (name + ".html"), log = dir.path / (name + ".log");
  std::ofstream(page) << html;
  const std::string url = "file://" + page.string();
  if (!screenshot.empty()) {
    const auto shot =
        run_shell(chromium(dir, "--screenshot=" + screenshot.string() + " --window-size=1200,3000 " + url) + " 2>&1");
    EXPECT_EQ(shot.status, 0) << "chromium --screenshot failed:\n" << shot.output;
  }
  const auto dom = run_shell(chromium(dir, "--dump-dom " + url) + " 2>" + log.string());
  EXPECT_EQ(dom.status, 0) << "chromium --dump-dom failed:\n" << read_text(log);
  if (const char* keep = std::getenv("OCTET_EXPLAIN_KEEP"); keep && *keep) {
    for (const fs::path& file : {page, screenshot})
      if (!file.empty() && fs::exists(file))
        fs::copy_file(file, fs::path(keep) / file.filename(), fs::copy_options::overwrite_existing);
  }
  return dom.output;
}

}  // namespace

TEST(ReportBrowser, ChromiumRendersTheSamplePage) {
  if (!have_chromium()) GTEST_SKIP() << "chromium is not installed (tools/setup.sh installs it): browser check skipped";
  const auto start = std::chrono::steady_clock::now();
  ScratchDir dir;
  const auto report = sample_report();
  const fs::path png = dir.path / "page.png";
  const std::string dom = render(dir, octet::explain::render_report_html(report), "page", png);
  expect_parsed_page(dom, expected_chart_count(report));

  ASSERT_TRUE(fs::exists(png));
  EXPECT_GT(fs::file_size(png), 20u * 1024) << "a blank 1200x3000 page compresses to a few KB";
  const auto ink = octet::testing::screenshot_ink(png.string());
  ASSERT_TRUE(ink) << stbi_failure_reason();
  EXPECT_EQ(ink->width, 1200);
  // Text, tables and coloured bars: many colours, and a fair share of the page not white.
  EXPECT_GT(ink->colours, 100u);
  EXPECT_GT(ink->inked, 0.02);
  std::cout << "chromium: " << ink->colours << " colours, " << 100.0 * ink->inked << "% of the page inked, "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << " s\n";
}

TEST(ReportBrowser, ChromiumParsesTheComparisonPage) {
  if (!have_chromium()) GTEST_SKIP() << "chromium is not installed (tools/setup.sh installs it): browser check skipped";
  ScratchDir dir;
  const auto a = sample_report(), b = sample_report({"Apple M2 Pro", "arm64", {"scalar", "neon", "neondot"}});
  const std::string dom = render(dir, octet::explain::render_comparison_html(a, b), "both", {});
  expect_parsed_page(dom, expected_chart_count(a) + expected_chart_count(b));
  EXPECT_NE(dom.find("Apple M2 Pro"), std::string::npos);
}

TEST(ReportBrowser, ChromiumParsesTheAtlasPage) {
  if (!have_chromium()) GTEST_SKIP() << "chromium is not installed (tools/setup.sh installs it): browser check skipped";
  ScratchDir dir;
  const auto atlas = sample_atlas();
  const std::string dom = render(dir, octet::explain::render_atlas_html(atlas), "atlas", {});
  EXPECT_EQ(count(dom, "<table class=\"heat\">"), 3u);
  size_t cells = 0;
  for (const auto& m : atlas["models"]) {
    cells += m["cells"].size();
    for (const auto& r : m["reasons"]) EXPECT_NE(dom.find("id=\"" + r["anchor"].get<std::string>() + "\""), std::string::npos);
  }
  // Each cell of the two INT8 heat maps and of the octet ÷ ORT table (5 groups at the best level).
  EXPECT_EQ(count(dom, "class=\"cell\""), 2 * cells + atlas["models"].size() * 5 * 2);
}
