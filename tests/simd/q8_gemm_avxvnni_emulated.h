#pragma once
// The VEX AVX-VNNI INT8 IGEMM microkernels (kernels/x86/q8_gemm__avxvnni.cc) compiled again
// with vpdpbusd emulated in AVX2, runnable on any AVX2 CPU; built into the SIMD test program
// only (tests/simd/q8_gemm__avxvnni_emulated.cc says how).
#include <cstdint>

#include "kernels/arch.h"
#include "kernels/gemm/q8_gemm_list.h"

#if OCTET_ARCH_X86

namespace octet::kernels::x86::avxvnni_emulated {

void qu8s8_igemm_6x16c4(const Q8IgemmArgs& args);
void qu8s8_igemm_12x8c4(const Q8IgemmArgs& args);
void qs8s8_igemm_6x16c4(const Q8IgemmArgs& args);
void qs8s8_igemm_12x8c4(const Q8IgemmArgs& args);

void qu8s8_igemm_6x16c4_f32(const Q8IgemmArgs& args);
void qu8s8_igemm_12x8c4_f32(const Q8IgemmArgs& args);
void qs8s8_igemm_6x16c4_f32(const Q8IgemmArgs& args);
void qs8s8_igemm_12x8c4_f32(const Q8IgemmArgs& args);

void qu8s8_igemm_6x16c4_i32(const Q8IgemmArgs& args);
void qu8s8_igemm_12x8c4_i32(const Q8IgemmArgs& args);
void qs8s8_igemm_6x16c4_i32(const Q8IgemmArgs& args);
void qs8s8_igemm_12x8c4_i32(const Q8IgemmArgs& args);

}  // namespace octet::kernels::x86::avxvnni_emulated

namespace octet::kernels::testing {

// out = the emulated vpdpbusd(acc, a, w) on one ymm register's worth of values.
void dpbusd_emulated(const int32_t acc[8], const uint8_t a[32], const int8_t w[32], int32_t out[8]);

}  // namespace octet::kernels::testing

#endif
