#pragma once
// The microkernel lists are X-lists whose rows sit behind architecture guards, so a build may
// have no row for a family yet (an architecture whose kernels for it are still to come). Each
// list is therefore an array of its rows followed by one value-initialised terminator, used
// through the span of the rows before it: empty is a valid list, and drivers fall back to the
// reference kernels exactly as when no row runs on the CPU.
#include <cstddef>
#include <span>

namespace octet::kernels {

template <class T, size_t N>
constexpr std::span<const T> rows_before_terminator(const T (&rows_and_terminator)[N]) {
  return {rows_and_terminator, N - 1};
}

}  // namespace octet::kernels
