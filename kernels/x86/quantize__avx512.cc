// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear's range pass (kernels/quantize/quantize.h),
// AVX-512: 16 lanes: kernels/quantize/quantize_loops.inc over kernels/x86/avx512_ops.h's I32Lanes.
#include "kernels/ref/fp_contract_off.h"  // first: every float step rounds as the reference's

#include "kernels/quantize/quantize.h"
#include "kernels/x86/avx512_ops.h"

namespace octet::kernels::avx512 {

#include "kernels/quantize/quantize_loops.inc"

}  // namespace octet::kernels::avx512
