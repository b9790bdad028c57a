#pragma once
// Graph rewrites applied once after loading, before any plan is built. Each returns how
// many nodes it changed, for `octet info`.
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/ir.h"

namespace octet::passes {

int remove_identities(ir::Graph& g);   // Identity and inference Dropout
// Pad whose pads are a constant of zeros (torch exports one before an AveragePool of padding 0,
// e.g. DenseNet's transitions): a copy that also made the planner relayout around it. After
// fold_constants, which makes the pads constant.
int remove_zero_pads(ir::Graph& g);
// A constant Pad by zeros of the spatial axes whose one reader is a Conv (its input X) or an
// AveragePool becomes that op's own padding (the pool counting the pads, as it counted the
// explicit zeros): torch writes Pad + AveragePool for count_include_pad pools (Inception-v3),
// TF exports Pad + Conv for "SAME" strides. ONNX Runtime's PadFusion does the same; unlike it,
// never into a MaxPool, whose implicit pads are -inf, not 0. After remove_zero_pads.
int fold_pads_into_windows(ir::Graph& g);
// Nodes whose inputs are all constants (Constant included), except ops in keep_ops.
int fold_constants(ir::Graph& g, const std::set<std::string>& keep_ops = {});
// QDQ node units (DequantizeLinear on the inputs, QuantizeLinear on the output) into the
// INT8 ops ONNX Runtime fuses them into, and octet's own table ops QLinearHardSwish /
// QLinearHardSigmoid: every row of core/int8_ops.cc with a fusion form. Relu/Clip made
// redundant by the output clamp removed; data movement run on the integers. engine/passes_qdq.cc.
int fuse_qdq(ir::Graph& g);
// DynamicQuantizeLinear -> ConvInteger / MatMulInteger -> Cast -> Mul(scales) [-> Add(bias)]
// into ConvIntegerToFloat / MatMulIntegerToFloat steps (engine/passes_dynamic.cc).
int fuse_dynamic_quantization(ir::Graph& g);
// com.microsoft.DynamicQuantizeMatMul -> DynamicQuantizeLinear + MatMulIntegerToFloat (always
// run: octet has no kernel of its own for the combined op).
int expand_dynamic_quantize_matmul(ir::Graph& g);
// A DynamicQuantizeLinear whose input comes from ConvIntegerToFloat, MatMulIntegerToFloat, Add
// or Mul reads its range from that step (a second output the step gathers while writing,
// engine/ops/range_output.h) instead of a pass of its own. Last: nothing may fuse after it.
int compute_ranges_in_producers(ir::Graph& g);
int fold_batchnorm(ir::Graph& g);      // BatchNormalization into the preceding Conv's weights and bias
// GELU written as Div/Mul, Erf (or the tanh form), Add, Mul, Mul into one Gelu node, and
// LayerNormalization written as ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add into
// one LayerNormalization node (engine/passes_decomposed.cc). Before fuse_activations.
int fuse_gelu(ir::Graph& g);
int fuse_layer_norm(ir::Graph& g);
// MatMul by a 2-D constant followed by Add of a constant bias row: the bias as the MatMul's
// third input (octet's own form, run as one GEMM with the bias in its epilogue).
int fuse_matmul_bias(ir::Graph& g);
// x * Sigmoid(x) on a tensor no step above took the SiLU into (GroupNorm's affine Add, an
// element-wise chain): the Sigmoid node computes it (fused_act "Silu": the sigmoid, then the
// multiply, ORT's two roundings) and the Mul goes. Returns the Muls removed.
int fuse_standalone_silu(ir::Graph& g);
int fuse_activations(ir::Graph& g);    // Relu / Clip / Sigmoid / HardSigmoid / HardSwish (or HardSigmoid+Mul) / SiLU (Sigmoid+Mul) / Gelu / Tanh into Conv, ConvTranspose, Gemm or an integer-to-float step
// GlobalAveragePool -> Conv 1x1 (+act) -> Conv 1x1 (+Sigmoid / HardSigmoid) -> Mul with the
// block's input: one SqueezeExcite node (engine/passes_se.cc). After fuse_activations.
int fuse_squeeze_excitation(ir::Graph& g);
// A 1x1 Conv read only by a depthwise Conv (an inverted residual's expand and depthwise
// layers): one PointwiseDepthwise node that keeps the wide tensor between them in a ring of
// rows in cache (engine/passes_pwdw.cc). After fuse_activations.
int fuse_pointwise_depthwise(ir::Graph& g);
// Reshape -> Transpose (rank 5, two inner axes swapped) -> Reshape, ShuffleNet's channel
// shuffle: one ChannelShuffle node (engine/passes_shuffle.cc).
int fuse_channel_shuffle(ir::Graph& g);
// Any other Reshape read only by a Transpose (with a perm): one ReshapeTranspose node, a single
// copy from a view of the input in its own layout (engine/passes_shuffle.cc). After the above.
int fuse_reshape_transpose(ir::Graph& g);
// QLinearSigmoid(x) times x (QLinearMul) into one QLinearSilu table lookup, bit-identical
// (engine/passes_qsilu.cc). After remove_unused, like the shuffle.
int fuse_qlinear_silu(ir::Graph& g);
// A QuantizeLinear read only by a DequantizeLinear of the same per-tensor scale and zero point
// (a QDQ model's float output) becomes one QuantizeDequantize step (engine/passes_fake_quantize.cc).
int fuse_quantize_dequantize(ir::Graph& g);
// DequantizeLinear -> element-wise float ops exact at every level (Erf, Relu, Neg, Abs, Add /
// Sub / Mul / Div by a scalar constant), each read only by the next -> QuantizeLinear, per-tensor
// 8-bit on both ends: one QLinearTable lookup, its table the nodes run on every byte value
// (engine/passes_float_chain_table.cc). After remove_unused, before fuse_conv_output_tables.
int fuse_qdq_float_chains(ir::Graph& g);
// DequantizeLinear -> BatchNormalization (constant parameters, any fused activation) ->
// QuantizeLinear, per-tensor 8-bit on both ends, each link read only by the next: one
// QLinearBatchNormalization step, the three steps' kernels chunk by chunk in the L1D, the same
// bits (engine/passes_qdq_batchnorm.cc). After fuse_activations and remove_unused.
int fuse_qdq_batchnorm(ir::Graph& g);
// An INT8 table lookup (QLinearSigmoid, QLinearHardSwish, QLinearHardSigmoid, QLinearLeakyRelu,
// QLinearSilu) read only from a QLinearConv's output into the conv, which looks its output up
// as it stores each tile (input 9: the lookup node run on every byte value, so the same bits;
// engine/passes_output_table.cc). After fuse_qlinear_silu.
int fuse_conv_output_tables(ir::Graph& g);
// A QLinearConcat input with its own scale or zero point, written by a QLinearConv nothing else
// reads: the conv looks its bytes up in the Concat's requantization table as it stores them
// (after its own table, if any), so the Concat copies that input as it is and the plan lets the
// conv write it in place (engine/passes_concat_tables.cc). After fuse_conv_output_tables.
int fuse_concat_requantization(ir::Graph& g);
int remove_unused(ir::Graph& g);       // nodes and constants nothing reads
// The activation read only from p's output (Relu, Clip with constant bounds, Sigmoid,
// HardSigmoid, HardSwish, LeakyRelu, Tanh, Gelu, SiLU as Sigmoid + Mul, or HardSwish as
// HardSigmoid(1/6, 0.5) + Mul) into p as
// "fused_act": p then writes what the activation wrote, and the activation is marked dead.
bool fuse_activation_after(ir::Graph& g, ir::Node& p, std::set<const ir::Node*>& dead);
// Whether two values have the same dtype and dims at every batch (the Session asks its plans).
using SameShape = std::function<bool(const std::string&, const std::string&)>;
// Conv -> Add (with a tensor of the conv output's shape) [-> activation] into the Conv, the
// other operand as its fourth input (engine/passes_residual.cc). Needs the shapes, so the
// Session runs it after optimize(), once it can plan; after every fusion of optimize().
int fuse_residual_adds(ir::Graph& g, const SameShape& same_shape);
// The dims of a value when they are the same at every batch but for axis 0 (the Session asks
// its plans); nothing otherwise.
using KnownDims = std::function<std::optional<ir::Dims>(const std::string&)>;
// Conv, QLinearConv, ConvInteger and ConvIntegerToFloat taps that read only padding at every
// output (a dilated 3x3 conv on a map smaller than its dilation) cropped from the kernel, pads
// adjusted: the same output, fewer multiply-adds (engine/passes_taps.cc). The node keeps its
// original kernel shape in kPrunedTapsAttr. Run by the Session, like fuse_residual_adds, on a
// graph already fused (the ONNX writer refuses it).
inline constexpr const char* kPrunedTapsAttr = "octet_taps_from";
int prune_dead_taps(ir::Graph& g, const KnownDims& dims_of);
// "taps 3x3 -> 1x1: the others read only padding" for a node prune_dead_taps cropped, else "".
std::string pruned_taps_note(const ir::Node& n);

// The dims of a value in each shape plan the Session asks (batch 1 and 2), or nothing when one
// lacks it.
using DimsAtBatches = std::function<std::optional<std::vector<ir::Dims>>(const std::string&)>;
// Readers of an Expand that are broadcasting element-wise ops (Add, Sub, Mul, Div, Pow, QLinearAdd,
// QLinearMul) and broadcast its input to the same output read that input instead; the Expand goes
// when nothing reads it (engine/passes_broadcast.cc). Run by the Session, like fuse_residual_adds.
// Returns the inputs rewired.
int drop_broadcast_expands(ir::Graph& g, const DimsAtBatches& dims_of);

// GroupNorm as torch exports it (Reshape [N, G, -1], InstanceNormalization of unit scale and zero
// bias, Reshape back, Mul gamma, Add beta) and the activation after it into one GroupNorm step on
// the channels-last map (engine/passes_group_norm.cc), in a graph that quantizes nothing.
// Session-run, with the shapes of its plans. Returns the chains fused.
int fuse_group_norm(ir::Graph& g, const DimsAtBatches& dims_of);
// The same chain in a QDQ graph, between a DequantizeLinear (of the 8-bit rows [N, G, L]) and a
// QuantizeLinear, each link read only by the next: one QLinearGroupNorm step (the five steps'
// float operations row by row, the same bits) and the Reshape back on its 8-bit output
// (engine/passes_group_norm.cc). Session-run after fuse_group_norm; off with fuse_qdq or
// fuse_group_norm. Returns the chains fused.
int fuse_qdq_group_norm(ir::Graph& g, const DimsAtBatches& dims_of);
// DequantizeLinear -> Add of a constant row along the last axis -> QuantizeLinear, per-tensor
// 8-bit on both ends, each link read only by the next, x's shape kept: one QLinearBiasAdd step
// (engine/ops/qbatchnorm_op.cc: the three steps' operations in registers, the same bits;
// engine/passes_qdq_batchnorm.cc). Session-run with the shapes of its plans, off with fuse_qdq.
int fuse_qdq_bias_add(ir::Graph& g, const DimsAtBatches& dims_of);

// A Mul and / or an Add or Sub by scalar float constants after a Conv or PointwiseDepthwise
// (after its fused activation) into the node, as ops::kScaleShiftAttr = [scale, shift]
// (engine/passes_scalar_affine.cc; ops::fused_activation reads it). Run by the Session after
// fuse_residual_adds, which must not see it: a residual Add is summed before the activation.
int fuse_scalar_affine(ir::Graph& g);

struct PassCount {
  std::string pass;
  int changed;
};
struct Options {
  bool fuse_qdq = true;          // off: a QDQ model runs every op in float between its Q/DQ pairs
  bool fuse_dynamic = true;      // off: a dynamic model runs ConvInteger, Cast, Mul, Add one by one
  bool fuse_activations = true;  // off: every activation tensor stays observable (calibration)
  bool fuse_decompositions = true;  // fuse_gelu, fuse_layer_norm; off: the graph keeps its opset's ops
  bool fuse_squeeze_excitation = true;  // needs fuse_activations
  bool fuse_pointwise_depthwise = true;  // needs fuse_activations
  bool fuse_channel_shuffle = true;     // off: the graph keeps ONNX's ops (it may be written to a file)
  bool fuse_residual_adds = true;       // needs fuse_activations; run by the Session (fuse_residual_adds)
  bool prune_dead_taps = true;          // run by the Session (prune_dead_taps)
  // A pass that removes a tensor the graph writes must be off in calibration's options
  // (calib/calibrate.cc, unfused()), whose observers read every tensor: the two below are.
  bool drop_broadcast_expands = true;   // run by the Session (drop_broadcast_expands)
  bool fuse_group_norm = true;          // needs fuse_decompositions; run by the Session
  bool fuse_scalar_affine = true;       // needs fuse_activations; run by the Session
};
// The default pipeline, in order.
std::vector<PassCount> optimize(ir::Graph& g, const Options& o = {});

}  // namespace octet::passes
