#pragma once
// The two element-wise passes around the FP32 depthwise conv on the dynamic path
// (Q8DequantizedDwConv): int8 / uint8 activations to float(x - zero_point) before it, and the
// float epilogue y = clamp(y * scale[c] + bias[c]) after it, in place. The epilogue's multiply
// and add round separately (never one FMA), and the clamp is std::min(std::max(v, lo), hi),
// NaN included, as dequantize_accumulators__ref: bit-exact with the scalar loops.
#include <cstddef>
#include <cstdint>

#include "kernels/isa.h"
#include "kernels/kernel_list.h"
#include "kernels/q8_type.h"

namespace octet::kernels {

// out[i] = float(int32(x[i]) - zero_point), x of type Q8 (is_signed: int8).
using Q8CenterFn = void (*)(size_t n, const void* x, bool is_signed, int32_t zero_point, float* out);
// For each of `pixels` rows of `channels` floats: y = min(max(y * scale[c] + bias[c], lo), hi);
// bias may be null (no add).
using F32ScaleBiasClampFn = void (*)(size_t pixels, size_t channels, float* y, const float* scale,
                                     const float* bias, float lo, float hi);

// The levels with both passes (kernels/<arch>/dequantized_epilogue__<level>.cc, namespace
// <level>), in preference order. Adding a level is one X(level) here.
#if OCTET_ARCH_X86
#define OCTET_DEQUANTIZED_EPILOGUE_LEVELS(X) X(avx512) X(avx2)
#elif OCTET_ARCH_ARM64
#define OCTET_DEQUANTIZED_EPILOGUE_LEVELS(X) X(neon)
#else
#define OCTET_DEQUANTIZED_EPILOGUE_LEVELS(X)
#endif

#define OCTET_DEQUANTIZED_EPILOGUE_DECLARE(isa)                                                                   \
  namespace isa {                                                                                                 \
  void q8_center(size_t n, const void* x, bool is_signed, int32_t zero_point, float* out);                        \
  void f32_scale_bias_clamp(size_t pixels, size_t channels, float* y, const float* scale, const float* bias, float lo, \
                            float hi);                                                                            \
  }
OCTET_DEQUANTIZED_EPILOGUE_LEVELS(OCTET_DEQUANTIZED_EPILOGUE_DECLARE)
#undef OCTET_DEQUANTIZED_EPILOGUE_DECLARE

void q8_center__ref(size_t n, const void* x, bool is_signed, int32_t zero_point, float* out);
void f32_scale_bias_clamp__ref(size_t pixels, size_t channels, float* y, const float* scale, const float* bias,
                               float lo, float hi);

struct DequantizedEpilogueKernel {
  const char* name;
  Isa isa;
  Q8CenterFn center;
  F32ScaleBiasClampFn epilogue;
};
// In preference order, the scalar loops last.
#define OCTET_DEQUANTIZED_EPILOGUE_ENTRY(isa) \
  {"dequantized_epilogue__" #isa, Isa::isa, isa::q8_center, isa::f32_scale_bias_clamp},
inline constexpr DequantizedEpilogueKernel kDequantizedEpilogueKernels[] = {
    OCTET_DEQUANTIZED_EPILOGUE_LEVELS(OCTET_DEQUANTIZED_EPILOGUE_ENTRY)  //
    {"dequantized_epilogue__ref", Isa::scalar, q8_center__ref, f32_scale_bias_clamp__ref},
};
#undef OCTET_DEQUANTIZED_EPILOGUE_ENTRY

// The first kernel that runs here under the cap `isa` (the ref one at worst).
const DequantizedEpilogueKernel& choose_dequantized_epilogue(Isa isa);

}  // namespace octet::kernels
