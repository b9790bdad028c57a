#pragma once
// FP32 transposed convolution (ONNX ConvTranspose), NHWC, on the FP32 GEMM microkernels.
// A 3-D one (the shape's depth fields, NDHWC) is the same GEMM over (d, h, w) pixels and
// (kd, kh, kw) taps, its gather pass run over the out_d · out_h rows of each image.
//
// Per image and group: cols[pixel][tap][m] = x[pixel][c] · W[c][m][tap] is one GEMM (K = the
// group's input channels, N = kernel_h · kernel_w · its output channels; the weights packed
// once here), then a gather pass builds each output pixel from the cols of the input pixels
// that land on it, tap by tap in (ky, kx) order, adds the bias and clamps, vectorized along the
// channels on the element-wise family's add-and-clamp microkernel (every x86 and Arm level),
// then applies the activation to the finished row while it is in cache (passes::fuse_activations
// moves a Relu, Sigmoid, SiLU, ... after a ConvTranspose here).
//
// The float steps are those of the reference (kernels/ref/conv_transpose.h) and of ONNX Runtime:
// the microkernels sum each dot product as FMAs in channel order from zero, a K deeper than
// k_chunk runs as one GEMM per block whose results are added in order, and taps add in ORT's
// Col2im order before the bias. So the output is bit-identical to the reference's, and a QDQ
// ConvTranspose (float in ORT) quantizes to ORT's codes.
//
// With one input channel per group (depthwise, or a channel multiplier) the GEMM would have
// K = 1: the driver then gathers x · w directly per output pixel, tap by tap in the same order,
// along the channels in portable loops the compiler vectorizes (the lanes are independent, so
// the float steps stay the reference's).
//
// Stride-phase decomposition (XNNPACK's deconvolution: stride_h · stride_w small convs on the
// IGEMM) would skip the col buffer, but it sums every tap of a phase inside one dot product,
// which is not ORT's order.
#include <pthreadpool.h>

#include <memory>
#include <vector>

#include "kernels/elementwise/eltwise.h"
#include "kernels/elementwise/eltwise_list.h"
#include "kernels/gemm/f32_gemm.h"
#include "kernels/isa.h"
#include "kernels/kernel_id.h"
#include "kernels/ref/activation.h"
#include "kernels/ref/conv_transpose.h"

namespace octet::kernels {

class F32ConvTranspose {
 public:
  // weights ONNX order [in_c][out_c / groups][kh][kw] ([kd][kh][kw] in 3-D); bias [out_c] or nullptr. Throws
  // kernels::Unsupported when no GEMM microkernel runs under `isa` (scalar) or the column
  // buffer of one image would pass kMaxScratchBytes.
  F32ConvTranspose(const ConvTranspose2dShape& s, const float* weights, const float* bias, const Activation& act,
                   Isa isa);
  // Or pick an exact GEMM list entry (tests / benchmarks).
  F32ConvTranspose(const ConvTranspose2dShape& s, const float* weights, const float* bias, const Activation& act,
                   const F32GemmKernel& kernel);

  static constexpr size_t kMaxScratchBytes = size_t{256} << 20;
  // Floats of scratch run() needs (the caller's arena).
  static size_t scratch_floats(const ConvTranspose2dShape& s);

  const KernelId& kernel_id() const { return name_; }

  // y = act(conv_transpose(x) + bias). scratch: scratch_floats(s) floats. No allocation.
  void run(const float* x, float* y, float* scratch, pthreadpool_t pool) const;

 private:
  struct Chunk {
    int k0, k;
    std::vector<std::unique_ptr<F32Gemm>> gemm;  // one per group
  };
  template <class MakeGemm>
  void init(const float* weights, MakeGemm make_gemm);
  void init_taps();
  template <class Fn>
  void for_each_tap(int row, int ox, Fn fn) const;
  // row: an output row of the image, oz · out_h + oy.
  void gather_row(int row, const float* cols, float* y, int group) const;
  void direct_row(int row, const float* x, float* y) const;
  void finish(float* yp, size_t count, const float* bias) const;  // bias and clamp
  friend struct ConvTransposeRowTask;

  ConvTranspose2dShape s_;
  std::vector<float> bias_;  // [out_c], zeros when none
  Activation act_;
  F32MinMax clamp_;
  F32Epilogue epilogue_;
  const EltwiseUkernel<F32AddClampUkernel>* add_;
  std::vector<Chunk> chunks_;
  std::vector<float> taps_;  // one input channel per group: [tap][out_c]
  // The input rows (and columns) that reach each output row (column), with their taps, in
  // ORT's order: built once, so the gather pass runs no division per pixel.
  struct TapRow {
    size_t pixel;  // the input row's first pixel, (iz * in_h + iy) * in_w
    int tap;       // its first tap, (kz * kernel_h + ky) * kernel_w
  };
  struct TapCol {
    int ix, kx;
  };
  std::vector<TapRow> tap_rows_;
  std::vector<size_t> row_start_;  // output row r: tap_rows_[row_start_[r] .. row_start_[r + 1])
  std::vector<TapCol> tap_cols_;
  std::vector<size_t> col_start_;  // output column ox: tap_cols_[col_start_[ox] .. col_start_[ox + 1])
  KernelId name_;
};

}  // namespace octet::kernels
