// Classifies one 8-bit grayscale PGM (P5) image with a [N,1,H,W] model, e.g. the bundled TinyNet:
//   classify_image models/tinynet.onnx shirt.pgm 0.2860 0.3530
// and prints the best class index and its logit. MEAN and STD are the model's normalization.
#include <octet/octet.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

int main(int argc, char** argv) try {
  if (argc != 5) return std::fprintf(stderr, "usage: classify_image MODEL.onnx IMAGE.pgm MEAN STD\n"), 2;
  std::ifstream file(argv[2], std::ios::binary);
  std::string magic;
  int width = 0, height = 0, maxval = 0;
  if (!(file >> magic >> width >> height >> maxval) || magic != "P5" || maxval != 255)
    return std::fprintf(stderr, "classify_image: %s is not an 8-bit binary PGM\n", argv[2]), 1;
  file.get();
  std::vector<unsigned char> pixels(size_t(width) * height);
  if (!file.read(reinterpret_cast<char*>(pixels.data()), std::streamsize(pixels.size())))
    return std::fprintf(stderr, "classify_image: %s is truncated\n", argv[2]), 1;

  const float mean = std::stof(argv[3]), std = std::stof(argv[4]);
  std::vector<float> input;
  for (unsigned char p : pixels) input.push_back((p / 255.0f - mean) / std);

  octet::InferenceSession session(argv[1]);
  auto outputs = session.run({octet::Tensor::from_floats({1, 1, height, width}, input)});
  auto logits = outputs.at(0).values<float>();
  size_t best = 0;
  for (size_t i = 1; i < logits.size(); ++i)
    if (logits[i] > logits[best]) best = i;
  std::printf("class %zu (logit %.4f) on %s\n", best, logits[best], session.isa().c_str());
  return 0;
} catch (const octet::Error& e) {
  std::fprintf(stderr, "classify_image: %s\n", e.what());
  return 1;
}
