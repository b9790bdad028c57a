// Uploads to model inputs: each format stb_image reads, channel conversion, resizing, the
// card's normalization (the same numbers `octet eval` feeds), and the status of every refusal;
// PNG streams bounded by their declared size while inflating, and the memory budget of decodes.
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "tests/serve/test_png.h"
#include "apps/cli/model_inputs.h"
#include "io/datasets/image_decode.h"
#include "apps/serve/classifier.h"
#include "apps/serve/image_input.h"
#include "apps/serve/memory_budget.h"
#include "apps/serve/no_paths.h"
#include "apps/serve/request_error.h"
#include "apps/serve/stb_codecs.h"

namespace octet::serve {
namespace {

using ::testing::HasSubstr;

const TensorSpec kGray28{"input", ir::DType::f32, {-1, 1, 28, 28}};
const TensorSpec kRgb8{"input", ir::DType::f32, {-1, 3, 8, 8}};

ModelCard fashion_card() {
  ModelCard c;
  c.scale = 1.0f / 255;
  c.mean = {0.286f};
  c.stddev = {0.353f};
  return c;
}

std::vector<uint8_t> pattern(int w, int h, int seed) {
  std::vector<uint8_t> p(size_t(w) * size_t(h));
  for (size_t i = 0; i < p.size(); ++i) p[i] = uint8_t((i * 37 + size_t(seed) * 11) % 256);
  return p;
}

std::string png(const std::vector<uint8_t>& hwc, int w, int h, int c) { return encode_png(hwc.data(), w, h, c); }

std::string pgm(const std::vector<uint8_t>& gray, int w, int h) {
  std::string s = "P5\n" + std::to_string(w) + " " + std::to_string(h) + "\n255\n";
  s.append(gray.begin(), gray.end());
  return s;
}

std::string jpeg(const std::vector<uint8_t>& hwc, int w, int h, int c) {
  std::string out;
  auto append = [](void* ctx, void* data, int n) {
    static_cast<std::string*>(ctx)->append(static_cast<char*>(data), size_t(n));
  };
  stbi_write_jpg_to_func(append, &out, w, h, c, hwc.data(), 100);
  return out;
}

// What `octet eval` feeds the model for these pixels.
std::vector<float> eval_input(const std::vector<uint8_t>& chw, const ModelCard& card, const TensorSpec& spec) {
  data::Dataset d;
  d.channels = int(spec.dims[1]);
  d.height = int(spec.dims[2]);
  d.width = int(spec.dims[3]);
  d.pixels = chw;
  d.labels = {-1};
  const ir::TensorData t = cli::make_inputs(d, card, spec);
  return {t.as<float>(), t.as<float>() + t.count()};
}

std::vector<float> values(const PreparedImage& p) {
  return {p.input.as<float>(), p.input.as<float>() + p.input.count()};
}

int refusal(std::string_view bytes, const UploadLimits& limits = {}, std::string* message = nullptr) {
  try {
    prepare_image(bytes, kGray28, fashion_card(), limits);
  } catch (const RequestError& e) {
    if (message) *message = e.what();
    return e.status;
  }
  return 200;
}

TEST(ServeImageInput, PngAndPgmAtTheModelSizeGiveExactlyTheEvalInput) {
  const auto gray = pattern(28, 28, 1);
  const auto want = eval_input(gray, fashion_card(), kGray28);
  for (const std::string& bytes : {png(gray, 28, 28, 1), pgm(gray, 28, 28)}) {
    const PreparedImage p = prepare_image(bytes, kGray28, fashion_card(), {});
    EXPECT_EQ(p.input.dims, (ir::Dims{1, 1, 28, 28}));
    EXPECT_EQ(values(p), want);
    EXPECT_FALSE(p.resized);
    EXPECT_EQ(p.channels, 1);
  }
}

TEST(ServeImageInput, JpegDecodesCloseToTheOriginal) {
  std::vector<uint8_t> gray(28 * 28, 180);
  const PreparedImage p = prepare_image(jpeg(gray, 28, 28, 1), kGray28, fashion_card(), {});
  const float want = (180.0f / 255 - 0.286f) / 0.353f;
  for (float v : values(p)) EXPECT_NEAR(v, want, 2.0f / 255 / 0.353f);
}

TEST(ServeImageInput, RgbBecomesGrayByLumaAndGrayBecomesRgbByReplication) {
  std::vector<uint8_t> rgb;
  for (int i = 0; i < 28 * 28; ++i) rgb.insert(rgb.end(), {200, 100, 50});
  const PreparedImage g = prepare_image(png(rgb, 28, 28, 3), kGray28, fashion_card(), {});
  EXPECT_EQ(g.channels, 3);
  const int luma = (299 * 200 + 587 * 100 + 114 * 50 + 500) / 1000;
  EXPECT_EQ(values(g), eval_input(std::vector<uint8_t>(28 * 28, uint8_t(luma)), fashion_card(), kGray28));

  const auto gray = pattern(8, 8, 2);
  const PreparedImage c = prepare_image(png(gray, 8, 8, 1), kRgb8, ModelCard{}, {});
  const auto v = values(c);
  ASSERT_EQ(v.size(), 3u * 64);
  for (int k = 0; k < 64; ++k) {
    EXPECT_EQ(v[size_t(k)], float(gray[size_t(k)]));
    EXPECT_EQ(v[size_t(64 + k)], float(gray[size_t(k)]));
    EXPECT_EQ(v[size_t(128 + k)], float(gray[size_t(k)]));
  }
}

TEST(ServeImageInput, AlphaIsDropped) {
  std::vector<uint8_t> ga;
  for (int i = 0; i < 28 * 28; ++i) ga.insert(ga.end(), {uint8_t(i % 256), uint8_t(i % 7 * 30)});
  std::vector<uint8_t> gray;
  for (int i = 0; i < 28 * 28; ++i) gray.push_back(uint8_t(i % 256));
  EXPECT_EQ(values(prepare_image(png(ga, 28, 28, 2), kGray28, fashion_card(), {})),
            eval_input(gray, fashion_card(), kGray28));
}

TEST(ServeImageInput, LargerImagesAreFilteredDownToTheModelSize) {
  // Left half black, right half white, 10x the model's size: the halves survive the resize and
  // a constant image stays constant.
  std::vector<uint8_t> halves(280 * 280);
  for (int y = 0; y < 280; ++y)
    for (int x = 0; x < 280; ++x) halves[size_t(y * 280 + x)] = x < 140 ? 0 : 255;
  const auto fitted = fit_pixels(halves, 1, 280, 280, 1, 28, 28);
  ASSERT_EQ(fitted.size(), 28u * 28);
  for (int y = 0; y < 28; ++y) {
    EXPECT_EQ(fitted[size_t(y * 28 + 3)], 0);
    EXPECT_EQ(fitted[size_t(y * 28 + 24)], 255);
  }
  const std::string flat = png(std::vector<uint8_t>(280 * 200, 77), 280, 200, 1);
  const PreparedImage p = prepare_image(flat, kGray28, ModelCard{}, {});
  EXPECT_TRUE(p.resized);
  EXPECT_EQ(p.width, 280);
  EXPECT_EQ(p.height, 200);
  for (float v : values(p)) EXPECT_EQ(v, 77.0f);
}

TEST(ServeImageInput, RefusalsHaveTheirStatusAndSayWhy) {
  std::string why;
  EXPECT_EQ(refusal("", {}, &why), 400);
  EXPECT_THAT(why, HasSubstr("empty"));
  EXPECT_EQ(refusal("hello, this is not an image", {}, &why), 415);
  EXPECT_THAT(why, HasSubstr("not a readable image"));
  EXPECT_EQ(refusal("{\"image\": \"cat.png\"}"), 415);

  const std::string good = png(pattern(28, 28, 3), 28, 28, 1);
  EXPECT_EQ(refusal(std::string_view(good).substr(0, good.size() / 2), {}, &why), 400);
  EXPECT_THAT(why, HasSubstr("upload: "));

  UploadLimits small;
  small.max_bytes = good.size() - 1;
  EXPECT_EQ(refusal(good, small, &why), 413);
  EXPECT_THAT(why, HasSubstr("at most " + std::to_string(good.size() - 1) + " bytes"));

  // A 1x1 PNG whose header announces 5000 x 5000 pixels: refused from the header, not decoded.
  std::string bomb = png({0}, 1, 1, 1);
  for (int i = 0; i < 4; ++i) bomb[size_t(16 + i)] = bomb[size_t(20 + i)] = char(i == 2 ? 0x13 : i == 3 ? 0x88 : 0);
  EXPECT_EQ(refusal(bomb, {}, &why), 413);
  EXPECT_THAT(why, HasSubstr("5000x5000 pixels"));
  UploadLimits few;
  few.max_pixels = 28 * 28 - 1;
  EXPECT_EQ(refusal(good, few), 413);
}

TEST(ServeImageInput, HostileJpegIsRefusedBeforeDecoding) {
  // The Huffman table stb_image would overflow (io/datasets/image_decode.h).
  std::string jpg = "\xFF\xD8\xFF\xC4";
  std::string table(1, '\0');
  table.append(16, char(17));
  for (int i = 0; i < 272; ++i) table.push_back(char(i));
  jpg.push_back(char((table.size() + 2) >> 8));
  jpg.push_back(char((table.size() + 2) & 0xFF));
  jpg += table + "\xFF\xD9";
  std::string why;
  EXPECT_EQ(refusal(jpg, {}, &why), 400);
  EXPECT_THAT(why, HasSubstr("Huffman"));
}

using testing::png_bomb;
using testing::png_file;
using testing::zlib_of;

// A PNG's raw rows (filter byte 0 and the samples) for a width x height image of `bits` a
// pixel, Adam7 passes one after the other when interlaced: what its zlib stream must hold.
std::string png_rows(int w, int h, int bits, bool interlaced, uint8_t value = 0x5A) {
  auto rows = [&](int pw, int ph) {
    std::string r;
    if (pw == 0 || ph == 0) return r;
    for (int y = 0; y < ph; ++y) r += '\0' + std::string(size_t((pw * bits + 7) / 8), char(value));
    return r;
  };
  if (!interlaced) return rows(w, h);
  const int x0[7] = {0, 4, 0, 2, 0, 1, 0}, y0[7] = {0, 0, 4, 0, 2, 0, 1};
  const int dx[7] = {8, 8, 4, 4, 2, 2, 1}, dy[7] = {8, 8, 8, 4, 4, 2, 2};
  std::string all;
  for (int p = 0; p < 7; ++p) all += rows((w - x0[p] + dx[p] - 1) / dx[p], (h - y0[p] + dy[p] - 1) / dy[p]);
  return all;
}

int decode_refusal(const std::string& png, std::string* message = nullptr) {
  try {
    data::decode_image(reinterpret_cast<const uint8_t*>(png.data()), png.size(), "t.png");
  } catch (const data::ImageDecodeError& e) {
    if (message) *message = e.what();
    return int(e.kind);
  }
  return -1;
}
constexpr int kOverDeclared = int(data::ImageDecodeError::Kind::over_declared);
constexpr int kDamaged = int(data::ImageDecodeError::Kind::damaged);

TEST(ServeImageInput, APngBombIsRefusedWhileInflatingNotAfter) {
  // Declares 28x28 (812 bytes of rows), inflates to 256 MiB: refused after the first 64 KiB
  // piece, in far less time than inflating it all would take.
  const std::string bomb = png_bomb(28, 28, uint64_t{256} << 20);
  EXPECT_LT(bomb.size(), 400000u);
  std::string why;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(refusal(bomb, {}, &why), 413);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 0.5);
  EXPECT_THAT(why, HasSubstr("decompression bomb"));
  EXPECT_THAT(why, HasSubstr("812 bytes its declared 28x28 pixels need"));
  EXPECT_EQ(decode_refusal(bomb), kOverDeclared);
}

TEST(ServeImageInput, PngStreamsUpToTheirDeclaredRowsDecode) {
  struct Case {
    int w, h, depth, color;
    bool interlaced;
  };
  // Gray, 1-bit gray, RGB, palette-free RGBA 16-bit, gray + alpha; plain and Adam7 (whose
  // passes each add filter bytes), including sizes smaller than a pass's 8-pixel step.
  for (const Case c : {Case{28, 28, 8, 0, false}, Case{28, 28, 8, 0, true}, Case{13, 5, 1, 0, false},
                       Case{13, 5, 1, 0, true}, Case{9, 3, 8, 2, true}, Case{3, 3, 16, 6, false},
                       Case{3, 2, 16, 6, true}, Case{1, 1, 8, 4, true}}) {
    const int channels = c.color == 0 ? 1 : c.color == 2 ? 3 : c.color == 4 ? 2 : 4;
    const std::string rows = png_rows(c.w, c.h, channels * c.depth, c.interlaced);
    SCOPED_TRACE(::testing::Message() << c.w << "x" << c.h << " depth " << c.depth << " colour " << c.color
                                      << (c.interlaced ? " Adam7" : "") << ", " << rows.size() << " bytes of rows");
    const auto png = [&](const std::string& r) { return png_file(c.w, c.h, c.depth, c.color, c.interlaced, zlib_of(r)); };
    EXPECT_EQ(decode_refusal(png(rows)), -1);
    // A little trailing data is tolerated, as stb tolerates it (a PNG in the wild had zeros there).
    EXPECT_EQ(decode_refusal(png(rows + std::string(rows.size() / 20, '\0'))), -1);
    std::string why;
    EXPECT_EQ(decode_refusal(png(rows + rows + std::string(1100, '\0')), &why), kOverDeclared);
    EXPECT_THAT(why, HasSubstr(std::to_string(rows.size()) + " bytes its declared"));
  }
  // The values survive: an Adam7 image of one gray level decodes to that level everywhere.
  const std::string adam7 = png_file(5, 5, 8, 0, 1, zlib_of(png_rows(5, 5, 8, true, 77)));
  const PreparedImage p = prepare_image(adam7, {"input", ir::DType::f32, {-1, 1, 5, 5}}, ModelCard{}, {});
  for (float v : values(p)) EXPECT_EQ(v, 77.0f);
}

TEST(ServeImageInput, APngWithACorruptStreamIsRefusedAsDamaged) {
  std::string z = zlib_of(png_rows(28, 28, 8, false));
  z[2] = char(0xFF);  // the first block's header: a reserved block type
  std::string why;
  EXPECT_EQ(decode_refusal(png_file(28, 28, 8, 0, 0, z), &why), kDamaged);
  EXPECT_THAT(why, HasSubstr("corrupt"));
  EXPECT_EQ(refusal(png_file(28, 28, 8, 0, 0, z)), 400);
}

TEST(ServeImageInput, DecodesReserveWhatTheyCanTakeFromTheMemoryBudget) {
  const std::string big = png(std::vector<uint8_t>(1000 * 1000, 9), 1000, 1000, 1);
  const data::ImageHeader h{1000, 1000, 1, 1};
  // stb's rows, pixels (+ alpha), a copy: 3 x 2 bytes; the planar copy 3; fitting 6.
  EXPECT_EQ(decode_memory_bytes(h), 1000 * 1000 * (3 * 2 + 3 + 6));
  MemoryBudget small(size_t{4} << 20);
  UploadLimits limits;
  limits.memory = &small;
  std::string why;
  EXPECT_EQ(refusal(big, limits, &why), 413);
  EXPECT_THAT(why, HasSubstr("--memory-budget"));

  MemoryBudget budget(size_t{32} << 20);
  limits.memory = &budget;
  limits.memory_wait = std::chrono::milliseconds(50);
  EXPECT_EQ(prepare_image(big, kGray28, ModelCard{}, limits).width, 1000);
  EXPECT_EQ(budget.in_use(), 0u);  // released once decoded
  {
    auto held = budget.reserve(size_t{30} << 20, std::chrono::milliseconds(0));
    ASSERT_TRUE(held);
    EXPECT_EQ(refusal(big, limits, &why), 503);
    EXPECT_THAT(why, HasSubstr("try again"));
  }
  // A decode waits for a lease that ends within its wait.
  limits.memory_wait = std::chrono::milliseconds(5000);
  auto held = budget.reserve(size_t{30} << 20, std::chrono::milliseconds(0));
  std::thread ender([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    held.reset();
  });
  EXPECT_EQ(prepare_image(big, kGray28, ModelCard{}, limits).width, 1000);
  ender.join();
}

TEST(ServeMemoryBudget, LeasesAddUpAndWaitForEachOther) {
  MemoryBudget b(100);
  auto a = b.reserve(60, std::chrono::milliseconds(0));
  ASSERT_TRUE(a);
  EXPECT_FALSE(b.reserve(50, std::chrono::milliseconds(20)));
  EXPECT_FALSE(b.reserve(101, std::chrono::milliseconds(0)));
  auto c = b.reserve(40, std::chrono::milliseconds(0));
  ASSERT_TRUE(c);
  EXPECT_EQ(b.in_use(), 100u);
  MemoryBudget::Lease moved = std::move(*c);
  c.reset();
  EXPECT_EQ(b.in_use(), 100u);
  moved = {};
  EXPECT_EQ(b.in_use(), 60u);
  a.reset();
  EXPECT_EQ(b.in_use(), 0u);
}

TEST(ServeNoPaths, WordsWithASlashKeepTheirLastComponent) {
  EXPECT_EQ(without_paths("fashion-mnist test (10000 images, /usr/share/datasets/fashion-mnist)"),
            "fashion-mnist test (10000 images, fashion-mnist)");
  EXPECT_EQ(without_paths("images /data/cats/ (12 images); npy:/a/b.npy, models/tinynet.onnx"),
            "images cats (12 images); b.npy, tinynet.onnx");
  EXPECT_EQ(without_paths("dynamic quantization, no calibration"), "dynamic quantization, no calibration");
}

TEST(ServeClassifier, SoftmaxOfLogitsAndProbabilitiesAsTheyAre) {
  const float logits[] = {1.0f, 3.0f, -2.0f, 3.0f};
  const auto p = probabilities(logits, 4, false);
  EXPECT_NEAR(std::accumulate(p.begin(), p.end(), 0.0), 1.0, 1e-12);
  EXPECT_DOUBLE_EQ(p[1], p[3]);
  EXPECT_GT(p[1], p[0]);
  EXPECT_NEAR(p[0] / p[1], std::exp(-2.0), 1e-12);
  const float probs[] = {0.1f, 0.9f};
  EXPECT_DOUBLE_EQ(probabilities(probs, 2, true)[1], double(0.9f));
}

}  // namespace
}  // namespace octet::serve
