#pragma once
// How the planner runs an ONNX op: shape inference, the layouts it wants, and the kernel call.
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <pthreadpool.h>

#include "engine/ir.h"
#include "engine/layout.h"
#include "kernels/isa.h"

namespace octet {

using Kernel = std::function<void()>;

// What an op sees of one node while it is being planned.
struct OpContext {
  const ir::Node& node;
  int64_t opset;
  std::vector<const TensorInfo*> in;            // nullptr for an omitted optional input
  std::vector<const ir::TensorData*> in_const;  // contents when the input is a constant
  kernels::Isa isa = kernels::Isa::scalar;  // the highest ISA build() may choose kernels for
  pthreadpool_t threadpool = nullptr;       // kernels split their work over it (nullptr: caller's thread)
  bool winograd = true;                     // FP32 3x3 stride-1 convs may use Winograd F(2x2, 3x3)
  std::string* kernel_name = nullptr;       // where build() reports the kernel it chose
  std::string* fallback = nullptr;          // where build() reports why it did not take a SIMD kernel

  bool has(size_t i) const { return i < in.size() && in[i] != nullptr; }
  const TensorInfo& info(size_t i) const;
  // Contents of an input that must be known at plan time (weights, shapes, axes).
  const ir::TensorData& constant(size_t i, const char* what) const;
  [[noreturn]] void fail(const std::string& msg) const;  // throws ir::Error naming the node
  // build() names the kernel it chose (e.g. "f32_igemm_8x32__avx512"), for `octet info --kernels`.
  void report_kernel(std::string name) const {
    if (kernel_name) *kernel_name = std::move(name);
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
  std::function<int64_t(const OpContext&, const std::vector<TensorInfo>& out)> macs;
};

const OpImpl* find_op(const std::string& op_type);

// Registration, one function per family (engine/ops/*.cc).
using OpTable = std::vector<std::pair<std::string, OpImpl>>;
void register_conv_ops(OpTable& t);
void register_pool_ops(OpTable& t);
void register_elementwise_ops(OpTable& t);
void register_gemm_ops(OpTable& t);
void register_shape_ops(OpTable& t);
void register_transform_ops(OpTable& t);     // Transpose, Slice, Split, Concat
void register_misc_ops(OpTable& t);
void register_quantize_ops(OpTable& t);      // QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, Cast
void register_qconv_ops(OpTable& t);         // QLinearConv, ConvInteger
void register_qgemm_ops(OpTable& t);         // QLinearMatMul, MatMulInteger, QGemm
void register_qelementwise_ops(OpTable& t);  // QLinearAdd/Mul/Sigmoid/GlobalAveragePool/AveragePool/ReduceMean
void register_se_ops(OpTable& t);            // SqueezeExcite (passes::fuse_squeeze_excitation)
void register_qsoftmax_op(OpTable& t);       // QLinearSoftmax (com.microsoft)
void register_qconcat_op(OpTable& t);        // QLinearConcat (com.microsoft)
void register_dynamic_ops(OpTable& t);       // ConvIntegerToFloat, MatMulIntegerToFloat (passes::fuse_dynamic_quantization)

// Helpers shared by op files.
int64_t normalize_axis(const OpContext& c, int64_t axis, int64_t rank);
std::optional<Layout> any_layout(const OpContext&, size_t);
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
