#pragma once
// What the process-level tests of `octet serve` share: where TinyNet and Fashion-MNIST are,
// test images as upload bytes, and a JSON GET.
#include <httplib.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/datasets/dataset.h"

namespace octet::testing {

inline const std::filesystem::path kSourceDir = OCTET_SOURCE_DIR;
inline const std::filesystem::path kTinyNet = kSourceDir / "models" / "tinynet.onnx";

inline bool have_fashion_mnist() {
  return std::filesystem::exists("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz") &&
         std::filesystem::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz");
}
inline const char* kNoFashionMnist = "Fashion-MNIST is absent (apt install dataset-fashion-mnist)";

// Image `i` of a one-channel dataset as a PNG or a binary PGM file's bytes.
std::string png_bytes(const data::Dataset& d, int64_t i);
std::string pgm_bytes(const data::Dataset& d, int64_t i);

// GET `path` as JSON; a null json when there is no 200 answer with a JSON body.
nlohmann::json get_json(httplib::Client& client, const std::string& path);

}  // namespace octet::testing
