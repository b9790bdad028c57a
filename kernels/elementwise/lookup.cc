#include "kernels/elementwise/lookup.h"

namespace octet::kernels {

const Q8LookupKernel* choose_q8_lookup(Isa isa) {
  static constexpr Q8LookupKernel kVbmi{"q8_lookup__avx512vbmi", avx512vbmi::q8_lookup};
  if (isa >= Isa::avx512 && isa != Isa::avxvnni && cpu_has_avx512vbmi()) return &kVbmi;
  return nullptr;
}

}  // namespace octet::kernels
