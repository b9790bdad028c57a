// GroupNorm (octet's own op, FP32; passes::fuse_group_norm writes it for the chain torch exports:
// Reshape to [N, groups, -1], InstanceNormalization with unit scale and zero bias, Reshape back,
// Mul by gamma [C, 1, 1], Add of beta [C, 1, 1]), and ONNX's GroupNormalization (opset 18, 21)
// on the same kernels. Inputs x [N, C, spatial...], gamma [C], beta [C] (or [num_groups]:
// GroupNormalization before opset 21; the two mean the same when each group is one channel);
// attributes num_groups, epsilon and a fused activation (the SiLU that follows in timm's GN
// models). It runs on a channels-last map, where the chain made the planner relayout
// the map to row-major before the InstanceNormalization and back after the activation, and it
// reads the map three times (twice for the statistics, once for y = act((x - center) * a + b),
// chunk by chunk in the L1D) where the chain's seven steps each read it and wrote a copy.
//
// Statistics: per image and group, the mean and the variance about it from per-channel double
// sums (kernels::F32ChannelMoments): first about 0, then about the group's mean, with the
// corrected two-pass formula var = (S2 - S1^2 / n) / n. The pixels are cut into a fixed number
// of ranges whatever the thread count, so every thread count gives the same bits. Not ORT's
// rounding (its InstanceNormalization sums in float in Eigen's order): passes::fuse_group_norm
// fuses only float graphs, where the results need to be close, not bit-identical; a graph that
// quantizes keeps the chain, which rounds as ORT does.
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "engine/op_registry.h"
#include "engine/ops/batch_use.h"
#include "engine/ops/batchnorm_affine.h"
#include "engine/ops/fused_activation.h"
#include "engine/ops/norm_inputs.h"
#include "kernels/cache_budgets.h"
#include "kernels/elementwise/eltwise.h"

namespace octet {
namespace {

using kernels::Activation;

// Pixels a statistics range holds at least; at most kMaxRanges ranges an image.
constexpr int64_t kMinRangePixels = 256;
constexpr int64_t kMaxRanges = 16;

struct GroupNormShape {
  int64_t images, channels, pixels, groups;
};

GroupNormShape group_norm_shape(const OpContext& c) {
  const ir::Dims& d = c.info(0).dims;
  GroupNormShape s;
  s.images = d[0];
  s.channels = d[1];
  s.pixels = c.info(0).count() / std::max<int64_t>(1, s.images * s.channels);
  s.groups = c.node.attrs.i("num_groups");
  return s;
}

// A scale and bias of one value per group (ONNX's GroupNormalization before opset 21), not per
// channel.
bool per_group_params(const OpContext& c) {
  const ir::Dims& d = c.info(0).dims;
  const int64_t groups = c.node.attrs.i("num_groups", 0);
  return d.size() >= 2 && groups != d[1] && c.info(1).count() == groups && c.info(2).count() == groups;
}

OpImpl group_norm_op() {
  OpImpl op;
  op.want_layout = channels_last_map;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    const int64_t groups = c.node.attrs.i("num_groups", 0);
    if (per_group_params(c)) {
      ops::require_norm_inputs(c, "scale", "bias", groups, "group");
    } else {
      ops::require_channel_norm_inputs(c, "scale", "bias");
    }
    const ir::Dims& d = c.info(0).dims;
    if (groups <= 0 || d[1] % groups != 0)
      c.fail("num_groups " + std::to_string(groups) + " must divide the " + std::to_string(d[1]) + " channels");
    return {c.info(0)};
  };
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) { return ops::per_image_with_constants(c); };
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const GroupNormShape s = group_norm_shape(c);
    const float eps = c.node.attrs.f("epsilon", 1e-5f);
    auto x = static_cast<const float*>(in[0]);
    auto gamma = static_cast<const float*>(in[1]);
    auto beta = static_cast<const float*>(in[2]);
    auto y = static_cast<float*>(out[0]);
    if (s.images * s.channels * s.pixels == 0) return [] {};
    const int64_t channels = s.channels, pixels = s.pixels, images = s.images, groups = s.groups;
    auto moments = std::make_shared<const kernels::F32ChannelMoments>(size_t(channels), c.isa);
    const int64_t ranges = std::clamp<int64_t>(pixels / kMinRangePixels, 1, kMaxRanges);
    // The affine pass: chunks of whole pixels, x minus the center, times a, plus b (each laid out
    // flat over the chunk), then the activation, while the chunk is in the L1D (a sixth of it a
    // chunk, beside its three rows). x - center first: the center is the group's mean rounded to
    // float, within a factor of 2 of x wherever the spread is small against the mean, so the
    // difference is exact there, where x * a + (beta - mean * a) cancels two large products (a map
    // of mean 1000 and spread 0.01 lost 3e-3 of its unit-variance output that way).
    const int64_t chunk_pixels = std::clamp<int64_t>(
        int64_t(kernels::cache_sizes().l1d / 6) / int64_t(channels * sizeof(float)), 1, pixels);
    const int64_t chunks = (pixels + chunk_pixels - 1) / chunk_pixels;
    const int64_t tail_pixels = pixels - (chunks - 1) * chunk_pixels;
    auto binary = [&](kernels::BinaryOp kind, int64_t rows) {
      const int64_t dims[] = {rows * channels}, strides[] = {1};
      return std::make_shared<const kernels::F32Binary>(kind, 1, dims, strides, strides, c.isa);
    };
    struct Pass {
      std::shared_ptr<const kernels::F32Binary> sub, mul, add;
    };
    auto pass = [&](int64_t rows) {
      return Pass{binary(kernels::BinaryOp::sub, rows), binary(kernels::BinaryOp::mul, rows),
                  binary(kernels::BinaryOp::add, rows)};
    };
    const Pass whole = pass(chunk_pixels), tail = tail_pixels == chunk_pixels ? whole : pass(tail_pixels);
    const Activation act = ops::fused_activation(c.node);
    const bool by_group = per_group_params(c);
    auto activation =
        act.kind != kernels::ActKind::none ? std::make_shared<const kernels::F32Unary>(act.kind, c.isa) : nullptr;
    kernels::KernelId id = moments->kernel_id() + " + " + whole.sub->kernel_id() + " + " + whole.mul->kernel_id() +
                           " + " + whole.add->kernel_id();
    if (activation) id = id + "+" + activation->kernel_id();
    c.report_kernel(id);

    // Scratch of the plan's one call at a time: the ranges' sums, the groups' sums, the rows of
    // per-channel center, a and b, and those rows laid out flat over a chunk.
    struct Scratch {
      std::vector<double> sum, sum_sq, group_sum, group_sq;
      std::vector<float> rows, affine;
    };
    auto scratch = std::make_shared<Scratch>();
    scratch->sum.resize(size_t(ranges * channels));
    scratch->sum_sq.resize(size_t(ranges * channels));
    scratch->group_sum.resize(size_t(groups));
    scratch->group_sq.resize(size_t(groups));
    scratch->rows.resize(size_t(3 * channels));
    scratch->affine.resize(size_t(3 * chunk_pixels * channels));
    pthreadpool_t pool = c.threadpool;

    struct Stats {
      const kernels::F32ChannelMoments* moments;
      const float* x;  // the image
      const float* center;
      double *sum, *sum_sq;
      int64_t channels, pixels, ranges;
      static void range(void* context, size_t r) {
        const auto& t = *static_cast<const Stats*>(context);
        const int64_t first = t.pixels * int64_t(r) / t.ranges, last = t.pixels * int64_t(r + 1) / t.ranges;
        t.moments->run(size_t(last - first), t.x + first * t.channels, t.center, t.sum + int64_t(r) * t.channels,
                       t.sum_sq + int64_t(r) * t.channels);
      }
    };
    struct Apply {
      const float* x;
      float* y;
      const float *center, *a, *b;
      int64_t channels, chunk_pixels, chunks, tail_pixels;
      const Pass *whole, *tail;
      Activation act;
      const kernels::F32Unary* activation;
      static void chunk(void* context, size_t i) {
        const auto& t = *static_cast<const Apply*>(context);
        const bool last = int64_t(i) + 1 == t.chunks;
        const int64_t first = int64_t(i) * t.chunk_pixels;
        const int64_t n = (last ? t.tail_pixels : t.chunk_pixels) * t.channels;
        float* y = t.y + first * t.channels;
        const Pass& pass = last ? *t.tail : *t.whole;
        pass.sub->run(t.x + first * t.channels, t.center, y, nullptr);
        pass.mul->run(y, t.a, y, nullptr);
        pass.add->run(y, t.b, y, nullptr);
        if (t.activation) t.activation->run(t.act, n, y, y, nullptr);
      }
    };
    return [=] {
      Scratch& m = *scratch;
      const int64_t per_group = channels / groups;
      const double count = double(per_group) * double(pixels);
      std::vector<double>& group_sum = m.group_sum;
      std::vector<double>& group_sq = m.group_sq;
      // The ranges' sums of group g, channel by channel, range after range (a fixed order).
      auto gather = [&](std::vector<double>& out, const std::vector<double>& parts) {
        std::fill(out.begin(), out.end(), 0.0);
        for (int64_t r = 0; r < ranges; ++r)
          for (int64_t ch = 0; ch < channels; ++ch) out[size_t(ch / per_group)] += parts[size_t(r * channels + ch)];
      };
      float* center = m.rows.data();  // rows: center, a, b
      float* a = center + channels;
      float* b = a + channels;
      const size_t flat = size_t(chunk_pixels * channels);
      for (int64_t image = 0; image < images; ++image) {
        const float* xi = x + image * pixels * channels;
        Stats stats{moments.get(), xi, center, m.sum.data(), m.sum_sq.data(), channels, pixels, ranges};
        std::fill(center, center + channels, 0.0f);
        pthreadpool_parallelize_1d(pool, Stats::range, &stats, size_t(ranges), 0);
        gather(group_sum, m.sum);
        for (int64_t ch = 0; ch < channels; ++ch) center[ch] = float(group_sum[size_t(ch / per_group)] / count);
        pthreadpool_parallelize_1d(pool, Stats::range, &stats, size_t(ranges), 0);
        gather(group_sum, m.sum);
        gather(group_sq, m.sum_sq);
        // a = gamma / sqrt(var + eps), b = beta - (mean - center) * a.
        for (int64_t ch = 0; ch < channels; ++ch) {
          const size_t g = size_t(ch / per_group);
          const double shift = group_sum[g] / count;  // the mean's distance from its float center
          const double var = std::max(0.0, (group_sq[g] - group_sum[g] * shift) / count);
          const double inv_std = 1.0 / std::sqrt(var + double(eps));
          const size_t p = by_group ? g : size_t(ch);
          const double scale = inv_std * double(gamma[p]);
          a[ch] = float(scale);
          b[ch] = float(double(beta[p]) - shift * scale);
        }
        ops::channel_rows_over_chunk(m.rows.data(), 3, channels, flat, m.affine.data());
        const float* flat_rows = m.affine.data();
        Apply apply{xi,        y + image * pixels * channels, flat_rows, flat_rows + flat, flat_rows + 2 * flat,
                    channels,  chunk_pixels, chunks, tail_pixels, &whole, &tail, act, activation.get()};
        pthreadpool_parallelize_1d(pool, Apply::chunk, &apply, size_t(chunks), 0);
      }
    };
  };
  return op;
}

}  // namespace

void register_group_norm_op(OpTable& t) {
  t.emplace_back("GroupNorm", group_norm_op());
  t.emplace_back("GroupNormalization", group_norm_op());
}

}  // namespace octet
