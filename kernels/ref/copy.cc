#include "kernels/ref/copy.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/ref/index_walk.h"

namespace octet::kernels {

void copy_strided(int rank, const int64_t* dims, const void* src, const int64_t* src_strides,
                  void* dst, const int64_t* dst_strides, int elem_size) {
  const auto* s = static_cast<const unsigned char*>(src);
  auto* d = static_cast<unsigned char*>(dst);
  for_each_index(rank, dims, [&](const int64_t* idx) {
    int64_t s_off = 0, d_off = 0;
    for (int k = 0; k < rank; ++k) {
      s_off += idx[k] * src_strides[k];
      d_off += idx[k] * dst_strides[k];
    }
    std::memcpy(d + d_off * elem_size, s + s_off * elem_size, elem_size);
  });
}

namespace {

// Elements are moved, never computed on: T is float for f32_pad__ref, else an unsigned integer
// of the element's size (integer elements' own twin; float64 through it only in pad__ref).
template <class T>
void pad_elements(int rank, const int64_t* in_dims, const int64_t* pads_begin, const int64_t* pads_end, PadMode mode,
                  T value, const T* x, T* y) {
  std::vector<int64_t> out_dims(rank);
  std::vector<int64_t> in_strides(rank);
  int64_t stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    out_dims[d] = in_dims[d] + pads_begin[d] + pads_end[d];
    in_strides[d] = stride;
    stride *= in_dims[d];
  }

  int64_t out = 0;
  for_each_index(rank, out_dims.data(), [&](const int64_t* idx) {
    int64_t in_off = 0;
    for (int d = 0; d < rank; ++d) {
      const int64_t i = pad_source_index(idx[d] - pads_begin[d], in_dims[d], mode);
      if (i < 0) {
        y[out++] = value;
        return;
      }
      in_off += i * in_strides[d];
    }
    y[out++] = x[in_off];
  });
}

template <class T>
void pad_as(int rank, const int64_t* in_dims, const int64_t* pads_begin, const int64_t* pads_end, PadMode mode,
            const void* value, const void* x, void* y) {
  T v;
  std::memcpy(&v, value, sizeof(T));
  pad_elements<T>(rank, in_dims, pads_begin, pads_end, mode, v, static_cast<const T*>(x), static_cast<T*>(y));
}

}  // namespace

void f32_pad__ref(int rank, const int64_t* in_dims, const int64_t* pads_begin,
                  const int64_t* pads_end, PadMode mode, float value, const float* x, float* y) {
  pad_elements<float>(rank, in_dims, pads_begin, pads_end, mode, value, x, y);
}

void pad__ref(size_t elem_size, int rank, const int64_t* in_dims, const int64_t* pads_begin, const int64_t* pads_end,
              PadMode mode, const void* value, const void* x, void* y) {
  switch (elem_size) {
    case 1: return pad_as<uint8_t>(rank, in_dims, pads_begin, pads_end, mode, value, x, y);
    case 2: return pad_as<uint16_t>(rank, in_dims, pads_begin, pads_end, mode, value, x, y);
    case 4: return pad_as<uint32_t>(rank, in_dims, pads_begin, pads_end, mode, value, x, y);
    default: return pad_as<uint64_t>(rank, in_dims, pads_begin, pads_end, mode, value, x, y);
  }
}

int64_t pad_source_index(int64_t i, int64_t n, PadMode mode) {
  if (i >= 0 && i < n) return i;
  if (mode == PadMode::constant || n == 0) return -1;
  if (mode == PadMode::edge) return std::clamp<int64_t>(i, 0, n - 1);
  if (n == 1) return 0;
  const int64_t period = 2 * (n - 1);
  int64_t r = i % period;
  if (r < 0) r += period;
  return r < n ? r : period - r;
}

}  // namespace octet::kernels
