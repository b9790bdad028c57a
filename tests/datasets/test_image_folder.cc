#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/datasets/temp_files.h"
#include "io/datasets/dataset.h"

namespace octet::data {
namespace {

using ::testing::HasSubstr;

// Interleaved HWC pixels for stb_image_write.
struct Picture {
  int width, height, channels;
  std::vector<uint8_t> hwc;
};

Picture constant(int width, int height, std::vector<uint8_t> color) {
  Picture p{width, height, static_cast<int>(color.size()), {}};
  for (int i = 0; i < width * height; ++i) p.hwc.insert(p.hwc.end(), color.begin(), color.end());
  return p;
}

// R = 10 x, G = 20 y, B = 100 + i.
Picture gradient(int width, int height, int i) {
  Picture p{width, height, 3, {}};
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      p.hwc.push_back(static_cast<uint8_t>(10 * x));
      p.hwc.push_back(static_cast<uint8_t>(20 * y));
      p.hwc.push_back(static_cast<uint8_t>(100 + i));
    }
  return p;
}

class DatasetImageFolderTest : public testing::TempDirTest {
 protected:
  std::string png(const std::string& name, const Picture& p) {
    const std::string file = path(name);
    testing::fs::create_directories(testing::fs::path(file).parent_path());
    EXPECT_TRUE(stbi_write_png(file.c_str(), p.width, p.height, p.channels, p.hwc.data(), p.width * p.channels));
    return file;
  }
  std::string load_error(const std::string& spec, const LoadOptions& opt = {}) {
    try {
      load_dataset(spec, opt);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "no error";
  }
};

TEST_F(DatasetImageFolderTest, ClassSubfoldersGiveLabelsInSortedOrder) {
  png("pics/dogs/c.png", gradient(4, 3, 2));
  png("pics/cats/b.png", gradient(4, 3, 1));
  png("pics/cats/a.png", gradient(4, 3, 0));
  png("pics/cats/.hidden.png", gradient(9, 9, 9));  // skipped
  const Dataset d = load_dataset("images:" + path("pics"));
  ASSERT_EQ(d.count(), 3);
  EXPECT_EQ(d.class_names, (std::vector<std::string>{"cats", "dogs"}));
  EXPECT_EQ(d.labels, (std::vector<int>{0, 0, 1}));
  EXPECT_EQ(d.sources, (std::vector<std::string>{path("pics/cats/a.png"), path("pics/cats/b.png"), path("pics/dogs/c.png")}));
  EXPECT_EQ(d.channels, 3);
  EXPECT_EQ(d.height, 3);
  EXPECT_EQ(d.width, 4);
  for (int i = 0; i < 3; ++i)
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 4; ++x) {
        const uint8_t* im = d.image(i);
        ASSERT_EQ(im[0 * 12 + y * 4 + x], 10 * x);
        ASSERT_EQ(im[1 * 12 + y * 4 + x], 20 * y);
        ASSERT_EQ(im[2 * 12 + y * 4 + x], 100 + i);
      }
  EXPECT_THAT(d.description, HasSubstr("3 images, 2 classes"));
}

TEST_F(DatasetImageFolderTest, FlatFolderIsUnlabelled) {
  png("flat/x.png", gradient(2, 2, 0));
  png("flat/y.png", gradient(2, 2, 1));
  const Dataset d = load_dataset("images:" + path("flat"));
  EXPECT_EQ(d.labels, (std::vector<int>{-1, -1}));
  EXPECT_TRUE(d.class_names.empty());
  EXPECT_THROW(stratified_indices(d, 1), std::runtime_error);
}

TEST_F(DatasetImageFolderTest, ConstantColourStaysConstantThroughResizeAndGray) {
  png("c/a.png", constant(13, 9, {10, 200, 50}));
  LoadOptions opt;
  opt.channels = 1;
  opt.height = 7;
  opt.width = 5;
  const Dataset d = load_dataset("images:" + path("c"), opt);
  ASSERT_EQ(d.pixels.size(), 35u);
  const uint8_t luma = (299 * 10 + 587 * 200 + 114 * 50 + 500) / 1000;  // 126
  for (uint8_t v : d.pixels) ASSERT_EQ(v, luma);

  opt.channels = 3;
  opt.height = 40;
  opt.width = 31;
  const Dataset up = load_dataset("images:" + path("c"), opt);
  for (int c = 0; c < 3; ++c)
    for (int i = 0; i < 40 * 31; ++i) ASSERT_EQ(up.pixels[c * 40 * 31 + i], (std::vector<uint8_t>{10, 200, 50})[c]);
}

TEST_F(DatasetImageFolderTest, GrayToRgbReplicatesAndAlphaIsDropped) {
  png("g/a.png", constant(3, 2, {90}));
  png("g/b.png", constant(3, 2, {1, 2, 3, 128}));  // RGBA
  LoadOptions opt;
  opt.channels = 3;
  const Dataset d = load_dataset("images:" + path("g"), opt);
  ASSERT_EQ(d.count(), 2);
  EXPECT_EQ(d.channels, 3);
  for (int i = 0; i < 18; ++i) EXPECT_EQ(d.image(0)[i], 90);
  for (int c = 0; c < 3; ++c)
    for (int i = 0; i < 6; ++i) EXPECT_EQ(d.image(1)[c * 6 + i], c + 1);
}

TEST_F(DatasetImageFolderTest, BilinearHalfPixelCentres) {
  png("r/a.png", Picture{2, 1, 1, {0, 255}});
  LoadOptions opt;
  opt.height = 1;
  opt.width = 4;
  const Dataset d = load_dataset("images:" + path("r"), opt);
  EXPECT_EQ(d.pixels, (std::vector<uint8_t>{0, 64, 191, 255}));
}

TEST_F(DatasetImageFolderTest, BmpAndJpegDecode) {
  const Picture p = constant(8, 8, {40, 80, 120});
  testing::fs::create_directories(path("m"));
  ASSERT_TRUE(stbi_write_bmp(path("m/a.bmp").c_str(), 8, 8, 3, p.hwc.data()));
  ASSERT_TRUE(stbi_write_jpg(path("m/b.jpg").c_str(), 8, 8, 3, p.hwc.data(), 95));
  const Dataset d = load_dataset("images:" + path("m"));
  ASSERT_EQ(d.count(), 2);
  for (int c = 0; c < 3; ++c)
    for (int i = 0; i < 64; ++i) {
      ASSERT_EQ(d.image(0)[c * 64 + i], 40 * (c + 1));
      ASSERT_NEAR(d.image(1)[c * 64 + i], 40 * (c + 1), 3);
    }
}

TEST_F(DatasetImageFolderTest, DifferentSizesNeedASize) {
  png("s/a.png", gradient(4, 4, 0));
  png("s/b.png", gradient(5, 4, 0));
  EXPECT_THAT(load_error("images:" + path("s")), HasSubstr(path("s/b.png") + ": 4x5, but " + path("s/a.png") + " is 4x4"));
  LoadOptions opt;
  opt.height = opt.width = 6;
  EXPECT_EQ(load_dataset("images:" + path("s"), opt).pixels.size(), 2u * 3 * 36);
}

TEST_F(DatasetImageFolderTest, DifferentChannelCountsNeedAChannelCount) {
  png("s/a.png", constant(4, 4, {1, 2, 3}));
  png("s/b.png", constant(4, 4, {7}));
  EXPECT_THAT(load_error("images:" + path("s")), HasSubstr(path("s/b.png") + ": 1 channel(s), but"));
}

TEST_F(DatasetImageFolderTest, NonImageFileIsAClearError) {
  png("n/cls/a.png", gradient(2, 2, 0));
  write("n/cls/notes.txt", {'h', 'e', 'l', 'l', 'o'});
  EXPECT_THAT(load_error("images:" + path("n")), HasSubstr(path("n/cls/notes.txt") + ": not a readable image (stb_image: "));
}

TEST_F(DatasetImageFolderTest, FileNextToClassFoldersIsAnError) {
  png("n/cls/a.png", gradient(2, 2, 0));
  png("n/b.png", gradient(2, 2, 0));
  EXPECT_THAT(load_error("images:" + path("n")), HasSubstr(path("n/b.png") + ": a file next to the class folders"));
}

TEST_F(DatasetImageFolderTest, EmptyAndMissingFolders) {
  testing::fs::create_directories(path("empty"));
  EXPECT_THAT(load_error("images:" + path("empty")), HasSubstr(path("empty") + ": no image files"));
  testing::fs::create_directories(path("emptycls/a"));
  EXPECT_THAT(load_error("images:" + path("emptycls")), HasSubstr("the class folders hold no image files"));
  EXPECT_THAT(load_error("images:" + path("missing")), HasSubstr(path("missing") + ": no such directory"));
}

TEST_F(DatasetImageFolderTest, LimitAndProgress) {
  for (int i = 0; i < 5; ++i) png("l/" + std::to_string(i) + ".png", gradient(3, 3, i));
  LoadOptions opt;
  opt.limit = 2;
  int64_t last = 0;
  opt.progress = [&](int64_t done, int64_t total) {
    EXPECT_EQ(total, 2);
    last = done;
  };
  const Dataset d = load_dataset("images:" + path("l"), opt);
  EXPECT_EQ(d.count(), 2);
  EXPECT_EQ(last, 2);
  EXPECT_EQ(d.image(1)[2 * 9], 101);
}

// Found by tests/fuzz/fuzz_images: a JPEG whose Huffman table declares more than 256 codes
// made Debian's stb_image write past a 257-byte array. It is refused before decoding.
TEST_F(DatasetImageFolderTest, JpegWithAnOversizedHuffmanTableIsRefused) {
  std::vector<uint8_t> jpeg = {0xFF, 0xD8, 0xFF, 0xC4};
  std::vector<uint8_t> table = {0x00};  // DC table 0
  for (int i = 0; i < 16; ++i) table.push_back(17);  // 272 codes
  for (int i = 0; i < 272; ++i) table.push_back(uint8_t(i));
  const size_t len = table.size() + 2;
  jpeg.push_back(uint8_t(len >> 8));
  jpeg.push_back(uint8_t(len & 0xFF));
  jpeg.insert(jpeg.end(), table.begin(), table.end());
  jpeg.insert(jpeg.end(), {0xFF, 0xD9});
  write("j/a.jpg", jpeg);
  EXPECT_THAT(load_error("images:" + path("j")), HasSubstr("Huffman table holds more than 256 codes"));
  // The same after fill bytes before the start-of-image marker, which stb skips.
  jpeg.insert(jpeg.begin(), {0xFF, 0xFF});
  write("k/a.jpg", jpeg);
  EXPECT_THAT(load_error("images:" + path("k")), HasSubstr("Huffman table holds more than 256 codes"));
}

// Found by tests/fuzz/fuzz_images: an 8x8 grey JPEG whose only DC and AC codes are 16 bits
// long and whose scan ends (at the EOI marker) right after one DC code and one AC code for 15
// more bits. stb's bit count goes negative and its next refill shifts by 39 (see
// io/datasets/CMakeLists.txt); the picture must still decode or be refused, with no memory
// error under the sanitizers.
TEST_F(DatasetImageFolderTest, JpegWhoseScanEndsInsideACoefficientDecodesOrIsRefused) {
  auto segment = [](std::vector<uint8_t>& out, uint8_t marker, std::vector<uint8_t> payload) {
    const size_t len = payload.size() + 2;
    out.insert(out.end(), {0xFF, marker, uint8_t(len >> 8), uint8_t(len & 0xFF)});
    out.insert(out.end(), payload.begin(), payload.end());
  };
  auto one_16_bit_code = [](uint8_t table, uint8_t symbol) {
    std::vector<uint8_t> t = {table};
    for (int length = 1; length <= 16; ++length) t.push_back(length == 16 ? 1 : 0);
    t.push_back(symbol);
    return t;
  };
  std::vector<uint8_t> jpeg = {0xFF, 0xD8};
  std::vector<uint8_t> quant = {0x00};
  quant.resize(65, 1);
  segment(jpeg, 0xDB, quant);
  segment(jpeg, 0xC0, {8, 0, 8, 0, 8, 1, 1, 0x11, 0});  // 8 bits, 8x8, one component
  segment(jpeg, 0xC4, one_16_bit_code(0x00, 0x00));     // DC: category 0
  segment(jpeg, 0xC4, one_16_bit_code(0x10, 0x0F));     // AC: run 0, 15 extra bits
  segment(jpeg, 0xDA, {1, 1, 0x00, 0, 63, 0});
  jpeg.insert(jpeg.end(), {0, 0, 0, 0, 0xFF, 0xD9});  // 32 bits: the two codes, no extra bits
  write("scan/a.jpg", jpeg);
  LoadOptions opt;
  opt.channels = 3;
  opt.height = opt.width = 32;
  try {
    const Dataset d = load_dataset("images:" + path("scan"), opt);
    EXPECT_EQ(d.count(), 1);
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("not a readable image"));
  }
}

// Found by tests/fuzz/fuzz_images: a BMP header announcing 8 x 12.5 M pixels in a tiny file
// (stb reads the missing rows as zeros) decoded for seconds. The header is checked first.
TEST_F(DatasetImageFolderTest, ImageLargerThanTheDecodeLimitIsRefused) {
  std::vector<uint8_t> rgb(8 * 6 * 3, 100);
  std::filesystem::create_directories(path("big"));
  ASSERT_TRUE(stbi_write_bmp(path("big/a.bmp").c_str(), 8, 6, 3, rgb.data()));
  std::fstream f(path("big/a.bmp"), std::ios::in | std::ios::out | std::ios::binary);
  const uint8_t height[4] = {0x06, 0x00, 0xBF, 0x00};  // 12,517,382 rows
  f.seekp(22);
  f.write(reinterpret_cast<const char*>(height), 4);
  f.close();
  EXPECT_THAT(load_error("images:" + path("big")), HasSubstr("more than octet decodes"));
}

// Found by tests/fuzz/fuzz_images: a PNG chunk declaring 1.2 GB in a tiny file made stb
// allocate that much before noticing the data was missing.
TEST_F(DatasetImageFolderTest, PngChunkLongerThanTheFileIsRefused) {
  std::vector<uint8_t> rgb(8 * 6 * 3, 100);
  std::filesystem::create_directories(path("p"));
  ASSERT_TRUE(stbi_write_png(path("p/a.png").c_str(), 8, 6, 3, rgb.data(), 8 * 3));
  std::fstream f(path("p/a.png"), std::ios::in | std::ios::out | std::ios::binary);
  const uint8_t length[4] = {0x49, 0x00, 0x00, 0x2B};  // the IHDR chunk (at byte 8) now claims 1.2 GB
  f.seekp(8);
  f.write(reinterpret_cast<const char*>(length), 4);
  f.close();
  EXPECT_THAT(load_error("images:" + path("p")), HasSubstr("PNG chunk is longer than the rest of the file"));
}

// Found by tests/fuzz/fuzz_images: stb accepts a BMP of width and height 0, whose empty
// pixel buffer then reached the resize (pointer arithmetic on null).
TEST_F(DatasetImageFolderTest, ImageWithoutPixelsIsRefused) {
  std::vector<uint8_t> rgb(8 * 6 * 3, 100);
  std::filesystem::create_directories(path("z"));
  ASSERT_TRUE(stbi_write_bmp(path("z/a.bmp").c_str(), 8, 6, 3, rgb.data()));
  std::fstream f(path("z/a.bmp"), std::ios::in | std::ios::out | std::ios::binary);
  const uint8_t zero[8] = {0, 0, 0, 0, 0, 0, 0, 0};  // width and height
  f.seekp(18);
  f.write(reinterpret_cast<const char*>(zero), 8);
  f.close();
  LoadOptions opt;
  opt.channels = 3;
  opt.height = opt.width = 32;
  const std::string error = load_error("images:" + path("z"), opt);
  EXPECT_TRUE(error.find("0x0 pixels") != std::string::npos || error.find("not a readable image") != std::string::npos)
      << error;
}

}  // namespace
}  // namespace octet::data
