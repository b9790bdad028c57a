// Element-wise and global-pooling microkernels (kernels/elementwise/eltwise_list.h) at the tensor shapes of
// the bundled models: one entry per (op x shape x microkernel this CPU supports), named
// eltwise/<model>/<op shape>/<kernel>, plus the scalar ref kernels at three shapes. The pick
// of the drivers for active_isa() is labelled "pick". These ops move data and do almost no
// arithmetic, so the counter is GBps: bytes read plus bytes written per second (a broadcast
// gate row counts once). One thread (pool = nullptr), wall-clock time, 64-byte aligned buffers.
//
//   build/bench/eltwise_bench --benchmark_filter='resnet8-mlperf'
#include <benchmark/benchmark.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/kernel_bench_util.h"
#include "kernels/elementwise/compare_list.h"
#include "kernels/elementwise/eltwise.h"
#include "kernels/elementwise/eltwise_list.h"
#include "kernels/isa.h"
#include "kernels/ref/compare.h"
#include "kernels/ref/elementwise.h"
#include "kernels/ref/layernorm.h"
#include "kernels/ref/minmax.h"
#include "kernels/ref/pool2d.h"
#include "kernels/ref/qelementwise.h"
#include "kernels/ref/qpool2d.h"

namespace {

using namespace octet::kernels;
using octet::bench::Buffer;

template <typename T>
Buffer<T> random_buffer(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-4.0f, 4.0f);
  Buffer<T> v(n);
  for (T& x : v) x = std::is_same_v<T, float> ? T(d(rng)) : T(rng());
  return v;
}

// A map [h][w][c] of one model, batch 1.
struct Map {
  const char* model;
  int h, w, c;
  std::string label(const char* op) const {
    return std::string(op) + " " + std::to_string(h) + "x" + std::to_string(w) + "x" + std::to_string(c);
  }
  size_t count() const { return size_t(h) * w * c; }
};

// Residual adds (same shape).
const std::vector<Map> kResidualAdds = {
    {"resnet8-mlperf", 32, 32, 16}, {"resnet8-mlperf", 16, 16, 32}, {"resnet8-mlperf", 8, 8, 64},
    {"resnet8", 28, 28, 16},        {"resnet8", 14, 14, 32},        {"resnet8", 7, 7, 64},
    {"tinynet", 28, 28, 24},        {"tinynet", 14, 14, 32},        {"tinynet", 7, 7, 48},
};
// Squeeze-excitation: GAP over the map, Sigmoid of the C gate values, map x gate.
const std::vector<Map> kSeMaps = {{"tinynet", 28, 28, 48},        {"tinynet", 14, 14, 72}, {"tinynet", 7, 7, 96},
                                  {"tinynet", 4, 4, 128},         {"efficientnet_b0", 56, 56, 96}};
// Other global average pools (the classifier heads) and activations after convs.
const std::vector<Map> kHeadPools = {{"resnet8-mlperf", 8, 8, 64}, {"resnet8", 7, 7, 64}, {"tinynet", 4, 4, 64}};
const std::vector<Map> kActivations = {{"resnet8-mlperf", 32, 32, 16}, {"resnet8-mlperf", 16, 16, 32},
                                       {"resnet8-mlperf", 8, 8, 64},   {"tinynet", 28, 28, 48},
                                       {"tinynet", 14, 14, 72},        {"tinynet", 7, 7, 96}};

// EfficientNet-B0's SiLU after its 1x1 expand conv (features.2.1) and an SE-sized tile.
const std::vector<Map> kEpilogueMaps = {{"efficientnet_b0", 56, 56, 144}, {"efficientnet_b0", 1, 4, 144}};

void report(benchmark::State& state, double bytes, bool pick) {
  state.counters["GBps"] = benchmark::Counter(bytes * double(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
  if (pick) state.SetLabel("pick");
}

void add_bench(const std::string& name, std::function<void(benchmark::State&)> fn) {
  benchmark::RegisterBenchmark(name.c_str(), fn)->UseRealTime()->Unit(benchmark::kMicrosecond);
}

std::string bench_name(const Map& m, const std::string& op_label, const std::string& kernel) {
  return std::string("eltwise/") + m.model + "/" + op_label + "/" + kernel;
}

template <class Fn>
bool is_pick(std::span<const EltwiseUkernel<Fn>> list, const EltwiseUkernel<Fn>& k) {
  return first_runnable(list, active_isa()) == &k;
}

// ---- binary: same shape (rows = 1) or the SE gate (rows = h*w, b a broadcast row) ----

void register_f32_binary(const Map& m, bool se) {
  const size_t rows = se ? size_t(m.h) * m.w : 1, cols = se ? size_t(m.c) : m.count();
  const double bytes = 4.0 * (2.0 * m.count() + (se ? m.c : m.count()));
  const std::string op = m.label(se ? "f32 mul gate" : "f32 add");
  const auto& list = se ? kF32MulUkernels : kF32AddUkernels;
  for (const auto& k : list) {
    if (!isa_supported(k.isa)) continue;
    const bool pick = is_pick(list, k);
    add_bench(bench_name(m, op, k.name), [=, &k](benchmark::State& state) {
      auto a = random_buffer<float>(m.count(), 1), b = random_buffer<float>(se ? m.c : m.count(), 2);
      Buffer<float> y(m.count());
      for (auto _ : state) {
        k.fn(rows, cols, a.data(), cols, b.data(), se ? 0 : cols, y.data());
        benchmark::DoNotOptimize(y.data());
      }
      report(state, bytes, pick);
    });
  }
}

template <class T>
void register_q8_binary(const Map& m, bool se) {
  const bool u8 = std::is_same_v<T, uint8_t>;
  const size_t rows = se ? size_t(m.h) * m.w : 1, cols = se ? size_t(m.c) : m.count();
  const double bytes = 2.0 * m.count() + (se ? m.c : m.count());
  const std::string op = m.label(se ? (u8 ? "qu8 mul gate" : "qs8 mul gate") : (u8 ? "qu8 add" : "qs8 add"));
  const QuantParams aq{0.0213f, u8 ? 128 : 0}, bq{0.0178f, u8 ? 3 : -5}, yq{0.0301f, u8 ? 100 : -20};
  const int32_t lo = qmin_of<T>(), hi = qmax_of<T>();
  if (se) {
    const auto& list = u8 ? kQu8MulUkernels : kQs8MulUkernels;
    for (const auto& k : list) {
      if (!isa_supported(k.isa)) continue;
      const bool pick = is_pick(list, k);
      add_bench(bench_name(m, op, k.name), [=, &k](benchmark::State& state) {
        auto a = random_buffer<T>(m.count(), 1), b = random_buffer<T>(size_t(m.c), 2);
        Buffer<T> y(m.count());
        const Q8MulParams p = q8_mul_params(aq, bq, yq, lo, hi);
        for (auto _ : state) {
          k.fn(rows, cols, a.data(), cols, b.data(), 0, y.data(), p);
          benchmark::DoNotOptimize(y.data());
        }
        report(state, bytes, pick);
      });
    }
  } else {
    const auto& list = u8 ? kQu8AddUkernels : kQs8AddUkernels;
    for (const auto& k : list) {
      if (!isa_supported(k.isa)) continue;
      const bool pick = is_pick(list, k);
      add_bench(bench_name(m, op, k.name), [=, &k](benchmark::State& state) {
        auto a = random_buffer<T>(m.count(), 1), b = random_buffer<T>(m.count(), 2);
        Buffer<T> y(m.count());
        const Q8AddParams p = q8_add_params(aq, bq, yq, lo, hi);
        for (auto _ : state) {
          k.fn(rows, cols, a.data(), cols, b.data(), cols, y.data(), p);
          benchmark::DoNotOptimize(y.data());
        }
        report(state, bytes, pick);
      });
    }
  }
}

// ---- global average pool: [h*w][c] -> [c] ----

// The orders (kernels/ref/pool2d.h): "gap" one sum in order, "gap4" MLAS's four position sums
// (GlobalAveragePool), "gapE" Eigen's packets (ReduceMean) of the image's rows from row 0.
void register_f32_gap(const Map& m) {
  const double bytes = 4.0 * (m.count() + m.c);
  for (const auto& k : kF32GapUkernels) {
    if (!isa_supported(k.isa)) continue;
    const bool pick = is_pick(kF32GapUkernels, k);
    for (GapOrder order : {GapOrder::sequential, GapOrder::mlas_lanes4, GapOrder::eigen_packets4}) {
      const char* op = order == GapOrder::sequential    ? "f32 gap"
                       : order == GapOrder::mlas_lanes4 ? "f32 gap4"
                                                        : "f32 gapE";
      add_bench(bench_name(m, m.label(op), k.name), [=, &k](benchmark::State& state) {
        auto x = random_buffer<float>(m.count(), 3);
        Buffer<float> y(size_t(m.c));
        for (auto _ : state) {
          k.fn(size_t(m.h) * m.w, size_t(m.c), x.data(), y.data(), order, 0);
          benchmark::DoNotOptimize(y.data());
        }
        report(state, bytes, pick);
      });
    }
  }
}

// Per-channel sums and sums of squares about a center (GroupNorm's statistics, one pass).
void register_f32_channel_moments(const Map& m) {
  const double bytes = 4.0 * (m.count() + m.c);
  for (const auto& k : kF32ChannelMomentsUkernels) {
    if (!isa_supported(k.isa)) continue;
    const bool pick = is_pick(kF32ChannelMomentsUkernels, k);
    add_bench(bench_name(m, m.label("f32 moments"), k.name), [=, &k](benchmark::State& state) {
      auto x = random_buffer<float>(m.count(), 3);
      Buffer<float> center(size_t(m.c));
      std::vector<double> sum(size_t(m.c)), sq(size_t(m.c));
      for (auto _ : state) {
        k.fn(size_t(m.h) * m.w, size_t(m.c), x.data(), center.data(), sum.data(), sq.data());
        benchmark::DoNotOptimize(sum.data());
      }
      report(state, bytes, pick);
    });
  }
}

template <class T>
void register_q8_gap(const Map& m) {
  const bool u8 = std::is_same_v<T, uint8_t>;
  const double bytes = double(m.count() + m.c);
  const auto& list = u8 ? kQu8GapUkernels : kQs8GapUkernels;
  for (const auto& k : list) {
    if (!isa_supported(k.isa)) continue;
    const bool pick = is_pick(list, k);
    add_bench(bench_name(m, m.label(u8 ? "qu8 gap" : "qs8 gap"), k.name), [=, &k](benchmark::State& state) {
      auto x = random_buffer<T>(m.count(), 3);
      Buffer<T> y(size_t(m.c));
      const Q8GapParams p = q8_gap_params(m.h * m.w, {0.05f, u8 ? 128 : 0}, {0.04f, u8 ? 120 : -3},
                                          u8 ? Q8::u8 : Q8::s8);
      for (auto _ : state) {
        k.fn(size_t(m.h) * m.w, size_t(m.c), x.data(), y.data(), p);
        benchmark::DoNotOptimize(y.data());
      }
      report(state, bytes, pick);
    });
  }
}

// ---- unary: Relu / Clip (f32_clamp) over a map, Sigmoid over an SE gate of C values ----

void register_f32_clamp(const Map& m) {
  const double bytes = 8.0 * m.count();
  for (const auto& k : kF32ClampUkernels) {
    if (!isa_supported(k.isa)) continue;
    const bool pick = is_pick(kF32ClampUkernels, k);
    add_bench(bench_name(m, m.label("f32 relu6"), k.name), [=, &k](benchmark::State& state) {
      auto x = random_buffer<float>(m.count(), 4);
      Buffer<float> y(m.count());
      for (auto _ : state) {
        k.fn(m.count(), x.data(), y.data(), 0.0f, 6.0f);
        benchmark::DoNotOptimize(y.data());
      }
      report(state, bytes, pick);
    });
  }
}

// ---- Where over a map: y = c ? a : b (b a run, or one value: a masked fill), the microkernels
// and the scalar reference ----

void register_f32_where(const Map& m) {
  for (size_t b_inc : {1, 0}) {
    const double bytes = (b_inc ? 13.0 : 9.0) * m.count();
    const std::string op = m.label(b_inc ? "f32 where" : "f32 where fill");
    auto run = [=](F32WhereUkernel fn, bool pick) {
      return [=](benchmark::State& state) {
        auto a = random_buffer<float>(m.count(), 6), b = random_buffer<float>(m.count(), 7);
        auto r = random_buffer<uint8_t>(m.count(), 8);
        Buffer<uint8_t> c(m.count());
        for (size_t i = 0; i < m.count(); ++i) c.data()[i] = r.data()[i] & 1;
        Buffer<float> y(m.count());
        for (auto _ : state) {
          fn(m.count(), c.data(), 1, a.data(), 1, b.data(), b_inc, y.data());
          benchmark::DoNotOptimize(y.data());
        }
        report(state, bytes, pick);
      };
    };
    for (const auto& k : kF32WhereUkernels)
      if (isa_supported(k.isa)) add_bench(bench_name(m, op, k.name), run(k.fn, is_pick(kF32WhereUkernels, k)));
    add_bench(bench_name(m, op, "f32_where__ref"), run(f32_where__ref, false));
  }
}

// Greater of two maps (bytes: 4 + 4 read, 1 written per element) and the Sum of three (12 read,
// 4 written), every level's kernel and the scalar reference (kernels/elementwise/compare_list.h).
void register_f32_compare_sum(const Map& m) {
  const std::string greater = m.label("f32 greater");
  auto compare = [=](F32CompareUkernel fn, bool pick) {
    return [=](benchmark::State& state) {
      auto a = random_buffer<float>(m.count(), 9), b = random_buffer<float>(m.count(), 10);
      Buffer<uint8_t> y(m.count());
      for (auto _ : state) {
        fn(m.count(), a.data(), 1, b.data(), 1, y.data());
        benchmark::DoNotOptimize(y.data());
      }
      report(state, 9.0 * double(m.count()), pick);
    };
  };
  for (const auto& k : kF32GreaterUkernels)
    if (isa_supported(k.isa)) add_bench(bench_name(m, greater, k.name), compare(k.fn, is_pick(kF32GreaterUkernels, k)));
  add_bench(bench_name(m, greater, "f32_greater__ref"), compare(f32_greater__ref, false));
  const std::string sum = m.label("f32 sum of 3");
  auto sum3 = [=](F32SumUkernel fn, bool pick) {
    return [=](benchmark::State& state) {
      auto a = random_buffer<float>(m.count(), 11), b = random_buffer<float>(m.count(), 12);
      auto c = random_buffer<float>(m.count(), 13);
      Buffer<float> y(m.count());
      const float* x[] = {a.data(), b.data(), c.data()};
      const size_t inc[] = {1, 1, 1};
      for (auto _ : state) {
        fn(m.count(), 3, x, inc, y.data(), 1.0f);
        benchmark::DoNotOptimize(y.data());
      }
      report(state, 16.0 * double(m.count()), pick);
    };
  };
  for (const auto& k : kF32SumUkernels)
    if (isa_supported(k.isa)) add_bench(bench_name(m, sum, k.name), sum3(k.fn, is_pick(kF32SumUkernels, k)));
  add_bench(bench_name(m, sum, "f32_sum__ref"), sum3(f32_sum__ref, false));
}

// Max of two and of three maps (bytes: 4 per operand read, 4 written per element), every level's
// kernel, the scalar reference, and the strided fold Max ran on before f32_max (one
// f32_extremum_strided__ref pass per input, input 0 copied through the first).
void register_f32_max(const Map& m) {
  for (size_t count : {2, 3}) {
    const std::string op = m.label(count == 2 ? "f32 max of 2" : "f32 max of 3");
    auto inputs = [=] {
      std::vector<Buffer<float>> v;
      for (size_t i = 0; i < count; ++i) v.push_back(random_buffer<float>(m.count(), 14 + unsigned(i)));
      return v;
    };
    auto run = [=](F32ExtremumUkernel fn, bool pick) {
      return [=](benchmark::State& state) {
        const auto in = inputs();
        Buffer<float> y(m.count());
        const float* x[] = {in[0].data(), in[1].data(), count > 2 ? in[2].data() : nullptr};
        const size_t inc[] = {1, 1, 1};
        for (auto _ : state) {
          fn(m.count(), count, x, inc, y.data());
          benchmark::DoNotOptimize(y.data());
        }
        report(state, 4.0 * double(count + 1) * double(m.count()), pick);
      };
    };
    for (const auto& k : kF32MaxUkernels)
      if (isa_supported(k.isa)) add_bench(bench_name(m, op, k.name), run(k.fn, is_pick(kF32MaxUkernels, k)));
    add_bench(bench_name(m, op, "f32_max__ref"), run(f32_max__ref, false));
    add_bench(bench_name(m, op, "f32_extremum_strided__ref"), [=](benchmark::State& state) {
      const auto in = inputs();
      Buffer<float> y(m.count());
      const int64_t dims[] = {int64_t(m.count())}, strides[] = {1};
      for (auto _ : state) {
        f32_extremum_strided__ref(Extremum::max, 1, dims, in[0].data(), strides, in[0].data(), strides, y.data());
        for (size_t i = 1; i < count; ++i)
          f32_extremum_strided__ref(Extremum::max, 1, dims, y.data(), strides, in[i].data(), strides, y.data());
        benchmark::DoNotOptimize(y.data());
      }
      report(state, 4.0 * double(count + 1) * double(m.count()), false);
    });
  }
}

void register_f32_sigmoid(const Map& m) {
  const double bytes = 8.0 * m.c;
  const std::string op = "f32 sigmoid " + std::to_string(m.c);
  for (const auto& k : kF32SigmoidUkernels) {
    if (!isa_supported(k.isa)) continue;
    const bool pick = is_pick(kF32SigmoidUkernels, k);
    add_bench(bench_name(m, op, k.name), [=, &k](benchmark::State& state) {
      auto x = random_buffer<float>(size_t(m.c), 5);
      Buffer<float> y(size_t(m.c));
      for (auto _ : state) {
        k.fn(size_t(m.c), x.data(), y.data());
        benchmark::DoNotOptimize(y.data());
      }
      report(state, bytes, pick);
    });
  }
  if (m.c == 48) {  // the ref at one shape
    add_bench(bench_name(m, op, "f32_unary__ref"), [=](benchmark::State& state) {
      auto x = random_buffer<float>(size_t(m.c), 5);
      Buffer<float> y(size_t(m.c));
      for (auto _ : state) {
        f32_unary__ref(Activation::sigmoid(), m.c, x.data(), y.data());
        benchmark::DoNotOptimize(y.data());
      }
      report(state, bytes, false);
    });
  }
}

// LayerNormalization over the channels of a channels-last map (ConvNeXt's LayerNorm2d: the
// stem's 56x56x96 and stage 2's 28x28x192, and 4 channels for Welford's short rows), every
// microkernel and the ref, with bias and without the Mean / InvStdDev outputs.
void register_f32_layernorm(const Map& m) {
  const size_t rows = size_t(m.h) * m.w, n = size_t(m.c);
  const double bytes = 8.0 * double(rows * n);
  const std::string op = m.label("f32 layernorm");
  auto run = [=](F32LayerNormUkernel fn) {
    return [=](benchmark::State& state) {
      auto x = random_buffer<float>(rows * n, 6), scale = random_buffer<float>(n, 7), bias = random_buffer<float>(n, 8);
      Buffer<float> y(rows * n);
      for (auto _ : state) {
        fn(rows, n, x.data(), scale.data(), bias.data(), 1e-6f, y.data(), nullptr, nullptr);
        benchmark::DoNotOptimize(y.data());
      }
      report(state, bytes, fn != f32_layernorm__ref && first_runnable(kF32LayerNormUkernels, active_isa())->fn == fn);
    };
  };
  for (const auto& k : kF32LayerNormUkernels)
    if (isa_supported(k.isa)) add_bench(bench_name(m, op, k.name), run(k.fn));
  add_bench(bench_name(m, op, "f32_layernorm__ref"), run(f32_layernorm__ref));
}

// The activations a conv epilogue runs as a second pass over its tile (F32Epilogue): SiLU,
// HardSwish, HardSigmoid and the two GELUs over a whole map.
void register_f32_epilogue_activations(const Map& m) {
  const double bytes = 8.0 * m.count();
  struct Row {
    const char* op;
    std::span<const EltwiseUkernel<F32ActUkernel>> list;
    Activation act;
  };
  for (const Row& row : {Row{"f32 silu", kF32SiluUkernels, Activation::silu()},
                         Row{"f32 hswish", kF32HardSwishUkernels, Activation::hard_swish()},
                         Row{"f32 hsigmoid", kF32HardSigmoidUkernels, Activation::hard_sigmoid(0.2f, 0.5f)},
                         Row{"f32 gelu", kF32GeluUkernels, Activation::gelu()},
                         Row{"f32 gelu_tanh", kF32GeluTanhUkernels, Activation::gelu_tanh()}}) {
    for (const auto& k : row.list) {
      if (!isa_supported(k.isa)) continue;
      const bool pick = is_pick(row.list, k);
      const Activation act = row.act;
      add_bench(bench_name(m, m.label(row.op), k.name), [=, &k](benchmark::State& state) {
        auto x = random_buffer<float>(m.count(), 6);
        Buffer<float> y(m.count());
        for (auto _ : state) {
          k.fn(m.count(), x.data(), y.data(), act.alpha, act.beta);
          benchmark::DoNotOptimize(y.data());
        }
        report(state, bytes, pick);
      });
    }
  }
}

// ---- the scalar refs at representative shapes ----

void register_refs() {
  const Map add{"resnet8-mlperf", 32, 32, 16};
  const int64_t dims1[1] = {int64_t(add.count())}, dense1[1] = {1};
  add_bench(bench_name(add, add.label("f32 add"), "f32_binary_strided__ref"), [=](benchmark::State& state) {
    auto a = random_buffer<float>(add.count(), 1), b = random_buffer<float>(add.count(), 2);
    Buffer<float> y(add.count());
    for (auto _ : state) {
      f32_binary_strided__ref(BinaryOp::add, 1, dims1, a.data(), dense1, b.data(), dense1, Activation{}, y.data());
      benchmark::DoNotOptimize(y.data());
    }
    report(state, 12.0 * add.count(), false);
  });
  add_bench(bench_name(add, add.label("qu8 add"), "q8_add_ratio_fma_strided__ref"), [=](benchmark::State& state) {
    auto a = random_buffer<uint8_t>(add.count(), 1), b = random_buffer<uint8_t>(add.count(), 2);
    Buffer<uint8_t> y(add.count());
    for (auto _ : state) {
      q8_add_ratio_fma_strided__ref(1, dims1, a.data(), dense1, {0.0213f, 128}, b.data(), dense1, {0.0178f, 3},
                                    {0.0301f, 100}, 0, 255, y.data());
      benchmark::DoNotOptimize(y.data());
    }
    report(state, 3.0 * add.count(), false);
  });
  const Map se{"tinynet", 28, 28, 48};
  const int64_t dims2[2] = {se.h * se.w, se.c}, a2[2] = {se.c, 1}, b2[2] = {0, 1};
  add_bench(bench_name(se, se.label("qu8 mul gate"), "q8_mul_ratio_strided__ref"), [=](benchmark::State& state) {
    auto a = random_buffer<uint8_t>(se.count(), 1), b = random_buffer<uint8_t>(size_t(se.c), 2);
    Buffer<uint8_t> y(se.count());
    for (auto _ : state) {
      q8_mul_ratio_strided__ref(2, dims2, a.data(), a2, {0.0213f, 128}, b.data(), b2, {0.0178f, 3}, {0.0301f, 100}, 0,
                                255, y.data());
      benchmark::DoNotOptimize(y.data());
    }
    report(state, 2.0 * se.count() + se.c, false);
  });
  add_bench(bench_name(se, se.label("qu8 gap"), "q8_global_avgpool_nhwc__ref"), [=](benchmark::State& state) {
    auto x = random_buffer<uint8_t>(se.count(), 3);
    Buffer<uint8_t> y(size_t(se.c));
    for (auto _ : state) {
      q8_global_avgpool_nhwc__ref(1, se.h * se.w, se.c, x.data(), {0.05f, 128}, {0.04f, 120}, y.data());
      benchmark::DoNotOptimize(y.data());
    }
    report(state, double(se.count() + se.c), false);
  });
}

// ---- the drivers on broadcasts the microkernels take only packed, and QLinearReduceMean ----
// Each at active_isa() (the pick) and at Isa::scalar (the strided reference), one thread.

struct BroadcastCase {
  const char* label;
  std::vector<int64_t> dims, a, b;  // strides in elements (0: broadcast)
  size_t a_size, b_size;
};

std::vector<BroadcastCase> broadcast_cases() {
  return {
      // [1,64,1,56] + [1,1,56,1]: both operands broadcast, rows of 56.
      {"both-sided 64x56x56", {64, 56, 56}, {56, 0, 1}, {0, 1, 0}, 64 * 56, 56},
      // The sweep's [2,3,4,5,6] + [3,1,5,1]: rows of 6 with a constant operand.
      {"sweep 2x3x4x5x6", {2, 3, 4, 5, 6}, {360, 120, 30, 6, 1}, {0, 5, 0, 1, 0}, 720, 15},
      // NHWC x + an NCHW operand of the same shape (a transposed read).
      {"transposed 56x56x64", {56, 56, 64}, {56 * 64, 64, 1}, {56, 1, 56 * 56}, 56 * 56 * 64, 56 * 56 * 64},
  };
}

void register_broadcast_drivers() {
  for (const BroadcastCase& c : broadcast_cases()) {
    size_t out = 1;
    for (int64_t d : c.dims) out *= size_t(d);
    const int rank = int(c.dims.size());
    for (Isa isa : {active_isa(), Isa::scalar}) {
      const F32Binary f32(BinaryOp::add, rank, c.dims.data(), c.a.data(), c.b.data(), isa);
      add_bench(std::string("eltwise/driver/f32 add ") + c.label + "/" + f32.kernel_name(),
                [c, out, rank, isa](benchmark::State& state) {
                  const F32Binary k(BinaryOp::add, rank, c.dims.data(), c.a.data(), c.b.data(), isa);
                  auto a = random_buffer<float>(c.a_size, 1), b = random_buffer<float>(c.b_size, 2);
                  Buffer<float> y(out);
                  for (auto _ : state) {
                    k.run(a.data(), b.data(), y.data(), nullptr);
                    benchmark::DoNotOptimize(y.data());
                  }
                  report(state, 4.0 * double(c.a_size + c.b_size + out), isa != Isa::scalar);
                });
      const Q8Binary q8(Q8Binary::Kind::add, Q8::u8, rank, c.dims.data(), c.a.data(), c.b.data(), isa);
      add_bench(std::string("eltwise/driver/qu8 add ") + c.label + "/" + q8.kernel_name(),
                [c, out, rank, isa](benchmark::State& state) {
                  const Q8Binary k(Q8Binary::Kind::add, Q8::u8, rank, c.dims.data(), c.a.data(), c.b.data(), isa);
                  auto a = random_buffer<uint8_t>(c.a_size, 1), b = random_buffer<uint8_t>(c.b_size, 2);
                  Buffer<uint8_t> y(out);
                  for (auto _ : state) {
                    k.run(a.data(), {0.0213f, 128}, b.data(), {0.0178f, 3}, {0.0301f, 100}, 0, 255, y.data(), nullptr);
                    benchmark::DoNotOptimize(y.data());
                  }
                  report(state, double(c.a_size + c.b_size + out), isa != Isa::scalar);
                });
    }
  }
}

struct MeanCase {
  const char* label;
  std::vector<int64_t> dims;
  std::vector<bool> reduced;
  bool channels_last = false;  // [N,C,H,W] stored NHWC, as a conv leaves it
};

void register_reduce_mean_drivers() {
  const std::vector<MeanCase> cases = {
      {"axes0.2 2x16x7x7", {2, 16, 7, 7}, {true, false, true, false}},
      {"axes-3.-1 2x16x7x7", {2, 16, 7, 7}, {false, true, false, true}},
      {"axes1 1x64x56x56", {1, 64, 56, 56}, {false, true, false, false}},
      {"axes2.3 1x64x56x56", {1, 64, 56, 56}, {false, false, true, true}},
      {"axes2.3 channels-last 1x64x56x56", {1, 64, 56, 56}, {false, false, true, true}, true},
  };
  for (const MeanCase& c : cases) {
    const int rank = int(c.dims.size());
    std::vector<int64_t> strides(c.dims.size(), 1);
    for (int d = rank - 2; d >= 0; --d) strides[size_t(d)] = strides[size_t(d) + 1] * c.dims[size_t(d) + 1];
    if (c.channels_last) {
      const int64_t ch = c.dims[1], h = c.dims[2], w = c.dims[3];
      strides = {h * w * ch, 1, w * ch, ch};
    }
    size_t count = 1, outputs = 1;
    for (int d = 0; d < rank; ++d) {
      count *= size_t(c.dims[size_t(d)]);
      if (!c.reduced[size_t(d)]) outputs *= size_t(c.dims[size_t(d)]);
    }
    std::shared_ptr<bool[]> flags(new bool[c.dims.size()]);  // vector<bool> has no data()
    for (size_t d = 0; d < c.dims.size(); ++d) flags[d] = c.reduced[d];
    for (Isa isa : {active_isa(), Isa::scalar}) {
      const Q8ReduceMean probe(Q8::u8, rank, c.dims.data(), strides.data(), flags.get(), isa);
      add_bench(std::string("eltwise/driver/qu8 reduce mean ") + c.label + "/" + probe.kernel_name(),
                [c, strides, flags, rank, count, outputs, isa](benchmark::State& state) {
                  const Q8ReduceMean k(Q8::u8, rank, c.dims.data(), strides.data(),
                                       flags.get(), isa);
                  auto x = random_buffer<uint8_t>(count, 3);
                  Buffer<uint8_t> y(outputs);
                  for (auto _ : state) {
                    k.run(x.data(), {0.05f, 128}, {0.04f, 120}, y.data(), nullptr);
                    benchmark::DoNotOptimize(y.data());
                  }
                  report(state, double(count + outputs), isa != Isa::scalar);
                });
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  for (const Map& m : kResidualAdds) {
    register_f32_binary(m, false);
    register_q8_binary<uint8_t>(m, false);
    register_q8_binary<int8_t>(m, false);
  }
  for (const Map& m : kSeMaps) {
    register_f32_gap(m);
    register_f32_channel_moments(m);
    register_q8_gap<uint8_t>(m);
    register_q8_gap<int8_t>(m);
    register_f32_sigmoid(m);
    register_f32_binary(m, true);
    register_q8_binary<uint8_t>(m, true);
    register_q8_binary<int8_t>(m, true);
  }
  for (const Map& m : kHeadPools) {
    register_f32_gap(m);
    register_q8_gap<uint8_t>(m);
    register_q8_gap<int8_t>(m);
  }
  for (const Map& m : kActivations) register_f32_clamp(m);
  for (const Map& m : kActivations) register_f32_where(m);
  for (const Map& m : kActivations) register_f32_compare_sum(m);
  register_f32_max({"tinynet", 28, 28, 48});
  for (const Map& m : kEpilogueMaps) register_f32_epilogue_activations(m);
  for (const Map& m : std::vector<Map>{{"convnext", 56, 56, 96}, {"convnext", 28, 28, 192}, {"convnext", 56, 56, 4}})
    register_f32_layernorm(m);
  register_refs();
  register_broadcast_drivers();
  register_reduce_mean_drivers();
  return octet::bench::run_benchmarks(argc, argv);
}
