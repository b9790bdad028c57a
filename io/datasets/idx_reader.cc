// IDX (the MNIST format): a big-endian header 0x00 0x00 <type> <ndim>, ndim 32-bit sizes,
// then the data. Images are type 0x08 (ubyte) with ndim 3 (count, rows, columns), labels
// type 0x08 with ndim 1.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <stdexcept>

#include "io/datasets/byte_source.h"
#include "io/datasets/readers.h"

namespace octet::data::detail {

namespace {

constexpr uint32_t kImagesMagic = 0x00000803, kLabelsMagic = 0x00000801;
constexpr int64_t kChunkImages = 1000;  // progress granularity

std::string hex32(uint32_t v) {
  char s[16];
  std::snprintf(s, sizeof s, "0x%08x", v);
  return s;
}

uint32_t read_u32_be(ByteSource& src, const char* what) {
  uint8_t b[4];
  const uint64_t at = src.offset();
  if (src.read(b, 4) != 4)
    throw std::runtime_error(src.path() + ": truncated IDX header: " + what + " expected at byte " + std::to_string(at) +
                             ", the data ends at byte " + std::to_string(src.offset()));
  return uint32_t{b[0]} << 24 | uint32_t{b[1]} << 16 | uint32_t{b[2]} << 8 | b[3];
}

// Reads the magic and the sizes; returns the sizes.
std::vector<uint32_t> read_header(ByteSource& src, uint32_t magic) {
  const uint32_t found = read_u32_be(src, "the magic number");
  if (found != magic) {
    std::string hint;
    if (magic == kImagesMagic && found == kLabelsMagic) hint = " (a labels file?)";
    if (magic == kLabelsMagic && found == kImagesMagic) hint = " (an images file?)";
    if ((found >> 16) == 0x1f8b) hint = " (gzip data inside the gzip stream?)";
    throw std::runtime_error(src.path() + ": IDX magic " + hex32(magic) + " expected at byte 0, found " + hex32(found) +
                             hint);
  }
  std::vector<uint32_t> dims(magic & 0xff);
  for (uint32_t& d : dims) d = read_u32_be(src, "a dimension size");
  return dims;
}

void expect_end(ByteSource& src, const char* last) {
  uint8_t extra[256];
  const uint64_t at = src.offset();
  if (size_t n = src.read(extra, sizeof extra))
    throw std::runtime_error(src.path() + ": unexpected data after the " + last + " at byte offset " + std::to_string(at) +
                             " (" + (n == sizeof extra ? "at least " : "") + std::to_string(n) + " extra bytes)");
}

void report(const LoadOptions& opt, int64_t done, int64_t total) {
  if (opt.progress) opt.progress(done, total);
}

}  // namespace

Dataset read_idx(const std::string& images_path, const std::string& labels_path, const LoadOptions& opt) {
  ByteSource images(images_path);
  const std::vector<uint32_t> dims = read_header(images, kImagesMagic);
  const int64_t count = dims[0], rows = dims[1], cols = dims[2];
  // Each dimension is checked before the product (two 32-bit sizes overflow a signed 64-bit one).
  if (rows == 0 || cols == 0 || rows > (1 << 24) || cols > (1 << 24) || rows * cols > (1 << 24))
    throw std::runtime_error(images_path + ": implausible image size " + std::to_string(rows) + "x" +
                             std::to_string(cols) + " in the IDX header");

  std::unique_ptr<ByteSource> labels;
  if (!labels_path.empty()) {
    labels = std::make_unique<ByteSource>(labels_path);
    const int64_t label_count = read_header(*labels, kLabelsMagic)[0];
    if (label_count != count)
      throw std::runtime_error("labels file " + labels_path + " has " + std::to_string(label_count) +
                               " labels, images file " + images_path + " has " + std::to_string(count) + " images");
  }

  const int64_t n = opt.limit >= 0 ? std::min(count, opt.limit) : count;
  const int64_t image_bytes = rows * cols;
  Dataset d;
  d.channels = 1;
  d.height = static_cast<int>(rows);
  d.width = static_cast<int>(cols);
  // Grown chunk by chunk (at most ~4 MB, at least one image, at a time) so a corrupt image
  // count or size fails as truncated data, not as a huge allocation.
  const int64_t chunk = std::clamp<int64_t>((int64_t{4} << 20) / image_bytes, 1, kChunkImages);
  d.pixels.reserve(std::min<int64_t>(n, chunk) * image_bytes);

  const uint64_t data_start = images.offset();
  for (int64_t i = 0; i < n; i += chunk) {
    const int64_t k = std::min(chunk, n - i);
    const size_t want = k * image_bytes;
    d.pixels.resize((i + k) * image_bytes);
    const size_t got = images.read(d.pixels.data() + i * image_bytes, want);
    if (got != want)
      throw std::runtime_error(images_path + ": truncated: the data ends at byte offset " +
                               std::to_string(images.offset()) + ", inside image " + std::to_string(i + got / image_bytes) +
                               "; the header announces " + std::to_string(count) + " images of " + std::to_string(rows) +
                               "x" + std::to_string(cols) + " (" + std::to_string(count * image_bytes) +
                               " bytes from byte " + std::to_string(data_start) + ")");
    report(opt, i + k, n);
  }
  if (n == count) expect_end(images, "last image");

  d.labels.assign(n, -1);
  if (labels) {
    std::vector<uint8_t> raw(n);
    const uint64_t at = labels->offset();
    if (labels->read(raw.data(), n) != static_cast<size_t>(n))
      throw std::runtime_error(labels_path + ": truncated: " + std::to_string(count) + " labels expected from byte " +
                               std::to_string(at) + ", the data ends at byte offset " + std::to_string(labels->offset()));
    std::copy(raw.begin(), raw.end(), d.labels.begin());
    if (n == count) expect_end(*labels, "last label");
  }
  if (n == 0) report(opt, 0, 0);
  return d;
}

}  // namespace octet::data::detail
