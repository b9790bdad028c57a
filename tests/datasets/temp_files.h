// Small files the dataset tests write into a fresh temporary folder.
#pragma once

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace octet::data::testing {

namespace fs = std::filesystem;

class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "octet_datasets_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::string write(const std::string& name, const std::vector<uint8_t>& bytes) const {
    const std::string p = path(name);
    fs::create_directories(fs::path(p).parent_path());
    std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    return p;
  }

  std::string write_gz(const std::string& name, const std::vector<uint8_t>& bytes) const {
    const std::string p = path(name);
    gzFile f = gzopen(p.c_str(), "wb");
    EXPECT_NE(f, nullptr);
    EXPECT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
    gzclose(f);
    return p;
  }

  fs::path dir_;
};

inline void put_u32_be(std::vector<uint8_t>& v, uint32_t x) {
  for (int s = 24; s >= 0; s -= 8) v.push_back(static_cast<uint8_t>(x >> s));
}

// IDX images: count images of rows x cols, pixel (i, y, x) = i * 7 + y * cols + x (mod 256).
inline std::vector<uint8_t> idx_images(uint32_t count, uint32_t rows, uint32_t cols) {
  std::vector<uint8_t> v;
  put_u32_be(v, 0x00000803);
  put_u32_be(v, count);
  put_u32_be(v, rows);
  put_u32_be(v, cols);
  for (uint32_t i = 0; i < count; ++i)
    for (uint32_t p = 0; p < rows * cols; ++p) v.push_back(static_cast<uint8_t>(i * 7 + p));
  return v;
}

// IDX labels: label i = i % 10.
inline std::vector<uint8_t> idx_labels(uint32_t count) {
  std::vector<uint8_t> v;
  put_u32_be(v, 0x00000801);
  put_u32_be(v, count);
  for (uint32_t i = 0; i < count; ++i) v.push_back(static_cast<uint8_t>(i % 10));
  return v;
}

}  // namespace octet::data::testing
