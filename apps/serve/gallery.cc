#include "apps/serve/gallery.h"

#include <fmt/format.h>

#include "apps/cli/model_inputs.h"
#include "apps/serve/no_paths.h"
#include "apps/serve/stb_codecs.h"

namespace octet::serve {

Gallery load_gallery(const std::string& spec, const TensorSpec& input, int count,
                     const std::vector<std::string>& classes) {
  Gallery g;
  if (count <= 0) return g;
  const data::Dataset d = cli::load_dataset_for(spec, input, count, classes);
  if (d.preprocessed) throw ir::Error("'" + spec + "' holds float model inputs, not pictures a page can show");
  if (input.dims.size() != 4 || d.channels != input.dims[1] || d.height != input.dims[2] || d.width != input.dims[3])
    throw ir::Error(fmt::format("{}: {}x{}x{} images (CxHxW), the model takes {}", d.description, d.channels, d.height,
                                d.width, ir::dims_str(input.dims)));
  g.data = d.description;
  const int64_t plane = int64_t{d.height} * d.width;
  std::vector<uint8_t> hwc(size_t(d.image_bytes()));
  for (int64_t i = 0; i < d.count(); ++i) {
    const uint8_t* chw = d.image(i);
    for (int c = 0; c < d.channels; ++c)
      for (int64_t p = 0; p < plane; ++p) hwc[size_t(p * d.channels + c)] = chw[c * plane + p];
    std::string png = encode_png(hwc.data(), d.width, d.height, d.channels);
    if (png.empty()) throw ir::Error(fmt::format("{}: could not encode image {} as PNG", d.description, i));
    g.samples.push_back({d.labels[size_t(i)], std::move(png)});
  }
  return g;
}

nlohmann::json to_json(const Gallery& g, const std::vector<std::string>& classes) {
  nlohmann::json samples = nlohmann::json::array();
  for (size_t i = 0; i < g.samples.size(); ++i) {
    const int label = g.samples[i].label;
    const bool named = label >= 0 && size_t(label) < classes.size();
    samples.push_back({{"index", i},
                       {"class", label},
                       {"label", named ? nlohmann::json(classes[size_t(label)]) : nlohmann::json(nullptr)},
                       {"url", fmt::format("/api/samples/{}.png", i)}});
  }
  return {{"data", without_paths(g.data)}, {"samples", samples}};
}

}  // namespace octet::serve
