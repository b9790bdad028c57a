// Datasets for evaluation and calibration: labelled uint8 images from Fashion-MNIST (IDX),
// CIFAR-10 binary batches, a folder of PNG/JPEG/BMP files or a .npy array, all in one
// in-memory form. A float32 .npy array holds model inputs already (preprocessed by whoever
// wrote it): those images keep their float values and skip the model card's normalization.
//
// Every error is a std::runtime_error naming the file and, for malformed or truncated data,
// the byte offset.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace octet::data {

struct Dataset {
  std::string description;  // e.g. "fashion-mnist test (10000 images, /usr/share/datasets/fashion-mnist)"
  int channels = 0, height = 0, width = 0;
  std::vector<uint8_t> pixels;            // count() images, each planar CHW uint8 (empty when preprocessed)
  bool preprocessed = false;              // npy float32: `values` holds the images, as model inputs
  std::vector<float> values;              // count() images, each planar CHW float32, when preprocessed
  std::vector<int> labels;                // one per image, -1 when unknown
  std::vector<std::string> class_names;   // may be empty (the caller uses the model card's)
  std::vector<std::string> sources;       // per image for image folders: the file path (else empty)

  int64_t count() const { return static_cast<int64_t>(labels.size()); }
  int64_t image_bytes() const { return int64_t{channels} * height * width; }
  // Precondition: 0 <= i < count(), and !preprocessed for image(), preprocessed for image_values().
  const uint8_t* image(int64_t i) const { return pixels.data() + i * image_bytes(); }
  const float* image_values(int64_t i) const { return values.data() + i * image_bytes(); }
};

struct LoadOptions {
  int64_t limit = -1;  // read at most this many images (-1: all)
  // Size and channel count images are converted to: bilinear resize (half-pixel centres, no
  // antialiasing, like OpenCV's INTER_LINEAR), RGB->gray by ITU-R 601 luma, gray->RGB by
  // replication. 0 keeps what the source has; image folders then need equal sizes and
  // channel counts. Applies to every kind of dataset, not only folders.
  int channels = 0, height = 0, width = 0;
  std::function<void(int64_t done, int64_t total)> progress;  // optional
};

// SPEC is one of
//   fashion-mnist[:train|:test][@DIR]   gzipped (or plain) IDX files; DIR defaults to
//                                       /usr/share/datasets/fashion-mnist, the split to test
//   cifar10:FILE[,FILE...]              CIFAR-10 binary batches (3073-byte records), e.g. test_batch.bin
//   images:DIR                          PNG/JPEG/BMP files sorted by path; with subfolders, each
//                                       subfolder is a class (sorted names, label = index),
//                                       else every label is -1. Hidden files are skipped.
//   idx:IMAGES[,LABELS]                 any gzipped or plain IDX pair (labels -1 without LABELS)
//   npy:IMAGES[,LABELS]                 a .npy array [N,C,H,W]: float32 model inputs taken as they
//                                       are (preprocessed), or uint8 pixels; LABELS a .npy [N] of
//                                       int64/int32/uint8 (labels -1 without it). Float images
//                                       cannot be converted to another shape.
Dataset load_dataset(const std::string& spec, const LoadOptions& opt = {});

// Class-stratified selection (for calibration): the first `per_class` images of each label, in
// file order, as ascending indices. Images labelled -1 are never chosen; throws when no image
// has a label or per_class < 1.
std::vector<int64_t> stratified_indices(const Dataset& d, int per_class);

// The images at `rows`, in that order (the description keeps naming the whole source).
Dataset subset(const Dataset& d, const std::vector<int64_t>& rows);

}  // namespace octet::data
