// Writes the seed corpora of the fuzz targets into DIR/{loader,npy,datasets,images}: small
// valid inputs of every kind, made here (no data of ../shared). The bundled models are added
// by tools/fuzz.sh.
//
//   fuzz_seeds DIR
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/util/onnx_builder.h"
#include "io/npy.h"

namespace {

namespace fs = std::filesystem;
using octet::testing::ElemType;
using octet::testing::OnnxBuilder;
using octet::testing::TensorValue;

void write_bytes(const fs::path& p, const std::vector<uint8_t>& bytes) {
  std::ofstream f(p, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

void loader_seeds(const fs::path& dir) {
  {  // A conv layer with Relu, pooling and a classifier, dynamic batch.
    OnnxBuilder b(13);
    auto x = b.input("x", {-1, 3, 8, 8});
    auto c = b.node("Relu", {b.node("Conv", {x, b.random_normal_init("w", {4, 3, 3, 3}), b.random_normal_init("b", {4})},
                                    {{"pads", {1, 1, 1, 1}}})});
    auto f = b.node("Flatten", {b.node("GlobalAveragePool", {c})});
    b.output(b.node("Softmax", {b.node("Gemm", {f, b.random_normal_init("fc", {3, 4}), b.random_normal_init("fb", {3})},
                                       {{"transB", int64_t{1}}})}));
    b.save((dir / "cnn.onnx").string());
  }
  {  // A QDQ unit and a dynamic-quantization chain.
    OnnxBuilder b(13);
    auto x = b.input("x", {1, 16});
    auto s = b.initializer("s", TensorValue::scalar_f32(0.05f));
    auto z = b.initializer("z", TensorValue::ints(ElemType::u8, {}, {128}));
    auto q = b.node("QuantizeLinear", {x, s, z});
    auto dq = b.node("DequantizeLinear", {q, s, z});
    auto d = b.node_multi("DynamicQuantizeLinear", {dq}, 3);
    std::vector<int64_t> w(16 * 4, 3);
    auto acc = b.node("MatMulInteger", {d[0], b.initializer("w", TensorValue::s8({16, 4}, w)), d[2]});
    b.output(b.node("Mul", {b.node("Cast", {acc}, {{"to", int64_t{1}}}), d[1]}));
    b.save((dir / "quantized.onnx").string());
  }
  {  // Shape arithmetic, Concat, Transpose, Slice.
    OnnxBuilder b(13);
    auto x = b.input("x", {-1, 4, 2, 2});
    auto t = b.node("Transpose", {x}, {{"perm", std::vector<int64_t>{0, 2, 3, 1}}});
    auto c = b.node("Concat", {t, t}, {{"axis", int64_t{3}}});
    b.output(b.node("Reshape", {c, b.initializer_i64("shape", {2}, {-1, 32})}));
    b.save((dir / "shapes.onnx").string());
  }
}

void npy_seeds(const fs::path& dir) {
  octet::npy::write((dir / "f32.npy").string(), octet::npy::make_f32({2, 3}, {1, 2, 3, 4, 5, 6}));
  octet::npy::write((dir / "u8.npy").string(), octet::npy::make_array<uint8_t>({1, 1, 2, 2}, {0, 64, 128, 255}));
  octet::npy::write((dir / "i64.npy").string(), octet::npy::make_array<int64_t>({3}, {0, 1, 9}));
}

void dataset_seeds(const fs::path& dir) {
  std::vector<uint8_t> cifar = {0};  // kind 0: CIFAR-10, two records
  for (int r = 0; r < 2; ++r) {
    cifar.push_back(uint8_t(r * 3));
    for (int i = 0; i < 3072; ++i) cifar.push_back(uint8_t(i * 7 + r));
  }
  write_bytes(dir / "cifar.bin", cifar);
  std::vector<uint8_t> idx_images = {1, 0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 3};  // kind 1: 2 images 3x3
  for (int i = 0; i < 18; ++i) idx_images.push_back(uint8_t(i * 13));
  write_bytes(dir / "idx_images.bin", idx_images);
  write_bytes(dir / "idx_labels.bin", {2, 0, 0, 8, 1, 0, 0, 0, 2, 4, 7});  // kind 2: 2 labels
}

void image_seeds(const fs::path& dir) {
  std::vector<uint8_t> rgb(8 * 6 * 3);
  for (size_t i = 0; i < rgb.size(); ++i) rgb[i] = uint8_t(i * 5);
  stbi_write_png((dir / "rgb.png").string().c_str(), 8, 6, 3, rgb.data(), 8 * 3);
  stbi_write_png((dir / "gray.png").string().c_str(), 8, 6, 1, rgb.data(), 8);
  stbi_write_bmp((dir / "rgb.bmp").string().c_str(), 8, 6, 3, rgb.data());
  stbi_write_jpg((dir / "rgb.jpg").string().c_str(), 8, 6, 3, rgb.data(), 90);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_seeds DIR\n");
    return 2;
  }
  const fs::path root = argv[1];
  for (const char* sub : {"loader", "npy", "datasets", "images"}) fs::create_directories(root / sub);
  loader_seeds(root / "loader");
  npy_seeds(root / "npy");
  dataset_seeds(root / "datasets");
  image_seeds(root / "images");
  std::printf("fuzz_seeds: wrote %s/{loader,npy,datasets,images}\n", root.c_str());
  return 0;
}
