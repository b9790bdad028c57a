// Bytes -> the CIFAR-10 and IDX readers (plain or gzipped), through a file the reader opens
// like a user's: the first byte picks the reader, the rest is the file. Clean errors only.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>

#include "tests/fuzz/scratch_dir.h"
#include "io/datasets/dataset.h"

namespace {

std::string write_temp(const uint8_t* data, size_t size, const char* name) {
  static const octet::fuzz::ScratchDir dir("octet-fuzz-datasets");
  const std::string path = dir.path() + "/" + name;
  FILE* f = std::fopen(path.c_str(), "wb");
  if (size) std::fwrite(data, 1, size, f);
  std::fclose(f);
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t kind = data[0] % 3;
  octet::data::LoadOptions lo;
  lo.limit = 64;  // bounded work per input
  try {
    if (kind == 0) {
      const std::string p = write_temp(data + 1, size - 1, "batch.bin");
      octet::data::load_dataset("cifar10:" + p, lo);
    } else {
      // IDX images, then (kind 2) the same bytes as a label file beside a fixed image file.
      const std::string images = write_temp(data + 1, size - 1, "images-idx3-ubyte");
      if (kind == 1) {
        octet::data::load_dataset("idx:" + images, lo);
      } else {
        static const uint8_t header[] = {0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2, 1, 2, 3, 4, 5, 6, 7, 8};
        const std::string img = write_temp(header, sizeof header, "two-idx3-ubyte");
        octet::data::load_dataset("idx:" + img + "," + images, lo);
      }
    }
  } catch (const std::exception&) {
  }
  return 0;
}
