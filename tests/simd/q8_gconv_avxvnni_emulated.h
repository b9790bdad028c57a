#pragma once
// The VEX AVX-VNNI INT8 narrow-group convolution rows (kernels/x86/q8_gconv__avxvnni.cc)
// compiled again with vpdpbusd emulated in AVX2, runnable on any AVX2 CPU; built into the SIMD
// test program only (tests/simd/q8_gconv__avxvnni_emulated.cc says how).
#include "kernels/arch.h"
#include "kernels/conv/q8_gconv_list.h"

#if OCTET_ARCH_X86

namespace octet::kernels::x86::avxvnni_emulated {

void qu8s8_gconv_g4(const Q8GconvArgs& args);
void qu8s8_gconv_g8(const Q8GconvArgs& args);
void qu8s8_gconv_g16(const Q8GconvArgs& args);
void qs8s8_gconv_g4(const Q8GconvArgs& args);
void qs8s8_gconv_g8(const Q8GconvArgs& args);
void qs8s8_gconv_g16(const Q8GconvArgs& args);

void qu8s8_gconv_g4_f32(const Q8GconvArgs& args);
void qu8s8_gconv_g8_f32(const Q8GconvArgs& args);
void qu8s8_gconv_g16_f32(const Q8GconvArgs& args);
void qs8s8_gconv_g4_f32(const Q8GconvArgs& args);
void qs8s8_gconv_g8_f32(const Q8GconvArgs& args);
void qs8s8_gconv_g16_f32(const Q8GconvArgs& args);

}  // namespace octet::kernels::x86::avxvnni_emulated

#endif
