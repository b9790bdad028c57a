#pragma once
// Helpers shared by the SIMD kernel tests: which microkernels a run tests (and the skip when it
// can test none), a thread pool owner, seeded FP32 data, the
// absolute-value inputs the FP32 error bounds are computed from, random fused activations and
// one way to print a conv shape in a failure message.
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <memory>
#include <random>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cache_budgets.h"
#include "kernels/isa.h"
#include "kernels/ref/activation.h"
#include "kernels/ref/conv2d.h"
#include "tests/util/skip_reasons.h"

namespace octet::kernels::testing {

struct PoolDeleter {
  void operator()(pthreadpool_t p) const { pthreadpool_destroy(p); }
};
using Pool = std::unique_ptr<std::remove_pointer_t<pthreadpool_t>, PoolDeleter>;

// Why this run of the suite leaves the kernels of `level` untested, or nullptr when it tests
// them. Either the CPU lacks the level, or OCTET_TEST_LEVELS_ABOVE=<level> says that an earlier
// run on a lesser CPU already tested every level that one includes: tools/arm/test.sh runs the
// suite under cortex-a72, then cortex-a76 and max only for the levels the previous CPU lacked
// (the same instructions emulated again would prove nothing new).
inline const char* untested_reason(Isa level) {
  static const std::optional<Isa> tested_before = [] () -> std::optional<Isa> {
    const char* env = std::getenv("OCTET_TEST_LEVELS_ABOVE");
    if (env == nullptr || *env == '\0') return std::nullopt;
    const std::optional<Isa> isa = parse_isa(env);
    if (!isa) {
      std::fprintf(stderr, "OCTET_TEST_LEVELS_ABOVE=%s is not a level of this build (%s)\n", env, isa_names().c_str());
      std::exit(2);
    }
    return isa;
  }();
  if (!isa_supported(level)) return "this CPU lacks it";
  if (tested_before && isa_allows(*tested_before, level)) return "tested by the run on a lesser CPU";
  return nullptr;
}

// runnable_isas() without the levels an earlier run tested (untested_reason).
inline std::vector<Isa> isas_under_test() {
  std::vector<Isa> out;
  for (Isa isa : runnable_isas())
    if (untested_reason(isa) == nullptr) out.push_back(isa);
  return out;
}

// kIsaNotOnCpu (tests/util/skip_reasons.h) starts (1) the line printed for each microkernel a
// sweep leaves out because this CPU lacks its level and (2) the message of a test skipped
// because no microkernel it sweeps runs here. tools/ci_tally.py lists both under "not tested on
// this machine" at the end of the CI log; any other skip fails CI. (Levels an earlier run on a
// lesser CPU tested, see untested_reason, are "tested on a lesser CPU".)
using ::octet::testing::kIsaNotOnCpu;
inline constexpr char kIsaTestedBefore[] = "ISA tested on a lesser CPU: ";

inline void print_untested(const char* kernel, Isa level, const char* why) {
  const bool lacks = !isa_supported(level);
  std::printf("%s%s %s (%s)\n", lacks ? kIsaNotOnCpu : kIsaTestedBefore, isa_name(level), kernel, why);
}

// Records a skip of the running test (it goes on, but reports skipped unless something fails)
// when a sweep has no microkernel to run. Called by every helper that lists the microkernels
// under test, so a sweep whose loop would run zero times can never pass.
// `tested_before`: some of the family's microkernels were left out because an earlier run on a
// lesser CPU tested them (OCTET_TEST_LEVELS_ABOVE), not because this CPU lacks their level.
inline void skip_when_none_run(size_t count, const std::string& family, bool tested_before = false) {
  if (count > 0) return;
  std::string levels;
  for (Isa isa : kAllIsas)
    if (isa != Isa::scalar && !isa_supported(isa)) levels += std::string(levels.empty() ? "" : ",") + isa_name(isa);
  if (tested_before) GTEST_SKIP() << kIsaTestedBefore << "no " << family << " microkernel left to test here";
  GTEST_SKIP() << kIsaNotOnCpu << (levels.empty() ? "none" : levels) << ": no " << family << " microkernel runs here";
}

// The entries of a microkernel list this run tests, each named by `name_of` (a GEMM list
// names its GEMM and IGEMM forms apart) and added to `ran`; the others are printed
// (print_untested). None at all skips the test, in the words of `family`.
template <class Entry, class NameOf>
std::vector<const Entry*> runnable_entries(std::span<const Entry> list, NameOf name_of, const std::string& family,
                                           std::set<std::string>& ran) {
  std::vector<const Entry*> out;
  bool tested_before = false;
  for (const Entry& k : list) {
    if (const char* why = untested_reason(k.isa)) {
      print_untested(name_of(k), k.isa, why);
      tested_before = tested_before || isa_supported(k.isa);
    } else {
      out.push_back(&k);
      ran.insert(name_of(k));
    }
  }
  skip_when_none_run(out.size(), family, tested_before);
  std::string names;
  for (const Entry* k : out) names += std::string(names.empty() ? "" : " ") + name_of(*k);
  ::testing::Test::RecordProperty("kernels_run", names);
  std::printf("microkernels under test: %s\n", names.c_str());
  return out;
}
template <class Entry, class NameOf>
std::vector<const Entry*> runnable_entries(std::span<const Entry> list, NameOf name_of, const std::string& family) {
  std::set<std::string> ran;
  return runnable_entries(list, name_of, family, ran);
}

// The same for a list whose entries carry `name` and `isa`; the family is the first name's
// stem ("f32_gemm" of "f32_gemm_6x16__avx2").
template <class Entry>
std::vector<const Entry*> runnable_entries(std::span<const Entry> list, std::set<std::string>& ran) {
  const std::string first = list.empty() ? "listed" : list.front().name;
  return runnable_entries(list, [](const Entry& k) { return k.name; }, first.substr(0, first.find("__")), ran);
}
template <class Entry>
std::vector<const Entry*> runnable_entries(std::span<const Entry> list) {
  std::set<std::string> ran;
  return runnable_entries(list, ran);
}

// Fills `v` from `rng`, uniform in [-1, 1) (one draw per element, in order).
// A depth whose packed FP32 weights of `n` columns and `ks` taps exceed this CPU's column-chunk
// budget (kernels/cache_budgets.h, a multiple of the L2, which is 0.5-2 MiB on the CPUs seen), so
// a test of the chunked walk chunks on every CPU. `rows` as f32_gemm_column_chunk takes it.
inline size_t f32_depth_over_chunk_budget(size_t n, size_t ks, size_t rows = SIZE_MAX) {
  const CacheBudgets& b = cache_budgets();
  const size_t budget = rows < n ? b.f32_weight_chunk_few_rows : b.f32_weight_chunk;
  return budget / (ks * n * sizeof(float)) * 5 / 4 + 8;
}

inline void fill_uniform(std::mt19937& rng, std::vector<float>& v) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& e : v) e = dist(rng);
}

// |v| element-wise: the ref kernel run on |x|, |w|, |b| gives sum|x*w| + |b| per output, the
// scale of the FP32 tolerance, computed independently of the kernel under test.
inline std::vector<float> absolute(std::vector<float> v) {
  for (float& e : v) e = std::fabs(e);
  return v;
}

// One of the activations the FP32 convs fuse, or none.
inline Activation random_activation(std::mt19937& rng) {
  switch (rng() % 9) {
    case 0: return Activation::relu();
    case 1: return Activation::clip(-0.5f, 0.75f);
    case 2: return Activation::clip(0.0f, 6.0f);
    case 3: return Activation::hard_swish();
    case 4: return Activation::silu();
    case 5: return Activation::hard_sigmoid(1.0f / 6.0f, 0.5f);
    case 6: return Activation::sigmoid();
    default: return Activation{};
  }
}

// Exact operands for checking that a fused residual is added before the clamp: x in {1, 2, 3},
// w in {-1, -2} and a bias of -1 make every conv output c negative (and exact in float); r is
// -2c + 0.5, -c / 2 or -c + 3 by turns, so c + r is positive where a Relu applied to c first
// would give r alone.
struct ClampOrderData {
  std::vector<float> x, w, b, c, r;
};
inline ClampOrderData clamp_order_data(const Conv2dShape& s) {
  ClampOrderData d;
  d.x.resize(size_t(s.batch) * s.in_h * s.in_w * s.in_c);
  d.w.resize(size_t(s.out_c) * s.in_c * s.kernel_h * s.kernel_w);
  for (size_t i = 0; i < d.x.size(); ++i) d.x[i] = float(1 + i % 3);
  for (size_t i = 0; i < d.w.size(); ++i) d.w[i] = -float(1 + i % 2);
  d.b.assign(size_t(s.out_c), -1.0f);
  d.c.resize(size_t(s.batch) * s.out_h * s.out_w * s.out_c);
  f32_conv2d_nhwc__ref(s, d.x.data(), d.w.data(), d.b.data(), Activation{}, d.c.data());
  d.r.resize(d.c.size());
  for (size_t i = 0; i < d.c.size(); ++i) {
    if (!(d.c[i] < 0.0f)) throw std::logic_error("clamp_order_data: a conv output is not negative");
    d.r[i] = i % 3 == 0 ? -2.0f * d.c[i] + 0.5f : i % 3 == 1 ? -0.5f * d.c[i] : -d.c[i] + 3.0f;
  }
  return d;
}

// One FP32 conv check's data: random x, w (s's grouped size), b and, with a residual, r from
// `seed` (x replaced by *given_x when set), the ref's act(conv(x) + r) and, from the ref on
// |x|, |w|, |b|, the tolerance of each output: 1.5 (1e-5 (sum|x*w| + |b| + |r|) + 1e-6).
struct F32ConvCheck {
  std::vector<float> x, w, b, r, expected, tolerance;
};
inline F32ConvCheck f32_conv_check(const Conv2dShape& s, const Activation& act, bool bias, bool residual,
                                   uint32_t seed, const std::vector<float>* given_x = nullptr) {
  std::mt19937 rng(seed);
  F32ConvCheck d;
  d.x.resize(size_t(s.batch) * s.in_h * s.in_w * s.in_c);
  d.w.resize(size_t(s.out_c) * (s.in_c / s.groups) * s.kernel_h * s.kernel_w);
  d.b.resize(size_t(s.out_c));
  fill_uniform(rng, d.x);
  fill_uniform(rng, d.w);
  fill_uniform(rng, d.b);
  if (given_x) d.x = *given_x;
  const size_t n = size_t(s.batch) * s.out_h * s.out_w * s.out_c;
  d.r.assign(n, 0.0f);
  if (residual) fill_uniform(rng, d.r);
  d.expected.resize(n);
  d.tolerance.resize(n);
  f32_conv2d_nhwc__ref(s, d.x.data(), d.w.data(), bias ? d.b.data() : nullptr, Activation{}, d.expected.data());
  const auto ax = absolute(d.x), aw = absolute(d.w), ab = absolute(d.b);
  f32_conv2d_nhwc__ref(s, ax.data(), aw.data(), bias ? ab.data() : nullptr, Activation{}, d.tolerance.data());
  for (size_t i = 0; i < n; ++i) {
    d.expected[i] = apply(act, d.expected[i] + d.r[i]);
    d.tolerance[i] = 1.5f * (1e-5f * (d.tolerance[i] + std::fabs(d.r[i])) + 1e-6f);
  }
  return d;
}

inline std::string describe(const Conv2dShape& s) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "N%d %dx%dx%d -> %dx%dx%d k%dx%d s%dx%d d%dx%d pad(t%d,l%d)", s.batch, s.in_h,
                s.in_w, s.in_c, s.out_h, s.out_w, s.out_c, s.kernel_h, s.kernel_w, s.stride_h, s.stride_w,
                s.dilation_h, s.dilation_w, s.pad_top, s.pad_left);
  return buf;
}

}  // namespace octet::kernels::testing
