#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/datasets/temp_files.h"
#include "io/datasets/dataset.h"

namespace octet::data {
namespace {

using ::testing::HasSubstr;

constexpr int kRecord = 3073;

// Record r: label (r * 3) % 10, plane c pixel p = (r + 2 * c + p) % 256.
std::vector<uint8_t> cifar_records(int count) {
  std::vector<uint8_t> v;
  for (int r = 0; r < count; ++r) {
    v.push_back(static_cast<uint8_t>(r * 3 % 10));
    for (int c = 0; c < 3; ++c)
      for (int p = 0; p < 1024; ++p) v.push_back(static_cast<uint8_t>(r + 2 * c + p));
  }
  return v;
}

class DatasetCifar10Test : public testing::TempDirTest {};

TEST_F(DatasetCifar10Test, ReadsRecords) {
  const std::string file = write("test_batch.bin", cifar_records(3));
  const Dataset d = load_dataset("cifar10:" + file);
  ASSERT_EQ(d.count(), 3);
  EXPECT_EQ(d.channels, 3);
  EXPECT_EQ(d.height, 32);
  EXPECT_EQ(d.width, 32);
  EXPECT_EQ(d.labels, (std::vector<int>{0, 3, 6}));
  ASSERT_EQ(d.class_names.size(), 10u);
  EXPECT_EQ(d.class_names[0], "airplane");
  EXPECT_EQ(d.class_names[9], "truck");
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      for (int p = 0; p < 1024; ++p) ASSERT_EQ(d.image(r)[c * 1024 + p], static_cast<uint8_t>(r + 2 * c + p));
  EXPECT_THAT(d.description, HasSubstr("3 images"));
}

TEST_F(DatasetCifar10Test, SeveralFilesAndLimit) {
  const std::string a = write("a.bin", cifar_records(2)), b = write("b.bin", cifar_records(3));
  const Dataset all = load_dataset("cifar10:" + a + "," + b);
  EXPECT_EQ(all.labels, (std::vector<int>{0, 3, 0, 3, 6}));
  LoadOptions opt;
  opt.limit = 3;
  const Dataset some = load_dataset("cifar10:" + a + "," + b, opt);
  EXPECT_EQ(some.labels, (std::vector<int>{0, 3, 0}));
  EXPECT_EQ(some.pixels.size(), 3u * 3072);
}

TEST_F(DatasetCifar10Test, TruncatedLastRecordNamesFileAndOffset) {
  std::vector<uint8_t> bytes = cifar_records(3);
  bytes.erase(bytes.end() - 2, bytes.end());
  const std::string file = write("test_batch.bin", bytes);
  try {
    load_dataset("cifar10:" + file);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr(file + ": truncated record 2 at byte offset 6146 (file has 9217 bytes; records are "
                                           "3073 bytes)"));
  }
}

TEST_F(DatasetCifar10Test, BadLabel) {
  std::vector<uint8_t> bytes = cifar_records(2);
  bytes[kRecord] = 10;
  try {
    load_dataset("cifar10:" + write("x.bin", bytes));
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("record 1 at byte offset 3073 has label 10"));
  }
}

TEST_F(DatasetCifar10Test, MissingAndEmptyFiles) {
  EXPECT_THROW(load_dataset("cifar10:" + path("nope.bin")), std::runtime_error);
  try {
    load_dataset("cifar10:" + write("empty.bin", {}));
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("empty.bin: empty file"));
  }
}

TEST_F(DatasetCifar10Test, StratifiedIndices) {
  // Labels 0 3 6 9 2 5 8 1 4 7 0 3 6 ...: two per class are the first 20 images.
  const Dataset d = load_dataset("cifar10:" + write("x.bin", cifar_records(25)));
  std::vector<int64_t> want(20);
  for (int i = 0; i < 20; ++i) want[i] = i;
  EXPECT_EQ(stratified_indices(d, 2), want);
  EXPECT_EQ(stratified_indices(d, 1).size(), 10u);
  EXPECT_EQ(stratified_indices(d, 100).size(), 25u);
}

}  // namespace
}  // namespace octet::data
