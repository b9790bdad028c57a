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

// Where a reduction over the dimensions marked in `reduced` writes: y is dense over the kept
// dimensions in `dims` order, so a reduced dimension has stride 0 in y. count is y's size,
// per_output the number of x elements folded into each y element.
struct ReducedOutput {
  std::vector<int64_t> strides;
  int64_t count = 1, per_output = 1;
};

inline ReducedOutput reduced_output(int rank, const int64_t* dims, const bool* reduced) {
  ReducedOutput r;
  r.strides.assign(static_cast<size_t>(rank), 0);
  for (int d = rank - 1; d >= 0; --d) {
    if (reduced[d]) {
      r.per_output *= dims[d];
    } else {
      r.strides[static_cast<size_t>(d)] = r.count;
      r.count *= dims[d];
    }
  }
  return r;
}

// Each y element's sum of the x elements folded into it (out: reduced_output's answer), in
// x's index order, accumulated in Acc and started at `init`.
template <typename Acc, typename T>
std::vector<Acc> strided_sums(int rank, const int64_t* dims, const T* x, const int64_t* x_strides,
                              const ReducedOutput& out, Acc init) {
  std::vector<Acc> sums(static_cast<size_t>(out.count), init);
  for_each_index(rank, dims, [&](const int64_t* idx) {
    int64_t x_off = 0, y_off = 0;
    for (int d = 0; d < rank; ++d) {
      x_off += idx[d] * x_strides[d];
      y_off += idx[d] * out.strides[static_cast<size_t>(d)];
    }
    sums[static_cast<size_t>(y_off)] += x[x_off];
  });
  return sums;
}

}  // namespace octet::kernels
