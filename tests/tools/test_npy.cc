#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "io/npy.h"

namespace fs = std::filesystem;
using octet::npy::Array;
using octet::npy::DType;

namespace {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "octet-npy-test-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(path_)) names.push_back(e.path().filename().string());
    return names;
  }

 private:
  fs::path path_;
};

std::vector<std::byte> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> c((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> b(c.size());
  std::memcpy(b.data(), c.data(), c.size());
  return b;
}

void write_bytes(const std::string& path, const std::vector<std::byte>& b) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

void write_text(const std::string& path, const std::string& s) {
  std::ofstream out(path, std::ios::binary);
  out << s;
}

// Replaces `from` with `to` (same length) inside the header of an encoded file.
std::vector<std::byte> patch(std::vector<std::byte> b, const std::string& from, const std::string& to) {
  std::string s(reinterpret_cast<const char*>(b.data()), b.size());
  auto at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  EXPECT_EQ(from.size(), to.size());
  std::memcpy(b.data() + at, to.data(), to.size());
  return b;
}

// A deterministic, dtype-valid fill (bool bytes must be 0 or 1).
Array sample(DType dtype, std::vector<int64_t> shape) {
  Array a = octet::npy::make(dtype, std::move(shape));
  const int64_t n = a.count();
  for (int64_t i = 0; i < n; ++i) {
    switch (dtype) {
      case DType::f32: a.as<float>()[i] = 0.25f * static_cast<float>(i) - 3.0f; break;
      case DType::f64: a.as<double>()[i] = 1e300 / static_cast<double>(i + 1); break;
      case DType::u8: a.as<uint8_t>()[i] = static_cast<uint8_t>(255 - i * 7); break;
      case DType::s8: a.as<int8_t>()[i] = static_cast<int8_t>(-128 + i * 11); break;
      case DType::s32: a.as<int32_t>()[i] = static_cast<int32_t>(i * 100003 - 2000000000); break;
      case DType::s64: a.as<int64_t>()[i] = static_cast<int64_t>(i) * 3000000000001LL - (int64_t{1} << 62); break;
      case DType::b8: a.as<bool>()[i] = (i % 3) == 1; break;
    }
  }
  return a;
}

constexpr DType kAllDTypes[] = {DType::f32, DType::f64, DType::u8, DType::s8, DType::s32, DType::s64, DType::b8};

template <class F> void expect_error(F&& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one mentioning " << parts.front();
  } catch (const std::runtime_error& e) {
    for (const auto& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what() << "\n  lacks: " << p;
  }
}

TEST(Npy, RoundTripsEveryDTypeAndShape) {
  TempDir dir;
  const std::vector<std::vector<int64_t>> shapes = {{}, {0}, {2, 0, 3}, {1}, {7}, {2, 3, 5}, {1, 1, 1, 1}};
  for (DType dt : kAllDTypes) {
    for (const auto& shape : shapes) {
      Array a = sample(dt, shape);
      const std::string path = dir.file("a.npy");
      octet::npy::write(path, a);
      Array b = octet::npy::read(path);
      SCOPED_TRACE(octet::npy::describe(a));
      EXPECT_EQ(b.dtype, a.dtype);
      EXPECT_EQ(b.shape, a.shape);
      EXPECT_EQ(b.data, a.data);
      EXPECT_EQ(b.count(), a.count());
    }
  }
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"a.npy"});  // no temporary files left behind
}

TEST(Npy, ScalarHasOneElementAndZeroSizeHasNone) {
  EXPECT_EQ(octet::npy::make(DType::f32, {}).count(), 1);
  EXPECT_EQ(octet::npy::make(DType::f32, {}).data.size(), 4u);
  EXPECT_EQ(octet::npy::make(DType::s64, {3, 0}).count(), 0);
  EXPECT_TRUE(octet::npy::make(DType::s64, {3, 0}).data.empty());
}

TEST(Npy, WritesWhatNumpyWrites) {
  // Bytes np.save(np.arange(6, dtype=np.float32).reshape(2, 3)) produces (numpy 1.24).
  Array a = octet::npy::make_f32({2, 3}, {0, 1, 2, 3, 4, 5});
  std::vector<std::byte> b = octet::npy::encode(a);
  ASSERT_EQ(b.size(), 152u);
  std::string head(reinterpret_cast<const char*>(b.data()), 128);
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  EXPECT_EQ(head.substr(0, 10), std::string("\x93NUMPY\x01\x00\x76\x00", 10));
  EXPECT_EQ(head.substr(10, dict.size()), dict);
  EXPECT_EQ(head.substr(10 + dict.size()), std::string(128 - 10 - dict.size() - 1, ' ') + "\n");
  EXPECT_EQ(std::memcmp(b.data() + 128, a.data.data(), 24), 0);

  auto header = [](const Array& x) {
    std::vector<std::byte> e = octet::npy::encode(x);
    return std::string(reinterpret_cast<const char*>(e.data()), 128);
  };
  EXPECT_NE(header(sample(DType::b8, {3})).find("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }"),
            std::string::npos);
  EXPECT_NE(header(sample(DType::f64, {})).find("{'descr': '<f8', 'fortran_order': False, 'shape': (), }"),
            std::string::npos);
}

TEST(Npy, ReadsVersion2And3Headers) {
  TempDir dir;
  Array a = sample(DType::s32, {3, 2});
  std::vector<std::byte> v1 = octet::npy::encode(a);
  const std::size_t header_len = std::to_integer<std::size_t>(v1[8]) | std::to_integer<std::size_t>(v1[9]) << 8;
  for (int major : {2, 3}) {
    std::vector<std::byte> v(v1.begin(), v1.begin() + 8);
    v[6] = std::byte(major);
    for (int k = 0; k < 4; ++k) v.push_back(std::byte((header_len >> (8 * k)) & 0xff));
    v.insert(v.end(), v1.begin() + 10, v1.end());
    const std::string path = dir.file("v" + std::to_string(major) + ".npy");
    write_bytes(path, v);
    Array b = octet::npy::read(path);
    EXPECT_EQ(b.shape, a.shape);
    EXPECT_EQ(b.data, a.data);
  }
}

TEST(Npy, AcceptsOtherHeaderSpellings) {
  // Keys in another order, double quotes, no trailing comma, '<u1' and Python 2 longs.
  TempDir dir;
  std::string dict = "{\"shape\": (2L, 1L), 'fortran_order': False, 'descr': '<u1'}";
  dict.append(128 - 10 - dict.size() - 1, ' ');
  dict += "\n";
  std::string file = std::string("\x93NUMPY\x01\x00", 8) + char(dict.size()) + '\0' + dict + "\x05\x07";
  write_text(dir.file("x.npy"), file);
  Array a = octet::npy::read(dir.file("x.npy"));
  EXPECT_EQ(a.dtype, DType::u8);
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(a.as<uint8_t>()[1], 7);
}

TEST(Npy, MissingFileNamesThePath) {
  TempDir dir;
  const std::string path = dir.file("nope.npy");
  expect_error([&] { octet::npy::read(path); }, {path, "no such file"});
}

TEST(Npy, TruncatedDataSaysTheByteCounts) {
  TempDir dir;
  std::vector<std::byte> b = octet::npy::encode(sample(DType::f32, {2, 3}));  // 24 data bytes
  b.resize(b.size() - 5);
  const std::string path = dir.file("trunc.npy");
  write_bytes(path, b);
  expect_error([&] { octet::npy::read(path); }, {path, "truncated", "24 bytes", "19"});

  b.resize(60);  // inside the header
  write_bytes(path, b);
  expect_error([&] { octet::npy::read(path); }, {path, "truncated header"});

  b = octet::npy::encode(sample(DType::f32, {2}));
  b.push_back(std::byte{0});
  write_bytes(path, b);
  expect_error([&] { octet::npy::read(path); }, {path, "1 unexpected bytes"});
}

TEST(Npy, BadMagicIsRejected) {
  TempDir dir;
  const std::string path = dir.file("bad.npy");
  write_text(path, "PK\x03\x04 this is a zip, not an npy file");
  expect_error([&] { octet::npy::read(path); }, {path, "bad magic"});
  write_text(path, "");
  expect_error([&] { octet::npy::read(path); }, {path, "bad magic"});
}

TEST(Npy, FortranOrderIsRejected) {
  TempDir dir;
  const std::string path = dir.file("f.npy");
  write_bytes(path, patch(octet::npy::encode(sample(DType::f32, {2, 3})), "False", "True "));
  expect_error([&] { octet::npy::read(path); }, {path, "Fortran"});
}

TEST(Npy, BigEndianIsRejected) {
  TempDir dir;
  const std::string path = dir.file("be.npy");
  write_bytes(path, patch(octet::npy::encode(sample(DType::f32, {2, 3})), "'<f4'", "'>f4'"));
  expect_error([&] { octet::npy::read(path); }, {path, "'>f4'", "big-endian"});
}

TEST(Npy, UnsupportedDTypeAndVersionAreRejected) {
  TempDir dir;
  const std::string path = dir.file("x.npy");
  write_bytes(path, patch(octet::npy::encode(sample(DType::s32, {2})), "'<i4'", "'<f2'"));
  expect_error([&] { octet::npy::read(path); }, {path, "unsupported dtype '<f2'"});
  std::vector<std::byte> b = octet::npy::encode(sample(DType::s32, {2}));
  b[6] = std::byte{4};
  write_bytes(path, b);
  expect_error([&] { octet::npy::read(path); }, {path, "version 4"});
  write_bytes(path, patch(octet::npy::encode(sample(DType::s32, {2})), "'shape': (2,)", "'shape': [2] "));
  expect_error([&] { octet::npy::read(path); }, {path, "malformed header"});
}

TEST(Npy, FailedWriteLeavesNothing) {
  TempDir dir;
  const std::string path = dir.file("missing-dir/a.npy");
  expect_error([&] { octet::npy::write(path, sample(DType::u8, {4})); }, {path});
  EXPECT_TRUE(dir.entries().empty());

  Array bad = sample(DType::f32, {2, 2});
  bad.data.pop_back();  // data does not match the shape
  expect_error([&] { octet::npy::write(dir.file("b.npy"), bad); }, {"b.npy", "16 bytes"});
  EXPECT_TRUE(dir.entries().empty());
}

TEST(Npy, OverwriteReplacesTheFile) {
  TempDir dir;
  const std::string path = dir.file("a.npy");
  octet::npy::write(path, sample(DType::s64, {100}));
  octet::npy::write(path, sample(DType::u8, {2}));
  EXPECT_EQ(octet::npy::read(path).shape, std::vector<int64_t>{2});
  EXPECT_EQ(dir.entries().size(), 1u);
}

TEST(Npy, TypedAccessChecksTheDType) {
  Array a = sample(DType::f32, {2});
  EXPECT_THROW(a.as<double>(), std::logic_error);
  EXPECT_THROW(a.as<int32_t>(), std::logic_error);
  Array b = sample(DType::b8, {3});
  EXPECT_EQ(b.as<uint8_t>()[1], 1);  // bool is readable as bytes
  EXPECT_THROW(octet::npy::make_f32({2, 2}, {1, 2, 3}), std::invalid_argument);
  EXPECT_EQ(octet::npy::dtype_name(DType::s8), "int8");
  EXPECT_EQ(octet::npy::describe(b), "(3,) bool");
}

// A file written by the ONNX Runtime runner's writer (tools/ort/npy.mjs) must read back exactly,
// and octet's writer must produce the same bytes.
TEST(Npy, ReadsFilesWrittenByTheNodeRunner) {
  if (std::system("node --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "node is not installed; run tools/setup.sh";
  TempDir dir;
  const std::string script = dir.file("write.mjs");
  write_text(script, R"(
import { pathToFileURL } from 'node:url';
import path from 'node:path';
const { writeNpy } = await import(pathToFileURL(process.argv[2]).href);
const out = process.argv[3];
writeNpy(path.join(out, 'f32.npy'), { dtype: 'float32', shape: [2, 3], data: Float32Array.from([0.5, -1, 2, 3.25, 1e-30, -0]) });
writeNpy(path.join(out, 'f64.npy'), { dtype: 'float64', shape: [], data: Float64Array.from([Math.PI]) });
writeNpy(path.join(out, 'u8.npy'), { dtype: 'uint8', shape: [3], data: Uint8Array.from([0, 128, 255]) });
writeNpy(path.join(out, 'i8.npy'), { dtype: 'int8', shape: [1, 2], data: Int8Array.from([-128, 127]) });
writeNpy(path.join(out, 'i32.npy'), { dtype: 'int32', shape: [0, 4], data: new Int32Array(0) });
writeNpy(path.join(out, 'i64.npy'), { dtype: 'int64', shape: [2], data: BigInt64Array.from([-(2n ** 63n), 2n ** 40n + 1n]) });
writeNpy(path.join(out, 'b.npy'), { dtype: 'bool', shape: [2, 1], data: Uint8Array.from([1, 0]) });
)");
  const std::string npy_mjs = std::string(OCTET_SOURCE_DIR) + "/tools/ort/npy.mjs";
  const std::string out = dir.file("");
  const std::string cmd = "node '" + script + "' '" + npy_mjs + "' '" + out + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;

  Array f32 = octet::npy::read(dir.file("f32.npy"));
  ASSERT_EQ(f32.dtype, DType::f32);
  EXPECT_EQ(f32.shape, (std::vector<int64_t>{2, 3}));
  const float want[] = {0.5f, -1.f, 2.f, 3.25f, 1e-30f, -0.f};
  EXPECT_EQ(std::memcmp(f32.as<float>(), want, sizeof want), 0);

  Array f64 = octet::npy::read(dir.file("f64.npy"));
  EXPECT_TRUE(f64.shape.empty());
  EXPECT_EQ(f64.as<double>()[0], 3.141592653589793);

  Array u8 = octet::npy::read(dir.file("u8.npy"));
  EXPECT_EQ(u8.as<uint8_t>()[2], 255);
  Array i8 = octet::npy::read(dir.file("i8.npy"));
  EXPECT_EQ(i8.as<int8_t>()[0], -128);
  Array i32 = octet::npy::read(dir.file("i32.npy"));
  EXPECT_EQ(i32.shape, (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(i32.count(), 0);
  Array i64 = octet::npy::read(dir.file("i64.npy"));
  EXPECT_EQ(i64.as<int64_t>()[0], INT64_MIN);
  EXPECT_EQ(i64.as<int64_t>()[1], (int64_t{1} << 40) + 1);
  Array b = octet::npy::read(dir.file("b.npy"));
  ASSERT_EQ(b.dtype, DType::b8);
  EXPECT_TRUE(b.as<bool>()[0]);
  EXPECT_FALSE(b.as<bool>()[1]);

  for (const char* name : {"f32.npy", "f64.npy", "u8.npy", "i8.npy", "i32.npy", "i64.npy", "b.npy"}) {
    const std::string path = dir.file(name);
    EXPECT_EQ(octet::npy::encode(octet::npy::read(path)), read_bytes(path)) << name;
  }
}

}  // namespace
