#pragma once
// The portable rows' "vector": four floats in an array, with the members the templated FP32
// loops use (f32_dwconv_loops.inc, f32_gconv_loops.inc), so the scalar rows run those loops'
// packing, tap order and fused multiply-adds lane by lane.
#include <cmath>
#include <cstddef>
#include <cstring>

namespace octet::kernels::scalar {
namespace {

struct Ops {
  static constexpr int kLanes = 4;
  static constexpr int kRegisters = 16;  // as the narrowest SIMD level: the loops' group sizes
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
  template <int G, int I>
  static Vec dup_in_groups(Vec a) {
    for (int l = 0; l < kLanes; ++l) a.v[l] = a.v[l / G * G + I];
    return a;
  }
};

}  // namespace
}  // namespace octet::kernels::scalar
