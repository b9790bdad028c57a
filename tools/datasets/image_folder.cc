// A folder of PNG/JPEG/BMP (anything stb_image decodes): with subfolders, each is a class;
// otherwise the images are unlabelled.
#include <stb/stb_image.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

#include "tools/datasets/image_convert.h"
#include "tools/datasets/readers.h"

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

struct Image {
  int channels = 0, height = 0, width = 0;
  std::vector<uint8_t> chw;
};

// Largest image file read, and largest image decoded (33.5 megapixels): stb reads a BMP's
// missing pixel rows as zeros, so a 191-byte header announcing 8 x 12.5 M pixels decoded for
// seconds (found by tests/fuzz/fuzz_images); the header is checked first.
constexpr uintmax_t kMaxImageFileBytes = uintmax_t{256} << 20;
constexpr int64_t kMaxImagePixels = int64_t{1} << 25;

// Whether every Huffman table of a JPEG holds at most 256 codes. Debian 12's stb_image builds
// its code-length list in a 257-byte array without that check, so a crafted table writes past
// it (found by tests/fuzz/fuzz_images): such files are refused before stb sees them. Walks the
// markers, skipping entropy-coded data (stuffed 0xFF00 bytes, restart markers) between scans.
bool jpeg_huffman_tables_fit(const std::vector<uint8_t>& b) {
  size_t pos = 0;
  while (pos < b.size() && b[pos] == 0xFF) ++pos;  // stb skips fill bytes before SOI too
  if (pos == 0 || pos >= b.size() || b[pos] != 0xD8) return true;  // not a JPEG
  ++pos;
  while (pos + 1 < b.size()) {
    if (b[pos] != 0xFF) {
      ++pos;
      continue;
    }
    const uint8_t m = b[pos + 1];
    if (m == 0xFF) {
      ++pos;
      continue;
    }
    if (m == 0x00 || m == 0x01 || (m >= 0xD0 && m <= 0xD7)) {
      pos += 2;
      continue;
    }
    if (m == 0xD9 || pos + 4 > b.size()) return true;
    const size_t len = size_t(b[pos + 2]) << 8 | b[pos + 3];
    if (m == 0xC4) {
      const size_t end = std::min(b.size(), pos + 2 + len);
      for (size_t t = pos + 4; t < end;) {
        if (t + 17 > end) return false;
        size_t codes = 0;
        for (size_t i = 1; i <= 16; ++i) codes += b[t + i];
        if (codes > 256) return false;
        t += 17 + codes;
      }
    }
    pos += 2 + len;
  }
  return true;
}

// Whether every PNG chunk fits in the file. stb grows its IDAT buffer to a chunk's declared
// length before reading it, so a 60-byte file declaring a 1.2 GB chunk allocated 1.2 GB
// (found by tests/fuzz/fuzz_images).
bool png_chunks_fit(const std::vector<uint8_t>& b) {
  static const uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
  if (b.size() < 8 || !std::equal(kSignature, kSignature + 8, b.begin())) return true;  // not a PNG
  for (size_t pos = 8; pos + 8 <= b.size();) {
    const uint64_t len = uint64_t(b[pos]) << 24 | uint64_t(b[pos + 1]) << 16 | uint64_t(b[pos + 2]) << 8 | b[pos + 3];
    if (pos + 12 + len > b.size()) return false;  // length, type, data, CRC
    if (b[pos + 4] == 'I' && b[pos + 5] == 'E' && b[pos + 6] == 'N' && b[pos + 7] == 'D') return true;
    pos += 12 + len;
  }
  return true;
}

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

// Decodes a file to planar CHW with 1 or 3 channels (alpha is dropped).
Image decode(const std::string& path) {
  const std::vector<uint8_t> bytes = read_image_file(path);
  if (!jpeg_huffman_tables_fit(bytes))
    throw std::runtime_error(path + ": not a readable image (a JPEG Huffman table holds more than 256 codes)");
  if (!png_chunks_fit(bytes))
    throw std::runtime_error(path + ": not a readable image (a PNG chunk is longer than the rest of the file)");
  if (bytes.size() > size_t(std::numeric_limits<int>::max()))
    throw std::runtime_error(path + ": too large for the image decoder");
  int w = 0, h = 0, n = 0;
  if (stbi_info_from_memory(bytes.data(), int(bytes.size()), &w, &h, &n) && int64_t{w} * h > kMaxImagePixels)
    throw std::runtime_error(path + ": " + std::to_string(w) + "x" + std::to_string(h) +
                             " pixels, more than octet decodes (33.5 megapixels); downscale it first");
  std::unique_ptr<stbi_uc, void (*)(void*)> data(
      stbi_load_from_memory(bytes.data(), int(bytes.size()), &w, &h, &n, 0), stbi_image_free);
  if (!data) throw std::runtime_error(path + ": not a readable image (stb_image: " + stbi_failure_reason() + ")");
  if (w <= 0 || h <= 0 || n <= 0)  // a decoder may accept a header of zero width or height (fuzz finding)
    throw std::runtime_error(path + ": an image of " + std::to_string(w) + "x" + std::to_string(h) + " pixels");
  Image im;
  im.channels = n >= 3 ? 3 : 1;
  im.height = h;
  im.width = w;
  const int64_t plane = int64_t{h} * w;
  im.chw.resize(im.channels * plane);
  for (int c = 0; c < im.channels; ++c)
    for (int64_t i = 0; i < plane; ++i) im.chw[c * plane + i] = data.get()[i * n + c];
  return im;
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
    const Image im = decode(path);
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
