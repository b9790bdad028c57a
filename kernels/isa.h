#pragma once
// Which SIMD paths this CPU can run, and which ones octet is allowed to use.
//
// A level is a named set of CPU features, and a kernel's level says exactly which features
// its instructions need. A kernel runs when the CPU has every feature of its level and the cap
// (OCTET_ISA=<level> in the environment, or set_isa_limit(), the CLI's --isa) includes them all.
// The levels are only partly ordered: avx512 does not include avxvnni, an Arm level includes
// no x86 one.
//
// x86-64:
//   scalar      the portable kernels in kernels/ref/
//   avx2        AVX2 + FMA (+ F16C, BMI2); INT8 through vpmaddwd on int16 (exact, docs/kernels.md)
//   avxvnni     AVX2 + the VEX-encoded AVX-VNNI (ymm vpdpbusd: Alder Lake, Zen 5)
//   avx256vnni  AVX-512 F/BW/DQ/VL + AVX512-VNNI used at 256 bits only (EVEX ymm vpdpbusd with
//               masked stores and 32 registers; Ice Lake and later, Zen 4)
//   avx512      AVX-512 F/BW/DQ/VL on zmm, no VNNI (INT8 through zmm vpmaddwd)
//   avx512vnni  avx512 + 512-bit vpdpbusd; includes avx256vnni
// AArch64:
//   neon        ARMv8.0 Advanced SIMD (INT8 through exact widening multiplies)
//   neondot     neon + SDOT/UDOT (ARMv8.2 dot product: Cortex-A76, Neoverse N1, Apple M1)
//   neoni8mm    neondot + SMMLA/UMMLA/USMMLA/USDOT (ARMv8.6 I8MM: Graviton 3, Apple M2)
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/arch.h"

namespace octet::kernels {

enum class Isa : int { scalar = 0, avx2, avxvnni, avx256vnni, avx512, avx512vnni, neon, neondot, neoni8mm };

// The features the levels are made of, one bit each.
enum Feature : uint32_t {
  kAvx2 = 1u << 0,        // AVX2, FMA, F16C, BMI2
  kAvxVnni = 1u << 1,     // VEX vpdpbusd / vpdpwssd
  kAvx512 = 1u << 2,      // AVX-512 F, BW, DQ, VL (EVEX, 32 registers, mask registers)
  kAvx512Vnni = 1u << 3,  // EVEX vpdpbusd / vpdpwssd
  kZmm = 1u << 4,         // 512-bit registers (a level without it keeps to ymm)
  kNeon = 1u << 8,        // Advanced SIMD
  kNeonDot = 1u << 9,     // SDOT / UDOT
  kNeonI8mm = 1u << 10,   // SMMLA / UMMLA / USMMLA / USDOT
};
using Features = uint32_t;

// The levels of this build's architecture, scalar first, each after the levels it includes.
#if OCTET_ARCH_X86
inline constexpr Isa kAllIsas[] = {Isa::scalar, Isa::avx2, Isa::avxvnni, Isa::avx256vnni, Isa::avx512, Isa::avx512vnni};
#elif OCTET_ARCH_ARM64
inline constexpr Isa kAllIsas[] = {Isa::scalar, Isa::neon, Isa::neondot, Isa::neoni8mm};
#else
inline constexpr Isa kAllIsas[] = {Isa::scalar};
#endif

constexpr Features isa_features(Isa isa) {
  switch (isa) {
    case Isa::scalar: return 0;
    case Isa::avx2: return kAvx2;
    case Isa::avxvnni: return kAvx2 | kAvxVnni;
    case Isa::avx256vnni: return kAvx2 | kAvx512 | kAvx512Vnni;
    case Isa::avx512: return kAvx2 | kAvx512 | kZmm;
    case Isa::avx512vnni: return kAvx2 | kAvx512 | kAvx512Vnni | kZmm;
    case Isa::neon: return kNeon;
    case Isa::neondot: return kNeon | kNeonDot;
    case Isa::neoni8mm: return kNeon | kNeonDot | kNeonI8mm;
  }
  return 0;
}

// Whether every feature of `level` is in `cap`: a kernel of `level` may run under the cap.
constexpr bool isa_allows(Isa cap, Isa level) { return (isa_features(level) & ~isa_features(cap)) == 0; }

// How many features a level has: of two levels a cap allows, the one with more is the more
// specialised (a tie-break when choosing kernels; a level always outranks those it includes).
constexpr int isa_rank(Isa isa) { return __builtin_popcount(isa_features(isa)); }

const char* isa_name(Isa isa);
std::optional<Isa> parse_isa(std::string_view name);
std::string isa_names();  // "scalar|avx2|avxvnni|...", this architecture's levels, for help texts

// The features this CPU (and OS) has.
Features cpu_features();
// Whether this CPU can execute kernels of this level.
bool isa_supported(Isa isa);
// The supported level with the most features: the default cap.
Isa detected_isa();
// The cap kernels are chosen under: detected_isa(), or OCTET_ISA, or set_isa_limit().
Isa active_isa();
// Every supported level the active cap allows, in kAllIsas order (tests and benchmarks sweep these).
std::vector<Isa> runnable_isas();
// Whether a kernel of `level` runs here under `cap`.
inline bool isa_runs(Isa level, Isa cap) { return isa_allows(cap, level) && isa_supported(level); }

// AVX-512 VBMI (vpermi2b: 128-entry byte tables in two registers), an extension beside the
// levels (Ice Lake, Sapphire Rapids, Zen 4): the kernels that need it also need avx512.
bool cpu_has_avx512vbmi();

// Whether a 512-bit FMA / vpdpbusd does twice the work per cycle of a 256-bit one. False on
// AMD Zen 4 (CPUID family 19h), which runs AVX-512 as two 256-bit halves: there a ymm kernel
// with a better-fitting tile beats a zmm one (kernel choice weighs this).
bool zmm_at_full_rate();

// How many multiply-accumulate instructions of a level's vectors one cycle retires relative
// to a 256-bit one: 2 for zmm levels where zmm_at_full_rate(), else 1 (Arm: 128-bit vectors,
// counted with their own lanes).
double vector_rate(Isa isa);

// The cache one core can count on: its L2 plus its share of the L3 (the L3 divided by the
// processors that share it); 1 MiB when that is unknown.
size_t per_core_cache_bytes();

// The first entry of a microkernel list (in preference order; any struct with an `isa`
// member) that runs here under `cap`; nullptr when none does.
template <class List>
auto first_runnable(const List& list, Isa cap) -> decltype(&*std::begin(list)) {
  for (const auto& k : list)
    if (isa_runs(k.isa, cap)) return &k;
  return nullptr;
}

// Caps the level (the CLI's --isa). Throws std::invalid_argument when the CPU does not
// support `isa`, naming what it does support.
void set_isa_limit(Isa isa);

}  // namespace octet::kernels
