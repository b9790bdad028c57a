// FP32 depthwise convolution in portable C++: the row of kernels/conv/dwconv_list.inc at level
// scalar, which F32DwConv runs where no vector row does. The templated levels' own loops
// (kernels/conv/f32_dwconv_loops.inc) over an `Ops` whose "vector" is four floats in an array,
// so the packing, the tap order (even and odd taps in two sums, added at the end) and the fused
// multiply-adds are the vector rows', lane by lane.
#include <cmath>
#include <cstddef>
#include <cstring>
#include <type_traits>

#include "kernels/cache_budgets.h"
#include "kernels/conv/dwconv_list.h"

namespace octet::kernels::scalar {
namespace {

struct Ops {
  static constexpr int kLanes = 4;
  struct Vec {
    float v[kLanes];
  };
  using Mask = size_t;  // the number of leading lanes in use

  static Mask tail_mask(size_t n) { return n; }
  static Vec load(const float* p) {
    Vec r;
    std::memcpy(r.v, p, sizeof r.v);
    return r;
  }
  static void store(float* p, Vec a) { std::memcpy(p, a.v, sizeof a.v); }
  static Vec load_tail(const float* p, Mask n) {
    Vec r = zero();
    std::memcpy(r.v, p, n * sizeof(float));
    return r;
  }
  static void store_tail(float* p, Vec a, Mask n) { std::memcpy(p, a.v, n * sizeof(float)); }
  static Vec set1(float x) {
    Vec r;
    for (float& f : r.v) f = x;
    return r;
  }
  static Vec zero() { return set1(0.0f); }
  static Vec add(Vec a, Vec b) {
    for (int l = 0; l < kLanes; ++l) a.v[l] += b.v[l];
    return a;
  }
  static Vec fmadd(Vec a, Vec b, Vec c) {
    for (int l = 0; l < kLanes; ++l) c.v[l] = std::fma(a.v[l], b.v[l], c.v[l]);
    return c;
  }
  // vminps / vmaxps: the second operand unless the first is strictly beyond it (NaN included).
  static Vec min(Vec a, Vec b) {
    for (int l = 0; l < kLanes; ++l) a.v[l] = a.v[l] < b.v[l] ? a.v[l] : b.v[l];
    return a;
  }
  static Vec max(Vec a, Vec b) {
    for (int l = 0; l < kLanes; ++l) a.v[l] = a.v[l] > b.v[l] ? a.v[l] : b.v[l];
    return a;
  }
};

}  // namespace

#define OCTET_F32_DWCONV_TILE c4
#include "kernels/conv/f32_dwconv_loops.inc"
#undef OCTET_F32_DWCONV_TILE

}  // namespace octet::kernels::scalar
