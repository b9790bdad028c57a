#pragma once
// Scalar pooling over NHWC activations: FP32, and max pooling of 8-bit quantized values.
#include <cstdint>
#include <cstddef>

namespace octet::kernels {

// A 3-D pool (NDHWC) sets the depth fields too; their defaults make a 2-D pool. Windows are
// read in (kd, kh, kw) order.
struct Pool2dShape {
  int batch = 1;
  int in_h = 1, in_w = 1, channels = 1;
  int out_h = 1, out_w = 1;
  int kernel_h = 1, kernel_w = 1;
  int stride_h = 1, stride_w = 1;
  int dilation_h = 1, dilation_w = 1;
  int pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int in_d = 1, out_d = 1, kernel_d = 1, stride_d = 1, dilation_d = 1, pad_front = 0, pad_back = 0;

  bool has_depth() const { return in_d != 1 || out_d != 1 || kernel_d != 1 || pad_front != 0 || pad_back != 0; }
};

// Max over the window positions that fall inside the input (padding never wins).
// With ceil_mode the last window may run past pad_bottom / pad_right; those
// positions are ignored too.
void f32_maxpool2d_nhwc__ref(const Pool2dShape& s, const float* input, float* output);

// The same max over 8-bit quantized activations (T = uint8_t or int8_t). With a positive scale,
// dequantization is increasing, so the max of the integers is the integer of the max: no
// requantization, the output keeps the input's scale and zero point (ONNX Runtime drops the
// Q/DQ pair around a MaxPool for this reason). A window with no position inside the input
// yields the type's lowest value.
template <typename T>
void q8_maxpool2d_nhwc__ref(const Pool2dShape& s, const T* input, T* output);

// Average over the window. count_include_pad = false divides by the number of
// positions inside the input. count_include_pad = true divides by the number of
// positions inside the padded input (input plus the explicit pads), so a window that
// runs past the pads in ceil_mode is still not counted beyond them (ONNX Runtime's rule).
// The sum is in float, in the order of ONNX Runtime's kernel for this pool (sum_rows, 1 or
// kernel_d * kernel_h, from f32_avgpool_sum_rows): the window read as sum_rows rows (the (kd, kh)
// rows of a 3-D window, plane after plane), each column summed down its rows,
// then the column sums left to right (sum_rows 1: every position in row-major order);
// positions outside the input add +0.0. Then one division by float(count).
void f32_avgpool2d_nhwc__ref(const Pool2dShape& s, bool count_include_pad, const float* input, float* output,
                             int sum_rows);

// The sum_rows of ONNX Runtime's kernel for an AveragePool on a CPU whose NCHWc block is
// `nchwc_block` (0: none; kernels/pool/pool2d.h, ort_nchwc_block):
//   - channels a multiple of the block, and the input's shape known to ORT's shape inference
//     (the caller passes 0 for nchwc_block when not: ir::kShapeKnownToOrtAttr): ORT's layout
//     pass runs it as an NCHWc pool, which sums in row-major order: 1;
//   - otherwise MlasPool: its vector kernel (no dilation, stride_w <= 2, every kernel side <= 32,
//     the padded row within its 2045-float buffer) reduces each column over the rows first:
//     kernel_h (3-D: over the planes' rows, kernel_d * kernel_h); its generic kernel sums in
//     row-major order: 1. ORT's NCHWc layout is 2-D only: a 3-D pool always takes MlasPool.
int f32_avgpool_sum_rows(const Pool2dShape& s, int nchwc_block);

// The order a global average pool sums each channel in, as ONNX Runtime does on x86 (each
// then divides the float sum by float(hw)):
//   mlas_lanes4     MLAS's global pooling kernel (MlasPool), what ORT's GlobalAveragePool runs:
//                   four sums by position mod 4 over the first hw / 4 * 4 positions (its 4-float
//                   vector), combined as (s0 + s2) + (s1 + s3), then the remaining positions in
//                   order;
//   eigen_packets4  ORT's ReduceMean (and ReduceSum) over trailing axes: Eigen's vectorized sum of
//                   each row of the NCHW tensor, compiled for 4-float packets (SSE on x86, NEON on
//                   Arm, whatever the CPU). It starts at the row's first 16-byte boundary (ORT's
//                   buffers are 64-byte aligned, so `a` = (-row * hw) mod 4 leading floats are
//                   left over), keeps two packet sums, the even packets in one and the odd in the
//                   other, in order, adds them, adds the last packet if their count is odd, reduces
//                   the four lanes as (l0 + l2) + (l1 + l3), then adds the `a` leading and the
//                   trailing positions in order. Under one whole packet it sums in order;
//   sequential      one sum over the positions in order: ORT's NCHWc pooling, which its layout
//                   pass (graph optimizations "all") substitutes for a GlobalAveragePool with a
//                   multiple of 8 channels (16 on AVX-512) only in some graphs (on ORT 1.30, one
//                   reading a graph input or an NCHWc float Conv's output; not one after a Relu,
//                   a Slice or the float steps of a dynamic INT8 model), and MLAS's generic window
//                   kernel (a global AveragePool with strides other than 1); also ORT's
//                   ReduceMean over H and W of one NHWC image (its rows-then-columns case);
//   mlas_sgemm_m1   ORT's ReduceMean over H and W of a batch of NHWC images, which it computes as
//                   a row of ones times each image's [hw][channels] on MLAS's M = 1 SGEMM kernel
//                   (x86-64): groups of four positions summed in order, ((x0 + x1) + x2) + x3,
//                   each group then added to the running sum; then, for hw mod 4 of 2 or 3, the
//                   next two summed and added, and for an odd rest the last one added.
enum class GapOrder : uint8_t { sequential, mlas_lanes4, eigen_packets4, mlas_sgemm_m1 };

// eigen_packets4: the floats of row `row` (of `hw` each) before its first 16-byte boundary.
inline size_t eigen_row_lead(size_t row, size_t hw) { return (4 - (row * hw) % 4) % 4; }

// The float sum of hw values x[p * stride] in GapOrder::eigen_packets4 with `lead` leading values.
float f32_sum_eigen_packets4(size_t hw, size_t lead, const float* x, size_t stride);

// Mean over H*W for each (n, c): input [batch][hw][channels] -> output [batch][channels],
// the float sum in `order`, then divided by float(hw): what every SIMD level's f32_gap does lane
// by lane, so every level gives the same bits (dynamic INT8 quantizes this output again).
// eigen_packets4 takes channel c of image n as row n * channels + c.
void f32_global_avgpool_nhwc__ref(int batch, int hw, int channels, const float* input, float* output,
                                  GapOrder order);

}  // namespace octet::kernels
