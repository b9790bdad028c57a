#pragma once
// A tester for single INT8 IGEMM tile calls (one microkernel of kernels/gemm/q8_gemm_list.h, called
// directly through Q8IgemmArgs, no driver in between). Each call is checked bit-exact against a
// scalar computation of the list's contract, made from the unpacked weights and the bytes the
// row pointers reach; the weights go through the entry's own packing function, as in the
// drivers. Every byte of the output buffer is checked, those the tile must leave alone too, and
// the activations end exactly at an inaccessible page, so a K tail read past a_end faults.
// Portable (POSIX mmap / mprotect): test_q8_tile.cc runs it on every kernel this CPU runs,
// test_q8_gemm_avxvnni_emulated.cc on the emulated AVX-VNNI kernels.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <span>

#include "kernels/gemm/q8_gemm_list.h"
#include "kernels/q8_type.h"
#include "tests/simd/q8_test_data.h"

namespace octet::kernels::testing {

// The functions under test and the list entry whose layout, packing and contract they follow:
// the entry's own functions, or a stand-in for them (an emulated copy).
struct Q8Tile {
  const Q8GemmKernel* entry;
  Q8IgemmFn fn, fn_f32, fn_i32;
  const char* which;  // printed in failures: "the list's", "emulated", ...
};

inline Q8Tile list_tile(const Q8GemmKernel& k) { return {&k, k.fn, k.fn_f32, k.fn_i32, "the list's"}; }

// Bytes that end exactly where an inaccessible page begins: a kernel reading past end()
// faults instead of silently reading a neighbour's bytes.
class GuardedBytes {
 public:
  explicit GuardedBytes(size_t size);
  ~GuardedBytes();
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
  near_end,  // ending 0..KR-1 bytes before a_end, each row drawn separately
  at_end,    // every row ending exactly `end_gap` bytes before a_end
};

// One tile call. The data are drawn inside run_tile(); these are the knobs.
struct TileCase {
  size_t mr = 1, nc = 1, kc = 1, ks = 1;
  size_t block = 0;  // which packed block of NR channels the tile reads
  bool float_out = false;
  bool int32_out = false;  // fn_i32: the accumulators themselves (float_out false)
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
  // Channel multipliers +inf, NaN and finite in turn (per channel): +-inf products saturate,
  // NaN ones (acc * NaN, 0 * inf) land on qmin, as requantize_value() says.
  bool non_finite_multipliers = false;
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

int32_t wrap_to_int32(int64_t v);

// Draws the data of one case, runs the tile (fn or fn_f32 as the case says) and compares every
// output byte with gtest assertions (a failure is fatal: check HasFatalFailure()).
void run_tile(std::mt19937& rng, const Q8Tile& tile, const TileCase& c, Reached& reached);

// A random case for `tile`: every knob drawn, K tails and partial tiles often.
TileCase random_tile_case(std::mt19937& rng, const Q8Tile& tile, bool float_out);

// The sweeps, each over every tile given (both output kinds, but the wrap-around: quantized
// only), each checking that its data reached what it is about. A few thousand small tile calls
// per tile: about 0.1 s natively, 0.4 s under qemu-aarch64 -cpu max.
void sweep_random_tiles(std::span<const Q8Tile> tiles, uint32_t seed);
// Activations at the end of their range farthest from the zero point times weights of 127 /
// -128 (one sign per channel), every extreme zero point, K around the KR groups.
void sweep_extreme_values(std::span<const Q8Tile> tiles, uint32_t seed);
// Every row ending 0..KR bytes before a_end (a guard page), K from 1 to past two groups.
void sweep_k_tails_at_the_end(std::span<const Q8Tile> tiles, uint32_t seed);
// Several taps, half of the rows the padding row, the others moved by large a_offsets.
void sweep_padding_rows_and_offsets(std::span<const Q8Tile> tiles, uint32_t seed);
// Multipliers well past both ends of the output type, float clamps inside the outputs' range.
void sweep_output_saturation(std::span<const Q8Tile> tiles, uint32_t seed);
// Multipliers of +inf and NaN: the requantization's NaN and overflow paths (quantized output).
void sweep_non_finite_multipliers(std::span<const Q8Tile> tiles, uint32_t seed);
// A bias next to an int32 limit plus the sums: the tile gives the wrapped value.
void sweep_int32_wraparound(std::span<const Q8Tile> tiles, uint32_t seed);
// The int32 twin (fn_i32): random cases, every extreme zero point, K tails ending at a_end,
// padding rows and wrapped accumulators, every int32 compared.
void sweep_int32_output(std::span<const Q8Tile> tiles, uint32_t seed);

}  // namespace octet::kernels::testing
