#include "kernels/isa.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#if OCTET_ARCH_X86
#include <cpuid.h>
#include <cpuinfo.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#elif OCTET_ARCH_ARM64 && defined(__linux__)
#include <sys/auxv.h>
#elif OCTET_ARCH_ARM64 && defined(__APPLE__)
#include <sys/sysctl.h>
#endif

namespace octet::kernels {
namespace {

#if OCTET_ARCH_X86
// AMX-TILE and AMX-INT8 are CPUID leaf 7 EDX bits 24 and 25 (this cpuinfo predates them). The
// OS must enable the tile state in XCR0 (bits 17 and 18), and Linux lets a process use it (8 KiB
// more to save per thread) only after asking: arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA).
// The grant is process-wide and permanent, so asking here, once, serves every thread.
bool amx_int8_granted() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  if (!(edx & (1u << 24)) || !(edx & (1u << 25))) return false;
  unsigned xcr0_lo = 0, xcr0_hi = 0;
  __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  constexpr unsigned kTileState = (1u << 17) | (1u << 18);
  if ((xcr0_lo & kTileState) != kTileState) return false;
#if defined(__linux__)
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}

Features probe_features() {
  if (!cpuinfo_initialize()) return 0;
  Features f = 0;
  // cpuinfo reports a feature only when the OS saves its register state.
  const struct {
    Feature feature;
    bool (*has)();
  } probes[] = {
      {kAvx2, cpuinfo_has_x86_avx2},           {kFma, cpuinfo_has_x86_fma3},
      {kF16c, cpuinfo_has_x86_f16c},           {kBmi2, cpuinfo_has_x86_bmi2},
      {kAvx512F, cpuinfo_has_x86_avx512f},     {kAvx512BW, cpuinfo_has_x86_avx512bw},
      {kAvx512DQ, cpuinfo_has_x86_avx512dq},   {kAvx512VL, cpuinfo_has_x86_avx512vl},
      {kAvx512Vnni, cpuinfo_has_x86_avx512vnni}, {kAvx512Vbmi, cpuinfo_has_x86_avx512vbmi},
  };
  for (const auto& p : probes)
    if (p.has()) f |= p.feature;
  // AVX-VNNI is CPUID leaf 7 sub-leaf 1, EAX bit 4 (this cpuinfo predates it). The OS saves
  // ymm state when AVX2 was reported usable.
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if ((f & kAvx2) && __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) && (eax & (1u << 4))) f |= kAvxVnni;
  if (f & kAvx512F) f |= kZmm;
  if ((f & kAvx512Vnni) && amx_int8_granted()) f |= kAmxInt8;
  return f;
}
#elif OCTET_ARCH_ARM64 && defined(__linux__)
Features probe_features() {
  // Linux's HWCAP bits for AArch64 (asm/hwcap.h): ASIMD bit 1, ASIMDDP bit 20; HWCAP2 I8MM bit 13.
  const unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);
  Features f = 0;
  if (hw & (1ul << 1)) f |= kNeon;
  if ((f & kNeon) && (hw & (1ul << 20))) f |= kNeonDot;
  if ((f & kNeonDot) && (hw2 & (1ul << 13))) f |= kNeonI8mm;
  return f;
}
#elif OCTET_ARCH_ARM64 && defined(__APPLE__)
bool sysctl_flag(const char* name) {
  int value = 0;
  size_t size = sizeof value;
  return sysctlbyname(name, &value, &size, nullptr, 0) == 0 && value != 0;
}
Features probe_features() {
  Features f = kNeon;  // every Apple arm64 core
  if (sysctl_flag("hw.optional.arm.FEAT_DotProd")) f |= kNeonDot;
  if ((f & kNeonDot) && sysctl_flag("hw.optional.arm.FEAT_I8MM")) f |= kNeonI8mm;
  return f;
}
#else
Features probe_features() { return 0; }
#endif

Isa highest_supported() {
  Isa best = Isa::scalar;
  for (Isa isa : kAllIsas)
    if (isa_supported(isa) && isa_rank(isa) > isa_rank(best)) best = isa;
  return best;
}

std::string supported_list() {
  std::string s;
  for (Isa isa : kAllIsas) {
    if (!isa_supported(isa)) continue;
    if (!s.empty()) s += ", ";
    s += isa_name(isa);
  }
  return s;
}

Isa limit_from_environment() {
  const char* env = std::getenv("OCTET_ISA");
  if (env == nullptr || *env == '\0') return highest_supported();
  std::optional<Isa> isa = parse_isa(env);
  if (!isa) throw std::invalid_argument("OCTET_ISA='" + std::string(env) + "' is not one of " + isa_names());
  if (!isa_supported(*isa))
    throw std::invalid_argument("OCTET_ISA=" + std::string(env) + ": this CPU does not support it (it supports " +
                                supported_list() + ")");
  return *isa;
}

Isa& limit() {
  static Isa value = limit_from_environment();
  return value;
}

}  // namespace

const char* isa_name(Isa isa) { return isa_level(isa).name; }

std::optional<Isa> parse_isa(std::string_view name) {
  for (Isa isa : kAllIsas)
    if (name == isa_name(isa)) return isa;
  return std::nullopt;
}

std::string isa_names() {
  std::string s;
  for (Isa isa : kAllIsas) {
    if (!s.empty()) s += "|";
    s += isa_name(isa);
  }
  return s;
}

Features cpu_features() {
  static const Features features = probe_features();
  return features;
}

bool isa_supported(Isa isa) {
  if (std::find(std::begin(kAllIsas), std::end(kAllIsas), isa) == std::end(kAllIsas)) return false;
  return (isa_features(isa) & ~cpu_features()) == 0;
}

Isa detected_isa() {
  static const Isa isa = highest_supported();
  return isa;
}

Isa active_isa() { return limit(); }

std::vector<Isa> runnable_isas() {
  std::vector<Isa> out;
  for (Isa isa : kAllIsas)
    if (isa_runs(isa, active_isa())) out.push_back(isa);
  return out;
}

const CpuVendor& cpu_vendor() {
  static const CpuVendor vendor = [] {
    CpuVendor v;
#if OCTET_ARCH_X86
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return v;
    char id[13] = {};
    std::memcpy(id, &ebx, 4);
    std::memcpy(id + 4, &edx, 4);
    std::memcpy(id + 8, &ecx, 4);
    v.id = id;
    if (__get_cpuid(1, &eax, &ebx, &ecx, &edx)) v.family = ((eax >> 8) & 0xF) + ((eax >> 20) & 0xFF);
#endif
    return v;
  }();
  return vendor;
}

bool zmm_at_full_rate() {
#if OCTET_ARCH_X86
  // Zen 4; Zen 5 (1Ah) has the full 512-bit datapath. Asked per tile row by the kernel choice.
  static const bool full = !(cpu_vendor().id == "AuthenticAMD" && cpu_vendor().family == 0x19);
  return full;
#else
  return false;
#endif
}

double vector_rate(Isa isa) { return (isa_features(isa) & kZmm) && zmm_at_full_rate() ? 2.0 : 1.0; }

void set_isa_limit(Isa isa) {
  if (!isa_supported(isa))
    throw std::invalid_argument("--isa " + std::string(isa_name(isa)) + ": this CPU does not support it (it supports " +
                                supported_list() + ")");
  limit() = isa;
}

}  // namespace octet::kernels
