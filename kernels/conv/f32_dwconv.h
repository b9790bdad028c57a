#pragma once
// FP32 depthwise convolution (groups == in_c == out_c, channel multiplier 1) over NHWC
// activations, on the fastest microkernel of kernels/conv/dwconv_list.h the requested ISA allows;
// the scalar ref conv (kernels/ref/conv2d.h) when none does.
//
// Life cycle: construct once per layer (packs the weights), bind() once per input address
// (builds the row pointers and the border indirection), run() any number of times on that
// input (no allocation; threads split the output rows). One object runs one conv at a time.
#include <pthreadpool.h>

#include <memory>
#include <string>
#include <vector>

#include "kernels/aligned_buffer.h"
#include "kernels/kernel_id.h"
#include "kernels/conv/dwconv_indirection.h"
#include "kernels/conv/dwconv_list.h"
#include "kernels/elementwise/eltwise.h"
#include "kernels/isa.h"
#include "kernels/ref/activation.h"
#include "kernels/ref/conv2d.h"

namespace octet::kernels {

class PackedCache;  // kernels/packed_cache.h

// The microkernel F32DwConv(..., isa) runs: the first entry of kF32DwConvKernels with
// runs here under the cap `isa` (isa_runs), the portable row at Isa::scalar.
const F32DwConvKernel* choose_f32_dwconv_kernel(Isa isa);

class F32DwConv {
 public:
  // Depthwise geometry (groups == in_c == out_c); any activation (relu / clip are the
  // microkernels' clamp, the others run on F32Epilogue over each output row).
  static bool supports(const Conv2dShape& s, const Activation& act);

  // weights: ONNX order [C][1][kernel_h][kernel_w]; bias: [C] or nullptr. Packs them, or
  // takes the packing `cache` holds for the same recipe (nullptr: a private copy).
  F32DwConv(const Conv2dShape& s, const float* weights, const float* bias, const Activation& act, Isa isa,
            PackedCache* cache = nullptr);
  // Runs exactly `kernel` (tests and benchmarks); the CPU must support kernel.isa.
  F32DwConv(const Conv2dShape& s, const float* weights, const float* bias, const Activation& act,
            const F32DwConvKernel& kernel, PackedCache* cache = nullptr);

  const std::string& kernel_name() const { return name_.name; }
  const KernelId& kernel_id() const { return name_; }
  // Whether run() copies each image into a horizontally padded buffer (small maps).
  bool copies_padded_input() const { return pad_copy_; }
  // The channels run() computes over all the rows before the next ones (0: whole rows).
  size_t channels_per_slice() const { return slice_channels_; }

  // x: [batch][in_h][in_w][C]. run() must then be given the same x.
  void bind(const float* x);
  // Called on each finished output row (out_w * C floats, still in L1), from any thread of the
  // pool: Q8DequantizedDwConv's float epilogue and output range.
  struct RowHook {
    void (*fn)(void* context, float* row, size_t n);
    void* context;
  };
  // y: [batch][out_h][out_w][C]. pool may be nullptr (calling thread only).
  void run(const float* x, float* y, pthreadpool_t pool, const RowHook* after_row = nullptr) const;

  // Rolling input (F32PointwiseDwConv): instead of bind(), the conv reads one image (the
  // shape's batch must be 1) whose input row iy lives at ring + (iy % ring_rows) * in_w * C,
  // and run_rows() computes output rows as their input rows arrive. No padded copy then.
  void bind_ring(const float* ring, int ring_rows);
  // Output rows [first, first + count) of the ring's image into y (the image's output, row 0
  // at y). The caller keeps the rows those output rows read in the ring.
  void run_rows(int first, int count, float* y, pthreadpool_t pool) const;

 private:
  void init(const float* weights, const float* bias, PackedCache* cache);
  // slice_channels_ for input rows row_w pixels wide, maps_bytes of input and output in all (an
  // image's, or a ring of rows and the output rows read from it)
  size_t fitting_slice(int row_w, size_t maps_bytes) const;
  static void row_task(void* context, size_t row);  // context: a RowTask (the .cc)
  static void pad_copy_task(void* context, size_t row);  // context: a PadCopyTask (the .cc)
  void run_row(size_t row, float* y, const RowHook* after_row) const;
  // Channels [c0, c1) of output row `row` (of the rows bind() indexed) into y.
  void run_row_slice(size_t row, size_t c0, size_t c1, float* y) const;
  static void slice_task(void* context, size_t slice, size_t part);  // context: an F32DwSliceTask (the .cc)
  // Rows [first_row, first_row + rows) of those bind() indexed: a slice of slice_channels_ at a
  // time, or row by row where there is no slice or a hook wants each row whole.
  void run_output_rows(size_t first_row, size_t rows, float* y, pthreadpool_t pool, const RowHook* after_row) const;
  void run_image_padded(const float* x, float* y, pthreadpool_t pool, const RowHook* after_row) const;

  Conv2dShape s_;
  Activation act_;
  const F32DwConvKernel* kernel_ = nullptr;
  KernelId name_;
  std::shared_ptr<const std::vector<float>> packed_;  // shared by the Session's plans
  AlignedFloats pad_row_;  // zeros: the rows and taps of the padding read it
  float min_, max_;
  F32Epilogue epilogue_;
  DwColumns cols_;
  // Small maps, where border pixels (one pointer per tap, and no sharing of loads between
  // pixels) would take much of the time: each image is copied into a buffer with the
  // horizontal padding as zeros, and every output pixel runs on the row microkernel.
  bool pad_copy_ = false;
  // Where the kernel_h input rows a row of outputs reads do not fit half the L1D over all the
  // channels: the channels of a slice whose rows do (a multiple of the tile), and the rows run
  // slice by slice, so that each input row comes from the L2 once per slice instead of once per
  // output row that reads it. 0: whole rows (they fit, or a RowHook wants each row whole).
  size_t slice_channels_ = 0;
  Conv2dShape padded_;  // one image of the padded buffer: pad_left 0, in_w widened
  AlignedFloats padded_x_;  // written by run(); the padding columns stay zero
  const float* bound_x_ = nullptr;
  std::vector<const float*> row_ptrs_;     // [batch * out_h][kernel_h]
  std::vector<const float*> border_taps_;  // [batch * out_h][border pixels][kernel_h * kernel_w]
};

}  // namespace octet::kernels
