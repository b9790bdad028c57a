// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear's range pass (kernels/quantize/quantize.h),
// NEON: 4 lanes, dividing every vector: kernels/quantize/quantize_loops.inc over kernels/arm/neon_ops.h's I32Lanes.
#include "kernels/ref/fp_contract_off.h"  // first: every float step rounds as the reference's

#include "kernels/quantize/quantize.h"
#include "kernels/arm/neon_ops.h"

namespace octet::kernels::neon {

#include "kernels/quantize/quantize_loops.inc"

}  // namespace octet::kernels::neon
