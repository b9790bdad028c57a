// The real model: MLPerf Tiny ResNet8 (../shared/models) over the CIFAR-10 test subset
// (../shared/data/cifar10/test_subset.bin, 846 images), octet against ONNX Runtime batch by batch.
//
// OCTET_PARITY_LIMIT=<n> checks only the first n images (default: all 846 in optimised builds,
// 128 otherwise, where octet's reference kernels are many times slower). The accuracy is asserted
// only when every image ran.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "engine/session.h"
#include "tests/parity/parity_fixture.h"
#include "io/tensor_io.h"

namespace octet::parity {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kRecordBytes = 3073;  // label + 3x32x32 CHW pixels
constexpr int64_t kSubsetImages = 846;
constexpr int64_t kExpectedCorrect = 742;  // ORT 1.30 and PyTorch on this subset (models/README.md)
constexpr int64_t kBatch = 64;

#ifdef NDEBUG
constexpr int64_t kDefaultLimit = kSubsetImages;
#else
constexpr int64_t kDefaultLimit = 128;
#endif

struct Cifar {
  std::vector<uint8_t> labels;
  std::vector<uint8_t> pixels;  // images x 3072, CHW
  int64_t images() const { return int64_t(labels.size()); }
};

Cifar read_cifar(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() % kRecordBytes)
    throw std::runtime_error(path.string() + ": " + std::to_string(bytes.size()) + " bytes is not a whole number of " +
                             std::to_string(kRecordBytes) + "-byte records");
  Cifar c;
  const int64_t n = int64_t(bytes.size()) / kRecordBytes;
  c.labels.resize(size_t(n));
  c.pixels.resize(size_t(n * (kRecordBytes - 1)));
  for (int64_t i = 0; i < n; ++i) {
    c.labels[size_t(i)] = uint8_t(bytes[size_t(i * kRecordBytes)]);
    std::copy_n(reinterpret_cast<const uint8_t*>(bytes.data()) + i * kRecordBytes + 1, kRecordBytes - 1,
                c.pixels.begin() + i * (kRecordBytes - 1));
  }
  return c;
}

TEST(ResNet8Parity, Cifar10TestSubset) {
  OCTET_SKIP_WITHOUT_ORT();
  const fs::path shared = shared_dir();
  const fs::path model = shared / "models" / "resnet8_cifar10_fp32.onnx";
  const fs::path data = shared / "data" / "cifar10" / "test_subset.bin";
  if (!fs::exists(model) || !fs::exists(data))
    GTEST_SKIP() << "the shared ResNet8 model or CIFAR-10 subset is absent (looked for " << model.string() << " and "
                 << data.string() << "); they live in ../shared next to the project";

  const Cifar cifar = read_cifar(data);
  ASSERT_EQ(cifar.images(), kSubsetImages) << data.string();
  const int64_t limit = std::min(cifar.images(), env_limit("OCTET_PARITY_LIMIT", kDefaultLimit));

  Session session = Session::load(model.string());
  ASSERT_EQ(session.inputs().size(), 1u);
  ASSERT_EQ(session.outputs().size(), 1u);
  const std::string in_name = session.inputs()[0].name, out_name = session.outputs()[0].name;

  Figures total;
  int64_t octet_correct = 0, ort_correct = 0;
  double octet_seconds = 0;
  const auto t_start = std::chrono::steady_clock::now();
  for (int64_t first = 0; first < limit; first += kBatch) {
    const int64_t n = std::min(kBatch, limit - first);
    std::vector<float> x(size_t(n * 3072));
    for (size_t i = 0; i < x.size(); ++i) x[i] = float(cifar.pixels[size_t(first * 3072) + i]);
    const ir::TensorData input = ir::TensorData::f32({n, 3, 32, 32}, x);

    const auto t0 = std::chrono::steady_clock::now();
    const auto ours = session.run({input});
    octet_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto theirs = testing::run_ort(model.string(), {{in_name, to_npy(input)}});

    const npy::Array& ref = theirs.at(out_name);
    const Figures f = compare(ours[0], ref);
    ASSERT_TRUE(f.shape_ok) << "images " << first << ".." << first + n - 1 << ": " << f.shape_note;
    EXPECT_LE(f.max_abs_diff, kRelTolerance * f.max_abs_ref) << "images " << first << ".." << first + n - 1;
    EXPECT_EQ(f.top1_agree, f.top1_rows) << "images " << first << ".." << first + n - 1;
    total.merge(f);

    const auto top_ours = argmax_rows(ours[0].as<float>(), n, 10);
    const auto top_ort = argmax_rows(ref.as<float>(), n, 10);
    for (int64_t i = 0; i < n; ++i) {
      octet_correct += top_ours[size_t(i)] == cifar.labels[size_t(first + i)];
      ort_correct += top_ort[size_t(i)] == cifar.labels[size_t(first + i)];
    }
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();

  report({"resnet8_cifar10", kBatch, out_name + " (" + std::to_string(limit) + " images)", total});
  char line[400];
  std::snprintf(line, sizeof line,
                "[ PARITY   ] resnet8_cifar10: %lld images, max|diff| %.3g, max|ORT| %.4g, ratio %.3g, "
                "top-1 agreement %lld/%lld, accuracy octet %lld/%lld = %.2f%%, ORT %lld/%lld = %.2f%%, "
                "octet %.1f ms/image, wall %.1f s",
                (long long)limit, total.max_abs_diff, total.max_abs_ref, total.ratio(), (long long)total.top1_agree,
                (long long)total.top1_rows, (long long)octet_correct, (long long)limit,
                100.0 * double(octet_correct) / double(limit), (long long)ort_correct, (long long)limit,
                100.0 * double(ort_correct) / double(limit), 1000.0 * octet_seconds / double(limit), wall);
  std::cout << line << std::endl;
  RecordProperty("images", int(limit));
  RecordProperty("max_abs_diff", describe(total));
  RecordProperty("top1_agreement", std::to_string(total.top1_agree) + "/" + std::to_string(total.top1_rows));
  RecordProperty("octet_accuracy", std::to_string(octet_correct) + "/" + std::to_string(limit));
  RecordProperty("ort_accuracy", std::to_string(ort_correct) + "/" + std::to_string(limit));

  EXPECT_EQ(total.top1_agree, limit);
  if (limit == kSubsetImages) {
    EXPECT_EQ(octet_correct, kExpectedCorrect) << "accuracy on the 846-image subset (expected 87.71%)";
    // docs/claims.md: "max |diff| 3.6e-6 on the softmax outputs": the largest seen, on an Intel
    // Xeon with AVX-512 (Sapphire Rapids class), alike at every octet level, so ORT's own FP32
    // kernels differ by CPU there; 2.3e-6 on AMD Zen 5, 1.9e-6 with AVX2.
    EXPECT_LE(total.max_abs_diff, 3.6e-6);
  } else {
    std::cout << "[ PARITY   ] accuracy not asserted: OCTET_PARITY_LIMIT=" << limit << " < " << kSubsetImages
              << " images" << std::endl;
  }
}

}  // namespace
}  // namespace octet::parity
