// CIFAR-10 binary batches (data_batch_N.bin, test_batch.bin): no header, a run of 3073-byte
// records, each a label byte 0..9 then 32x32 R, G and B planes, already planar CHW.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "io/datasets/byte_source.h"
#include "io/datasets/readers.h"

namespace octet::data::detail {

namespace {

constexpr int64_t kPixels = 3 * 32 * 32, kRecord = 1 + kPixels;

// Returns the number of records.
int64_t check_layout(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    if (std::filesystem::exists(path, ec)) throw std::runtime_error(path + ": not a regular file");
    throw std::runtime_error(path + ": no such file");
  }
  const int64_t size = std::filesystem::file_size(path, ec);
  if (ec) throw std::runtime_error(path + ": " + ec.message());
  if (size == 0) throw std::runtime_error(path + ": empty file (no CIFAR-10 records)");
  char first = 0;
  std::ifstream(path, std::ios::binary).get(first);
  // The Python version of CIFAR-10 is a pickle, which starts with the protocol opcode 0x80.
  if (static_cast<uint8_t>(first) == 0x80)
    throw std::runtime_error(path + ": this looks like a Python pickle (the CIFAR-10 Python version); use the binary "
                             "version (cifar-10-binary.tar.gz: data_batch_N.bin, test_batch.bin)");
  if (size % kRecord != 0) {
    const int64_t record = size / kRecord;
    throw std::runtime_error(path + ": truncated record " + std::to_string(record) + " at byte offset " +
                             std::to_string(record * kRecord) + " (file has " + std::to_string(size) +
                             " bytes; records are " + std::to_string(kRecord) + " bytes)");
  }
  return size / kRecord;
}

}  // namespace

Dataset read_cifar10(const std::vector<std::string>& files, const LoadOptions& opt) {
  // Check every file before reading any, so a bad last file fails fast.
  std::vector<int64_t> records_in;
  for (const std::string& path : files) records_in.push_back(check_layout(path));
  int64_t total = 0;
  for (int64_t r : records_in) total += r;
  const int64_t n = opt.limit >= 0 ? std::min(total, opt.limit) : total;

  Dataset d;
  d.channels = 3;
  d.height = d.width = 32;
  d.pixels.resize(n * kPixels);
  d.labels.resize(n);
  d.class_names = {"airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"};
  int64_t done = 0;
  for (size_t f = 0; f < files.size() && done < n; ++f) {
    const std::vector<uint8_t> bytes = read_file(files[f]);
    if (static_cast<int64_t>(bytes.size()) != records_in[f] * kRecord)
      throw std::runtime_error(files[f] + ": the file changed while being read");
    const int64_t records = std::min(records_in[f], n - done);
    for (int64_t r = 0; r < records; ++r, ++done) {
      const uint8_t* rec = bytes.data() + r * kRecord;
      if (rec[0] > 9)
        throw std::runtime_error(files[f] + ": record " + std::to_string(r) + " at byte offset " +
                                 std::to_string(r * kRecord) + " has label " + std::to_string(rec[0]) +
                                 " (CIFAR-10 labels are 0..9)");
      d.labels[done] = rec[0];
      std::memcpy(d.pixels.data() + done * kPixels, rec + 1, kPixels);
    }
    if (opt.progress) opt.progress(done, n);
  }
  return d;
}

}  // namespace octet::data::detail
