#include "kernels/elementwise/lookup.h"

namespace octet::kernels {

const Q8LookupKernel* choose_q8_lookup(Isa isa) {
  static constexpr Q8LookupKernel kVbmi{"q8_lookup__avx512vbmi", avx512vbmi::q8_lookup};
  static constexpr Q8LookupKernel kAvx2{"q8_lookup__avx2", avx2::q8_lookup};
  if (isa >= Isa::avx512 && isa != Isa::avxvnni && cpu_has_avx512vbmi()) return &kVbmi;
  if (isa >= Isa::avx2 && isa_supported(Isa::avx2)) return &kAvx2;
  return nullptr;
}

}  // namespace octet::kernels
