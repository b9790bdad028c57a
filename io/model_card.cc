#include "io/model_card.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>

namespace octet {

float ModelCard::normalize(int channel, uint8_t pixel) const {
  const size_t c = size_t(channel);
  const float m = mean.size() == 1 ? mean[0] : mean.at(c);
  const float s = stddev.size() == 1 ? stddev[0] : stddev.at(c);
  return (float(pixel) * scale - m) / s;
}

void ModelCard::check_channels(int64_t channels) const {
  using Named = std::pair<const char*, const std::vector<float>*>;
  for (const auto& [name, values] : {Named{"mean", &mean}, Named{"std", &stddev}})
    if (values->size() != 1 && int64_t(values->size()) != channels)
      throw std::runtime_error((path.empty() ? std::string("the model card") : path) + ": " + name + " has " +
                               std::to_string(values->size()) + " values for an input of " + std::to_string(channels) +
                               " channel(s); give one value, or one per channel");
}

ModelCard read_model_card(const std::string& card_path) {
  std::ifstream f(card_path);
  if (!f) throw std::runtime_error(card_path + ": cannot open model card");
  ModelCard card;
  card.path = card_path;
  try {
    nlohmann::json j = nlohmann::json::parse(f);
    card.name = j.value("name", std::filesystem::path(card_path).stem().string());
    card.data = j.value("data", j.value("dataset", std::string()));
    if (card.data == "fashion-mnist") card.data = "fashion-mnist:test";
    if (j.contains("input")) {
      const auto& in = j["input"];
      if (in.value("layout", "NCHW") != "NCHW") throw std::runtime_error("only NCHW input layout is supported");
      card.channels = in.value("channels", 0);
      card.height = in.value("height", 0);
      card.width = in.value("width", 0);
      card.scale = in.value("scale", 1.0f);
      card.mean = in.value("mean", std::vector<float>{0.0f});
      card.stddev = in.value("std", std::vector<float>{1.0f});
    }
    card.classes = j.value("classes", std::vector<std::string>{});
    if (j.contains("output")) card.output_kind = j["output"].value("kind", "logits");
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(card_path + ": malformed model card: " + e.what());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(card_path + ": " + e.what());
  }
  // A negative std flips every input's sign and a NaN poisons it; neither is a preprocessing.
  for (float s : card.stddev)
    if (!(s > 0.0f) || !std::isfinite(s))
      throw std::runtime_error(card_path + ": std must be positive and finite, got " + std::to_string(s));
  for (float m : card.mean)
    if (!std::isfinite(m)) throw std::runtime_error(card_path + ": mean must be finite");
  if (!(card.scale > 0.0f) || !std::isfinite(card.scale))
    throw std::runtime_error(card_path + ": scale must be positive and finite, got " + std::to_string(card.scale));
  if (card.mean.empty() || card.stddev.empty()) throw std::runtime_error(card_path + ": mean and std need a value");
  if (card.channels > 0) card.check_channels(card.channels);
  return card;
}

std::optional<ModelCard> find_model_card(const std::string& model_path) {
  auto card = std::filesystem::path(model_path).replace_extension(".json");
  if (!std::filesystem::exists(card)) return std::nullopt;
  return read_model_card(card.string());
}

}  // namespace octet
