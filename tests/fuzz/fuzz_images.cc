// Bytes -> the image folder reader (PNG / JPEG / BMP decoding and conversion to the model's
// size): one file in a class folder, decoded and resized to 3x32x32. Clean errors only.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>

#include "tests/fuzz/scratch_dir.h"
#include "io/datasets/dataset.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const octet::fuzz::ScratchDir dir("octet-fuzz-images");
  static const bool made = std::filesystem::create_directories(dir.path() + "/cat");
  (void)made;
  // The extension only picks the file's name: stb detects the format from the bytes.
  const std::string path = dir.path() + "/cat/image.png";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (size) std::fwrite(data, 1, size, f);
  std::fclose(f);
  octet::data::LoadOptions lo;
  lo.channels = 3;
  lo.height = 32;
  lo.width = 32;
  try {
    octet::data::load_dataset("images:" + dir.path(), lo);
  } catch (const std::exception&) {
  }
  return 0;
}
