#include "kernels/quantize/lookup.h"

#include "kernels/elementwise/parallel_pieces.h"

namespace octet::kernels {

const Q8LookupKernel* choose_q8_lookup(Isa isa) { return first_runnable(kQ8LookupKernels, isa); }

void q8_lookup(const Q8LookupKernel& k, size_t n, const uint8_t* x, const uint8_t* table, uint8_t* y,
               pthreadpool_t pool) {
  parallel_elements(pool, n, [&](size_t start, size_t count) { k.fn(count, x + start, table, y + start); });
}

}  // namespace octet::kernels
