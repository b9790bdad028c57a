#pragma once
// How the planner runs an ONNX op: shape inference, the layouts it wants, and the kernel call.
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <pthreadpool.h>

#include "core/ir.h"
#include "engine/layout.h"
#include "kernels/isa.h"
#include "kernels/kernel_id.h"

namespace octet::kernels {
class PackedCache;  // kernels/packed_cache.h
}  // namespace octet::kernels

namespace octet {

using Kernel = std::function<void()>;

// What an op sees of one node while it is being planned.
struct OpContext {
  const ir::Node& node;
  int64_t opset;
  std::vector<const TensorInfo*> in{};          // nullptr for an omitted optional input
  std::vector<const ir::TensorData*> in_const{};  // contents when the input is a constant
  kernels::Isa isa = kernels::Isa::scalar;  // the highest ISA build() may choose kernels for
  pthreadpool_t threadpool = nullptr;       // kernels split their work over it (nullptr: caller's thread)
  bool winograd = true;                     // FP32 3x3 stride-1 convs may use Winograd F(2x2, 3x3)
  // Bytes of every constant the plan holds (its weights): whether they stay in the L3 from one
  // run to the next decides how fast a weight-bound kernel streams them. 0: unknown.
  size_t model_weight_bytes = 0;
  // Where build() passes every driver that packs weights: the Session's cache, so that the
  // plans of every batch size share one packing (nullptr: each driver packs its own).
  kernels::PackedCache* packed_cache = nullptr;
  std::string* kernel_name = nullptr;       // where build() reports the kernel it chose
  bool* kernel_scalar = nullptr;            // and whether a part of it is a scalar reference
  std::string* fallback = nullptr;          // where build() reports why it did not take a SIMD kernel
  void* scratch = nullptr;                  // build(): the step's OpImpl::scratch_bytes, in the arena
  size_t scratch_size = 0;
  // build() of an op with OpImpl::strided_output: output 0's rows of its innermost memory
  // dimension are this many elements apart (it is a view into a Concat's output); 0: dense.
  int64_t out_row_stride = 0;
  // build() of an op with OpImpl::strided_input: input i's rows of its innermost memory dimension
  // are in_row_stride[i] elements apart (a view into a later Concat's output); 0 or absent: dense.
  std::vector<int64_t> in_row_stride{};
  // For each constant input, its contents had the batch been other_batch() of the planned one
  // (a plan folds shape arithmetic at both extents): the same pointer as in_const when they do
  // not depend on the batch, nullptr when unknown. Empty outside a plan (nothing depends on it).
  std::vector<const ir::TensorData*> in_const_at_other_batch{};

  bool has(size_t i) const { return i < in.size() && in[i] != nullptr; }
  const TensorInfo& info(size_t i) const;
  // Contents of an input that must be known at plan time (weights, shapes, axes).
  const ir::TensorData& constant(size_t i, const char* what) const;
  [[noreturn]] void fail(const std::string& msg) const;  // throws ir::Error naming the node
  // Input i is a constant whose contents depend on the batch extent (or may): a shape read with
  // Shape from an activation, and what was computed from it.
  bool follows_batch(size_t i) const;
  // build() names the kernel it chose (e.g. "f32_igemm_8x32__avx512"), for `octet info --kernels`,
  // with its scalar mark (kernels/kernel_id.h: a list row, or reference_kernel("...")).
  void report_kernel(kernels::KernelId kernel) const {
    if (kernel_name) *kernel_name = std::move(kernel.name);
    if (kernel_scalar) *kernel_scalar = kernel.scalar;
  }
  // build() says why it runs the reference kernel (shown beside it by `octet info --kernels`).
  void report_fallback(std::string why) const {
    if (fallback) *fallback = std::move(why);
  }
  // report_fallback(why), then no kernel: `return c.no_fast_kernel("...")` in a fast path.
  Kernel no_fast_kernel(std::string why) const {
    report_fallback(std::move(why));
    return {};
  }
};

// How a step treats the images of a batch, which sit on axis 0 of every activation: graph
// inputs carry them there, and a step that keeps them apart keeps them there.
enum class BatchUse : uint8_t {
  mixes_images,        // an output image depends on other images, or the images leave axis 0
  keeps_images_apart,  // image i of every output depends only on image i of the inputs, at any batch
  // As keeps_images_apart, but for a [min, max] over the whole batch: outputs without the images
  // (a range output, DynamicQuantizeLinear's scale and zero point) and scalar inputs computed
  // from one. A plan of such steps runs a batch's images in lockstep shares, whose
  // DynamicQuantizeLinears combine their ranges (engine/batch_ranges.h); never in slices.
  apart_but_batch_range,
};

// The second batch extent a plan folds its shape arithmetic at, besides the planned one, so an
// op can tell a constant that follows the batch (a Reshape to [Shape(x)[0], -1]) from a literal
// that happens to equal it (a Reshape to [1, -1] planned at batch 1). Far from the planned
// extent, so that a Min or Max against a small literal cannot make the two agree.
inline int64_t other_batch(int64_t batch) { return batch + 97; }

// The context an op would see at other_batch(): activation inputs with axis 0 there, constants
// with their contents there. known() is false when some constant's contents there are unknown.
class AtOtherBatch {
 public:
  explicit AtOtherBatch(const OpContext& c);
  AtOtherBatch(const AtOtherBatch&) = delete;
  AtOtherBatch& operator=(const AtOtherBatch&) = delete;
  bool known() const { return known_; }
  const OpContext& context() const { return ctx_; }

 private:
  std::vector<TensorInfo> infos_;
  OpContext ctx_;
  bool known_ = true;
};

struct OpImpl {
  // Layout a non-constant input must arrive in; nullopt accepts any.
  std::function<std::optional<Layout>(const OpContext&, size_t input)> want_layout;
  // Output dtypes, dims and layouts from the inputs (whose layouts are final by now).
  std::function<std::vector<TensorInfo>(const OpContext&)> infer;
  // The kernel call, with every buffer at its final address.
  std::function<Kernel(const OpContext&, std::span<const void* const> in, std::span<void* const> out)> build;
  // Computable from input shapes alone (Shape): folded at plan time even for activations.
  bool shape_only = false;
  // Multiply-accumulates per run, for reports (0 when not meaningful).
  std::function<int64_t(const OpContext&, const std::vector<TensorInfo>& out)> macs{};
  // Bytes of scratch the step uses while it runs (0: none), from its context (isa and
  // threadpool are set) and inferred outputs. The plan places it in the arena, live during
  // this step only: it shares memory with tensors dead by then and stays as warm in cache as
  // the activations around it, where a buffer of its own per step would be cold (MobileNetV2's
  // fused expand + depthwise steps ran 3-9% slower through their own buffers). 64-byte
  // aligned; build() finds it at OpContext::scratch.
  std::function<size_t(const OpContext&, const std::vector<TensorInfo>& out)> scratch_bytes{};
  // How a step of this op treats the images of a batch (BatchUse), from its context and inferred
  // outputs: Session runs a batch in slices only when every step keeps them apart. Unset, an op
  // mixes them: a new op is never sliced until someone has thought about it (a missing
  // declaration costs speed, a wrong "keeps apart" costs wrong answers). Steps folded at plan
  // time (constants, Shape) are not asked.
  std::function<BatchUse(const OpContext&, const std::vector<TensorInfo>& out)> batch_use{};
  // The non-constant inputs of the output's rank must share one layout (a binary op's fast
  // kernels walk both operands in the same order): where they differ, the planner hands the
  // others over in the layout of the largest (channels-last on a tie), through a relayout step
  // or an existing relayouted copy, instead of the op running a strided reference.
  bool inputs_share_layout = false;
  // batch_use reads constant inputs that follow the batch (OpContext::follows_batch) at both
  // extents, through AtOtherBatch (Reshape does); otherwise such an input makes a step mix images.
  bool batch_use_sees_batch_constants = false;
  // Inputs whose values the op plans on (Resize's roi and scales). A float graph input read
  // only at such positions is part of the session's plan key, like an integer input, and
  // arrives here as a constant of the run's values (Session::value_keyed_).
  std::vector<size_t> value_inputs{};
  // Ops whose output shape depends on their input values (NonZero, NonMaxSuppression, Compress,
  // Unique): the outputs, row-major, from the inputs' contents (every present input in
  // OpContext::in_const). A plan cannot hold such a step, its arena being sized before any value
  // is known: Session cuts the graph after it and runs it between the plans of two stages
  // (docs/kernels.md, Execution core, "Stages"). With constant inputs a plan folds it (value_shaped_op).
  std::function<std::vector<ir::TensorData>(const OpContext&)> outputs_from_values{};
  // Output 0 is input 0's bytes unchanged (Reshape, Flatten, Squeeze, Unsqueeze, Identity): the
  // plan may make it a view of the input (engine/plan_views.cc), and build() then gets the same
  // address for both.
  bool output_is_input = false;
  // The same decided per node from the planned layouts: true when output 0 (`y`) holds input 0's
  // (`x`) bytes at the same offsets (a Transpose that keeps the memory order, ConvNeXt's permute
  // of a channels-last map to [N, H, W, C] and back); build() must then accept one address for
  // both.
  std::function<bool(const ir::Node& node, const TensorInfo& x, const TensorInfo& y)> output_is_input_when{};
  // True when build() honours OpContext::out_row_stride for this step: the plan may then have it
  // write output 0 straight into its place in a Concat's output (engine/plan_views.cc).
  std::function<bool(const OpContext&)> strided_output{};
  // True when build() honours OpContext::in_row_stride for input `input` of this step: the plan
  // may then hand it a view with rows apart (DenseNet's Concats as the first channels of the
  // block's last one, engine/plan_views.cc).
  std::function<bool(const OpContext&, size_t input)> strided_input{};
};

// An op computed by outputs_from_values: infer and build fold it when its inputs are constants,
// and ask for a cut otherwise (Session never plans such a node with activation inputs).
OpImpl value_shaped_op(std::function<std::vector<ir::TensorData>(const OpContext&)> outputs_from_values);

// What a step of `impl` does with the images: its batch_use, with the rule above for constants
// that follow the batch.
BatchUse batch_use_of(const OpImpl& impl, const OpContext& c, const std::vector<TensorInfo>& out);

const OpImpl* find_op(const std::string& op_type);
// Every op type find_op knows, sorted (docs/ops.md and its probe table are built from it).
std::vector<std::string> registered_ops();

// Registration, one function per family (engine/ops/*.cc).
using OpTable = std::vector<std::pair<std::string, OpImpl>>;
void register_conv_ops(OpTable& t);
void register_conv_transpose_ops(OpTable& t);  // ConvTranspose (FP32; float inside a QDQ unit, as in ORT)
void register_pool_ops(OpTable& t);
void register_global_maxpool_op(OpTable& t);  // GlobalMaxPool (FP32, uint8, int8)
void register_where_op(OpTable& t);           // Where (every element type)
void register_pow_op(OpTable& t);             // Pow (float, double, int32, int64)
void register_compare_ops(OpTable& t);        // Equal ... LessOrEqual, And, Or, Xor, Not, IsNaN, IsInf, Sign, Shrink, Mod, Sum, Mean
void register_lrn_op(OpTable& t);             // LRN (FP32; float inside a QDQ unit, as in ORT)
void register_maxunpool_op(OpTable& t);       // MaxUnpool (FP32)
void register_elementwise_ops(OpTable& t);
void register_gemm_ops(OpTable& t);
void register_shape_ops(OpTable& t);
void register_transform_ops(OpTable& t);     // Transpose, ChannelShuffle, Slice, Split, Concat
void register_misc_ops(OpTable& t);
void register_reduce_more_ops(OpTable& t);  // ReduceL1/L2/SumSquare/LogSum/LogSumExp/Prod, LpNormalization
void register_norm_ops(OpTable& t);         // LayerNormalization
void register_group_norm_op(OpTable& t);    // GroupNorm (passes::fuse_group_norm), GroupNormalization
void register_quantize_ops(OpTable& t);      // QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, Cast
void register_qconv_ops(OpTable& t);         // QLinearConv, ConvInteger
void register_qgemm_ops(OpTable& t);         // QLinearMatMul, MatMulInteger, QGemm
void register_qelementwise_ops(OpTable& t);  // QLinearAdd/Mul/Sigmoid/Silu/GlobalAveragePool/AveragePool/ReduceMean
void register_se_ops(OpTable& t);            // SqueezeExcite (passes::fuse_squeeze_excitation)
void register_pwdw_ops(OpTable& t);          // PointwiseDepthwise (passes::fuse_pointwise_depthwise)
void register_qsoftmax_op(OpTable& t);       // QLinearSoftmax (com.microsoft)
void register_qbatchnorm_op(OpTable& t);     // QLinearBatchNormalization, QLinearBiasAdd (octet's own QDQ fusions)
void register_qgroup_norm_op(OpTable& t);    // QLinearGroupNorm (octet's own: passes::fuse_qdq_group_norm)
void register_qconcat_op(OpTable& t);        // QLinearConcat (com.microsoft)
void register_dynamic_ops(OpTable& t);       // ConvIntegerToFloat, MatMulIntegerToFloat (passes::fuse_dynamic_quantization)
void register_resize_ops(OpTable& t);        // Resize, Upsample (nearest, linear; FP32 and 8-bit)
void register_index_ops(OpTable& t);         // TopK, GatherElements, GatherND, Tile
void register_scatter_ops(OpTable& t);       // ScatterND, ScatterElements, Scatter
void register_generator_ops(OpTable& t);     // Range, Size, Trilu, EyeLike, OneHot
void register_sample_ops(OpTable& t);        // RoiAlign, GridSample (FP32)
void register_value_shaped_ops(OpTable& t);  // NonZero, Compress, Unique (output shapes from values)
void register_nms_op(OpTable& t);            // NonMaxSuppression

// Helpers shared by op files.
int64_t normalize_axis(const OpContext& c, int64_t axis, int64_t rank);
std::optional<Layout> any_layout(const OpContext&, size_t);
// want_layout of an op on one feature map (input 0) and weights or parameters: the map
// channels-last, the others as stored.
std::optional<Layout> channels_last_map(const OpContext&, size_t input);
std::optional<Layout> want_row_major(const OpContext&, size_t);
std::optional<Layout> want_channels_last(const OpContext&, size_t);

}  // namespace octet

namespace octet {
// Runs one op right away on inputs whose contents are known (constant folding) and
// returns its outputs in row-major order. `row_major_outs` is what impl.infer returned for
// ctx with every input row-major (inputs an op wants in another layout are relayouted here).
std::vector<ir::TensorData> evaluate_now(const OpImpl& impl, const OpContext& ctx,
                                         const std::vector<TensorInfo>& row_major_outs,
                                         const std::vector<const void*>& in);
}  // namespace octet
