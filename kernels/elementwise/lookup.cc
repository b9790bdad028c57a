#include "kernels/elementwise/lookup.h"

#include "kernels/kernel_list.h"

namespace octet::kernels {

namespace {
#define OCTET_Q8_LOOKUP_ENTRY(ns, isa, vbmi) {"q8_lookup__" #ns, Isa::isa, vbmi, &ns::q8_lookup},
constexpr Q8LookupKernel kQ8LookupKernelRows[] = {OCTET_Q8_LOOKUP_KERNELS(OCTET_Q8_LOOKUP_ENTRY) Q8LookupKernel{}};
constexpr std::span<const Q8LookupKernel> kQ8LookupKernels = rows_before_terminator(kQ8LookupKernelRows);
#undef OCTET_Q8_LOOKUP_ENTRY
}  // namespace

const Q8LookupKernel* choose_q8_lookup(Isa isa) {
  for (const Q8LookupKernel& k : kQ8LookupKernels)
    if (isa_runs(k.isa, isa) && (!k.needs_avx512vbmi || cpu_has_avx512vbmi())) return &k;
  return nullptr;
}

}  // namespace octet::kernels
