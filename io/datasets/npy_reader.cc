// npy:IMAGES[,LABELS]: images as a numpy array, for models that come without a dataset (a
// calibration set written next to the model, e.g. tools/zoo/export.py's calib.npy).
//
// IMAGES is [N, C, H, W], C order. uint8 arrays are pixels like every other source (the model
// card's normalization applies); float32 arrays are model inputs already, taken as they are.
// LABELS, optional, is [N] int64, int32 or uint8 (-1 allowed: unknown).
#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "io/datasets/readers.h"
#include "io/npy.h"

namespace octet::data::detail {

namespace {

std::vector<int> read_labels(const std::string& path, int64_t images, int64_t n) {
  const npy::Array a = npy::read(path);
  if (a.shape.size() != 1)
    throw std::runtime_error(path + ": labels must be a 1-D array [N], got " + npy::describe(a));
  if (a.shape[0] != images)
    throw std::runtime_error(path + ": " + std::to_string(a.shape[0]) + " labels for " + std::to_string(images) +
                             " images");
  std::vector<int> labels(size_t(n), -1);
  for (int64_t i = 0; i < n; ++i) {
    int64_t v = 0;
    switch (a.dtype) {
      case npy::DType::s64: v = a.as<int64_t>()[i]; break;
      case npy::DType::s32: v = a.as<int32_t>()[i]; break;
      case npy::DType::u8: v = a.as<uint8_t>()[i]; break;
      default:
        throw std::runtime_error(path + ": labels must be int64, int32 or uint8, got " + npy::dtype_name(a.dtype));
    }
    if (v < -1 || v > 1'000'000)
      throw std::runtime_error(path + ": label " + std::to_string(i) + " is " + std::to_string(v) +
                               " (expected a class index >= 0, or -1 for unknown)");
    labels[size_t(i)] = int(v);
  }
  return labels;
}

}  // namespace

Dataset read_npy(const std::string& images_path, const std::string& labels_path, const LoadOptions& opt) {
  const npy::Array a = npy::read(images_path);
  if (a.shape.size() != 4)
    throw std::runtime_error(images_path + ": images must be a 4-D array [N, C, H, W], got " + npy::describe(a));
  if (a.dtype != npy::DType::f32 && a.dtype != npy::DType::u8)
    throw std::runtime_error(images_path + ": images must be float32 (model inputs, taken as they are) or uint8 "
                             "(pixels, normalized by the model card), got " + npy::dtype_name(a.dtype));
  const int64_t total = a.shape[0];
  if (a.shape[1] < 1 || a.shape[2] < 1 || a.shape[3] < 1 || a.shape[1] > 65535 || a.shape[2] > 65535 ||
      a.shape[3] > 65535)
    throw std::runtime_error(images_path + ": unusable image shape in " + npy::describe(a));
  const int64_t n = opt.limit >= 0 ? std::min(total, opt.limit) : total;

  Dataset d;
  d.channels = int(a.shape[1]);
  d.height = int(a.shape[2]);
  d.width = int(a.shape[3]);
  const size_t elems = size_t(n * d.image_bytes());
  if (a.dtype == npy::DType::f32) {
    d.preprocessed = true;
    d.values.assign(a.as<float>(), a.as<float>() + elems);
  } else {
    d.pixels.assign(a.as<uint8_t>(), a.as<uint8_t>() + elems);
  }
  d.labels = labels_path.empty() ? std::vector<int>(size_t(n), -1) : read_labels(labels_path, total, n);
  if (opt.progress) opt.progress(n, n);
  return d;
}

}  // namespace octet::data::detail
