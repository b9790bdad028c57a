// A file read front to back, inflated on the fly when it starts with the gzip magic, so the
// readers see the same bytes whether a file is gzipped or not and can name exact offsets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace octet::data::detail {

class ByteSource {
 public:
  explicit ByteSource(std::string path);  // throws when the file is missing or unreadable
  ~ByteSource();
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;

  // Reads up to n bytes; fewer only at the end of the data. Throws on corrupt or truncated
  // gzip data, naming the decompressed offset.
  size_t read(uint8_t* dst, size_t n);

  const std::string& path() const { return path_; }
  bool gzipped() const { return inflater_ != nullptr; }
  uint64_t offset() const { return delivered_; }  // data bytes (decompressed) delivered so far
  uint64_t file_size() const { return file_.size(); }

 private:
  struct Inflater;
  size_t inflate_into(uint8_t* dst, size_t n);

  std::string path_;
  std::vector<uint8_t> file_;
  size_t plain_pos_ = 0;
  uint64_t delivered_ = 0;
  std::unique_ptr<Inflater> inflater_;
};

// Reads a whole file into memory; throws "PATH: no such file" and the like.
std::vector<uint8_t> read_file(const std::string& path);

}  // namespace octet::data::detail
