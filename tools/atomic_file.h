#pragma once
// Writes a whole file or nothing: the bytes go to a unique temporary file beside `path`, which
// is renamed over it only once fully written. A reader never sees half a file, and a failed
// write (disk full, missing folder) leaves neither a partial file nor the temporary behind.
#include <cstddef>
#include <span>
#include <string>

namespace octet {

// Throws std::runtime_error "PATH: why" (cannot create, write error, cannot rename).
void write_file_atomically(const std::string& path, std::span<const std::byte> bytes);

}  // namespace octet
