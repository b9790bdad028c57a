// Uploads to model inputs: each format stb_image reads, channel conversion, resizing, the
// card's normalization (the same numbers `octet eval` feeds), and the status of every refusal.
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "tools/cli/model_inputs.h"
#include "tools/serve/classifier.h"
#include "tools/serve/image_input.h"
#include "tools/serve/request_error.h"
#include "tools/serve/stb_codecs.h"

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
  // The Huffman table stb_image would overflow (tools/datasets/image_decode.h).
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
