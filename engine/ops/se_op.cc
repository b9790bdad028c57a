// SqueezeExcite (made by passes::fuse_squeeze_excitation, FP32, NHWC):
//   pooled[n][c] = mean over H, W of x[n][.][.][c]
//   r[n][j]      = act(b1[j] + sum_c w1[j][c] * pooled[n][c])        (w1: [mid][C][1][1])
//   gate[n][c]   = gate_act(b2[c] + sum_j w2[c][j] * r[n][j])         (w2: [C][mid][1][1])
//   y[n][h][w][c] = x[n][h][w][c] * gate[n][c]
// The pooling and the scaling are the SIMD element-wise kernels and the two fully connected
// layers the FP32 GEMM (weights packed once, activations fused into its epilogue), on scratch
// the kernel owns. Those layers are not small: MobileNetV3-Large's last blocks have 960 x 240
// weights each, 1.8 MB to stream per image, which a plain loop (a serial chain of float adds
// the compiler may not reorder) took 0.5 ms for on an AVX2 core.
#include <memory>
#include <vector>

#include "engine/op_registry.h"
#include "engine/ops/batch_use.h"
#include "engine/ops/fused_activation.h"
#include "engine/ops/two_conv_inputs.h"
#include "kernels/elementwise/eltwise.h"
#include "kernels/fallback.h"
#include "kernels/gemm/f32_gemm.h"
#include "kernels/ref/gemm.h"

namespace octet {
namespace {

using ops::kB1;
using ops::kB2;
using ops::kW1;
using ops::kW2;
using ops::kX;

struct SeShape {
  int n, c, hw, mid;
};

SeShape se_shape(const OpContext& c) {
  const TensorInfo& x = c.info(kX);
  if (x.dtype != ir::DType::f32 || x.dims.size() != 4) c.fail("x must be a float32 NCHW tensor, got " + ir::dims_str(x.dims));
  const ir::Dims& w1 = c.info(kW1).dims;
  const ir::Dims& w2 = c.info(kW2).dims;
  SeShape s{int(x.dims[0]), int(x.dims[1]), int(x.dims[2] * x.dims[3]), int(w1.at(0))};
  if (w1.size() != 4 || w1[1] != s.c || w2.size() != 4 || w2[0] != s.c || w2[1] != s.mid)
    c.fail("weights " + ir::dims_str(w1) + " and " + ir::dims_str(w2) + " do not fit " + std::to_string(s.c) +
           " channels");
  return s;
}

Kernel build_se(const OpContext& c, std::span<const void* const> in, std::span<void* const> out) {
  const SeShape s = se_shape(c);
  const kernels::Activation act = ops::fused_activation(c.node);
  const kernels::Activation gate_act = ops::fused_activation(c.node, "gate_act", "gate_act_params");
  // The pooling as ORT's GlobalAveragePool sums it (the pattern's usual pool).
  auto pool = std::make_shared<kernels::F32GlobalAvgPool>(s.n, s.hw, s.c, kernels::GapOrder::mlas_lanes4, c.isa);
  const int64_t dims[3] = {s.n, s.hw, s.c};
  const int64_t x_strides[3] = {int64_t(s.hw) * s.c, s.c, 1};
  const int64_t gate_strides[3] = {s.c, 0, 1};
  auto scale = std::make_shared<kernels::F32Binary>(kernels::BinaryOp::mul, 3, dims, x_strides, gate_strides, c.isa);
  // pooled [n][c], reduced [n][mid], gate [n][c]: allocated here, reused by every run.
  auto scratch = std::make_shared<std::vector<float>>(size_t(s.n) * (2 * s.c + s.mid));
  const ops::TwoConvData d = ops::two_conv_data(c, in);
  const float *x = d.x, *w1 = d.w1, *b1 = d.b1, *w2 = d.w2, *b2 = d.b2;
  auto y = static_cast<float*>(out[0]);
  pthreadpool_t threads = c.threadpool;

  // w1 is [mid][C] and w2 [C][mid] (1x1 conv weights): B transposed for both GEMMs.
  std::shared_ptr<kernels::F32Gemm> reduce, expand;
  if (c.isa == kernels::Isa::scalar) {
    c.report_fallback("--isa scalar");
  } else {
    auto fc1 = kernels::make_fast<kernels::F32Gemm>(s.c, s.mid, w1, true, b1, act, c.isa, c.packed_cache);
    auto fc2 = kernels::make_fast<kernels::F32Gemm>(s.mid, s.c, w2, true, b2, gate_act, c.isa, c.packed_cache);
    if (fc1 && fc2) {
      reduce = fc1.driver;
      expand = fc2.driver;
    } else {
      c.report_fallback(fc1 ? fc2.why_not : fc1.why_not);
    }
  }
  const kernels::KernelId fc_name = reduce ? reduce->kernel_id() : kernels::reference_kernel("f32_gemm__ref");
  c.report_kernel("se(" + pool->kernel_id() + ", " + fc_name + ", " + scale->kernel_id() + ")");
  // The reference GEMMs: [n][C] x w1^T + b1 -> [n][mid], [n][mid] x w2^T + b2 -> [n][C].
  kernels::GemmShape ref1, ref2;
  ref1.m = ref2.m = s.n;
  ref1.k = ref2.n = s.c;
  ref1.n = ref2.k = s.mid;
  ref1.trans_b = ref2.trans_b = true;
  return [=] {
    float* pooled = scratch->data();
    float* reduced = pooled + size_t(s.n) * s.c;
    float* gate = reduced + size_t(s.n) * s.mid;
    pool->run(x, pooled, threads);
    if (reduce) {
      reduce->run(s.n, pooled, reduced, threads);
      expand->run(s.n, reduced, gate, threads);
    } else {
      kernels::f32_gemm__ref(ref1, 1.0f, pooled, w1, 1.0f, b1, 0, 1, act, reduced);
      kernels::f32_gemm__ref(ref2, 1.0f, reduced, w2, 1.0f, b2, 0, 1, gate_act, gate);
    }
    scale->run(x, gate, y, threads);
  };
}

}  // namespace

void register_se_ops(OpTable& t) {
  OpImpl se;
  se.want_layout = channels_last_map;
  se.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    se_shape(c);
    ops::require_constant_weights(c);
    return {{ir::DType::f32, c.info(kX).dims, Layout::channels_last}};
  };
  se.build = build_se;
  se.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) { return ops::per_image_with_constants(c); };  // pools, gates and scales each image alone
  se.macs = [](const OpContext& c, const std::vector<TensorInfo>&) {
    const SeShape s = se_shape(c);
    return int64_t(s.n) * (2 * int64_t(s.c) * s.mid + 2 * int64_t(s.c) * s.hw);  // FCs + pool + scale
  };
  t.emplace_back("SqueezeExcite", se);
}

}  // namespace octet
