// The readers behind load_dataset. Each fills the shape, pixels, labels, class names and
// sources, honours LoadOptions::limit and reports progress; only the image folder reader
// converts (its images may differ in size), load_dataset converts the others afterwards.
#pragma once

#include <string>
#include <vector>

#include "io/datasets/dataset.h"

namespace octet::data::detail {

// labels_path may be empty: every label is then -1.
Dataset read_idx(const std::string& images_path, const std::string& labels_path, const LoadOptions& opt);
Dataset read_cifar10(const std::vector<std::string>& files, const LoadOptions& opt);
Dataset read_image_folder(const std::string& dir, const LoadOptions& opt);
// labels_path may be empty. float32 images come back preprocessed (in `values`).
Dataset read_npy(const std::string& images_path, const std::string& labels_path, const LoadOptions& opt);

}  // namespace octet::data::detail
