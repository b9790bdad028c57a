#include "io/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace octet {
namespace {

namespace fs = std::filesystem;

std::string kind_of(fs::file_type t) {
  switch (t) {
    case fs::file_type::directory: return "a folder";
    case fs::file_type::symlink: return "a symbolic link";
    case fs::file_type::character: return "a character device";
    case fs::file_type::block: return "a block device";
    case fs::file_type::fifo: return "a named pipe";
    case fs::file_type::socket: return "a socket";
    default: return "a special file";
  }
}

// Permissions of the file being replaced, so a rewrite does not change who may read it;
// a new file gets the usual 0644 (the umask applies to neither: mkstemp creates 0600).
mode_t mode_for(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return st.st_mode & 07777;
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

bool write_all(int fd, const std::byte* p, size_t n) {
  while (n > 0) {
    const ssize_t k = ::write(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    n -= size_t(k);
  }
  return true;
}

}  // namespace

void check_output_path(const std::string& path) {
  if (path.empty()) throw std::runtime_error("an output file name is empty");
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(path, ec);
  if (ec || !fs::exists(st) || fs::is_regular_file(st)) return;
  throw std::runtime_error(path + " is not a regular file (" + kind_of(st.type()) +
                           "), which writing it would replace; give a regular file or a new path");
}

void write_file_atomically(const std::string& path, std::span<const std::byte> bytes) {
  check_output_path(path);
  const fs::path target(path);
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string tmp = (folder / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw std::runtime_error(path + ": cannot create a file in " + folder.string() + ": " + std::strerror(errno));
  auto fail = [&](const std::string& what, int err) {
    ::unlink(tmp.c_str());
    return std::runtime_error(path + ": " + what + ": " + std::strerror(err));
  };
  if (::fchmod(fd, mode_for(path)) != 0 || !write_all(fd, bytes.data(), bytes.size()) || ::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    throw fail("write error", err);
  }
  if (::close(fd) != 0) throw fail("write error", errno);
  // Checked again just before the rename: the target may have been made a device meanwhile.
  try {
    check_output_path(path);
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) throw fail("cannot rename the written file into place", errno);
  // The rename itself is durable once the folder is flushed; a folder that cannot be opened for
  // that (no read permission) still holds the complete file.
  if (const int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

void write_file_atomically(const std::string& path, std::string_view bytes) {
  write_file_atomically(path, std::as_bytes(std::span(bytes.data(), bytes.size())));
}

std::string standard_output_error() {
  errno = 0;
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return "";
  const int err = errno;
  return std::string("cannot write the results to standard output") + (err ? std::string(": ") + std::strerror(err) : "");
}

}  // namespace octet
