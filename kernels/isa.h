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
//   avx512amx   avx512vnni + AMX-INT8: the tile matrix unit (tdpbusd, a 16x16 int32 tile from
//               16x64 u8 by 64x16 s8 per instruction; Sapphire Rapids and later), granted by the OS
// AArch64:
//   neon        ARMv8.0 Advanced SIMD (INT8 through exact widening multiplies)
//   neondot     neon + SDOT/UDOT (ARMv8.2 dot product: Cortex-A76, Neoverse N1, Apple M1)
//   neoni8mm    neondot + SMMLA/UMMLA/USMMLA/USDOT (ARMv8.6 I8MM: Graviton 3, Apple M2)
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/arch.h"

namespace octet::kernels {

enum class Isa : int { scalar = 0, avx2, avxvnni, avx256vnni, avx512, avx512vnni, avx512amx, neon, neondot, neoni8mm };

// The CPU features the levels (and kernel rows, kernels/kernel_list.h) are made of, one bit each.
enum Feature : uint32_t {
  kAvx2 = 1u << 0,
  kFma = 1u << 1,
  kF16c = 1u << 2,
  kBmi2 = 1u << 3,
  kAvxVnni = 1u << 4,       // VEX vpdpbusd / vpdpwssd (CPUID leaf 7.1)
  kAvx512F = 1u << 5,       // EVEX, 32 registers, mask registers
  kAvx512BW = 1u << 6,
  kAvx512DQ = 1u << 7,
  kAvx512VL = 1u << 8,      // EVEX forms on xmm / ymm
  kAvx512Vnni = 1u << 9,    // EVEX vpdpbusd / vpdpwssd
  kAvx512Vbmi = 1u << 10,   // vpermi2b: 128-entry byte tables in two registers
  kAmxInt8 = 1u << 11,      // AMX-TILE + AMX-INT8, with the tile state enabled and granted by the OS
  // Not an instruction set: a level that uses 512-bit registers (the CPU has them with AVX512F;
  // a level without this bit keeps to ymm, and vector_rate() weighs it).
  kZmm = 1u << 15,
  kNeon = 1u << 16,         // Advanced SIMD
  kNeonDot = 1u << 17,      // SDOT / UDOT
  kNeonI8mm = 1u << 18,     // SMMLA / UMMLA / USMMLA / USDOT
};
using Features = uint32_t;

// The groups the x86 levels are built from.
inline constexpr Features kAvx2Group = kAvx2 | kFma | kF16c | kBmi2;
inline constexpr Features kAvx512Group = kAvx2Group | kAvx512F | kAvx512BW | kAvx512DQ | kAvx512VL;
// An INT8 dot-product instruction (u8 x s8 products summed four at a time into int32).
inline constexpr Features kInt8DotProduct = kAvxVnni | kAvx512Vnni | kNeonDot;

// Every level as data: its name (OCTET_ISA, --isa, the kernel names' suffix) and its features.
// A new level is a value of Isa and a row here (in enum order); everything else (caps, the
// order of levels, what explain and the peak benchmarks say of it) follows from the features.
struct IsaLevel {
  Isa isa;
  const char* name;
  Features features;
};
inline constexpr IsaLevel kIsaLevels[] = {
    {Isa::scalar, "scalar", 0},
    {Isa::avx2, "avx2", kAvx2Group},
    {Isa::avxvnni, "avxvnni", kAvx2Group | kAvxVnni},
    {Isa::avx256vnni, "avx256vnni", kAvx512Group | kAvx512Vnni},
    {Isa::avx512, "avx512", kAvx512Group | kZmm},
    {Isa::avx512vnni, "avx512vnni", kAvx512Group | kAvx512Vnni | kZmm},
    {Isa::avx512amx, "avx512amx", kAvx512Group | kAvx512Vnni | kZmm | kAmxInt8},
    {Isa::neon, "neon", kNeon},
    {Isa::neondot, "neondot", kNeon | kNeonDot},
    {Isa::neoni8mm, "neoni8mm", kNeon | kNeonDot | kNeonI8mm},
};

constexpr const IsaLevel& isa_level(Isa isa) { return kIsaLevels[static_cast<int>(isa)]; }
constexpr Features isa_features(Isa isa) { return isa_level(isa).features; }
constexpr bool kIsaLevelsInEnumOrder = [] {
  for (int i = 0; i < static_cast<int>(std::size(kIsaLevels)); ++i)
    if (static_cast<int>(kIsaLevels[i].isa) != i) return false;
  return true;
}();
static_assert(kIsaLevelsInEnumOrder, "kIsaLevels lists the levels in the order of enum Isa");

// The levels of this build's architecture: scalar and the levels made of its features only.
constexpr bool isa_of_this_arch(Isa isa) {
  const Features f = isa_features(isa);
#if OCTET_ARCH_X86
  return (f & (kNeon | kNeonDot | kNeonI8mm)) == 0;
#elif OCTET_ARCH_ARM64
  return (f & ~(kNeon | kNeonDot | kNeonI8mm)) == 0;
#else
  return f == 0;
#endif
}
inline constexpr size_t kArchIsaCount = [] {
  size_t n = 0;
  for (const IsaLevel& l : kIsaLevels) n += isa_of_this_arch(l.isa);
  return n;
}();
// In the order of kIsaLevels (scalar first, each level after the levels it includes).
inline constexpr std::array<Isa, kArchIsaCount> kAllIsas = [] {
  std::array<Isa, kArchIsaCount> a{};
  size_t n = 0;
  for (const IsaLevel& l : kIsaLevels)
    if (isa_of_this_arch(l.isa)) a[n++] = l.isa;
  return a;
}();

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
// Whether this CPU has every feature of `required`.
inline bool cpu_has(Features required) { return (required & ~cpu_features()) == 0; }
// Whether a kernel of `level` runs here under `cap`.
inline bool isa_runs(Isa level, Isa cap) { return isa_allows(cap, level) && isa_supported(level); }

// The x86 CPU's vendor (CPUID leaf 0: "GenuineIntel", "AuthenticAMD", ...) and family (leaf 1,
// base + extended); empty and 0 elsewhere. What the cost model knows by vendor and family.
struct CpuVendor {
  std::string id;
  unsigned family = 0;
};
const CpuVendor& cpu_vendor();

// Whether a 512-bit FMA / vpdpbusd does twice the work per cycle of a 256-bit one. False on
// AMD Zen 4 (CPUID family 19h), which runs AVX-512 as two 256-bit halves: there a ymm kernel
// with a better-fitting tile beats a zmm one (kernel choice weighs this).
bool zmm_at_full_rate();

// How many multiply-accumulate instructions of a level's vectors one cycle retires relative
// to a 256-bit one: 2 for zmm levels where zmm_at_full_rate(), else 1 (Arm: 128-bit vectors,
// counted with their own lanes).
double vector_rate(Isa isa);

// Caps the level (the CLI's --isa). Throws std::invalid_argument when the CPU does not
// support `isa`, naming what it does support.
void set_isa_limit(Isa isa);

}  // namespace octet::kernels
