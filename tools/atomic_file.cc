#include "tools/atomic_file.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace octet {

void write_file_atomically(const std::string& path, std::span<const std::byte> bytes) {
  auto fail = [&](const std::string& why) { return std::runtime_error(path + ": " + why); };
  // Unique per process and call, in the target's directory so the rename stays on one filesystem.
  static std::atomic<unsigned> counter{0};
  const std::filesystem::path target(path);
  std::filesystem::path tmp = target;
  tmp.replace_filename("." + target.filename().string() + ".tmp-" + std::to_string(::getpid()) + "-" +
                       std::to_string(counter++));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw fail(std::string("cannot create ") + tmp.string() + ": " + std::strerror(errno));
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      throw fail("write error (disk full?)");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, target, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw fail("cannot rename the temporary file into place: " + ec.message());
  }
}

}  // namespace octet
