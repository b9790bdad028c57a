// The indexing ops of detector post-processing, one-op models through a Session (plan made
// once, the run timed): TopK k = 100 of 8400 scores (YOLOv8's candidates at 640x640),
// GatherElements of the boxes it picks, Tile of a contiguous run, a QDQ Trilu. And the selection choice
// inside TopK: ORT's heap of k (what the kernel does while k is small against the axis, bit for
// bit ORT's choices even with NaN) against std::partial_sort (the kernel's heap before), std::
// nth_element + sort of the k (ORT's choice when k is large against the axis) and a full sort,
// on the same scores.
//
//   build/bench/index_ops_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <random>

#include "engine/ops/topk_heap.h"
#include "engine/session.h"
#include "tests/util/onnx_builder.h"
#include "tests/util/qdq_patterns.h"

namespace {

using octet::Session;
using octet::ir::TensorData;
using octet::testing::ElemType;
using octet::testing::OnnxBuilder;

std::vector<float> random_scores(int64_t n) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = u(rng);
  return v;
}

void run_model(benchmark::State& state, OnnxBuilder& b, const std::string& name, std::vector<TensorData> inputs) {
  const std::string path = (std::filesystem::temp_directory_path() / (name + ".onnx")).string();
  b.save(path);
  Session s = Session::load(path);
  s.run(inputs);
  for (auto _ : state) benchmark::DoNotOptimize(s.run(inputs));
  std::filesystem::remove(path);
}

// sorted = 0 skips the heap's emptying or the sort after nth_element (ORT's order either way).
void BM_TopK(benchmark::State& state) {
  const int64_t n = state.range(0), k = state.range(1), sorted = state.range(2);
  OnnxBuilder b(13);
  auto y = b.node_multi("TopK", {b.input("x", {1, n}), b.initializer_i64("", {1}, {k})}, 2, {{"sorted", sorted}});
  b.output(y[0]);
  b.output(y[1], ElemType::s64);
  run_model(state, b, "bench_topk", {TensorData::f32({1, n}, random_scores(n))});
}
BENCHMARK(BM_TopK)
    ->ArgNames({"N", "k", "sorted"})
    ->Args({8400, 100, 1})
    ->Args({8400, 1000, 1})
    ->Args({8400, 1, 1})
    ->Args({1000, 5, 1})
    ->Args({8400, 100, 0})
    ->Args({8400, 1000, 0})
    ->Unit(benchmark::kMicrosecond);

void BM_GatherElements(benchmark::State& state) {
  const int64_t n = state.range(0), k = state.range(1);
  OnnxBuilder b(13);
  std::vector<int64_t> idx(size_t(k * 4));
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = int64_t(i * 83 % size_t(n));
  b.output(b.node("GatherElements", {b.input("x", {1, n, 4}), b.initializer_i64("", {1, k, 4}, idx)}, {{"axis", int64_t(1)}}));
  run_model(state, b, "bench_gather_elements", {TensorData::f32({1, n, 4}, random_scores(n * 4))});
}
BENCHMARK(BM_GatherElements)->ArgNames({"N", "k"})->Args({8400, 100})->Args({8400, 8400})->Unit(benchmark::kMicrosecond);

void BM_Tile(benchmark::State& state) {
  OnnxBuilder b(13);
  b.output(b.node("Tile", {b.input("x", {1, 64, 20, 20}), b.initializer_i64("", {4}, {2, 1, 2, 2})}));
  run_model(state, b, "bench_tile", {TensorData::f32({1, 64, 20, 20}, random_scores(64 * 400))});
}
BENCHMARK(BM_Tile)->Unit(benchmark::kMicrosecond);

// A QDQ unit around Trilu (a causal mask's triangle of a [16, 256, 256] map): DQ -> Trilu -> Q,
// which octet runs on the codes (Trilu filling the zero point's code) since 2026-11-30, in float
// between the pair before. Input and output float, so Q first and DQ last are timed too.
void BM_TriluQdq(benchmark::State& state) {
  OnnxBuilder b(14);
  const octet::testing::QParams q{1.0f / 64, 128, ElemType::u8};
  auto x = octet::testing::qdq(b, b.input("x", {16, 256, 256}), q);
  b.output(octet::testing::qdq(b, b.node("Trilu", {x}), q));
  run_model(state, b, "bench_trilu_qdq", {TensorData::f32({16, 256, 256}, random_scores(16 * 256 * 256))});
}
BENCHMARK(BM_TriluQdq)->Unit(benchmark::kMicrosecond);

// ---- The selection inside TopK, on the bare scores ----

template <class Select>
void select_bench(benchmark::State& state, Select select) {
  const int64_t n = state.range(0), k = state.range(1);
  const std::vector<float> v = random_scores(n);
  std::vector<int64_t> order(static_cast<size_t>(n));
  auto before = [&v](int64_t a, int64_t b) { return v[size_t(a)] > v[size_t(b)] || (v[size_t(a)] == v[size_t(b)] && a < b); };
  for (auto _ : state) {
    std::iota(order.begin(), order.end(), 0);
    select(order, k, before);
    benchmark::DoNotOptimize(order.data());
  }
}

void BM_SelectPartialSort(benchmark::State& state) {
  select_bench(state, [](auto& o, int64_t k, auto& cmp) { std::partial_sort(o.begin(), o.begin() + k, o.end(), cmp); });
}
void BM_SelectNthElementThenSort(benchmark::State& state) {
  select_bench(state, [](auto& o, int64_t k, auto& cmp) {
    std::nth_element(o.begin(), o.begin() + (k - 1), o.end(), cmp);
    std::sort(o.begin(), o.begin() + k, cmp);
  });
}
// ORT's heap (engine/ops/topk_heap.h). `better` may be the full comparison here: a later index
// is never before an earlier one of equal value.
void BM_SelectOrtHeap(benchmark::State& state) {
  select_bench(state, [](auto& o, int64_t k, auto& cmp) {
    octet::ops::topk_heap_select(int64_t(o.size()), k, o.data(), o.data(), cmp, cmp);
  });
}
void BM_SelectFullSort(benchmark::State& state) {
  select_bench(state, [](auto& o, int64_t, auto& cmp) { std::sort(o.begin(), o.end(), cmp); });
}
BENCHMARK(BM_SelectPartialSort)->ArgNames({"N", "k"})->Args({8400, 100})->Args({8400, 1000})->Args({1000, 5})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SelectNthElementThenSort)->ArgNames({"N", "k"})->Args({8400, 100})->Args({8400, 1000})->Args({1000, 5})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SelectOrtHeap)->ArgNames({"N", "k"})->Args({8400, 100})->Args({8400, 1000})->Args({1000, 5})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SelectFullSort)->ArgNames({"N", "k"})->Args({8400, 100})->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
