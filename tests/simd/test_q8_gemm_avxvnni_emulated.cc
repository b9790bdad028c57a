// The VEX AVX-VNNI INT8 IGEMM microkernels through their emulated copy
// (q8_gemm__avxvnni_emulated.cc: the same source with vpdpbusd done in AVX2), so their tile
// loop, K tails and epilogue are tested on CPUs without AVX-VNNI. Each tile call is checked
// bit-exact against a scalar computation of the contract in kernels/q8_gemm_list.h, made here
// from the unpacked weights and the bytes the row pointers reach; the weights go through the
// entry's own packing function, as in the drivers. Where the CPU has AVX-VNNI the real kernels
// are checked on the same cases too.
#include "kernels/ref/fp_contract_off.h"

#include <gtest/gtest.h>

#include "kernels/arch.h"

#if OCTET_ARCH_X86

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/gemm/q8_pack.h"
#include "kernels/q8_gemm_list.h"
#include "kernels/ref/qmath.h"
#include "tests/simd/q8_gemm_avxvnni_emulated.h"
#include "tests/simd/q8_test_data.h"

namespace octet::kernels {
namespace {

using testing::Fill;

namespace emulated = x86::avxvnni_emulated;

// One list entry of the avxvnni level with its emulated pair of functions.
struct EmulatedTile {
  const Q8GemmKernel* entry;  // layout, packing and the real functions
  Q8IgemmFn fn, fn_f32;
};

struct EmulatedName {
  const char* name;
  Q8IgemmFn fn, fn_f32;
};

constexpr EmulatedName kEmulated[] = {
    {"qu8s8_igemm_6x16c4__avxvnni", &emulated::qu8s8_igemm_6x16c4, &emulated::qu8s8_igemm_6x16c4_f32},
    {"qu8s8_igemm_12x8c4__avxvnni", &emulated::qu8s8_igemm_12x8c4, &emulated::qu8s8_igemm_12x8c4_f32},
    {"qs8s8_igemm_6x16c4__avxvnni", &emulated::qs8s8_igemm_6x16c4, &emulated::qs8s8_igemm_6x16c4_f32},
    {"qs8s8_igemm_12x8c4__avxvnni", &emulated::qs8s8_igemm_12x8c4, &emulated::qs8s8_igemm_12x8c4_f32},
};

std::vector<EmulatedTile> emulated_tiles() {
  std::vector<EmulatedTile> out;
  for (const EmulatedName& e : kEmulated)
    for (const Q8GemmKernel& k : kQ8GemmKernels)
      if (std::string(k.name) == e.name) out.push_back({&k, e.fn, e.fn_f32});
  return out;
}

// Bytes that end exactly where an inaccessible page begins: a kernel reading past end()
// faults instead of silently reading a neighbour's bytes.
class GuardedBytes {
 public:
  explicit GuardedBytes(size_t size) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t data_pages = (std::max<size_t>(size, 1) + page - 1) / page * page;
    mapped_ = data_pages + page;
    void* p = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("GuardedBytes: mmap failed");
    base_ = static_cast<uint8_t*>(p);
    if (mprotect(base_ + data_pages, page, PROT_NONE) != 0) throw std::runtime_error("GuardedBytes: mprotect failed");
    data_ = base_ + data_pages - size;
    size_ = size;
  }
  ~GuardedBytes() { munmap(base_, mapped_); }
  GuardedBytes(const GuardedBytes&) = delete;
  GuardedBytes& operator=(const GuardedBytes&) = delete;

  uint8_t* data() { return data_; }
  uint8_t* end() { return data_ + size_; }
  size_t size() const { return size_; }

 private:
  uint8_t* base_ = nullptr;
  uint8_t* data_ = nullptr;
  size_t mapped_ = 0, size_ = 0;
};

// How a row of the indirection is placed in the activations.
enum class Placement {
  anywhere,  // a random start, usually with room for a full load of the K tail
  near_end,  // ending 0..3 bytes before a_end, each row drawn separately
  at_end,    // every row ending exactly `end_gap` bytes before a_end
};

// One tile call. The data are drawn inside run(); these are the knobs.
struct TileCase {
  size_t mr = 1, nc = 1, kc = 1, ks = 1;
  size_t block = 0;  // which packed block of NR channels the tile reads
  bool float_out = false;
  Fill fill = Fill::random;
  int32_t x_zero_point = 0;
  double zero_share = 0.0;  // chance that a (tap, row) reads the padding row
  Placement placement = Placement::anywhere;
  size_t end_gap = 0;
  ptrdiff_t a_offset = 0;
  bool bias_near_int32_limits = false;  // the int32 sums wrap around
  // Quantized output: y type, zero point, clamp, and the multiplier's reach: channel c maps
  // max |acc| to gain * 128, so gain > 1 saturates both ends.
  Q8 y_type = Q8::u8;
  int32_t y_zero_point = 0;
  int32_t qmin = 0, qmax = 255;
  float gain = 1.0f;
  bool per_channel = true;
  // Float output: clamp bounds and whether a float bias is added.
  float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
  bool out_bias = true;
};

// What the cases reached, so a test can check its data really took each path.
struct Reached {
  size_t outputs = 0;
  size_t at_low = 0, at_high = 0;  // outputs on the clamp's ends
  size_t tail_full_loads = 0;      // K tails of real rows with room for a full load
  size_t tail_byte_loads = 0;      // K tails of real rows without
  size_t padding_rows = 0;
  size_t wrapped = 0;  // accumulators whose exact value lies outside int32
};

int32_t wrap_to_int32(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v))); }

int32_t activation_value(uint8_t byte, Q8 type) {
  return type == Q8::u8 ? static_cast<int32_t>(byte) : static_cast<int32_t>(static_cast<int8_t>(byte));
}

// maxps / minps: the second operand unless the first is strictly beyond it.
float max_ps(float a, float b) { return a > b ? a : b; }
float min_ps(float a, float b) { return a < b ? a : b; }

const char* placement_name(Placement p) {
  switch (p) {
    case Placement::anywhere: return "anywhere";
    case Placement::near_end: return "near a_end";
    case Placement::at_end: return "at a_end";
  }
  return "?";
}

std::string describe(const EmulatedTile& tile, const TileCase& c, const char* which) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%s%s (%s) mr %zu nc %zu kc %zu ks %zu block %zu x zp %d zero share %.2f rows placed %s (gap %zu) "
                "a_offset %td fill %s",
                tile.entry->name, c.float_out ? " f32" : "", which, c.mr, c.nc, c.kc, c.ks, c.block, c.x_zero_point,
                c.zero_share, placement_name(c.placement), c.end_gap, c.a_offset,
                c.fill == Fill::extreme ? "extreme" : "random");
  return buf;
}

// Draws the data of one case, runs the emulated function (and the real one where the CPU
// has AVX-VNNI) and compares every output byte, including those it must leave alone.
void run(std::mt19937& rng, const EmulatedTile& tile, const TileCase& c, Reached& reached) {
  auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  const Q8GemmKernel& k = *tile.entry;
  const size_t MR = static_cast<size_t>(k.mr), NR = static_cast<size_t>(k.nr), KR = static_cast<size_t>(k.kr);
  const Q8 x_type = k.x_type;
  const size_t n = c.block * NR + c.nc;
  const size_t c0 = c.block * NR;  // the tile's first channel

  // Weights w[(ch * ks + t) * kc + kk], full int8 range; extreme: one sign per channel.
  std::vector<int8_t> w(n * c.ks * c.kc);
  for (size_t i = 0; i < w.size(); ++i) {
    const size_t ch = i / (c.ks * c.kc);
    w[i] = static_cast<int8_t>(c.fill == Fill::extreme ? (ch % 2 == 0 ? 127 : -128) : uniform(-128, 127));
  }
  auto weight = [&](size_t ch, size_t t, size_t kk) { return static_cast<int32_t>(w[(ch * c.ks + t) * c.kc + kk]); };

  // Activations: random bytes (or the type's end farthest from the zero point) ending at a guard page.
  const size_t region = (c.ks * c.mr + 2) * (c.kc + KR) + static_cast<size_t>(uniform(0, 64));
  GuardedBytes x(region);
  const uint8_t far = static_cast<uint8_t>(
      c.x_zero_point - q8_min(x_type) > q8_max(x_type) - c.x_zero_point ? q8_min(x_type) : q8_max(x_type));
  for (size_t i = 0; i < region; ++i)
    x.data()[i] = c.fill == Fill::extreme ? far : static_cast<uint8_t>(uniform(0, 255));
  GuardedBytes zero(c.kc + KR);  // the padding row, allocated kc + KR bytes
  std::memset(zero.data(), static_cast<uint8_t>(c.x_zero_point), zero.size());

  // The indirection: rows[t * MR + i] is where row i of tap t really is; a holds it minus
  // a_offset, except for the padding row. Rows beyond mr repeat the last one.
  std::bernoulli_distribution pick_zero(c.zero_share);
  std::vector<const uint8_t*> rows(c.ks * MR), a(c.ks * MR);
  const size_t kc_main = c.kc / KR * KR, tail = c.kc - kc_main;
  for (size_t t = 0; t < c.ks; ++t) {
    for (size_t i = 0; i < MR; ++i) {
      const uint8_t*& row = rows[t * MR + i];
      if (i >= c.mr) {
        row = rows[t * MR + c.mr - 1];
      } else if (pick_zero(rng)) {
        row = zero.data();
      } else {
        size_t gap = 0;
        switch (c.placement) {
          case Placement::anywhere: gap = static_cast<size_t>(uniform(0, static_cast<int64_t>(region - c.kc))); break;
          case Placement::near_end: gap = static_cast<size_t>(uniform(0, 3)); break;
          case Placement::at_end: gap = c.end_gap; break;
        }
        row = x.end() - gap - c.kc;
      }
      if (i < c.mr) {
        if (row == zero.data()) {
          ++reached.padding_rows;
        } else if (tail != 0) {
          ++(row + kc_main + KR <= x.end() ? reached.tail_full_loads : reached.tail_byte_loads);
        }
      }
      a[t * MR + i] =
          row == zero.data()
              ? row
              : reinterpret_cast<const uint8_t*>(reinterpret_cast<uintptr_t>(row) - static_cast<uintptr_t>(c.a_offset));
      // A real row must not masquerade as the padding row once the offset is taken off.
      ASSERT_TRUE(row == zero.data() || a[t * MR + i] != zero.data()) << "pick another a_offset";
    }
  }

  // Bias: random, or near an int32 limit so bias + sum leaves the int32 range and wraps.
  std::vector<int32_t> bias(n), float_bias_int(n);
  for (size_t ch = 0; ch < n; ++ch) {
    bias[ch] = c.bias_near_int32_limits
                   ? (uniform(0, 1) == 0 ? std::numeric_limits<int32_t>::max() - static_cast<int32_t>(uniform(0, 1000))
                                         : std::numeric_limits<int32_t>::min() + static_cast<int32_t>(uniform(0, 1000)))
                   : static_cast<int32_t>(uniform(-100000, 100000));
    float_bias_int[ch] = static_cast<int32_t>(uniform(-100000, 100000));
  }
  // The float output starts from the caller's own fold: a bias other than the packed one.
  const std::vector<int32_t>& used_bias = c.float_out ? float_bias_int : bias;

  // The contract: acc[i][ch] = bias[ch] + sum over t, kk of (x - x_zero_point) * w, modulo 2^32.
  std::vector<int32_t> acc(c.mr * c.nc);
  for (size_t i = 0; i < c.mr; ++i) {
    for (size_t j = 0; j < c.nc; ++j) {
      int64_t sum = used_bias[c0 + j];
      for (size_t t = 0; t < c.ks; ++t) {
        const uint8_t* row = rows[t * MR + i];
        for (size_t kk = 0; kk < c.kc; ++kk)
          sum += static_cast<int64_t>(activation_value(row[kk], x_type) - c.x_zero_point) * weight(c0 + j, t, kk);
      }
      acc[i * c.nc + j] = wrap_to_int32(sum);
      reached.wrapped += acc[i * c.nc + j] != sum;
    }
  }

  // Multipliers from the accumulators' reach: gain * 128 / max |acc| per channel (or tensor).
  std::vector<float> multiplier(c.per_channel ? n : 1, 1.0f);
  {
    std::vector<int64_t> max_abs(multiplier.size(), 1);
    for (size_t i = 0; i < acc.size(); ++i) {
      int64_t& slot = max_abs[c.per_channel ? c0 + i % c.nc : 0];
      slot = std::max<int64_t>(slot, std::llabs(static_cast<int64_t>(acc[i])));
    }
    std::uniform_real_distribution<float> jitter(0.8f, 1.25f);
    for (size_t ch = 0; ch < multiplier.size(); ++ch)
      multiplier[ch] = c.gain * 128.0f / static_cast<float>(max_abs[ch]) * jitter(rng);
  }

  const Q8PackedWeights packed =
      k.pack(k, Q8WeightsToPack{n, c.ks, c.kc, w.data(), bias.data(), multiplier, x_type, c.x_zero_point});

  // Float output inputs, NR values each from the tile's first column; beyond nc, garbage.
  std::vector<int32_t> acc_init(NR);
  std::vector<float> scale(NR), out_bias(NR);
  const int64_t zp_u = c.x_zero_point + (x_type == Q8::s8 ? 128 : 0);
  for (size_t j = 0; j < NR; ++j) {
    scale[j] = std::ldexp(std::uniform_real_distribution<float>(1.0f, 2.0f)(rng), static_cast<int>(uniform(-16, -6)));
    out_bias[j] = std::uniform_real_distribution<float>(-40.0f, 40.0f)(rng);
    if (j >= c.nc) {
      acc_init[j] =
          static_cast<int32_t>(uniform(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()));
      continue;
    }
    int64_t sum_w = 0;
    for (size_t t = 0; t < c.ks; ++t)
      for (size_t kk = 0; kk < c.kc; ++kk) sum_w += weight(c0 + j, t, kk);
    acc_init[j] = wrap_to_int32(static_cast<int64_t>(float_bias_int[c0 + j]) - zp_u * sum_w);
  }

  // Expected outputs.
  const size_t elem = c.float_out ? 4 : 1;
  const size_t y_stride = (c.nc + static_cast<size_t>(uniform(0, 5))) * elem;
  std::vector<uint8_t> expected(c.mr * c.nc * elem);
  for (size_t i = 0; i < c.mr; ++i) {
    for (size_t j = 0; j < c.nc; ++j) {
      const int32_t v = acc[i * c.nc + j];
      if (c.float_out) {
        float f = static_cast<float>(v) * scale[j];
        if (c.out_bias) f = f + out_bias[j];
        f = min_ps(max_ps(f, c.lo), c.hi);
        reached.at_low += f == c.lo;
        reached.at_high += f == c.hi;
        std::memcpy(&expected[(i * c.nc + j) * 4], &f, 4);
      } else {
        const int32_t q = requantize_value(v, multiplier[c.per_channel ? c0 + j : 0], c.y_zero_point, c.qmin, c.qmax);
        reached.at_low += q == c.qmin;
        reached.at_high += q == c.qmax;
        expected[i * c.nc + j] = static_cast<uint8_t>(q);
      }
      ++reached.outputs;
    }
  }

  Q8IgemmArgs args;
  args.mr = c.mr;
  args.nc = c.nc;
  args.kc = c.kc;
  args.ks = c.ks;
  args.a = a.data();
  args.zero = zero.data();
  args.a_offset = c.a_offset;
  args.a_end = x.end();
  args.w = packed.bytes.data() + c.block * packed.block_bytes;
  args.y_row_stride = y_stride;
  if (c.float_out) {
    args.lo = c.lo;
    args.hi = c.hi;
    args.y_zero_point = 0;
    args.acc_init = acc_init.data();
    args.scale = scale.data();
    args.out_bias = c.out_bias ? out_bias.data() : nullptr;
  } else {
    args.lo = static_cast<float>(c.qmin - c.y_zero_point);
    args.hi = static_cast<float>(c.qmax - c.y_zero_point);
    args.y_zero_point = c.y_zero_point;
  }

  struct Candidate {
    const char* which;
    Q8IgemmFn fn;
  };
  std::vector<Candidate> candidates = {{"emulated", c.float_out ? tile.fn_f32 : tile.fn}};
  if (isa_supported(Isa::avxvnni)) candidates.push_back({"real", c.float_out ? k.fn_f32 : k.fn});

  constexpr uint8_t kUntouched = 0xA5;
  for (const Candidate& cand : candidates) {
    std::vector<uint8_t> y(MR * y_stride + 64, kUntouched);
    args.y = y.data();
    cand.fn(args);
    for (size_t i = 0; i < MR; ++i) {
      for (size_t b = 0; b < y_stride; ++b) {
        const uint8_t got = y[i * y_stride + b];
        const bool inside = i < c.mr && b < c.nc * elem;
        if (!inside) {
          ASSERT_EQ(got, kUntouched) << describe(tile, c, cand.which) << ": wrote outside the tile at row " << i
                                     << " byte " << b;
          continue;
        }
        const size_t j = b / elem;
        if (c.float_out) {
          if (b % 4 != 0) continue;
          float g, e;
          std::memcpy(&g, &y[i * y_stride + b], 4);
          std::memcpy(&e, &expected[(i * c.nc + j) * 4], 4);
          ASSERT_EQ(std::memcmp(&g, &e, 4), 0) << describe(tile, c, cand.which) << " at row " << i << " column " << j
                                               << ": got " << g << " expected " << e << " (acc " << acc[i * c.nc + j]
                                               << ", scale " << scale[j] << ", clamp [" << c.lo << ", " << c.hi << "])";
        } else {
          ASSERT_EQ(static_cast<int>(got), static_cast<int>(expected[i * c.nc + j]))
              << describe(tile, c, cand.which) << " at row " << i << " column " << j << " (acc " << acc[i * c.nc + j]
              << ", multiplier " << multiplier[c.per_channel ? c0 + j : 0] << ", y zp " << c.y_zero_point << ", clamp ["
              << c.qmin << ", " << c.qmax << "])";
        }
      }
    }
    for (size_t b = MR * y_stride; b < y.size(); ++b)
      ASSERT_EQ(y[b], kUntouched) << describe(tile, c, cand.which) << ": wrote past the last row";
  }
}

// A random case for `tile`: every knob drawn, K tails and partial tiles often.
TileCase random_case(std::mt19937& rng, const EmulatedTile& tile, bool float_out) {
  auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  const Q8GemmKernel& k = *tile.entry;
  TileCase c;
  c.float_out = float_out;
  c.mr = uniform(0, 2) == 0 ? static_cast<size_t>(k.mr) : static_cast<size_t>(uniform(1, k.mr));
  c.nc = uniform(0, 2) == 0 ? static_cast<size_t>(k.nr) : static_cast<size_t>(uniform(1, k.nr));
  c.block = static_cast<size_t>(uniform(0, 1));
  switch (uniform(0, 4)) {
    case 0: c.kc = static_cast<size_t>(uniform(1, 3)); break;
    case 1: c.kc = static_cast<size_t>(uniform(1, 300)); break;
    default: c.kc = static_cast<size_t>(uniform(1, 40)); break;
  }
  const int64_t taps[] = {1, 1, 1, 2, 3, 4, 9};
  c.ks = static_cast<size_t>(taps[uniform(0, 6)]);
  c.zero_share = c.ks > 1 ? 0.25 : (uniform(0, 3) == 0 ? 0.2 : 0.0);
  c.placement = static_cast<Placement>(uniform(0, 1));
  c.a_offset = uniform(0, 2) == 0 ? 0 : static_cast<ptrdiff_t>(uniform(-1 << 20, 1 << 20));
  c.x_zero_point = testing::random_zero_point(rng, k.x_type);
  c.y_type = uniform(0, 1) == 0 ? Q8::u8 : Q8::s8;
  c.y_zero_point = testing::random_zero_point(rng, c.y_type);
  c.qmin = q8_min(c.y_type);
  c.qmax = q8_max(c.y_type);
  if (uniform(0, 3) == 0) {
    c.qmin = static_cast<int32_t>(uniform(c.qmin, c.y_zero_point));
    c.qmax = static_cast<int32_t>(uniform(c.y_zero_point, c.qmax));
  }
  c.gain = std::uniform_real_distribution<float>(0.5f, 2.5f)(rng);
  c.per_channel = uniform(0, 3) != 0;
  c.out_bias = uniform(0, 3) != 0;
  switch (uniform(0, 3)) {
    case 0: c.lo = 0.0f; break;  // a fused Relu
    case 1:
      c.lo = -std::uniform_real_distribution<float>(0.0f, 60.0f)(rng);
      c.hi = std::uniform_real_distribution<float>(0.0f, 60.0f)(rng);
      break;
    default: break;
  }
  return c;
}

bool have_avx2() { return isa_supported(Isa::avx2); }
constexpr const char* kNoAvx2 = "this CPU has no AVX2, which the emulated AVX-VNNI kernels need";

// Every avxvnni entry of the list, each with its emulated twins: a tile added to the list and
// not to this test (or renamed) fails here instead of going untested.
TEST(Q8GemmAvxVnniEmulated, CoversEveryAvxVnniEntryOfTheList) {
  std::set<std::string> listed, emulated_names;
  for (const Q8GemmKernel& k : kQ8GemmKernels)
    if (k.isa == Isa::avxvnni) listed.insert(k.name);
  for (const EmulatedName& e : kEmulated) emulated_names.insert(e.name);
  EXPECT_EQ(listed, emulated_names);
  EXPECT_EQ(emulated_tiles().size(), std::size(kEmulated));
}

// The emulation alone against u8 x s8 dot products of four, added modulo 2^32.
TEST(Q8GemmAvxVnniEmulated, DpbusdEmulationIsExact) {
  if (!have_avx2()) GTEST_SKIP() << kNoAvx2;
  std::mt19937 rng(31);
  auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int iter = 0; iter < 2000; ++iter) {
    int32_t acc[8], out[8];
    uint8_t a[32];
    int8_t w[32];
    const int mode = iter % 4;  // random, extremes, random with acc at the int32 limits, all 255 x -128
    for (int i = 0; i < 32; ++i) {
      a[i] = static_cast<uint8_t>(mode == 3 ? 255 : mode == 1 ? (uniform(0, 1) ? 255 : 0) : uniform(0, 255));
      w[i] = static_cast<int8_t>(mode == 3 ? -128 : mode == 1 ? (uniform(0, 1) ? 127 : -128) : uniform(-128, 127));
    }
    for (int l = 0; l < 8; ++l) {
      acc[l] = mode >= 2
                   ? (uniform(0, 1) ? std::numeric_limits<int32_t>::max() - static_cast<int32_t>(uniform(0, 200000))
                                    : std::numeric_limits<int32_t>::min() + static_cast<int32_t>(uniform(0, 200000)))
                   : static_cast<int32_t>(uniform(-1000000, 1000000));
    }
    testing::dpbusd_emulated(acc, a, w, out);
    for (int l = 0; l < 8; ++l) {
      int64_t sum = acc[l];
      for (int j = 0; j < 4; ++j) sum += static_cast<int64_t>(a[4 * l + j]) * w[4 * l + j];
      ASSERT_EQ(out[l], wrap_to_int32(sum)) << "lane " << l << " of iteration " << iter;
    }
  }
}

TEST(Q8GemmAvxVnniEmulated, RandomTiles) {
  if (!have_avx2()) GTEST_SKIP() << kNoAvx2;
  std::mt19937 rng(2024);
  std::printf("%s\n", isa_supported(Isa::avxvnni) ? "this CPU has AVX-VNNI: the real kernels are checked too"
                                                  : "this CPU has no AVX-VNNI: only the emulated copy runs");
  for (const EmulatedTile& tile : emulated_tiles()) {
    for (bool float_out : {false, true}) {
      Reached reached;
      for (int iter = 0; iter < 250; ++iter) {
        run(rng, tile, random_case(rng, tile, float_out), reached);
        if (HasFatalFailure()) return;
      }
      const std::string name = std::string(tile.entry->name) + (float_out ? " f32" : "");
      // The draws must have reached every path, or this test proves less than it claims.
      EXPECT_GT(reached.tail_full_loads, 0u) << name;
      EXPECT_GT(reached.tail_byte_loads, 0u) << name;
      EXPECT_GT(reached.padding_rows, 0u) << name;
      EXPECT_GT(reached.at_low, 0u) << name;
      EXPECT_GT(reached.at_high, 0u) << name;
      std::printf("ran %s: %zu outputs\n", name.c_str(), reached.outputs);
    }
  }
}

// Activations at the end of their range farthest from the zero point times weights of 127 /
// -128 (one sign per channel): every product 255 * 127 or 255 * -128 when the zero point allows.
TEST(Q8GemmAvxVnniEmulated, ExtremeValuesAndZeroPoints) {
  if (!have_avx2()) GTEST_SKIP() << kNoAvx2;
  std::mt19937 rng(77);
  for (const EmulatedTile& tile : emulated_tiles()) {
    for (bool float_out : {false, true}) {
      Reached reached;
      for (int32_t x_zp : testing::extreme_zero_points(tile.entry->x_type)) {
        for (size_t kc : {1, 2, 3, 4, 5, 7, 64, 259}) {
          for (size_t ks : {1, 3}) {
            TileCase c = random_case(rng, tile, float_out);
            c.fill = Fill::extreme;
            c.x_zero_point = x_zp;
            c.kc = kc;
            c.ks = ks;
            c.mr = static_cast<size_t>(tile.entry->mr);
            c.zero_share = ks > 1 ? 0.2 : 0.0;
            c.placement = Placement::near_end;
            c.y_zero_point = testing::extreme_zero_point(rng, c.y_type);
            c.qmin = q8_min(c.y_type);
            c.qmax = q8_max(c.y_type);
            run(rng, tile, c, reached);
            if (HasFatalFailure()) return;
          }
        }
      }
    }
  }
}

// Every row of every tap ends 0..4 bytes before a_end (a guard page): the K tail of 1..3 bytes
// is read whole only where a full KR-byte load stays inside, else byte by byte.
TEST(Q8GemmAvxVnniEmulated, KTailsAtTheEndOfTheActivations) {
  if (!have_avx2()) GTEST_SKIP() << kNoAvx2;
  std::mt19937 rng(5);
  for (const EmulatedTile& tile : emulated_tiles()) {
    for (bool float_out : {false, true}) {
      Reached reached;
      for (size_t kc = 1; kc <= 13; ++kc) {
        for (size_t gap = 0; gap <= 4; ++gap) {
          for (size_t mr : {size_t{1}, static_cast<size_t>(tile.entry->mr) - 1, static_cast<size_t>(tile.entry->mr)}) {
            TileCase c = random_case(rng, tile, float_out);
            c.kc = kc;
            c.mr = mr;
            c.ks = static_cast<size_t>(1 + gap % 2);
            c.zero_share = c.ks > 1 ? 0.3 : 0.0;
            c.placement = Placement::at_end;
            c.end_gap = gap;
            run(rng, tile, c, reached);
            if (HasFatalFailure()) return;
          }
        }
      }
      EXPECT_GT(reached.tail_full_loads, 0u) << tile.entry->name;
      EXPECT_GT(reached.tail_byte_loads, 0u) << tile.entry->name;
    }
  }
}

// Several taps, half of the rows the padding row (never offset), the others moved by a_offset;
// also a tile whose every row is padding (the result is the bias alone).
TEST(Q8GemmAvxVnniEmulated, PaddingRowsAndOffsets) {
  if (!have_avx2()) GTEST_SKIP() << kNoAvx2;
  std::mt19937 rng(11);
  for (const EmulatedTile& tile : emulated_tiles()) {
    for (bool float_out : {false, true}) {
      Reached reached;
      for (int iter = 0; iter < 60; ++iter) {
        TileCase c = random_case(rng, tile, float_out);
        c.ks = static_cast<size_t>(iter % 3 == 0 ? 9 : 2 + iter % 3);
        c.zero_share = iter % 10 == 0 ? 1.0 : 0.5;
        c.a_offset = static_cast<ptrdiff_t>(std::uniform_int_distribution<int64_t>(-(1 << 24), 1 << 24)(rng));
        run(rng, tile, c, reached);
        if (HasFatalFailure()) return;
      }
      EXPECT_GT(reached.padding_rows, 0u) << tile.entry->name;
    }
  }
}

// Multipliers that send the accumulators well past both ends of the output type (or of a
// narrower clamp), and float clamps inside the outputs' range.
TEST(Q8GemmAvxVnniEmulated, OutputSaturatesAtBothEnds) {
  if (!have_avx2()) GTEST_SKIP() << kNoAvx2;
  std::mt19937 rng(3);
  for (const EmulatedTile& tile : emulated_tiles()) {
    for (bool float_out : {false, true}) {
      Reached reached;
      for (int iter = 0; iter < 40; ++iter) {
        TileCase c = random_case(rng, tile, float_out);
        c.mr = static_cast<size_t>(tile.entry->mr);
        c.nc = static_cast<size_t>(tile.entry->nr);
        c.kc = static_cast<size_t>(8 + iter);
        c.gain = 4.0f;
        c.lo = -2.0f;
        c.hi = 2.0f;
        c.out_bias = false;
        run(rng, tile, c, reached);
        if (HasFatalFailure()) return;
      }
      EXPECT_GT(reached.at_low, 0u) << tile.entry->name << (float_out ? " f32" : "");
      EXPECT_GT(reached.at_high, 0u) << tile.entry->name << (float_out ? " f32" : "");
    }
  }
}

// vpdpbusd adds without saturating: a bias next to an int32 limit plus the sums wraps around,
// and the tile must give the wrapped value like the int32 arithmetic of the contract.
TEST(Q8GemmAvxVnniEmulated, Int32AccumulatorWrapsAround) {
  if (!have_avx2()) GTEST_SKIP() << kNoAvx2;
  std::mt19937 rng(17);
  for (const EmulatedTile& tile : emulated_tiles()) {
    Reached reached;
    for (int iter = 0; iter < 40; ++iter) {
      TileCase c = random_case(rng, tile, false);
      c.fill = Fill::extreme;
      c.kc = static_cast<size_t>(64 + iter);
      c.bias_near_int32_limits = true;
      run(rng, tile, c, reached);
      if (HasFatalFailure()) return;
    }
    EXPECT_GT(reached.wrapped, 0u) << tile.entry->name;
  }
}

}  // namespace
}  // namespace octet::kernels

#endif  // OCTET_ARCH_X86
