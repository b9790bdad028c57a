// A folder of PNG/JPEG/BMP (anything stb_image decodes): with subfolders, each is a class;
// otherwise the images are unlabelled.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>

#include "io/datasets/image_convert.h"
#include "io/datasets/image_decode.h"
#include "io/datasets/readers.h"

namespace octet::data::detail {

namespace fs = std::filesystem;

namespace {

bool hidden(const fs::path& p) { return p.filename().string().starts_with('.'); }

// Regular files under dir (recursively), hidden files and folders skipped, sorted by path.
std::vector<std::string> image_files(const fs::path& dir) {
  std::vector<std::string> files;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    if (hidden(it->path())) {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file()) files.push_back(it->path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Largest image file read.
constexpr uintmax_t kMaxImageFileBytes = uintmax_t{256} << 20;

std::vector<uint8_t> read_image_file(const std::string& path) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(path, ec);
  if (ec) throw std::runtime_error(path + ": cannot read its size: " + ec.message());
  if (size > kMaxImageFileBytes)
    throw std::runtime_error(path + ": " + std::to_string(size >> 20) + " MiB, larger than octet reads as one image");
  std::vector<uint8_t> bytes(size);
  std::ifstream f(path, std::ios::binary);
  if (!f.read(reinterpret_cast<char*>(bytes.data()), std::streamsize(size)))
    throw std::runtime_error(path + ": could not read the file");
  return bytes;
}

DecodedImage decode(const std::string& path) {
  const std::vector<uint8_t> bytes = read_image_file(path);
  return decode_image(bytes.data(), bytes.size(), path);
}

}  // namespace

Dataset read_image_folder(const std::string& dir, const LoadOptions& opt) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) throw std::runtime_error(dir + ": no such directory");
  if (!fs::is_directory(dir, ec)) throw std::runtime_error(dir + ": not a directory");

  Dataset d;
  std::vector<std::string> files;
  std::vector<int> file_labels;
  std::vector<std::string> loose;  // files next to the class folders
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    if (hidden(e.path())) continue;
    if (e.is_directory()) d.class_names.push_back(e.path().filename().string());
    else loose.push_back(e.path().string());
  }
  std::sort(d.class_names.begin(), d.class_names.end());
  std::sort(loose.begin(), loose.end());
  if (d.class_names.empty()) {
    files = loose;
    file_labels.assign(files.size(), -1);
  } else {
    if (!loose.empty())
      throw std::runtime_error(loose.front() + ": a file next to the class folders of " + dir +
                               "; with subfolders every image must be inside a class folder");
    for (size_t k = 0; k < d.class_names.size(); ++k) {
      for (std::string& f : image_files(fs::path(dir) / d.class_names[k])) {
        files.push_back(std::move(f));
        file_labels.push_back(static_cast<int>(k));
      }
    }
  }
  if (files.empty())
    throw std::runtime_error(dir + (d.class_names.empty() ? ": no image files" : ": the class folders hold no image files"));

  const int64_t n = opt.limit >= 0 ? std::min<int64_t>(files.size(), opt.limit) : files.size();
  d.channels = opt.channels;
  d.height = opt.height;
  d.width = opt.width;
  std::string first;  // the file that fixed the shape, for error messages
  for (int64_t i = 0; i < n; ++i) {
    const std::string& path = files[i];
    const DecodedImage im = decode(path);
    if (i == 0) {
      first = path;
      if (d.channels == 0) d.channels = im.channels;
      if (d.height == 0) d.height = im.height, d.width = im.width;
      d.pixels.resize(n * d.image_bytes());
    }
    if (opt.channels == 0 && im.channels != d.channels)
      throw std::runtime_error(path + ": " + std::to_string(im.channels) + " channel(s), but " + first + " has " +
                               std::to_string(d.channels) + "; give a channel count to convert them");
    if (opt.height == 0 && (im.height != d.height || im.width != d.width))
      throw std::runtime_error(path + ": " + std::to_string(im.height) + "x" + std::to_string(im.width) + ", but " +
                               first + " is " + std::to_string(d.height) + "x" + std::to_string(d.width) +
                               "; give a size to resize them to");
    convert_image(im.chw.data(), im.channels, im.height, im.width, d.pixels.data() + i * d.image_bytes(), d.channels,
                  d.height, d.width);
    d.labels.push_back(file_labels[i]);
    d.sources.push_back(path);
    if (opt.progress) opt.progress(i + 1, n);
  }
  return d;
}

}  // namespace octet::data::detail
