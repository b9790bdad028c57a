// INT8 IGEMM microkernels in portable C++: the rows of kernels/gemm/q8_gemm_list.inc at level
// scalar, which Q8Conv and Q8Gemm run where no vector row does (--isa scalar, or a CPU below
// every level). The same tile loop as the vector kernels (kernels/gemm/q8_igemm_tile.inc) over an
// `Ops` whose "vector" is kLanes int32 in an array, so the packing, the zero-point fold and the
// requantization are the vector kernels' own, step for step: one driver path at every level.
// Groups of four k (the packing of the VNNI and SDOT rows): each lane multiplies the four
// activation bytes (read as u8) by its column's four int8 weights and adds the exact products.
#include "kernels/ref/fp_contract_off.h"  // first: no multiply-add contracted into an FMA

#include <cmath>
#include <cstring>

#include "kernels/gemm/q8_gemm_list.h"

namespace octet::kernels::portable::scalar {
namespace {

#include "kernels/gemm/q8_activations.inc"

struct ScalarEpilogue {
  static constexpr int kLanes = 4;
  struct Vec {
    int32_t v[kLanes];
  };
  struct VecF {
    float v[kLanes];
  };

  static Vec load(const void* p) {
    Vec r;
    std::memcpy(r.v, p, sizeof r.v);
    return r;
  }
  static VecF loadf(const float* p) {
    VecF r;
    std::memcpy(r.v, p, sizeof r.v);
    return r;
  }
  static VecF set1f(float x) {
    VecF r;
    for (float& f : r.v) f = x;
    return r;
  }
  static Vec set1i(int32_t x) {
    Vec r;
    for (int32_t& i : r.v) i = x;
    return r;
  }
  static Vec splat32(uint32_t x) { return set1i(static_cast<int32_t>(x)); }
  static Vec add(Vec a, Vec b) {
    for (int l = 0; l < kLanes; ++l) a.v[l] = static_cast<int32_t>(static_cast<uint32_t>(a.v[l]) + static_cast<uint32_t>(b.v[l]));
    return a;
  }
  static VecF to_float(Vec a) {
    VecF r;
    for (int l = 0; l < kLanes; ++l) r.v[l] = static_cast<float>(a.v[l]);
    return r;
  }
  static VecF mulf(VecF a, VecF b) {
    for (int l = 0; l < kLanes; ++l) a.v[l] *= b.v[l];
    return a;
  }
  static VecF addf(VecF a, VecF b) {
    for (int l = 0; l < kLanes; ++l) a.v[l] += b.v[l];
    return a;
  }
  // max first, then min, each returning its second operand when the first is not beyond it
  // (maxps / minps order): the results of the vector rows, NaN-free inputs or not.
  static VecF clampf(VecF f, VecF lo, VecF hi) {
    for (int l = 0; l < kLanes; ++l) {
      const float m = f.v[l] > lo.v[l] ? f.v[l] : lo.v[l];
      f.v[l] = m < hi.v[l] ? m : hi.v[l];
    }
    return f;
  }
  static void storef(float* y, VecF f, size_t valid) { std::memcpy(y, f.v, valid * sizeof(float)); }
  // float(acc) * m, clamped, rounded half to even (the default rounding mode, as cvtps2dq).
  static Vec requantize(Vec acc, VecF m, VecF lo, VecF hi) {
    const VecF f = clampf(mulf(to_float(acc), m), lo, hi);
    Vec r;
    for (int l = 0; l < kLanes; ++l) r.v[l] = static_cast<int32_t>(std::nearbyint(f.v[l]));
    return r;
  }
  static void store(uint8_t* y, Vec q, size_t valid) {
    for (size_t l = 0; l < valid; ++l) y[l] = static_cast<uint8_t>(q.v[l]);
  }
};

struct Ops : QuadActivations<ScalarEpilogue> {
  // a: the four activation bytes (u8) in every lane; w: lane l holds column l's four int8 weights.
  // The accumulator wraps around in 32 bits as vpdpbusd's and vpaddd's do (added as unsigned:
  // a signed overflow would be undefined).
  static Vec madd(Vec acc, Vec a, Vec w) {
    for (int l = 0; l < kLanes; ++l) {
      uint8_t x[4];
      int8_t k[4];
      std::memcpy(x, &a.v[l], 4);
      std::memcpy(k, &w.v[l], 4);
      const int32_t dot = x[0] * k[0] + x[1] * k[1] + x[2] * k[2] + x[3] * k[3];
      acc.v[l] = static_cast<int32_t>(static_cast<uint32_t>(acc.v[l]) + static_cast<uint32_t>(dot));
    }
    return acc;
  }
};

#include "kernels/gemm/q8_igemm_tile.inc"

}  // namespace

#undef OCTET_ROW_IF_scalar
#define OCTET_ROW_IF_scalar(...) __VA_ARGS__
#include "kernels/gemm/q8_gemm_define.inc"

}  // namespace octet::kernels::portable::scalar
