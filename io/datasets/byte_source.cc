#include "io/datasets/byte_source.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace octet::data::detail {

namespace fs = std::filesystem;

std::vector<uint8_t> read_file(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw std::runtime_error(path + ": no such file");
  if (fs::is_directory(path, ec)) throw std::runtime_error(path + ": is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open: " + std::strerror(errno));
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  if (size > 0 && !in.read(reinterpret_cast<char*>(bytes.data()), size))
    throw std::runtime_error(path + ": read error after " + std::to_string(in.gcount()) + " bytes");
  return bytes;
}

struct ByteSource::Inflater {
  z_stream zs{};
  bool member_ended = false;
  ~Inflater() { inflateEnd(&zs); }
};

ByteSource::ByteSource(std::string path) : path_(std::move(path)), file_(read_file(path_)) {
  if (file_.size() >= 2 && file_[0] == 0x1f && file_[1] == 0x8b) {
    inflater_ = std::make_unique<Inflater>();
    // 15 + 16: gzip wrapper only, so the CRC and length in the trailer are checked.
    if (inflateInit2(&inflater_->zs, 15 + 16) != Z_OK) throw std::runtime_error(path_ + ": zlib inflateInit2 failed");
    inflater_->zs.next_in = file_.data();
    inflater_->zs.avail_in = static_cast<uInt>(file_.size());
  }
}

ByteSource::~ByteSource() = default;

size_t ByteSource::read(uint8_t* dst, size_t n) {
  size_t got;
  if (inflater_) {
    got = inflate_into(dst, n);
  } else {
    got = std::min(n, file_.size() - plain_pos_);
    if (got) std::memcpy(dst, file_.data() + plain_pos_, got);
    plain_pos_ += got;
  }
  delivered_ += got;
  return got;
}

size_t ByteSource::inflate_into(uint8_t* dst, size_t n) {
  z_stream& zs = inflater_->zs;
  zs.next_out = dst;
  zs.avail_out = static_cast<uInt>(n);  // callers read in chunks well below 4 GiB
  while (zs.avail_out > 0) {
    if (inflater_->member_ended) {
      // Concatenated gzip members form one stream (as gunzip treats them); anything else
      // after the end is ignored, like gunzip's "trailing garbage ignored".
      if (zs.avail_in >= 2 && zs.next_in[0] == 0x1f && zs.next_in[1] == 0x8b) {
        inflateReset(&zs);
        inflater_->member_ended = false;
        continue;
      }
      break;
    }
    const uint64_t at = delivered_ + (n - zs.avail_out);
    if (zs.avail_in == 0)
      throw std::runtime_error(path_ + ": gzip data truncated: the stream ends after " + std::to_string(at) +
                               " decompressed bytes (the compressed file has " + std::to_string(file_.size()) +
                               " bytes)");
    const int ret = inflate(&zs, Z_NO_FLUSH);
    if (ret == Z_STREAM_END) {
      inflater_->member_ended = true;
    } else if (ret != Z_OK && ret != Z_BUF_ERROR) {
      const uint64_t out_at = delivered_ + (n - zs.avail_out);
      throw std::runtime_error(path_ + ": corrupt gzip data at decompressed byte offset " + std::to_string(out_at) +
                               " (compressed byte offset " + std::to_string(zs.next_in - file_.data()) +
                               "): zlib: " + (zs.msg ? zs.msg : zError(ret)));
    }
  }
  return n - zs.avail_out;
}

}  // namespace octet::data::detail
