// kernels/x86/q8_gconv__avxvnni.cc compiled a second time, for the tests only, with vpdpbusd
// emulated in AVX2 (tests/simd/dpbusd_avx2_emulation.inc), so its loops, slot permutes and
// epilogue run on any AVX2 CPU: the same arrangement as q8_gemm__avxvnni_emulated.cc, which
// explains the namespace macro. Every header the kernel file includes comes first; the emulated
// functions are declared in tests/simd/q8_gconv_avxvnni_emulated.h.
#include "kernels/ref/fp_contract_off.h"

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/conv/q8_gconv_list.h"
#include "tests/simd/q8_gconv_avxvnni_emulated.h"

namespace octet::kernels::testing::gconv_emulation {
namespace {

#include "tests/simd/dpbusd_avx2_emulation.inc"

}  // namespace
}  // namespace octet::kernels::testing::gconv_emulation

#define _mm256_dpbusd_avx_epi32 ::octet::kernels::testing::gconv_emulation::dpbusd_in_avx2
#define avxvnni avxvnni_emulated
#include "kernels/x86/q8_gconv__avxvnni.cc"
#undef avxvnni
#undef _mm256_dpbusd_avx_epi32
