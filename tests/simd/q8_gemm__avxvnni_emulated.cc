// kernels/x86/q8_gemm__avxvnni.cc compiled a second time, for the tests only, with its one
// AVX-VNNI instruction (VEX ymm vpdpbusd) replaced by an exact AVX2 emulation, so the rest of
// that file (tile loop, K tails, epilogue) runs on any AVX2 CPU. Built with the avx2 level's
// flags and without -mavxvnni: the compiler cannot emit a VNNI instruction into this copy.
//
// Keeping the copy apart from the real kernels in octet_kernels: the kernel file defines its
// functions in namespace octet::kernels::x86::avxvnni. Every header it includes is included
// here first (its own includes then find their guards and add nothing), and only after that is
// `avxvnni` defined as a macro, so the one place the token still appears, the kernel file's
// namespace name, becomes avxvnni_emulated. Isa::avxvnni in kernels/isa.h was read before the
// macro existed and is untouched. The emulated functions are declared in
// tests/simd/q8_gemm_avxvnni_emulated.h. If the kernel file ever gains an include that is
// not listed here, that header would be read with the macro in force; the build would then
// most likely fail loudly rather than silently mix the two copies.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/gemm/q8_gemm_list.h"
#include "tests/simd/q8_gemm_avxvnni_emulated.h"

namespace octet::kernels::testing {
namespace {

#include "tests/simd/dpbusd_avx2_emulation.inc"

}  // namespace

void dpbusd_emulated(const int32_t acc[8], const uint8_t a[32], const int8_t w[32], int32_t out[8]) {
  const __m256i r = dpbusd_in_avx2(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc)),
                                   _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a)),
                                   _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), r);
}

}  // namespace octet::kernels::testing

// Defined here, after <immintrin.h>, not through a forced include: GCC's header defines the
// intrinsic as a function, which a macro already in force would rename into a clash.
#define _mm256_dpbusd_avx_epi32 ::octet::kernels::testing::dpbusd_in_avx2
#define avxvnni avxvnni_emulated
#include "kernels/x86/q8_gemm__avxvnni.cc"
#undef avxvnni
#undef _mm256_dpbusd_avx_epi32
