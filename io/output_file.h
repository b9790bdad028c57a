#pragma once
// Every file octet writes (models, reports, .npy tensors, benchmark JSON) goes through here, so
// that each writer refuses the same targets and leaves the same nothing behind on failure.
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace octet {

// Throws std::runtime_error "PATH is a character device ...; give a regular file or a new path"
// when `path` exists and is not a regular file. Writing beside a target and renaming over it
// replaces whatever the name held: a device node (as root, `-o /dev/null` would delete the
// device), a FIFO, a socket or a symbolic link (its target would stay untouched). A folder
// would make the rename fail after all the work. Call it before the work that produces the
// bytes, so a bad -o fails at once.
void check_output_path(const std::string& path);

// Writes a whole file or nothing: checks the target (check_output_path), writes the bytes to a
// unique temporary file beside it (same filesystem), keeps an existing file's permissions,
// flushes to disk, then renames it into place and flushes the folder. A reader never sees half
// a file; a failed write (disk full, missing folder, no permission) throws "PATH: why" and leaves
// neither a partial file nor the temporary behind.
void write_file_atomically(const std::string& path, std::span<const std::byte> bytes);
void write_file_atomically(const std::string& path, std::string_view bytes);

// Flushes standard output and tells whether everything printed to it reached its destination
// ("" when it did, else why not: `octet run ... > /dev/full` must not exit 0 with its results
// lost). Commands call it last and fail when it is not empty.
std::string standard_output_error();

}  // namespace octet
