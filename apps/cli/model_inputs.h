#pragma once
// Dataset images as model inputs, preprocessed with the model card: shared by `octet eval`
// (the evaluation set) and calibration (`octet quantize`, `octet eval --precision int8`), so
// a model is calibrated on exactly the numbers it is evaluated on.
#include <cstdint>
#include <string>
#include <vector>

#include "core/ir.h"
#include "engine/session.h"
#include "io/datasets/dataset.h"
#include "io/model_card.h"

namespace octet::cli {

// The graph's single image input, as a Session would report it. Throws ir::Error when the
// model does not have exactly one input.
TensorSpec image_input(const ir::Graph& g, const std::string& model_path);

// Loads SPEC for a model taking `input`: a folder of pictures is resized and converted to the
// model's size and channels; a dataset of fixed-size images must already fit (make_inputs
// checks). At most `limit` images (-1: all).
// `classes` are the model card's class names (may be empty). An images:DIR dataset's class
// folders are labelled by them: a folder named like a class (ignoring case and every character
// but letters and digits, so "T-shirt_top" is "T-shirt/top") gets that class's index, a folder named by a number gets that number (below the class count when
// the card has classes), anything else is an error listing the classes. Without a card, folders
// that are all numbers are labelled by number, other names by their sorted order.
data::Dataset load_dataset_for(const std::string& spec, const TensorSpec& input, int64_t limit = -1,
                               const std::vector<std::string>& classes = {});

// [count, C, H, W] float32, each pixel normalized by the card: (pixel * scale - mean) / std;
// preprocessed images (a float32 npy: dataset) are copied as they are.
ir::TensorData make_inputs(const data::Dataset& d, const ModelCard& card, const TensorSpec& input);

// Images [begin, end) of a batch tensor (dim 0 is the image).
ir::TensorData slice(const ir::TensorData& all, int64_t begin, int64_t end);

// The first `limit` images (-1: all) in batches of `batch` (the last one may be smaller).
std::vector<ir::TensorData> split_batches(const ir::TensorData& all, int64_t batch, int64_t limit = -1);

}  // namespace octet::cli
