#pragma once
// Which SIMD paths this CPU can run, and which one octet is allowed to use.
//
// Levels are ordered; a kernel of level L runs when L <= active_isa() and the CPU supports L:
//   scalar      the portable kernels in kernels/ref/
//   avx2        AVX2 + FMA (INT8 through vpmaddwd on int16: exact, see docs/kernels.md)
//   avxvnni     256-bit vpdpbusd. Built in its EVEX form (AVX512-VNNI + VL), because the VEX
//               form cannot be executed, hence not tested, on the machine this was written on
//   avx512      AVX-512 F/BW/DQ/VL without VNNI (INT8 through vpmaddwd on zmm)
//   avx512vnni  AVX-512 + 512-bit vpdpbusd
// OCTET_ISA=<level> in the environment, or set_isa_limit() (the CLI's --isa), caps the level.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace octet::kernels {

enum class Isa : int { scalar = 0, avx2, avxvnni, avx512, avx512vnni };

inline constexpr Isa kAllIsas[] = {Isa::scalar, Isa::avx2, Isa::avxvnni, Isa::avx512, Isa::avx512vnni};

const char* isa_name(Isa isa);
std::optional<Isa> parse_isa(std::string_view name);
std::string isa_names();  // "scalar|avx2|avxvnni|avx512|avx512vnni", for help texts

// Whether this CPU (and OS) can execute kernels of this level.
bool isa_supported(Isa isa);
// The highest level the CPU supports.
Isa detected_isa();
// The level kernels are chosen for: detected_isa(), capped by OCTET_ISA and set_isa_limit().
Isa active_isa();
// Every supported level up to active_isa(), lowest first (tests and benchmarks sweep these).
std::vector<Isa> runnable_isas();

// AVX-512 VBMI (vpermi2b: 128-entry byte tables in two registers), an extension beside the
// levels (Ice Lake, Sapphire Rapids, Zen 4): the kernels that need it also need avx512.
bool cpu_has_avx512vbmi();

// Whether a 512-bit FMA / vpdpbusd does twice the work per cycle of a 256-bit one. False on
// AMD Zen 4 (CPUID family 19h), which runs AVX-512 as two 256-bit halves: there a ymm kernel
// with a better-fitting tile beats a zmm one (kernel choice weighs this).
bool zmm_at_full_rate();

// The cache one core can count on: its L2 plus its share of the L3 (the L3 divided by the
// processors that share it); 1 MiB when cpuinfo knows neither.
size_t per_core_cache_bytes();

// The first entry of a microkernel list (highest ISA first; any struct with an `isa` member)
// whose level is <= `isa` and runs on this CPU; nullptr when none does.
template <class Entry, size_t N>
const Entry* first_runnable(const Entry (&list)[N], Isa isa) {
  for (const Entry& k : list)
    if (k.isa <= isa && isa_supported(k.isa)) return &k;
  return nullptr;
}

// Caps the level (the CLI's --isa). Throws std::invalid_argument when the CPU does not
// support `isa`, naming what it does support.
void set_isa_limit(Isa isa);

}  // namespace octet::kernels
