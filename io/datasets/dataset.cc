#include "io/datasets/dataset.h"

#include <filesystem>
#include <map>
#include <stdexcept>

#include "io/datasets/image_convert.h"
#include "io/datasets/readers.h"

namespace octet::data {

namespace fs = std::filesystem;

namespace {

constexpr const char* kForms =
    "fashion-mnist[:train|:test][@DIR], cifar10:FILE[,FILE...], images:DIR, idx:IMAGES[,LABELS] or "
    "npy:IMAGES[,LABELS]";
constexpr const char* kFashionDir = "/usr/share/datasets/fashion-mnist";

void check_options(const LoadOptions& opt) {
  if (opt.limit < -1) throw std::runtime_error("dataset limit must be -1 (all) or >= 0, got " + std::to_string(opt.limit));
  if (opt.channels != 0 && opt.channels != 1 && opt.channels != 3)
    throw std::runtime_error("dataset images can be converted to 1 or 3 channels, not " + std::to_string(opt.channels));
  if (opt.height < 0 || opt.width < 0 || (opt.height == 0) != (opt.width == 0))
    throw std::runtime_error("dataset resize needs both a height and a width > 0, got " + std::to_string(opt.height) +
                             "x" + std::to_string(opt.width));
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t at; (at = s.find(sep, start)) != std::string::npos; start = at + 1) parts.push_back(s.substr(start, at - start));
  parts.push_back(s.substr(start));
  return parts;
}

std::string shape_text(int c, int h, int w) {
  return std::to_string(c) + "x" + std::to_string(h) + "x" + std::to_string(w);
}

// Converts every image when the options ask for another shape; returns what changed, for the
// description ("" when nothing did).
std::string convert_all(Dataset& d, const LoadOptions& opt) {
  const int c = opt.channels ? opt.channels : d.channels;
  const int h = opt.height ? opt.height : d.height;
  const int w = opt.width ? opt.width : d.width;
  if (c == d.channels && h == d.height && w == d.width) return "";
  // Resizing model inputs would mix a second preprocessing into someone else's first.
  if (d.preprocessed)
    throw std::runtime_error("float32 images (" + shape_text(d.channels, d.height, d.width) +
                             ") are model inputs as they are and cannot be converted to " + shape_text(c, h, w));
  const std::string change = ", converted from " + shape_text(d.channels, d.height, d.width) + " to " + shape_text(c, h, w);
  const int64_t out_bytes = int64_t{c} * h * w;
  std::vector<uint8_t> out(d.count() * out_bytes);
  for (int64_t i = 0; i < d.count(); ++i)
    detail::convert_image(d.image(i), d.channels, d.height, d.width, out.data() + i * out_bytes, c, h, w);
  d.pixels = std::move(out);
  d.channels = c, d.height = h, d.width = w;
  return change;
}

// DIR/NAME.gz, else DIR/NAME (some copies are unpacked).
std::string fashion_file(const std::string& dir, const std::string& name) {
  std::error_code ec;
  const fs::path gz = fs::path(dir) / (name + ".gz"), plain = fs::path(dir) / name;
  if (fs::exists(gz, ec)) return gz.string();
  if (fs::exists(plain, ec)) return plain.string();
  throw std::runtime_error(gz.string() + ": no such file (nor " + plain.string() + ")");
}

Dataset load_fashion_mnist(const std::string& rest, const LoadOptions& opt) {
  std::string split_name = "test", dir = kFashionDir;
  const size_t at = rest.find('@');
  const std::string split_part = rest.substr(0, at);
  if (at != std::string::npos) dir = rest.substr(at + 1);
  if (!split_part.empty()) {
    if (split_part != ":train" && split_part != ":test")
      throw std::runtime_error("fashion-mnist: unknown split '" + split_part.substr(1) + "'; expected " + kForms);
    split_name = split_part.substr(1);
  }
  if (dir.empty()) throw std::runtime_error("fashion-mnist@: the directory is missing; expected " + std::string(kForms));
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw std::runtime_error(dir + ": no such directory" +
                             (dir == kFashionDir ? " (install Debian's dataset-fashion-mnist, or give fashion-mnist@DIR)"
                                                 : ""));
  const std::string stem = split_name == "test" ? "t10k" : "train";
  Dataset d = detail::read_idx(fashion_file(dir, stem + "-images-idx3-ubyte"), fashion_file(dir, stem + "-labels-idx1-ubyte"),
                               opt);
  d.class_names = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"};
  const std::string change = convert_all(d, opt);
  d.description = "fashion-mnist " + split_name + " (" + std::to_string(d.count()) + " images, " + dir + change + ")";
  return d;
}

std::string joined(const std::vector<std::string>& parts) {
  std::string s;
  for (const std::string& p : parts) s += (s.empty() ? "" : ", ") + p;
  return s;
}

}  // namespace

Dataset load_dataset(const std::string& spec, const LoadOptions& opt) {
  check_options(opt);
  if (spec.starts_with("fashion-mnist")) {
    const std::string rest = spec.substr(13);
    if (rest.empty() || rest[0] == ':' || rest[0] == '@') return load_fashion_mnist(rest, opt);
  }
  const size_t colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : spec.substr(colon + 1);
  if (kind != "cifar10" && kind != "images" && kind != "idx" && kind != "npy")
    throw std::runtime_error("unknown dataset '" + spec + "'; expected " + kForms);
  if (arg.empty()) throw std::runtime_error("dataset '" + spec + "' names no file or folder; expected " + kForms);

  if (kind == "cifar10") {
    const std::vector<std::string> files = split(arg, ',');
    for (const std::string& f : files)
      if (f.empty()) throw std::runtime_error("dataset '" + spec + "' has an empty file name");
    Dataset d = detail::read_cifar10(files, opt);
    const std::string change = convert_all(d, opt);
    d.description = "cifar10 (" + std::to_string(d.count()) + " images from " + joined(files) + change + ")";
    return d;
  }
  if (kind == "idx") {
    const std::vector<std::string> files = split(arg, ',');
    if (files.size() > 2 || files[0].empty() || (files.size() == 2 && files[1].empty()))
      throw std::runtime_error("dataset '" + spec + "': expected idx:IMAGES[,LABELS]");
    Dataset d = detail::read_idx(files[0], files.size() == 2 ? files[1] : "", opt);
    const std::string change = convert_all(d, opt);
    d.description = "idx " + files[0] + " (" + std::to_string(d.count()) + " images" +
                    (files.size() == 2 ? "" : ", unlabelled") + change + ")";
    return d;
  }
  if (kind == "npy") {
    const std::vector<std::string> files = split(arg, ',');
    if (files.size() > 2 || files[0].empty() || (files.size() == 2 && files[1].empty()))
      throw std::runtime_error("dataset '" + spec + "': expected npy:IMAGES[,LABELS]");
    Dataset d = detail::read_npy(files[0], files.size() == 2 ? files[1] : "", opt);
    const std::string change = convert_all(d, opt);
    d.description = "npy " + files[0] + " (" + std::to_string(d.count()) + " images, " +
                    shape_text(d.channels, d.height, d.width) +
                    (d.preprocessed ? " float32 model inputs" : " uint8") +
                    (files.size() == 2 ? "" : ", unlabelled") + change + ")";
    return d;
  }
  Dataset d = detail::read_image_folder(arg, opt);
  d.description = "images " + arg + " (" + std::to_string(d.count()) + " images, " +
                  (d.class_names.empty() ? std::string("unlabelled")
                                         : std::to_string(d.class_names.size()) + " classes") +
                  ", " + shape_text(d.channels, d.height, d.width) + ")";
  return d;
}

Dataset subset(const Dataset& d, const std::vector<int64_t>& rows) {
  Dataset out;
  out.description = d.description;
  out.channels = d.channels, out.height = d.height, out.width = d.width;
  out.class_names = d.class_names;
  out.preprocessed = d.preprocessed;
  for (int64_t i : rows) {
    if (d.preprocessed)
      out.values.insert(out.values.end(), d.image_values(i), d.image_values(i) + d.image_bytes());
    else
      out.pixels.insert(out.pixels.end(), d.image(i), d.image(i) + d.image_bytes());
    out.labels.push_back(d.labels[size_t(i)]);
    if (!d.sources.empty()) out.sources.push_back(d.sources[size_t(i)]);
  }
  return out;
}

std::vector<int64_t> stratified_indices(const Dataset& d, int per_class) {
  if (per_class < 1) throw std::runtime_error("stratified selection needs at least 1 image per class, got " +
                                              std::to_string(per_class));
  std::map<int, int> taken;
  std::vector<int64_t> picked;
  bool labelled = false;
  for (int64_t i = 0; i < d.count(); ++i) {
    const int label = d.labels[i];
    if (label < 0) continue;
    labelled = true;
    if (taken[label] < per_class) {
      ++taken[label];
      picked.push_back(i);
    }
  }
  if (!labelled) throw std::runtime_error(d.description + ": no image has a label, so no class-stratified selection");
  return picked;
}

}  // namespace octet::data
