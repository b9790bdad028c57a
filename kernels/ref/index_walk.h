#pragma once
// Visiting every element of an N-dimensional box, for the strided reference kernels.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace octet::kernels {

// Calls f(index) for every multi-index of the box `dims`, last dimension fastest.
// Rank 0 visits the single element once; an empty box visits nothing.
template <class F>
void for_each_index(int rank, const int64_t* dims, F&& f) {
  for (int d = 0; d < rank; ++d) {
    if (dims[d] <= 0) return;
  }
  std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
  for (;;) {
    f(idx.data());
    int d = rank - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace octet::kernels
