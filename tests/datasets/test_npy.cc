// npy:IMAGES[,LABELS]: float32 model inputs (kept as they are) and uint8 pixels, labels, limits,
// and the errors for arrays that are not images.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/datasets/temp_files.h"
#include "apps/cli/model_inputs.h"
#include "io/datasets/dataset.h"
#include "io/npy.h"

namespace octet::data {
namespace {

using ::testing::HasSubstr;

class DatasetNpyTest : public testing::TempDirTest {
 protected:
  // [n, c, h, w] float32, value i = i * 0.25 - 3 (negative, fractional: nothing a uint8 keeps).
  std::string write_f32(const std::string& name, std::vector<int64_t> shape) const {
    npy::Array a = npy::make(npy::DType::f32, std::move(shape));
    for (int64_t i = 0; i < a.count(); ++i) a.as<float>()[i] = float(i) * 0.25f - 3.0f;
    npy::write(path(name), a);
    return path(name);
  }
  template <class T> std::string write_array(const std::string& name, std::vector<int64_t> shape,
                                             const std::vector<T>& values) const {
    npy::write(path(name), npy::make_array<T>(std::move(shape), values));
    return path(name);
  }
  std::string error_of(const std::string& spec, const LoadOptions& opt = {}) const {
    try {
      load_dataset(spec, opt);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "no error";
  }
};

TEST_F(DatasetNpyTest, Float32ImagesAreModelInputsAsTheyAre) {
  const std::string file = write_f32("calib.npy", {3, 2, 4, 5});
  const Dataset d = load_dataset("npy:" + file);
  ASSERT_EQ(d.count(), 3);
  EXPECT_EQ(d.channels, 2);
  EXPECT_EQ(d.height, 4);
  EXPECT_EQ(d.width, 5);
  EXPECT_TRUE(d.preprocessed);
  EXPECT_TRUE(d.pixels.empty());
  ASSERT_EQ(d.values.size(), 3u * 40);
  for (size_t i = 0; i < d.values.size(); ++i) ASSERT_EQ(d.values[i], float(i) * 0.25f - 3.0f) << i;
  EXPECT_EQ(d.image_values(2)[0], 80 * 0.25f - 3.0f);
  EXPECT_EQ(d.labels, (std::vector<int>{-1, -1, -1}));
  EXPECT_THAT(d.description, HasSubstr("npy " + file + " (3 images, 2x4x5 float32 model inputs, unlabelled)"));

  // A model card's normalization must not touch them: make_inputs copies the values.
  ModelCard card;
  card.scale = 1.0f / 255;
  card.mean = {0.5f, 0.5f};
  card.stddev = {0.25f, 0.25f};
  const ir::TensorData t = cli::make_inputs(d, card, TensorSpec{"input", ir::DType::f32, {-1, 2, 4, 5}});
  ASSERT_EQ(t.dims, (ir::Dims{3, 2, 4, 5}));
  for (int64_t i = 0; i < t.count(); ++i) ASSERT_EQ(t.as<float>()[i], float(i) * 0.25f - 3.0f) << i;
}

TEST_F(DatasetNpyTest, LimitAndSubsetKeepTheFloatValues) {
  LoadOptions opt;
  opt.limit = 2;
  const Dataset d = load_dataset("npy:" + write_f32("x.npy", {5, 1, 2, 2}), opt);
  ASSERT_EQ(d.count(), 2);
  ASSERT_EQ(d.values.size(), 8u);
  const Dataset s = subset(d, {1});
  EXPECT_TRUE(s.preprocessed);
  ASSERT_EQ(s.values.size(), 4u);
  EXPECT_EQ(s.values[0], 4 * 0.25f - 3.0f);
}

TEST_F(DatasetNpyTest, Uint8ImagesArePixelsWithLabels) {
  std::vector<uint8_t> px(2 * 3 * 2 * 2);
  for (size_t i = 0; i < px.size(); ++i) px[i] = uint8_t(i * 10);
  const std::string images = write_array<uint8_t>("img.npy", {2, 3, 2, 2}, px);
  const std::string labels = write_array<int64_t>("lab.npy", {2}, {7, -1});
  const Dataset d = load_dataset("npy:" + images + "," + labels);
  EXPECT_FALSE(d.preprocessed);
  EXPECT_EQ(d.pixels, px);
  EXPECT_EQ(d.labels, (std::vector<int>{7, -1}));
  EXPECT_THAT(d.description, HasSubstr("2 images, 3x2x2 uint8)"));

  // Pixels can be converted like any other source (here to gray).
  LoadOptions opt;
  opt.channels = 1;
  opt.height = 2;
  opt.width = 2;
  const Dataset g = load_dataset("npy:" + images, opt);
  EXPECT_EQ(g.channels, 1);
  EXPECT_EQ(g.pixels.size(), 2u * 4);
}

TEST_F(DatasetNpyTest, FloatImagesAreNeverResized) {
  LoadOptions opt;
  opt.channels = 3;
  opt.height = 8;
  opt.width = 8;
  EXPECT_THAT(error_of("npy:" + write_f32("x.npy", {1, 3, 4, 4}), opt),
              HasSubstr("float32 images (3x4x4) are model inputs as they are and cannot be converted to 3x8x8"));
}

TEST_F(DatasetNpyTest, ErrorsNameTheFileAndWhatWasExpected) {
  EXPECT_THAT(error_of("npy:" + write_f32("flat.npy", {4, 12})), HasSubstr("flat.npy: images must be a 4-D array"));
  EXPECT_THAT(error_of("npy:" + write_array<int32_t>("i.npy", {1, 1, 1, 2}, {1, 2})),
              HasSubstr("i.npy: images must be float32 (model inputs, taken as they are) or uint8"));
  const std::string images = write_f32("x.npy", {3, 1, 2, 2});
  EXPECT_THAT(error_of("npy:" + images + "," + write_array<int64_t>("l.npy", {2}, {0, 1})),
              HasSubstr("l.npy: 2 labels for 3 images"));
  EXPECT_THAT(error_of("npy:" + images + "," + write_array<float>("lf.npy", {3}, {0, 1, 2})),
              HasSubstr("lf.npy: labels must be int64, int32 or uint8, got float32"));
  EXPECT_THAT(error_of("npy:" + images + "," + write_array<int64_t>("neg.npy", {3}, {0, -2, 1})),
              HasSubstr("neg.npy: label 1 is -2"));
  EXPECT_THAT(error_of("npy:" + path("missing.npy")), HasSubstr("missing.npy"));
  EXPECT_THAT(error_of("npy:a.npy,b.npy,c.npy"), HasSubstr("expected npy:IMAGES[,LABELS]"));
  EXPECT_THAT(error_of("npy:"), HasSubstr("names no file or folder"));
  EXPECT_THAT(error_of("nope:x"), HasSubstr("npy:IMAGES[,LABELS]"));
}

}  // namespace
}  // namespace octet::data
