// Include this first in every file whose float steps must round exactly as written: the INT8
// reference kernels and the ops that derive quantization parameters. GCC contracts a * b + c
// into one FMA under -mfma even in ISO C++ mode, and an FMA rounds once where the written
// expression rounds twice, which moves near-ties by one code (docs/requantization.md).
// The FMAs ONNX Runtime really performs are written out with std::fma.
// No include guard: the pragma has to take effect in each file that includes it.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif
