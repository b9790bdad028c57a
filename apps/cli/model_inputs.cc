#include "apps/cli/model_inputs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>

namespace octet::cli {

TensorSpec image_input(const ir::Graph& g, const std::string& model_path) {
  if (g.inputs.size() != 1)
    throw ir::Error(fmt::format("{} has {} inputs; octet evaluates and calibrates models with one image input",
                                model_path, g.inputs.size()));
  const ir::Value& v = g.value(g.inputs[0]);
  if (!v.dims) throw ir::Error(model_path + ": input '" + v.name + "' has no declared shape");
  return {v.name, v.dtype, *v.dims};
}

namespace {

// A class name as a folder can spell it: lower case, letters and digits only ("T-shirt/top",
// which no folder can be called, matches a folder "T-shirt_top" or "tshirt top").
std::string folder_key(const std::string& s) {
  std::string k;
  for (unsigned char c : s)
    if (std::isalnum(c)) k += char(std::tolower(c));
  return k;
}

// "7" -> 7; anything that is not a plain non-negative decimal number -> nullopt.
std::optional<int> folder_number(const std::string& name) {
  if (name.empty() || name.size() > 9 || !std::all_of(name.begin(), name.end(), [](unsigned char c) { return std::isdigit(c); }))
    return std::nullopt;
  return std::stoi(name);
}

// The label of each class folder (d.class_names, sorted) by the rule of load_dataset_for.
std::vector<int> folder_labels(const data::Dataset& d, const std::string& spec, const std::vector<std::string>& classes) {
  const auto& folders = d.class_names;
  std::vector<int> labels(folders.size());
  if (classes.empty()) {
    std::vector<std::optional<int>> numbers;
    for (const auto& f : folders) numbers.push_back(folder_number(f));
    const bool all_numbers = std::all_of(numbers.begin(), numbers.end(), [](const auto& n) { return n.has_value(); });
    for (size_t k = 0; k < folders.size(); ++k) labels[k] = all_numbers ? *numbers[k] : int(k);
    return labels;
  }
  std::string list;
  for (size_t c = 0; c < classes.size(); ++c) list += fmt::format("{}{} ({})", c ? ", " : "", classes[c], c);
  for (size_t k = 0; k < folders.size(); ++k) {
    int label = -1;
    for (size_t c = 0; c < classes.size() && label < 0; ++c)
      if (folder_key(folders[k]) == folder_key(classes[c])) label = int(c);
    if (label < 0)
      if (auto n = folder_number(folders[k]); n && *n < int(classes.size())) label = *n;
    if (label < 0)
      throw ir::Error(fmt::format("{}: the folder '{}' names none of the model's {} classes; name each class folder "
                                  "after a class or its number: {}",
                                  spec, folders[k], classes.size(), list));
    labels[k] = label;
  }
  return labels;
}

}  // namespace

data::Dataset load_dataset_for(const std::string& spec, const TensorSpec& input, int64_t limit,
                               const std::vector<std::string>& classes) {
  data::LoadOptions lo;
  lo.limit = limit;
  if (input.dims.size() == 4 && spec.starts_with("images:")) {
    lo.channels = int(input.dims[1]);
    lo.height = int(input.dims[2]);
    lo.width = int(input.dims[3]);
  }
  data::Dataset d = data::load_dataset(spec, lo);
  if (spec.starts_with("images:") && !d.class_names.empty()) {
    // The reader numbers the sorted folders 0, 1, ...: relabel each by its name.
    const std::vector<int> by_folder = folder_labels(d, spec, classes);
    for (int& l : d.labels)
      if (l >= 0) l = by_folder[size_t(l)];
    if (!classes.empty()) {
      d.class_names = classes;
    } else {
      const int top = *std::max_element(by_folder.begin(), by_folder.end());
      std::vector<std::string> names(size_t(top) + 1);
      for (size_t k = 0; k < by_folder.size(); ++k) names[size_t(by_folder[k])] = d.class_names[k];
      d.class_names = names;
    }
  }
  return d;
}

ir::TensorData make_inputs(const data::Dataset& d, const ModelCard& card, const TensorSpec& input) {
  if (input.dims.size() != 4 || input.dtype != ir::DType::f32)
    throw ir::Error(fmt::format("input '{}' is {} {}: octet needs an image model with one float [N,C,H,W] input",
                                input.name, ir::dtype_name(input.dtype), ir::dims_str(input.dims)));
  const int64_t c = input.dims[1], h = input.dims[2], w = input.dims[3];
  if (d.channels != c || d.height != h || d.width != w)
    throw ir::Error(fmt::format("{}: {}x{}x{} images (CxHxW), the model takes {}x{}x{}: pick data that "
                                "fits the model", d.description, d.channels, d.height, d.width, c, h, w));
  ir::TensorData t = ir::TensorData::make(ir::DType::f32, {d.count(), c, h, w});
  float* out = t.as<float>();
  if (!d.preprocessed) card.check_channels(c);
  if (d.preprocessed) {  // float32 .npy images: model inputs already, the card's normalization is not theirs
    std::copy(d.values.begin(), d.values.end(), out);
    return t;
  }
  const int64_t plane = h * w;
  for (int64_t i = 0; i < d.count(); ++i) {
    const uint8_t* img = d.image(i);
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < plane; ++p)
        out[(i * c + ch) * plane + p] = card.normalize(int(ch), img[ch * plane + p]);
  }
  return t;
}

ir::TensorData slice(const ir::TensorData& all, int64_t begin, int64_t end) {
  ir::Dims d = all.dims;
  d[0] = end - begin;
  ir::TensorData t = ir::TensorData::make(all.dtype, d);
  const size_t row = all.bytes.size() / size_t(all.dims[0]);
  ir::copy_bytes(t.bytes.data(), all.bytes.data() + size_t(begin) * row, t.bytes.size());
  return t;
}

std::vector<ir::TensorData> split_batches(const ir::TensorData& all, int64_t batch, int64_t limit) {
  const int64_t n = limit < 0 ? all.dims[0] : std::min(limit, all.dims[0]);
  std::vector<ir::TensorData> out;
  for (int64_t b = 0; b < n; b += batch) out.push_back(slice(all, b, std::min(n, b + batch)));
  return out;
}

}  // namespace octet::cli
