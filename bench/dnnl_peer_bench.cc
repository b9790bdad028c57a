// oneDNN (Intel's library, Debian libdnnl-dev 2.6) on every conv and FC layer of
// bench/layer_shapes.h: the per-layer figure octet's own kernels are measured against.
// Batch 1, activations NHWC, weights in the layout oneDNN picks (reordered once, untimed),
// one thread, the default (highest) ISA. Only execute() is timed.
//   f32:  f32 src / weights / bias / dst.
//   u8s8: u8 src, s8 weights, s32 bias, u8 dst, per-output-channel output scales: the
//         arithmetic of octet's INT8 convs (no zero points, no post-ops, for either type).
// Names are dnnl/<model>/<layer>/<f32|u8s8>; the label is oneDNN's implementation name.
// Counters: GFLOPS or GOPS (2 per MAC) and pct_peak against the zmm peaks of
// bench/peak_values.h (FMA zmm for f32, vpdpbusd zmm for u8s8) measured in the same process.
//
//   build/bench/dnnl_peer_bench --benchmark_filter=resnet8-mlperf
#include <omp.h>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "bench/kernel_bench_util.h"
#include "bench/layer_shapes.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace {

using octet::bench::ConvLayer;
using octet::bench::FcLayer;
using octet::kernels::Conv2dShape;
using octet::kernels::Isa;
using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

enum class Precision { f32, u8s8 };

const char* precision_name(Precision p) { return p == Precision::f32 ? "f32" : "u8s8"; }

// Fills a oneDNN memory with values that keep every type in range and f32 away from denormals.
void fill_random(dnnl::memory& m, dt type, uint32_t seed) {
  std::mt19937 rng(seed);
  const size_t bytes = m.get_desc().get_size();
  void* data = m.get_data_handle();
  switch (type) {
    case dt::f32: {
      std::uniform_real_distribution<float> d(-1.0f, 1.0f);
      for (size_t i = 0; i < bytes / 4; ++i) static_cast<float*>(data)[i] = d(rng);
      break;
    }
    case dt::s32: {
      std::uniform_int_distribution<int32_t> d(-1000, 1000);
      for (size_t i = 0; i < bytes / 4; ++i) static_cast<int32_t*>(data)[i] = d(rng);
      break;
    }
    case dt::s8: {
      std::uniform_int_distribution<int> d(-127, 127);
      for (size_t i = 0; i < bytes; ++i) static_cast<int8_t*>(data)[i] = int8_t(d(rng));
      break;
    }
    default: {
      std::uniform_int_distribution<int> d(0, 255);
      for (size_t i = 0; i < bytes; ++i) static_cast<uint8_t*>(data)[i] = uint8_t(d(rng));
      break;
    }
  }
}

struct Types {
  dt src, weights, bias, dst;
};

Types types_of(Precision p) {
  if (p == Precision::f32) return {dt::f32, dt::f32, dt::f32, dt::f32};
  return {dt::u8, dt::s8, dt::s32, dt::u8};
}

// Per-output-channel requantization multipliers of the kind a calibrated model has.
std::vector<float> output_scales(int channels) {
  std::vector<float> scales(static_cast<size_t>(channels));
  for (int c = 0; c < channels; ++c) scales[size_t(c)] = 1.0f / float(1024 + 37 * c);
  return scales;
}

// A primitive ready to run: memories filled, weights already in oneDNN's chosen layout.
struct Prepared {
  dnnl::primitive primitive;
  std::unordered_map<int, dnnl::memory> args;
  std::string implementation;
};

// Weights arrive in the plain ONNX-like layout and are reordered once into the layout the
// primitive asked for (format_tag::any), as an inference engine does at load time.
dnnl::memory prepare_weights(const dnnl::engine& engine, dnnl::stream& stream, const dnnl::memory::desc& plain,
                             const dnnl::memory::desc& wanted, dt type) {
  dnnl::memory plain_memory(plain, engine);
  fill_random(plain_memory, type, 2);
  dnnl::memory packed(wanted, engine);
  dnnl::reorder(plain_memory, packed).execute(stream, plain_memory, packed);
  stream.wait();
  return packed;
}

// The primitive of `pd` with its memories: src and bias random, weights packed from random
// plain ones, dst allocated.
template <class Primitive>
Prepared prepare_primitive(const dnnl::engine& engine, dnnl::stream& stream,
                           const typename Primitive::primitive_desc& pd, const dnnl::memory::desc& plain_weights_md,
                           const Types& t) {
  Prepared out;
  out.primitive = Primitive(pd);
  out.implementation = pd.impl_info_str();
  dnnl::memory src(pd.src_desc(), engine), dst(pd.dst_desc(), engine), bias(pd.bias_desc(), engine);
  fill_random(src, t.src, 1);
  fill_random(bias, t.bias, 3);
  out.args = {{DNNL_ARG_SRC, src},
              {DNNL_ARG_WEIGHTS, prepare_weights(engine, stream, plain_weights_md, pd.weights_desc(), t.weights)},
              {DNNL_ARG_BIAS, bias},
              {DNNL_ARG_DST, dst}};
  return out;
}

Prepared prepare_conv(const dnnl::engine& engine, dnnl::stream& stream, const Conv2dShape& s, Precision p) {
  const Types t = types_of(p);
  const dnnl::memory::dim groups = s.groups;
  const dnnl::memory::dims src_dims = {s.batch, s.in_c, s.in_h, s.in_w};
  const dnnl::memory::dims dst_dims = {s.batch, s.out_c, s.out_h, s.out_w};
  const dnnl::memory::dims weight_dims =
      groups == 1 ? dnnl::memory::dims{s.out_c, s.in_c, s.kernel_h, s.kernel_w}
                  : dnnl::memory::dims{groups, s.out_c / groups, s.in_c / groups, s.kernel_h, s.kernel_w};
  // Conv2dShape implies the bottom/right pads by out_h/out_w; oneDNN wants them explicit, and
  // never negative (a stride-2 conv may leave the last input row unread, e.g. 1x1 s2 on 32).
  auto far_pad = [](int in, int out, int kernel, int stride, int dilation, int near_pad) {
    const int needed = (out - 1) * stride + (kernel - 1) * dilation + 1 - in - near_pad;
    return dnnl::memory::dim(needed > 0 ? needed : 0);
  };
  const dnnl::memory::dims strides = {s.stride_h, s.stride_w};
  const dnnl::memory::dims dilates = {s.dilation_h - 1, s.dilation_w - 1};
  const dnnl::memory::dims pad_l = {s.pad_top, s.pad_left};
  const dnnl::memory::dims pad_r = {far_pad(s.in_h, s.out_h, s.kernel_h, s.stride_h, s.dilation_h, s.pad_top),
                                    far_pad(s.in_w, s.out_w, s.kernel_w, s.stride_w, s.dilation_w, s.pad_left)};

  const dnnl::memory::desc src_md(src_dims, t.src, tag::nhwc);
  const dnnl::memory::desc dst_md(dst_dims, t.dst, tag::nhwc);
  const dnnl::memory::desc bias_md({s.out_c}, t.bias, tag::a);
  const dnnl::memory::desc any_weights_md(weight_dims, t.weights, tag::any);
  const dnnl::memory::desc plain_weights_md(weight_dims, t.weights, groups == 1 ? tag::oihw : tag::goihw);

  dnnl::primitive_attr attr;
  if (p == Precision::u8s8) attr.set_output_scales(1 << 1, output_scales(s.out_c));
  const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                             src_md, any_weights_md, bias_md, dst_md, strides, dilates, pad_l, pad_r);
  const dnnl::convolution_forward::primitive_desc pd(desc, attr, engine);

  return prepare_primitive<dnnl::convolution_forward>(engine, stream, pd, plain_weights_md, t);
}

Prepared prepare_fc(const dnnl::engine& engine, dnnl::stream& stream, const FcLayer& layer, Precision p) {
  const Types t = types_of(p);
  const dnnl::memory::desc src_md({1, layer.k}, t.src, tag::nc);
  const dnnl::memory::desc dst_md({1, layer.n}, t.dst, tag::nc);
  const dnnl::memory::desc bias_md({layer.n}, t.bias, tag::a);
  const dnnl::memory::desc any_weights_md({layer.n, layer.k}, t.weights, tag::any);
  const dnnl::memory::desc plain_weights_md({layer.n, layer.k}, t.weights, tag::oi);

  dnnl::primitive_attr attr;
  if (p == Precision::u8s8) attr.set_output_scales(1 << 1, output_scales(layer.n));
  const dnnl::inner_product_forward::desc desc(dnnl::prop_kind::forward_inference, src_md, any_weights_md, bias_md,
                                               dst_md);
  const dnnl::inner_product_forward::primitive_desc pd(desc, attr, engine);

  return prepare_primitive<dnnl::inner_product_forward>(engine, stream, pd, plain_weights_md, t);
}

// Times execute() only. GFLOPS/GOPS and pct_peak come from the loop's mean wall-clock time
// (plain numbers, not Google Benchmark rates, so they print without a "/s"); best_us is the
// fastest batch of kBatch calls, which a preemption on the shared machine rarely hits: it is
// the figure to compare with measured-anchors.md's "best of runs".
void run_timed(benchmark::State& state, Prepared& prepared, dnnl::stream& stream, int64_t macs, Precision p) {
  constexpr int kBatch = 8;
  double best_batch = 1e30;
  const auto start = std::chrono::steady_clock::now();
  while (state.KeepRunningBatch(kBatch)) {
    const auto batch_start = std::chrono::steady_clock::now();
    for (int i = 0; i < kBatch; ++i) {
      prepared.primitive.execute(stream, prepared.args);
      stream.wait();
    }
    best_batch = std::min(best_batch, std::chrono::duration<double>(std::chrono::steady_clock::now() - batch_start).count());
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (p == Precision::f32)
    octet::bench::set_rate_counters(state, octet::bench::Arithmetic::f32, Isa::avx512, macs, seconds);
  else
    octet::bench::set_rate_counters(state, octet::bench::Arithmetic::int8, Isa::avx512vnni, macs, seconds);
  state.counters["best_us"] = best_batch / kBatch * 1e6;
  state.SetLabel(prepared.implementation);
}

struct Context {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
};

Context& context() {
  static Context c;
  return c;
}

void register_benchmarks() {
  for (const ConvLayer& layer : octet::bench::conv_layers()) {
    for (Precision p : {Precision::f32, Precision::u8s8}) {
      const std::string name = std::string("dnnl/") + layer.model + "/" + layer.name + "/" + precision_name(p);
      const Conv2dShape shape = layer.shape;
      benchmark::RegisterBenchmark(name.c_str(), [shape, p](benchmark::State& state) {
        Prepared prepared = prepare_conv(context().engine, context().stream, shape, p);
        run_timed(state, prepared, context().stream, octet::bench::conv_macs(shape), p);
      })->UseRealTime();
    }
  }
  for (const FcLayer& layer : octet::bench::fc_layers()) {
    for (Precision p : {Precision::f32, Precision::u8s8}) {
      const std::string name = std::string("dnnl/") + layer.model + "/" + layer.name + "/" + precision_name(p);
      benchmark::RegisterBenchmark(name.c_str(), [layer, p](benchmark::State& state) {
        Prepared prepared = prepare_fc(context().engine, context().stream, layer, p);
        run_timed(state, prepared, context().stream, int64_t(layer.k) * layer.n, p);
      })->UseRealTime();
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Debian's oneDNN is built on OpenMP (DNNL_CPU_RUNTIME OMP): its thread count is OpenMP's.
  omp_set_num_threads(1);
  benchmark::AddCustomContext("dnnl_version", std::to_string(dnnl::version()->major) + "." +
                                                  std::to_string(dnnl::version()->minor) + "." +
                                                  std::to_string(dnnl::version()->patch));
  benchmark::AddCustomContext("dnnl_threads", std::to_string(omp_get_max_threads()));
  octet::bench::add_peak_context("peak_f32_zmm_gflops", octet::bench::peak_gflops(Isa::avx512));
  octet::bench::add_peak_context("peak_vnni_zmm_gops", octet::bench::peak_gops(Isa::avx512vnni));
  register_benchmarks();
  return octet::bench::run_benchmarks(argc, argv);
}
