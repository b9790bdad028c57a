#include "kernels/isa.h"

#include <cpuid.h>
#include <cpuinfo.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace octet::kernels {
namespace {

bool probe(Isa isa) {
  if (isa == Isa::scalar) return true;
  if (!cpuinfo_initialize()) return false;
  const bool avx2 = cpuinfo_has_x86_avx2() && cpuinfo_has_x86_fma3();
  const bool avx512 = avx2 && cpuinfo_has_x86_avx512f() && cpuinfo_has_x86_avx512bw() &&
                      cpuinfo_has_x86_avx512dq() && cpuinfo_has_x86_avx512vl();
  const bool vnni = avx512 && cpuinfo_has_x86_avx512vnni();
  switch (isa) {
    case Isa::scalar: return true;
    case Isa::avx2: return avx2;
    case Isa::avxvnni: return vnni;  // EVEX-encoded ymm vpdpbusd, see isa.h
    case Isa::avx512: return avx512;
    case Isa::avx512vnni: return vnni;
  }
  return false;
}

Isa highest_supported() {
  Isa best = Isa::scalar;
  for (Isa isa : kAllIsas)
    if (probe(isa)) best = isa;
  return best;
}

std::string supported_list() {
  std::string s;
  for (Isa isa : kAllIsas) {
    if (!probe(isa)) continue;
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
  if (!probe(*isa))
    throw std::invalid_argument("OCTET_ISA=" + std::string(env) + ": this CPU does not support it (it supports " +
                                supported_list() + ")");
  return *isa;
}

Isa& limit() {
  static Isa value = limit_from_environment();
  return value;
}

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::scalar: return "scalar";
    case Isa::avx2: return "avx2";
    case Isa::avxvnni: return "avxvnni";
    case Isa::avx512: return "avx512";
    case Isa::avx512vnni: return "avx512vnni";
  }
  return "?";
}

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

bool cpu_has_avx512vbmi() {
  static const bool has = cpuinfo_initialize() && isa_supported(Isa::avx512) && cpuinfo_has_x86_avx512vbmi();
  return has;
}

size_t per_core_cache_bytes() {
  static const size_t bytes = [] {
    size_t total = 0;
    if (cpuinfo_initialize()) {
      if (cpuinfo_get_l2_caches_count() > 0) total += cpuinfo_get_l2_cache(0)->size;
      if (cpuinfo_get_l3_caches_count() > 0) {
        const cpuinfo_cache* l3 = cpuinfo_get_l3_cache(0);
        total += l3->size / std::max<uint32_t>(l3->processor_count, 1);
      }
    }
    return total > 0 ? total : size_t{1} << 20;
  }();
  return bytes;
}

bool isa_supported(Isa isa) {
  static const bool supported[] = {probe(Isa::scalar), probe(Isa::avx2), probe(Isa::avxvnni), probe(Isa::avx512),
                                   probe(Isa::avx512vnni)};
  return supported[static_cast<int>(isa)];
}

Isa detected_isa() {
  static const Isa isa = highest_supported();
  return isa;
}

Isa active_isa() { return limit(); }

std::vector<Isa> runnable_isas() {
  std::vector<Isa> out;
  for (Isa isa : kAllIsas)
    if (isa <= active_isa() && isa_supported(isa)) out.push_back(isa);
  return out;
}

bool zmm_at_full_rate() {
  static const bool full = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return true;
    char vendor[13] = {};
    std::memcpy(vendor, &ebx, 4);
    std::memcpy(vendor + 4, &edx, 4);
    std::memcpy(vendor + 8, &ecx, 4);
    if (std::strcmp(vendor, "AuthenticAMD") != 0 || !__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return true;
    const unsigned family = ((eax >> 8) & 0xF) + ((eax >> 20) & 0xFF);
    return family != 0x19;  // Zen 4; Zen 5 (1Ah) has the full 512-bit datapath
  }();
  return full;
}

void set_isa_limit(Isa isa) {
  if (!isa_supported(isa))
    throw std::invalid_argument("--isa " + std::string(isa_name(isa)) + ": this CPU does not support it (it supports " +
                                supported_list() + ")");
  limit() = isa;
}

}  // namespace octet::kernels
