// The INT8 IGEMM tile tester (q8_tile_tester.h says what it checks).
#include "kernels/ref/fp_contract_off.h"  // first: the expected float outputs stay unfused

#include "tests/simd/q8_tile_tester.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/gemm/q8_pack.h"
#include "kernels/ref/qmath.h"

namespace octet::kernels::testing {

GuardedBytes::GuardedBytes(size_t size) {
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

GuardedBytes::~GuardedBytes() { munmap(base_, mapped_); }

int32_t wrap_to_int32(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v))); }

namespace {

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

std::string describe(const Q8Tile& tile, const TileCase& c) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%s%s (%s) mr %zu nc %zu kc %zu ks %zu block %zu x zp %d zero share %.2f rows placed %s (gap %zu) "
                "a_offset %td fill %s",
                tile.entry->name, c.float_out ? " f32" : c.int32_out ? " i32" : "", tile.which, c.mr, c.nc, c.kc, c.ks, c.block,
                c.x_zero_point, c.zero_share, placement_name(c.placement), c.end_gap, c.a_offset,
                c.fill == Fill::extreme ? "extreme" : "random");
  return buf;
}

}  // namespace

void run_tile(std::mt19937& rng, const Q8Tile& tile, const TileCase& c, Reached& reached) {
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
  // The indirection: rows[t * MR + i] is where row i of tap t really is (nullptr: the padding
  // row, placed below); a holds it minus a_offset, except for the padding row. Rows beyond mr
  // repeat the last one.
  std::bernoulli_distribution pick_zero(c.zero_share);
  std::vector<const uint8_t*> rows(c.ks * MR), a(c.ks * MR);
  const size_t kc_main = c.kc / KR * KR, tail = c.kc - kc_main;
  auto shifted = [&](const uint8_t* row) {
    return reinterpret_cast<const uint8_t*>(reinterpret_cast<uintptr_t>(row) - static_cast<uintptr_t>(c.a_offset));
  };
  for (size_t t = 0; t < c.ks; ++t) {
    for (size_t i = 0; i < MR; ++i) {
      const uint8_t*& row = rows[t * MR + i];
      if (i >= c.mr) {
        row = rows[t * MR + c.mr - 1];
      } else if (pick_zero(rng)) {
        row = nullptr;
      } else {
        size_t gap = 0;
        switch (c.placement) {
          case Placement::anywhere: gap = static_cast<size_t>(uniform(0, static_cast<int64_t>(region - c.kc))); break;
          case Placement::near_end: gap = static_cast<size_t>(uniform(0, static_cast<int64_t>(KR) - 1)); break;
          case Placement::at_end: gap = c.end_gap; break;
        }
        row = x.end() - gap - c.kc;
      }
      if (i < c.mr) {
        if (row == nullptr) {
          ++reached.padding_rows;
        } else if (tail != 0) {
          ++(row + kc_main + KR <= x.end() ? reached.tail_full_loads : reached.tail_byte_loads);
        }
      }
    }
  }
  // The padding row, kc + KR bytes of the zero point. The kernel tells it from a real row by
  // address alone, so no real row minus a_offset may land on it; two mappings can sit exactly
  // a_offset apart (a sanitizer run hit it), and then the padding row takes another mapping.
  std::vector<std::unique_ptr<GuardedBytes>> pads;
  const uint8_t* zero = nullptr;
  while (zero == nullptr) {
    pads.push_back(std::make_unique<GuardedBytes>(c.kc + KR));
    const uint8_t* candidate = pads.back()->data();
    if (std::none_of(rows.begin(), rows.end(), [&](const uint8_t* r) { return r != nullptr && shifted(r) == candidate; }))
      zero = candidate;
  }
  std::memset(pads.back()->data(), static_cast<uint8_t>(c.x_zero_point), pads.back()->size());
  for (size_t r = 0; r < rows.size(); ++r) {
    if (rows[r] == nullptr) rows[r] = zero;
    a[r] = rows[r] == zero ? zero : shifted(rows[r]);
    // A real row must not masquerade as the padding row once the offset is taken off.
    ASSERT_TRUE(rows[r] == zero || a[r] != zero) << "pick another a_offset";
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
    if (c.non_finite_multipliers)
      for (size_t ch = 0; ch < multiplier.size(); ++ch)
        if (ch % 3 != 2) multiplier[ch] = ch % 3 == 0 ? std::numeric_limits<float>::infinity() : std::nanf("");
  }

  const Q8PackedWeights packed =
      k.pack(k, Q8WeightsToPack{n, c.ks, c.kc, w.data(), bias.data(), multiplier, x_type, c.x_zero_point});

  // Float output inputs, NR values each from the tile's first column; beyond nc, garbage.
  // The caller's fold uses the zero point as the kernel reads it (kernels/gemm/q8_gemm_list.h):
  // shifted by 128 on x86 for s8 activations, by -128 on Arm for u8 ones.
  std::vector<int32_t> acc_init(NR);
  std::vector<float> scale(NR), out_bias(NR);
  const int64_t zp_read = c.x_zero_point + q8_read_shift(k.reads, x_type);
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
    acc_init[j] = wrap_to_int32(static_cast<int64_t>(float_bias_int[c0 + j]) - zp_read * sum_w);
  }

  // Expected outputs.
  const size_t elem = c.float_out || c.int32_out ? 4 : 1;
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
      } else if (c.int32_out) {
        std::memcpy(&expected[(i * c.nc + j) * 4], &v, 4);
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
  args.zero = zero;
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

  constexpr uint8_t kUntouched = 0xA5;
  std::vector<uint8_t> y(MR * y_stride + 64, kUntouched);
  args.y = y.data();
  (c.float_out ? tile.fn_f32 : c.int32_out ? tile.fn_i32 : tile.fn)(args);
  for (size_t i = 0; i < MR; ++i) {
    for (size_t b = 0; b < y_stride; ++b) {
      const uint8_t got = y[i * y_stride + b];
      const bool inside = i < c.mr && b < c.nc * elem;
      if (!inside) {
        ASSERT_EQ(got, kUntouched) << describe(tile, c) << ": wrote outside the tile at row " << i << " byte " << b;
        continue;
      }
      const size_t j = b / elem;
      if (c.int32_out) {
        if (b % 4 != 0) continue;
        int32_t g, e;
        std::memcpy(&g, &y[i * y_stride + b], 4);
        std::memcpy(&e, &expected[(i * c.nc + j) * 4], 4);
        ASSERT_EQ(g, e) << describe(tile, c) << " at row " << i << " column " << j;
      } else if (c.float_out) {
        if (b % 4 != 0) continue;
        float g, e;
        std::memcpy(&g, &y[i * y_stride + b], 4);
        std::memcpy(&e, &expected[(i * c.nc + j) * 4], 4);
        ASSERT_EQ(std::memcmp(&g, &e, 4), 0)
            << describe(tile, c) << " at row " << i << " column " << j << ": got " << g << " expected " << e << " (acc "
            << acc[i * c.nc + j] << ", scale " << scale[j] << ", clamp [" << c.lo << ", " << c.hi << "])";
      } else {
        ASSERT_EQ(static_cast<int>(got), static_cast<int>(expected[i * c.nc + j]))
            << describe(tile, c) << " at row " << i << " column " << j << " (acc " << acc[i * c.nc + j]
            << ", multiplier " << multiplier[c.per_channel ? c0 + j : 0] << ", y zp " << c.y_zero_point << ", clamp ["
            << c.qmin << ", " << c.qmax << "])";
      }
    }
  }
  for (size_t b = MR * y_stride; b < y.size(); ++b)
    ASSERT_EQ(y[b], kUntouched) << describe(tile, c) << ": wrote past the last row";
}

TileCase random_tile_case(std::mt19937& rng, const Q8Tile& tile, bool float_out) {
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
  c.x_zero_point = random_zero_point(rng, k.x_type);
  c.y_type = uniform(0, 1) == 0 ? Q8::u8 : Q8::s8;
  c.y_zero_point = random_zero_point(rng, c.y_type);
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

namespace {

// What a sweep's cases must have reached, or it proves less than it claims.
enum Expect : unsigned {
  kNothing = 0,
  kBothTails = 1,  // K tails read with a full load and byte by byte (when KR > 1: KR = 1 has none)
  kPadding = 2,    // padding rows
  kClampEnds = 4,  // outputs on both ends of the clamp
  kWraps = 8,      // accumulators wrapped around int32
};

// Runs the cases make(rng, tile, float_out) draws on each tile, for each output kind asked
// for, and checks that they reached what `expect` names.
template <class Make>
void sweep(std::span<const Q8Tile> tiles, uint32_t seed, std::initializer_list<bool> float_outs, unsigned expect,
           Make make) {
  std::mt19937 rng(seed);
  for (const Q8Tile& tile : tiles) {
    for (bool float_out : float_outs) {
      Reached reached;
      for (const TileCase& c : make(rng, tile, float_out)) {
        run_tile(rng, tile, c, reached);
        if (::testing::Test::HasFatalFailure()) return;
      }
      const std::string name = std::string(tile.entry->name) + (float_out ? " f32" : "") + " (" + tile.which + ")";
      if ((expect & kBothTails) && tile.entry->kr > 1) {
        EXPECT_GT(reached.tail_full_loads, 0u) << name;
        EXPECT_GT(reached.tail_byte_loads, 0u) << name;
      }
      if (expect & kPadding) {
        EXPECT_GT(reached.padding_rows, 0u) << name;
      }
      if (expect & kClampEnds) {
        EXPECT_GT(reached.at_low, 0u) << name;
        EXPECT_GT(reached.at_high, 0u) << name;
      }
      if (expect & kWraps) {
        EXPECT_GT(reached.wrapped, 0u) << name;
      }
      std::printf("ran %s: %zu outputs\n", name.c_str(), reached.outputs);
    }
  }
}

constexpr std::initializer_list<bool> kBothOutputs = {false, true};

// `count` random cases, case i changed by adjust(case, i).
template <class Adjust>
std::vector<TileCase> random_cases(std::mt19937& rng, const Q8Tile& tile, bool float_out, int count, Adjust adjust) {
  std::vector<TileCase> cases;
  for (int i = 0; i < count; ++i) {
    cases.push_back(random_tile_case(rng, tile, float_out));
    adjust(cases.back(), i);
  }
  return cases;
}

}  // namespace

void sweep_random_tiles(std::span<const Q8Tile> tiles, uint32_t seed) {
  sweep(tiles, seed, kBothOutputs, kBothTails | kPadding | kClampEnds,
        [](std::mt19937& rng, const Q8Tile& tile, bool float_out) {
          return random_cases(rng, tile, float_out, 250, [](TileCase&, int) {});
        });
}

void sweep_extreme_values(std::span<const Q8Tile> tiles, uint32_t seed) {
  sweep(tiles, seed, kBothOutputs, kNothing, [](std::mt19937& rng, const Q8Tile& tile, bool float_out) {
    std::vector<TileCase> cases;
    for (int32_t x_zp : extreme_zero_points(tile.entry->x_type)) {
      for (size_t kc : {1, 2, 3, 4, 5, 7, 64, 259}) {
        for (size_t ks : {1, 3}) {
          TileCase c = random_tile_case(rng, tile, float_out);
          c.fill = Fill::extreme;
          c.x_zero_point = x_zp;
          c.kc = kc;
          c.ks = ks;
          c.mr = static_cast<size_t>(tile.entry->mr);
          c.zero_share = ks > 1 ? 0.2 : 0.0;
          c.placement = Placement::near_end;
          c.y_zero_point = extreme_zero_point(rng, c.y_type);
          c.qmin = q8_min(c.y_type);
          c.qmax = q8_max(c.y_type);
          cases.push_back(c);
        }
      }
    }
    return cases;
  });
}

// The K tail of 1..KR-1 bytes is read whole only where a full KR-byte load stays inside, else
// byte by byte; K runs past two groups and the gap from 0 to KR (at least 4) bytes, so a row
// ends at a_end with every tail length, one group or more before it. The x86 vpmaddwd tiles
// widen rows 16 or 32 bytes a load, 256 bytes a chunk (q8_activations.inc): K also runs around
// those blocks and chunks, so a row ending at a_end has every remainder of a block.
void sweep_k_tails_at_the_end(std::span<const Q8Tile> tiles, uint32_t seed) {
  sweep(tiles, seed, kBothOutputs, kBothTails, [](std::mt19937& rng, const Q8Tile& tile, bool float_out) {
    const size_t MR = static_cast<size_t>(tile.entry->mr), KR = static_cast<size_t>(tile.entry->kr);
    std::vector<size_t> kcs;
    for (size_t kc = 1; kc <= std::max<size_t>(13, 2 * KR + 1); ++kc) kcs.push_back(kc);
    for (size_t kc : {15, 16, 17, 18, 31, 33, 47, 63, 255, 256, 257, 258, 271, 287, 513, 545}) kcs.push_back(kc);
    std::vector<TileCase> cases;
    for (size_t kc : kcs) {
      for (size_t gap = 0; gap <= std::max<size_t>(4, KR); ++gap) {
        for (size_t mr : {size_t{1}, MR - 1, MR}) {
          TileCase c = random_tile_case(rng, tile, float_out);
          c.kc = kc;
          c.mr = mr;
          c.ks = 1 + gap % 2;
          c.zero_share = c.ks > 1 ? 0.3 : 0.0;
          c.placement = Placement::at_end;
          c.end_gap = gap;
          cases.push_back(c);
        }
      }
    }
    return cases;
  });
}

// One case in ten has every row the padding row: the result is the bias alone.
void sweep_padding_rows_and_offsets(std::span<const Q8Tile> tiles, uint32_t seed) {
  sweep(tiles, seed, kBothOutputs, kPadding, [](std::mt19937& rng, const Q8Tile& tile, bool float_out) {
    return random_cases(rng, tile, float_out, 60, [&](TileCase& c, int i) {
      c.ks = static_cast<size_t>(i % 3 == 0 ? 9 : 2 + i % 3);
      c.zero_share = i % 10 == 0 ? 1.0 : 0.5;
      c.a_offset = static_cast<ptrdiff_t>(std::uniform_int_distribution<int64_t>(-(1 << 24), 1 << 24)(rng));
    });
  });
}

void sweep_output_saturation(std::span<const Q8Tile> tiles, uint32_t seed) {
  sweep(tiles, seed, kBothOutputs, kClampEnds, [](std::mt19937& rng, const Q8Tile& tile, bool float_out) {
    return random_cases(rng, tile, float_out, 40, [&](TileCase& c, int i) {
      c.mr = static_cast<size_t>(tile.entry->mr);
      c.nc = static_cast<size_t>(tile.entry->nr);
      c.kc = static_cast<size_t>(8 + i);
      c.gain = 4.0f;
      c.lo = -2.0f;
      c.hi = 2.0f;
      c.out_bias = false;
    });
  });
}

void sweep_non_finite_multipliers(std::span<const Q8Tile> tiles, uint32_t seed) {
  sweep(tiles, seed, {false}, kClampEnds, [](std::mt19937& rng, const Q8Tile& tile, bool float_out) {
    return random_cases(rng, tile, float_out, 30, [&](TileCase& c, int i) {
      c.nc = static_cast<size_t>(tile.entry->nr);  // whole tiles too: every epilogue path
      if (i % 2) c.mr = static_cast<size_t>(tile.entry->mr);
      c.non_finite_multipliers = true;
    });
  });
}

// vpdpbusd, vpmaddwd + vpaddd, SDOT, SMMLA and SMLAL all add without saturating: the tile must
// give the wrapped value like the int32 arithmetic of the contract.
void sweep_int32_wraparound(std::span<const Q8Tile> tiles, uint32_t seed) {
  sweep(tiles, seed, {false}, kWraps, [](std::mt19937& rng, const Q8Tile& tile, bool float_out) {
    return random_cases(rng, tile, float_out, 40, [](TileCase& c, int i) {
      c.fill = Fill::extreme;
      c.kc = static_cast<size_t>(64 + i);
      c.bias_near_int32_limits = true;
    });
  });
}

// The int32 twin shares the quantized tile's loop and packed bias: each kind of case above, as
// int32 outputs (the sweep's float_out flag picks fn_i32 here).
void sweep_int32_output(std::span<const Q8Tile> tiles, uint32_t seed) {
  std::mt19937 rng(seed);
  for (const Q8Tile& tile : tiles) {
    const size_t MR = static_cast<size_t>(tile.entry->mr), KR = static_cast<size_t>(tile.entry->kr);
    std::vector<TileCase> cases;
    for (int i = 0; i < 150; ++i) {
      TileCase c = random_tile_case(rng, tile, false);
      if (i % 5 == 0) {
        c.fill = Fill::extreme;
        c.bias_near_int32_limits = true;
        c.kc = static_cast<size_t>(64 + i);
      }
      if (i % 7 == 0) {
        c.ks = 3;
        c.zero_share = 0.5;
      }
      cases.push_back(c);
    }
    for (int32_t x_zp : extreme_zero_points(tile.entry->x_type))
      for (size_t kc = 1; kc <= std::max<size_t>(13, 2 * KR + 1); ++kc) {
        TileCase c = random_tile_case(rng, tile, false);
        c.fill = Fill::extreme;
        c.x_zero_point = x_zp;
        c.kc = kc;
        c.mr = kc % 2 == 0 ? MR : 1 + kc % MR;
        c.placement = Placement::at_end;
        c.end_gap = kc % (KR + 1);
        cases.push_back(c);
      }
    Reached reached;
    for (TileCase& c : cases) {
      c.int32_out = true;
      run_tile(rng, tile, c, reached);
      if (::testing::Test::HasFatalFailure()) return;
    }
    const std::string name = std::string(tile.entry->name) + " i32 (" + tile.which + ")";
    EXPECT_GT(reached.wrapped, 0u) << name;
    EXPECT_GT(reached.padding_rows, 0u) << name;
    if (KR > 1) {
      EXPECT_GT(reached.tail_byte_loads, 0u) << name;
    }
    std::printf("ran %s: %zu outputs\n", name.c_str(), reached.outputs);
  }
}

}  // namespace octet::kernels::testing
