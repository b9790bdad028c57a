#pragma once
// The test images the page offers to classify with one click: the first few of the model
// card's dataset, as PNG files with their labels.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/session.h"

namespace octet::serve {

struct Sample {
  int label = -1;     // -1 when the dataset has none
  std::string png;    // the image at the model's size, as a PNG file
};

struct Gallery {
  std::string data;  // the dataset's description; empty when there is no gallery
  std::vector<Sample> samples;
};

// The first `count` images of `spec` (a dataset spec, e.g. fashion-mnist:test) for a model
// taking `input`. Throws when the dataset cannot be read or does not fit the model.
Gallery load_gallery(const std::string& spec, const TensorSpec& input, int count,
                     const std::vector<std::string>& classes);

// {"data": "...", "samples": [{"index": 0, "class": 9, "label": "Ankle boot", "url": "/api/samples/0.png"}]}
// ("class" is the label's index, -1 when unknown, as in a classification's "top").
nlohmann::json to_json(const Gallery& g, const std::vector<std::string>& classes);

}  // namespace octet::serve
