// `octet eval` end to end, through the CLI as a user runs it.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/util/cli_runner.h"
#include "tests/util/ort_oracle.h"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const fs::path kSource = OCTET_SOURCE_DIR;
const fs::path kShared = kSource / ".." / "shared";

using octet::testing::run_cli;

// Images per model in sanitizer builds, where the reference kernels are ~10x slower.
std::string limit_flag(int64_t release_limit) {
  const char* env = std::getenv("OCTET_EVAL_LIMIT");
#ifdef NDEBUG
  int64_t limit = env ? std::atoll(env) : release_limit;
#else
  int64_t limit = env ? std::atoll(env) : 64;
#endif
  return limit > 0 ? " --limit " + std::to_string(limit) : "";
}

TEST(Eval, ReproducesResNet8AccuracyOnCifarSubset) {
  const fs::path model = kShared / "models" / "resnet8_cifar10_fp32.onnx";
  const fs::path data = kShared / "data" / "cifar10" / "test_subset.bin";
  if (!fs::exists(model) || !fs::exists(data)) GTEST_SKIP() << "../shared (ResNet8 and the CIFAR-10 subset) is absent";
  std::string limit = limit_flag(0);
  auto r = run_cli("eval " + model.string() + " --data cifar10:" + data.string() + limit +
                   " --latency-images 5 --json --no-progress", false);
  ASSERT_EQ(r.status, 0) << r.output;
  json j = json::parse(r.output);
  const auto& acc = j["octet"]["accuracy"];
  if (!limit.empty()) {
    // OCTET_EVAL_LIMIT (the sanitizer stage): the counts of ../shared/models/README.md hold only
    // over all 846 images; here the eval must still have labelled and scored each image it read.
    const int64_t n = std::atoll(limit.substr(limit.rfind(' ') + 1).c_str());
    EXPECT_EQ(acc["labelled"].get<int64_t>(), n);
    int64_t sum = 0;
    for (const auto& c : acc["per_class"]) sum += c["correct"].get<int64_t>();
    EXPECT_EQ(sum, acc["top1_correct"].get<int64_t>());
    EXPECT_GT(acc["top1_correct"].get<int64_t>(), n / 2);
    std::printf("accuracy not compared with the README's 742/846: only %lld images (OCTET_EVAL_LIMIT)\n", (long long)n);
    return;
  }
  // ../shared/models/README.md: 742/846 with per-class counts airplane 63/83 ... truck 91/94.
  EXPECT_EQ(acc["labelled"].get<int64_t>(), 846);
  EXPECT_EQ(acc["top1_correct"].get<int64_t>(), 742);
  std::vector<int64_t> correct;
  for (const auto& c : acc["per_class"]) correct.push_back(c["correct"]);
  EXPECT_EQ(correct, (std::vector<int64_t>{63, 67, 73, 68, 69, 59, 93, 81, 78, 91}));
}

TEST(Eval, BundledModelsMatchOnnxRuntime) {
  if (auto why = octet::testing::ort_unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  int models = 0;
  for (const auto& entry : fs::directory_iterator(kSource / "models")) {
    if (entry.path().extension() != ".onnx" || !fs::exists(fs::path(entry.path()).replace_extension(".json"))) continue;
    ++models;
    auto r = run_cli("eval " + entry.path().string() + limit_flag(2000) +
                     " --compare-ort --latency-images 5 --json --no-progress", false);
    ASSERT_EQ(r.status, 0) << entry.path() << "\n" << r.output;
    json j = json::parse(r.output);
    const auto& o = j["octet"]["accuracy"];
    const auto& t = j["ort"]["accuracy"];
    EXPECT_EQ(o["top1_correct"], t["top1_correct"]) << entry.path();
    EXPECT_EQ(j["agreement"]["same_top1"], j["agreement"]["images"]) << entry.path();
    EXPECT_LE(j["agreement"]["max_abs_diff"].get<double>(), 1e-4 * j["agreement"]["max_abs_ref"].get<double>());
    std::printf("%s: %lld images, octet top-1 %.2f%%, ORT %.2f%%, max |diff| %.3g\n", entry.path().filename().c_str(),
                (long long)o["labelled"].get<int64_t>(), 100 * o["top1"].get<double>(), 100 * t["top1"].get<double>(),
                j["agreement"]["max_abs_diff"].get<double>());
  }
  if (models == 0) GTEST_SKIP() << "no bundled model with a card in models/";
}

TEST(Eval, ClearErrors) {
  const fs::path model = kShared / "models" / "resnet8_cifar10_fp32.onnx";
  if (!fs::exists(model)) GTEST_SKIP() << "../shared is absent";
  // No card and no --data; a dataset whose images do not fit the model; a bad spec.
  for (const std::string& args : {std::string("eval ") + model.string(),
                                   "eval " + model.string() + " --data fashion-mnist:test --limit 10",
                                   "eval " + model.string() + " --data nonsense:x"}) {
    auto r = run_cli(args, false);
    EXPECT_EQ(r.status, 1) << args << "\n" << r.output;
  }
}

}  // namespace
