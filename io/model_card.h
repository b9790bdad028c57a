#pragma once
// A model card: the JSON file beside a model (model.onnx -> model.json) that says how to
// feed it (input size, channels, scale, mean/std), what its classes are and which dataset
// it is evaluated on, so `octet eval model.onnx` needs no flags.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace octet {

struct ModelCard {
  std::string path;  // where it was read from; empty for defaults
  std::string name;
  std::string data;  // default --data spec, e.g. "fashion-mnist:test"
  int channels = 0, height = 0, width = 0;  // 0: take them from the model's input
  // input = (pixel * scale - mean[c]) / std[c], pixels 0..255, planar NCHW.
  float scale = 1.0f;
  std::vector<float> mean{0.0f}, stddev{1.0f};
  std::vector<std::string> classes;
  std::string output_kind = "logits";  // or "probabilities"

  float normalize(int channel, uint8_t pixel) const;
  // Throws std::runtime_error naming the card when its mean or std has neither one value nor
  // one per channel of a model input with `channels` channels.
  void check_channels(int64_t channels) const;
};

// The card beside `model_path`, if there is one. Throws std::runtime_error naming the file
// when it exists but is malformed.
std::optional<ModelCard> find_model_card(const std::string& model_path);
ModelCard read_model_card(const std::string& card_path);

}  // namespace octet
