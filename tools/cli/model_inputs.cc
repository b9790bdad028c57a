#include "tools/cli/model_inputs.h"

#include <fmt/format.h>

#include <algorithm>

namespace octet::cli {

TensorSpec image_input(const ir::Graph& g, const std::string& model_path) {
  if (g.inputs.size() != 1)
    throw ir::Error(fmt::format("{} has {} inputs; octet evaluates and calibrates models with one image input",
                                model_path, g.inputs.size()));
  const ir::Value& v = g.value(g.inputs[0]);
  if (!v.dims) throw ir::Error(model_path + ": input '" + v.name + "' has no declared shape");
  return {v.name, v.dtype, *v.dims};
}

data::Dataset load_dataset_for(const std::string& spec, const TensorSpec& input, int64_t limit) {
  data::LoadOptions lo;
  lo.limit = limit;
  if (input.dims.size() == 4 && spec.starts_with("images:")) {
    lo.channels = int(input.dims[1]);
    lo.height = int(input.dims[2]);
    lo.width = int(input.dims[3]);
  }
  return data::load_dataset(spec, lo);
}

ir::TensorData make_inputs(const data::Dataset& d, const ModelCard& card, const TensorSpec& input) {
  if (input.dims.size() != 4 || input.dtype != ir::DType::f32)
    throw ir::Error(fmt::format("input '{}' is {} {}: octet needs an image model with one float [N,C,H,W] input",
                                input.name, ir::dtype_name(input.dtype), ir::dims_str(input.dims)));
  const int64_t c = input.dims[1], h = input.dims[2], w = input.dims[3];
  if (d.channels != c || d.height != h || d.width != w)
    throw ir::Error(fmt::format("the data has {}x{}x{} images (CxHxW), the model takes {}x{}x{}: pick data that "
                                "fits the model", d.channels, d.height, d.width, c, h, w));
  ir::TensorData t = ir::TensorData::make(ir::DType::f32, {d.count(), c, h, w});
  float* out = t.as<float>();
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
