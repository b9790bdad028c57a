#include "kernels/quantize/lookup.h"

namespace octet::kernels {

const Q8LookupKernel* choose_q8_lookup(Isa isa) { return first_runnable(kQ8LookupKernels, isa); }

}  // namespace octet::kernels
