#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/datasets/temp_files.h"
#include "io/datasets/dataset.h"

namespace octet::data {
namespace {

using testing::idx_images;
using testing::idx_labels;
using ::testing::HasSubstr;

class DatasetIdxTest : public testing::TempDirTest {};

void expect_pattern(const Dataset& d, int64_t count, int rows, int cols) {
  ASSERT_EQ(d.count(), count);
  EXPECT_EQ(d.channels, 1);
  EXPECT_EQ(d.height, rows);
  EXPECT_EQ(d.width, cols);
  ASSERT_EQ(d.pixels.size(), static_cast<size_t>(count * rows * cols));
  for (int64_t i = 0; i < count; ++i) {
    EXPECT_EQ(d.labels[i], i % 10);
    for (int p = 0; p < rows * cols; ++p) ASSERT_EQ(d.image(i)[p], static_cast<uint8_t>(i * 7 + p)) << i << " " << p;
  }
  EXPECT_TRUE(d.sources.empty());
}

TEST_F(DatasetIdxTest, GzippedAndPlainPairsRoundTrip) {
  const std::string gz = write_gz("img.gz", idx_images(25, 4, 3)) + "," + write_gz("lab.gz", idx_labels(25));
  const std::string plain = write("img", idx_images(25, 4, 3)) + "," + write("lab", idx_labels(25));
  expect_pattern(load_dataset("idx:" + gz), 25, 4, 3);
  expect_pattern(load_dataset("idx:" + plain), 25, 4, 3);
}

TEST_F(DatasetIdxTest, LargerThanOneChunkWithProgress) {
  const std::string spec = "idx:" + write_gz("img.gz", idx_images(2500, 5, 5)) + "," + write_gz("lab.gz", idx_labels(2500));
  LoadOptions opt;
  std::vector<int64_t> done;
  opt.progress = [&](int64_t d, int64_t total) {
    EXPECT_EQ(total, 2500);
    done.push_back(d);
  };
  expect_pattern(load_dataset(spec, opt), 2500, 5, 5);
  ASSERT_FALSE(done.empty());
  EXPECT_EQ(done.back(), 2500);
}

TEST_F(DatasetIdxTest, ImagesWithoutLabelsAreUnlabelled) {
  const Dataset d = load_dataset("idx:" + write_gz("img.gz", idx_images(3, 2, 2)));
  ASSERT_EQ(d.count(), 3);
  EXPECT_EQ(d.labels, (std::vector<int>{-1, -1, -1}));
  EXPECT_THAT(d.description, HasSubstr("unlabelled"));
}

TEST_F(DatasetIdxTest, LimitReadsAPrefix) {
  LoadOptions opt;
  opt.limit = 7;
  expect_pattern(load_dataset("idx:" + write_gz("img.gz", idx_images(20, 3, 3)) + "," + write_gz("lab.gz", idx_labels(20)), opt),
                 7, 3, 3);
}

TEST_F(DatasetIdxTest, WrongMagicNamesFileAndOffset) {
  const std::string images = write_gz("img.gz", idx_images(3, 2, 2));
  const std::string labels = write_gz("lab.gz", idx_labels(3));
  try {
    load_dataset("idx:" + labels + "," + images);  // swapped
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr(labels + ": IDX magic 0x00000803 expected at byte 0, found 0x00000801"));
  }
}

TEST_F(DatasetIdxTest, LabelImageCountMismatch) {
  const std::string spec = "idx:" + write_gz("img.gz", idx_images(6, 2, 2)) + "," + write_gz("lab.gz", idx_labels(5));
  try {
    load_dataset(spec);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("has 5 labels"));
    EXPECT_THAT(e.what(), HasSubstr("has 6 images"));
  }
}

TEST_F(DatasetIdxTest, TruncatedPlainDataNamesOffset) {
  std::vector<uint8_t> bytes = idx_images(4, 3, 3);
  bytes.resize(16 + 2 * 9 + 5);  // two images and a part of the third
  const std::string p = write("img", bytes);
  try {
    load_dataset("idx:" + p);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr(p + ": truncated: the data ends at byte offset 39, inside image 2"));
  }
}

TEST_F(DatasetIdxTest, TrailingDataIsAnError) {
  std::vector<uint8_t> bytes = idx_images(2, 2, 2);
  bytes.push_back(0);
  try {
    load_dataset("idx:" + write("img", bytes));
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("after the last image at byte offset 24"));
  }
}

TEST_F(DatasetIdxTest, TruncatedGzipNamesDecompressedOffset) {
  const std::string full = write_gz("full.gz", idx_images(200, 10, 10));
  std::ifstream in(full, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  bytes.resize(bytes.size() / 2);
  const std::string p = write("cut.gz", bytes);
  try {
    load_dataset("idx:" + p);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr(p + ": gzip data truncated: the stream ends after "));
    EXPECT_THAT(e.what(), HasSubstr("decompressed bytes"));
  }
}

TEST_F(DatasetIdxTest, CorruptGzipNamesDecompressedOffset) {
  const std::string full = write_gz("full.gz", idx_images(200, 10, 10));
  std::ifstream in(full, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Damage the CRC in the trailer: every byte inflates, then the check fails.
  bytes[bytes.size() - 6] ^= 0xff;
  const std::string p = write("bad.gz", bytes);
  try {
    load_dataset("idx:" + p);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr(p + ": corrupt gzip data at decompressed byte offset 20016"));
    EXPECT_THAT(e.what(), HasSubstr("incorrect data check"));
  }
}

TEST_F(DatasetIdxTest, MissingFile) {
  EXPECT_THROW(
      {
        try {
          load_dataset("idx:" + path("nope.gz"));
        } catch (const std::runtime_error& e) {
          EXPECT_THAT(e.what(), HasSubstr(path("nope.gz") + ": no such file"));
          throw;
        }
      },
      std::runtime_error);
}

TEST_F(DatasetIdxTest, ConvertsWhenAskedTo) {
  LoadOptions opt;
  opt.channels = 3;
  opt.height = 8;
  opt.width = 6;
  std::vector<uint8_t> bytes = idx_images(2, 4, 4);
  std::fill(bytes.begin() + 16, bytes.end(), 77);
  const Dataset d = load_dataset("idx:" + write("img", bytes), opt);
  EXPECT_EQ(d.channels, 3);
  EXPECT_EQ(d.height, 8);
  EXPECT_EQ(d.width, 6);
  ASSERT_EQ(d.pixels.size(), 2u * 3 * 8 * 6);
  for (uint8_t v : d.pixels) ASSERT_EQ(v, 77);
  EXPECT_THAT(d.description, HasSubstr("converted from 1x4x4 to 3x8x6"));
}

// Found by tests/fuzz/fuzz_datasets: rows and columns of 2^32 - 1 overflowed their signed
// 64-bit product (undefined behaviour) before the size check.
TEST_F(DatasetIdxTest, HugeDimensionsAreRefusedWithoutOverflow) {
  const std::vector<uint8_t> header = {0, 0, 8, 3, 0, 0, 0, 1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 7};
  try {
    load_dataset("idx:" + write("huge", header));
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("implausible image size"));
  }
}

// Found by tests/fuzz/fuzz_datasets: a header announcing many 4096x4096 images reserved
// hundreds of MB before reading any; the reader now grows ~4 MB (or one image) at a time and
// fails as truncated.
TEST_F(DatasetIdxTest, LargeImagesInATinyFileFailAsTruncated) {
  const std::vector<uint8_t> file = {0, 0, 8, 3, 0, 0x0F, 0x42, 0x40, 0, 0, 0x10, 0, 0, 0, 0x10, 0, 1, 2, 3};
  try {
    load_dataset("idx:" + write("big", file));
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("truncated"));
  }
}

}  // namespace
}  // namespace octet::data
