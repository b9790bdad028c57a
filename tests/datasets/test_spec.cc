// Spec parsing, option checks and the real datasets (skipped when absent).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <map>

#include "io/datasets/dataset.h"

namespace octet::data {
namespace {

using ::testing::HasSubstr;

std::string load_error(const std::string& spec, const LoadOptions& opt = {}) {
  try {
    load_dataset(spec, opt);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "no error";
}

TEST(DatasetSpec, UnknownPrefixListsTheForms) {
  const std::string e = load_error("mnist:foo");
  EXPECT_THAT(e, HasSubstr("unknown dataset 'mnist:foo'"));
  EXPECT_THAT(e, HasSubstr("fashion-mnist[:train|:test][@DIR]"));
  EXPECT_THAT(e, HasSubstr("cifar10:FILE[,FILE...]"));
  EXPECT_THAT(e, HasSubstr("images:DIR"));
  EXPECT_THAT(e, HasSubstr("idx:IMAGES[,LABELS]"));
  EXPECT_THAT(load_error("fashion-mnistx"), HasSubstr("unknown dataset"));
}

TEST(DatasetSpec, MalformedSpecs) {
  EXPECT_THAT(load_error("cifar10"), HasSubstr("names no file or folder"));
  EXPECT_THAT(load_error("cifar10:a.bin,"), HasSubstr("empty file name"));
  EXPECT_THAT(load_error("idx:a,b,c"), HasSubstr("expected idx:IMAGES[,LABELS]"));
  EXPECT_THAT(load_error("fashion-mnist:validation"), HasSubstr("unknown split 'validation'"));
  EXPECT_THAT(load_error("fashion-mnist@/nonexistent/dir"), HasSubstr("/nonexistent/dir: no such directory"));
}

TEST(DatasetSpec, BadOptions) {
  LoadOptions opt;
  opt.channels = 2;
  EXPECT_THAT(load_error("images:/tmp", opt), HasSubstr("1 or 3 channels, not 2"));
  opt.channels = 0;
  opt.height = 5;
  EXPECT_THAT(load_error("images:/tmp", opt), HasSubstr("both a height and a width"));
  opt.height = 0;
  opt.limit = -2;
  EXPECT_THAT(load_error("images:/tmp", opt), HasSubstr("limit"));
}

TEST(DatasetSpec, StratifiedSkipsUnlabelledAndChecksCount) {
  Dataset d;
  d.labels = {2, -1, 2, 0, 2, 0, 1};
  EXPECT_EQ(stratified_indices(d, 1), (std::vector<int64_t>{0, 3, 6}));
  EXPECT_EQ(stratified_indices(d, 2), (std::vector<int64_t>{0, 2, 3, 5, 6}));
  EXPECT_THROW(stratified_indices(d, 0), std::runtime_error);
}

constexpr const char* kFashionDir = "/usr/share/datasets/fashion-mnist";

TEST(DatasetRealData, FashionMnistTestSplit) {
  if (!std::filesystem::exists(std::string(kFashionDir) + "/t10k-images-idx3-ubyte.gz"))
    GTEST_SKIP() << kFashionDir << " is absent (Debian package dataset-fashion-mnist)";
  const auto start = std::chrono::steady_clock::now();
  const Dataset d = load_dataset("fashion-mnist");
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("fashion-mnist test split loaded in %.1f ms: %s\n", ms, d.description.c_str());
  ASSERT_EQ(d.count(), 10000);
  EXPECT_EQ(d.channels, 1);
  EXPECT_EQ(d.height, 28);
  EXPECT_EQ(d.width, 28);
  EXPECT_EQ(d.pixels.size(), 10000u * 784);
  std::map<int, int> per_class;
  for (int label : d.labels) ++per_class[label];
  ASSERT_EQ(per_class.size(), 10u);
  for (const auto& [label, n] : per_class) EXPECT_EQ(n, 1000) << "class " << label;
  ASSERT_EQ(d.class_names.size(), 10u);
  EXPECT_EQ(d.class_names[0], "T-shirt/top");
  EXPECT_EQ(d.class_names[9], "Ankle boot");
  EXPECT_EQ(d.description, "fashion-mnist test (10000 images, /usr/share/datasets/fashion-mnist)");
  EXPECT_EQ(stratified_indices(d, 10).size(), 100u);
}

TEST(DatasetRealData, FashionMnistTrainLimit) {
  if (!std::filesystem::exists(std::string(kFashionDir) + "/train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << kFashionDir << " is absent (Debian package dataset-fashion-mnist)";
  LoadOptions opt;
  opt.limit = 100;
  const Dataset d = load_dataset("fashion-mnist:train@" + std::string(kFashionDir), opt);
  EXPECT_EQ(d.count(), 100);
  EXPECT_THAT(d.description, HasSubstr("fashion-mnist train (100 images"));
}

TEST(DatasetRealData, Cifar10TestSubset) {
  const std::string file = OCTET_SOURCE_DIR "/../shared/data/cifar10/test_subset.bin";
  if (!std::filesystem::exists(file)) GTEST_SKIP() << file << " is absent (the shared data folder)";
  const Dataset d = load_dataset("cifar10:" + file);
  ASSERT_EQ(d.count(), 846);
  EXPECT_EQ(std::vector<int>(d.labels.begin(), d.labels.begin() + 10), (std::vector<int>{3, 8, 8, 0, 6, 6, 1, 6, 3, 1}));
  std::map<int, int> per_class;
  for (int label : d.labels) ++per_class[label];
  EXPECT_EQ(per_class[0], 83);  // the counts of ../shared/data/cifar10/README.md
  EXPECT_EQ(per_class[6], 97);
  EXPECT_EQ(stratified_indices(d, 5).size(), 50u);
}

}  // namespace
}  // namespace octet::data
