// INT8 IGEMM microkernels, AArch64 dot product (ARMv8.2 SDOT: Cortex-A76+, Neoverse N1,
// Apple M1+): four s8 x s8 products summed into each int32 lane, exact. Activations are read
// as s8 (u8 ones flipped on load, x ^ 0x80 = x - 128, folded by the packing), weights packed
// c4 ([K/4][NR][4] per tap). The tile loop is kernels/gemm/q8_igemm_tile.inc; layout and
// zero-point fold in kernels/gemm/q8_gemm_list.h.
#include "kernels/ref/fp_contract_off.h"  // first: no multiply-add contracted into an FMA

#include <arm_neon.h>

#include <cstring>

#include "kernels/gemm/q8_gemm_list.h"

namespace octet::kernels::arm::neondot {
namespace {

#include "kernels/arm/x86_minmax.inc"
#include "kernels/arm/q8_neon_epilogue.inc"

#include "kernels/gemm/q8_activations.inc"

struct Ops : NeonEpilogue {
  static constexpr int kKr = 4;

  template <bool kFlip>
  static Vec broadcast_a(const uint8_t* p) {
    return vreinterpretq_s32_u32(vdupq_n_u32(activation_quad<kFlip>(p)));
  }
  template <bool kFlip>
  static Vec broadcast_a_tail(const uint8_t* p, size_t n) {
    return vreinterpretq_s32_u32(vdupq_n_u32(activation_quad_tail<kFlip>(p, n)));
  }
  static Vec madd(Vec acc, Vec a, Vec w) { return vdotq_s32(acc, vreinterpretq_s8_s32(w), vreinterpretq_s8_s32(a)); }
};

#include "kernels/gemm/q8_igemm_tile.inc"

}  // namespace

#undef OCTET_ROW_IF_neondot
#define OCTET_ROW_IF_neondot(...) __VA_ARGS__
#include "kernels/gemm/q8_gemm_define.inc"

}  // namespace octet::kernels::arm::neondot
