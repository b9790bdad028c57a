#include "kernels/elementwise/lookup.h"

namespace octet::kernels {

namespace {
#define OCTET_Q8_LOOKUP_ENTRY(ns, isa, vbmi) {"q8_lookup__" #ns, Isa::isa, vbmi, &ns::q8_lookup},
constexpr Q8LookupKernel kQ8LookupKernels[] = {OCTET_Q8_LOOKUP_KERNELS(OCTET_Q8_LOOKUP_ENTRY)};
#undef OCTET_Q8_LOOKUP_ENTRY
}  // namespace

const Q8LookupKernel* choose_q8_lookup(Isa isa) {
  for (const Q8LookupKernel& k : kQ8LookupKernels)
    if (isa_runs(k.isa, isa) && (!k.needs_avx512vbmi || cpu_has_avx512vbmi())) return &k;
  return nullptr;
}

}  // namespace octet::kernels
