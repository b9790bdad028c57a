#pragma once
// Drivers for the element-wise and global-pooling microkernels of kernels/elementwise/eltwise_list.h:
// each one chooses its microkernel once (the first entry that runs under its cap, isa_runs)
// and falls back to the scalar reference kernel for shapes or
// parameters the microkernels do not take. kernel_name() says which ran.
//
// Binary ops take the strided form the reference kernels take (kernels/ref/elementwise.h): y
// dense in `dims` order, a and b read through their own strides (0 broadcasts). Adjacent
// dimensions are merged until the last one is contiguous in both inputs; the broadcasts that
// reduce to rows of a contiguous row (same shape, the NHWC per-channel gate [N,1,1,C] against
// [N,H,W,C], a row vector), a single-element operand (spread over a row) and an operand
// constant along long runs of the other run on the microkernels directly; any other broadcast
// (both sides broadcast, short runs, a transposed or strided operand) runs packed, its blocks
// gathered into buffers first. Only Isa::scalar runs the reference.
//
// Threads: run() splits large tensors into pieces of at least kEltwiseMinPiece elements over
// a pthreadpool (nullptr: the calling thread).
#include <pthreadpool.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/kernel_id.h"
#include "kernels/elementwise/output_range.h"
#include "kernels/elementwise/parallel_pieces.h"
#include "kernels/elementwise/eltwise_list.h"
#include "kernels/gemm/f32_gemm_list.h"
#include "kernels/q8_type.h"
#include "kernels/ref/activation.h"
#include "kernels/ref/elementwise.h"
#include "kernels/ref/qmath.h"

namespace octet::kernels {

struct Q8QuantizeKernel;  // kernels/quantize/quantize.h

// A broadcast box with its size-1 dimensions dropped and each dimension merged into the next
// where both inputs step through the pair as through one (rank 0: a single element).
struct MergedBox {
  bool empty = false;  // a dimension of extent 0
  int rank = 0;
  int64_t dims[kMaxRank] = {}, a[kMaxRank] = {}, b[kMaxRank] = {};
};
MergedBox merge_box(int rank, const int64_t* dims, const int64_t* a_strides, const int64_t* b_strides);

// A broadcast box reduced to an outer loop of [rows][cols] tiles, cols contiguous in a, b and y.
struct BinaryTiling {
  bool fits = false;  // false: the last dimension is not contiguous in both inputs
  int outer_rank = 0;
  int64_t outer_dims[kMaxRank] = {}, outer_a[kMaxRank] = {}, outer_b[kMaxRank] = {};
  int64_t rows = 0, cols = 0, a_row_stride = 0, b_row_stride = 0;

  int64_t outer_count() const;
};
BinaryTiling tile_binary(int rank, const int64_t* dims, const int64_t* a_strides, const int64_t* b_strides);

// ---- FP32 ----

// Add, Sub, Mul, Div, PRelu on microkernels, for the broadcasts tile_binary reduces to rows
// and for a single-element operand of Add, Sub, Mul, Div (x / 2, spread over a row); other
// broadcasts on the reference. PRelu with a slope that is constant along the innermost
// contiguous run of x (a scalar slope; a per-channel slope [C,1,1] of row-major NCHW x; a
// slope along W of channels-last x) runs that run on the LeakyRelu microkernel, one slope
// value per call; likewise an operand of Add, Sub, Mul, Div constant along such runs of the
// other (ConvNeXt's layer scale [C,1,1]) runs each run as x op scalar. Any other broadcast
// (both operands broadcast, a short run, a transposed operand) runs packed: blocks of whole
// output rows, each operand that is not one contiguous run over the block gathered into a
// block buffer, then one vector-vector call per block. Only Isa::scalar runs the reference.
class F32Binary {
 public:
  F32Binary(BinaryOp op, int rank, const int64_t* dims, const int64_t* a_strides, const int64_t* b_strides,
            Isa isa);
  KernelId kernel_id() const;
  std::string kernel_name() const { return kernel_id().name; }
  // With `range`, the range of y is folded into it tile by tile as the tiles are written.
  void run(const float* a, const float* b, float* y, pthreadpool_t pool, OutputRange* range = nullptr) const;

 private:
  BinaryOp op_;
  int rank_;
  int64_t dims_[kMaxRank], a_strides_[kMaxRank], b_strides_[kMaxRank];
  BinaryTiling tiling_;
  const EltwiseUkernel<F32BinaryUkernel>* ukernel_ = nullptr;
  // A single-element operand spread over a row at each run (one plan runs one call at a time,
  // so the row is this step's own).
  static constexpr int64_t kSplat = 2048;
  // An operand constant along each innermost run of the other (run_ > 0 without slope_rows_):
  // runs at least this long go to the microkernel, the scalar spread over a chunk of the stack.
  static constexpr int64_t kMinScalarRun = 16, kScalarRunChunk = 512;
  void run_scalar_per_run(const float* a, const float* b, float* y, pthreadpool_t pool, OutputRange* range) const;
  // Where run `run` (of the runs over the dimensions before run_outer_rank_) starts in a and b.
  std::pair<int64_t, int64_t> run_offsets(size_t run) const;
  enum class Splat : uint8_t { none, a, b } splat_ = Splat::none;
  int64_t splat_tail_ = 0;
  mutable std::vector<float> splat_row_;
  const EltwiseUkernel<F32ActUkernel>* slope_rows_ = nullptr;  // PRelu, slope constant along a run
  // PRelu's slope or one operand of Add, Sub, Mul, Div constant along each run of run_ elements
  int run_outer_rank_ = 0;  // the dimensions before the run
  int64_t run_ = 0;         // elements in the run
  bool packed_ = false;     // the packed form over merged_
  MergedBox merged_;
};

// act(y) in place, the part of a fused activation a kernel's clamp cannot do: Sigmoid, SiLU,
// GELU and the activations of kernels/elementwise/activation_list.h on their microkernels, applied by the conv and GEMM drivers
// to each block right after the microkernel wrote it (still in L1). Relu and Clip are the
// microkernels' own output clamp, so for them and for none this does nothing (active() false)
// unless the activation has a scale and shift after it (Activation::scale_shift), applied here
// after the clamp.
class F32Epilogue {
 public:
  F32Epilogue() = default;
  F32Epilogue(const Activation& act, Isa isa);
  bool active() const { return own_kind() || act_.scale_shift; }
  // "" when inactive, else the microkernel's name or "f32_unary__ref".
  KernelId kernel_id() const;
  std::string kernel_name() const { return kernel_id().name; }
  // rows x cols values, row r at y + r * ld.
  void run(size_t rows, size_t cols, float* y, size_t ld) const;
  // n contiguous values from x to y (x == y allowed).
  void run(size_t n, const float* x, float* y) const;
  // y = act(y + r), r's rows r_ld apart (0: y's stride): a conv whose residual Add (a ResNet
  // block's sum) is fused. The microkernel must then have written y without its clamp: Relu and
  // Clip apply here, after the sum, in the same pass as the add; the other activations after it.
  void run_residual(size_t rows, size_t cols, float* y, size_t ld, const float* r, size_t r_ld = 0) const;

 private:
  void add_clamp(size_t n, float* y, const float* r) const;
  // The activation is one this class applies (not none, not a clamp).
  bool own_kind() const { return act_.kind != ActKind::none && act_.kind != ActKind::relu && act_.kind != ActKind::clip; }

  Activation act_;
  const EltwiseUkernel<F32ActUkernel>* scale_shift_ = nullptr;  // set when the activation has them
  const EltwiseUkernel<F32AddClampUkernel>* add_clamp_ = nullptr;
  F32MinMax bounds_ = kNoClamp;  // run_residual's clamp: Relu's and Clip's bounds
  const EltwiseUkernel<F32ActUkernel>* act_ukernel_ = nullptr;
  const EltwiseUkernel<F32UnaryUkernel>* sigmoid_ = nullptr;
};

// A unary activation over n contiguous values: Relu and Clip (f32_clamp), Sigmoid, SiLU, GELU
// and the activations of kernels/elementwise/activation_list.h on their microkernels (F32Epilogue); the ref
// otherwise.
class F32Unary {
 public:
  F32Unary(ActKind kind, Isa isa);
  KernelId kernel_id() const;
  std::string kernel_name() const { return kernel_id().name; }
  // act carries the Clip bounds, which may change between calls (run-time inputs).
  void run(const Activation& act, int64_t n, const float* x, float* y, pthreadpool_t pool) const;

 private:
  ActKind kind_;
  Isa isa_;
  const EltwiseUkernel<F32ClampUkernel>* clamp_ = nullptr;
};

// GlobalAveragePool NHWC: x [batch][hw][channels] -> y [batch][channels], each channel summed
// in `order` (GapOrder::mlas_lanes4 for ONNX Runtime's GlobalAveragePool).
class F32GlobalAvgPool {
 public:
  F32GlobalAvgPool(int batch, int hw, int channels, GapOrder order, Isa isa);
  KernelId kernel_id() const;
  std::string kernel_name() const { return kernel_id().name; }
  void run(const float* x, float* y, pthreadpool_t pool) const;

 private:
  int batch_, hw_, channels_;
  GapOrder order_;
  const EltwiseUkernel<F32GapUkernel>* ukernel_ = nullptr;
};

// ReduceSum / ReduceMean over the trailing axes of a row-major tensor: y[r] = the sum of row r of
// x [rows][n] in GapOrder::eigen_packets4 (ORT's row first_row + r), / divisor; bit-identical with
// f32_row_sums_eigen__ref at every level. Short rows one a lane (f32_row_sums, each lane
// gathering its row's values); rows of kLongRow floats or more on f32_eigen_sums, each row's
// packets read in order, a few rows side by side.
class F32RowSums {
 public:
  static constexpr size_t kLongRow = 256;
  F32RowSums(size_t n, Isa isa);
  KernelId kernel_id() const;
  std::string kernel_name() const { return kernel_id().name; }
  void run(size_t rows, const float* x, float* y, size_t first_row, float divisor, pthreadpool_t pool) const;

 private:
  size_t n_;
  const EltwiseUkernel<F32RowSumsUkernel>* ukernel_ = nullptr;
  const EltwiseUkernel<F32EigenSumsUkernel>* long_ = nullptr;  // set: rows of kLongRow or more
};

// Eigen's packet sums (F32EigenSumsUkernel) of any number of rows, each with its own start and
// lead: bit-identical with f32_eigen_sums__ref at every level (the ref when no row runs).
class F32EigenSums {
 public:
  explicit F32EigenSums(Isa isa);
  KernelId kernel_id() const;
  // sums[r] of x[r][0 .. n) or, with center, of (x[r][i] - center[r])²; one thread.
  void run(size_t rows, size_t n, const float* const* x, const size_t* lead, const float* center, float* sums) const;

 private:
  const EltwiseUkernel<F32EigenSumsUkernel>* ukernel_ = nullptr;
};

// Per channel of x [pixels][channels], the sum and the sum of squares of x - center[c], in
// double (f32_channel_moments; f32_channel_moments__ref when no row runs): bit-identical at
// every level. One call, one thread: the caller splits the pixels.
class F32ChannelMoments {
 public:
  F32ChannelMoments(size_t channels, Isa isa);
  KernelId kernel_id() const;
  void run(size_t pixels, const float* x, const float* center, double* sum, double* sum_sq) const;

 private:
  size_t channels_;
  const EltwiseUkernel<F32ChannelMomentsUkernel>* ukernel_ = nullptr;
};

// ReduceSum / ReduceMean over any set of axes of x read through its strides, y dense over the
// kept axes in order: f32_strided_sums (ONNX Runtime's generic order) with the lanes along the
// innermost kept axis, one call per position of the other kept axes. divisor: N for the mean,
// 1 for the sum. With kind min or max, ReduceMin / ReduceMax the same way (f32_strided_min /
// f32_strided_max; divisor unused).
enum class StridedReduceKind { sum, min, max };
class F32StridedReduce {
 public:
  F32StridedReduce(int rank, const int64_t* dims, const int64_t* strides, const bool* reduced, float divisor, Isa isa,
                   StridedReduceKind kind = StridedReduceKind::sum);
  KernelId kernel_id() const;
  std::string kernel_name() const { return kernel_id().name; }
  void run(const float* x, float* y, pthreadpool_t pool) const;

 private:
  size_t count_ = 1, lane_stride_ = 1;
  std::vector<int64_t> bases_;    // x's offset at each position of the outer kept axes (y at p * count_)
  std::vector<int64_t> offsets_;  // the reduced elements, row-major over the reduced axes
  float divisor_;
  StridedReduceKind kind_;
  const EltwiseUkernel<F32StridedSumsUkernel>* ukernel_ = nullptr;
};

// LayerNormalization over rows of n contiguous values, bit-identical with f32_layernorm__ref
// (ONNX Runtime's formula, kernels/ref/layernorm.h); mean and inv_std may be nullptr.
class F32LayerNorm {
 public:
  F32LayerNorm(size_t n, Isa isa);
  KernelId kernel_id() const;
  std::string kernel_name() const { return kernel_id().name; }
  void run(size_t rows, const float* x, const float* scale, const float* bias, float epsilon, float* y, float* mean,
           float* inv_std, pthreadpool_t pool) const;

 private:
  size_t n_;
  const EltwiseUkernel<F32LayerNormUkernel>* ukernel_ = nullptr;
};

// ---- INT8 (T = uint8_t or int8_t, chosen at run time by Q8) ----

// The microkernels' parameters, derived exactly as the reference variants derive them.
Q8AddParams q8_add_params(QuantParams a, QuantParams b, QuantParams y, int32_t y_min, int32_t y_max);
Q8MulParams q8_mul_params(QuantParams a, QuantParams b, QuantParams y, int32_t y_min, int32_t y_max);
Q8GapParams q8_gap_params(int hw, QuantParams x, QuantParams y, Q8 type);

// QLinearAdd bit-exact with q8_add_ratio_fma_strided__ref, QLinearMul with
// q8_mul_ratio_strided__ref (ORT's x86 recipes; docs/requantization.md section 9). Besides the
// broadcasts tile_binary reduces to rows, an operand constant along each innermost run the
// other walks contiguously (a gate [N,C,1,1] or [N,2,C,1,1] over a row-major map, a single
// element) runs each run on the microkernels with that value spread over a row; any other
// broadcast runs packed, as F32Binary's.
class Q8Binary {
 public:
  enum class Kind { add, mul };
  Q8Binary(Kind kind, Q8 type, int rank, const int64_t* dims, const int64_t* a_strides, const int64_t* b_strides,
           Isa isa);
  KernelId kernel_id() const;
  std::string kernel_name() const { return kernel_id().name; }
  void run(const void* a, QuantParams a_q, const void* b, QuantParams b_q, QuantParams y_q, int32_t y_min,
           int32_t y_max, void* y, pthreadpool_t pool) const;

 private:
  Kind kind_;
  Q8 type_;
  int rank_;
  int64_t dims_[kMaxRank], a_strides_[kMaxRank], b_strides_[kMaxRank];
  BinaryTiling tiling_;
  const EltwiseUkernel<Q8AddUkernel>* add_ = nullptr;
  const EltwiseUkernel<Q8MulUkernel>* mul_ = nullptr;
  // The constant-per-run form: run_ > 0 elements per run, over the dimensions before
  // run_outer_rank_; b_fixed_: b is the constant operand (else a).
  static constexpr int64_t kMinRun = 16, kRunChunk = 512;
  int run_outer_rank_ = 0;
  int64_t run_ = 0;
  bool b_fixed_ = true;
  bool packed_ = false;
  MergedBox merged_;
  template <class Fn, class Params>
  void run_per_run(Fn fn, const Params& p, const int8_t* a, const int8_t* b, int8_t* y, pthreadpool_t pool) const;
};

// QLinearReduceMean over any set of axes of x read through its strides, y dense over the kept
// axes: bit-exact with q8_reduce_mean_strided__ref (the QDQ unit as ONNX Runtime runs it, in
// float). x is dequantized on the SIMD dequantize kernel into a float buffer in its own memory
// order (gathered to row-major first when its strides are not a dense layout, or when ORT's row
// sums need rows x does not hold), the float mean taken in ORT's order on F32RowSums (its rows
// case), F32GlobalAvgPool (the same rows, for the spatial mean of channels-last data) or
// F32StridedReduce (its generic loop), then quantized on the SIMD quantize kernel. With
// `ort_nhwc` (a mean over H and W of 4-D data that ORT runs on NHWC: ir::kOrtChannelsLastAttr)
// x is walked as [N, H, W, C] and each channel's pixels summed in ORT's order for that batch
// (GapOrder::sequential for one image, mlas_sgemm_m1 for more) on F32GlobalAvgPool
// (q8_reduce_mean_hw_nhwc__ref).
class Q8ReduceMean {
 public:
  Q8ReduceMean(Q8 type, int rank, const int64_t* dims, const int64_t* strides, const bool* reduced, Isa isa,
               bool ort_nhwc = false);
  ~Q8ReduceMean();
  KernelId kernel_id() const;
  std::string kernel_name() const { return kernel_id().name; }
  void run(const void* x, QuantParams x_q, QuantParams y_q, void* y, pthreadpool_t pool) const;

 private:
  Q8 type_;
  int rank_;
  int64_t dims_[kMaxRank] = {}, strides_[kMaxRank] = {};
  bool reduced_[kMaxRank] = {};
  int64_t count_ = 1, outputs_ = 1, n_ = 1;
  const Q8QuantizeKernel* quantize_ = nullptr;  // nullptr: the reference
  bool gather_ = false;                                // x to row-major bytes first
  std::optional<GapOrder> nhwc_order_;  // set: dims_ and strides_ are x's [N, H, W, C] view
  std::unique_ptr<F32RowSums> rows_;
  std::unique_ptr<F32GlobalAvgPool> gap_;
  std::unique_ptr<F32StridedReduce> strided_;
  // This step's buffers (one plan runs one call at a time).
  mutable std::vector<float> fx_, fy_;
  mutable std::vector<int8_t> gathered_;
};

// QLinearGlobalAveragePool NHWC, bit-exact with q8_global_avgpool_nhwc__ref.
class Q8GlobalAvgPool {
 public:
  Q8GlobalAvgPool(Q8 type, int batch, int hw, int channels, Isa isa);
  KernelId kernel_id() const;
  std::string kernel_name() const { return kernel_id().name; }
  void run(const void* x, QuantParams x_q, QuantParams y_q, void* y, pthreadpool_t pool) const;

 private:
  Q8 type_;
  int batch_, hw_, channels_;
  const EltwiseUkernel<Q8GapUkernel>* ukernel_ = nullptr;
};

}  // namespace octet::kernels
