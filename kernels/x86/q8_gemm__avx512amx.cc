// INT8 IGEMM microkernels on AMX (Intel's tile matrix unit): one 16 x 64 output tile as four
// 16 x 16 int32 accumulator tiles, each step a 16 x 64 u8 tile of activations times four
// 64 x 16 s8 tiles of weights (tdpbusd: u8 x s8, four products summed into each int32, no
// saturation: the same arithmetic as vpdpbusd). Weights use the c4 packing of the vector rows
// (kernels/gemm/q8_gemm_list.h): for each k quad, 64 columns of 4 bytes, so the weights of
// 16 columns over 16 quads are a tile read with a row stride of 256 bytes, in place. The
// activations of a step are gathered from the row pointers into a 1 KiB tile buffer (the rows
// of an IGEMM are not a strided matrix). The epilogue is the zmm one of every AVX-512 row.
#include "kernels/ref/fp_contract_off.h"  // first: no multiply-add contracted into an FMA
// GCC 12 flags _mm512_undefined_ps() inside its own conversion intrinsics as "may be used
// uninitialized" (see q8_gemm__avx512vnni.cc).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/gemm/q8_gemm_list.h"
#include "kernels/x86/amx_tile_config.h"

namespace octet::kernels::x86::avx512amx {
namespace {

#include "kernels/x86/q8_ymm_epilogue.inc"
#include "kernels/x86/q8_evex_epilogue.inc"

using Ops = ZmmEpilogue;

#include "kernels/gemm/q8_igemm_store.inc"

constexpr int kRows = 16;        // MR: rows of every tile
constexpr int kColumnTiles = 4;  // NR = 64: four tiles of 16 int32 columns
constexpr size_t kStepBytes = 64;                     // k bytes per step (16 quads)
constexpr size_t kQuadRowBytes = 4 * 16 * kColumnTiles;  // one k quad of the packed block

// The tile configuration is per thread. Loading it costs ~300 cycles, reading it back ~20, so
// it is loaded only when this thread's differs (its first tile, or another library's tiles in
// between).
void configure_tiles() {
  AmxTileConfig current;
  _tile_storeconfig(&current);
  if (std::memcmp(&current, &kAmxTileConfig, sizeof current) != 0) _tile_loadconfig(&kAmxTileConfig);
}

// One step: the activations (16 rows of 64 bytes, a_stride apart) times the weights of kTiles
// column tiles at w (16 k quads, 256 bytes apart). In a short step the quads past the step's
// read the next tap's weights (met by zeroed activations) or, at the block's end, zeros.
template <int kTiles>
[[gnu::always_inline]] inline void multiply_step(const uint8_t* a_rows, size_t a_stride, const uint8_t* w) {
  _tile_loadd(4, a_rows, a_stride);
  _tile_loadd(5, w, kQuadRowBytes);
  _tile_dpbusd(0, 4, 5);
  if constexpr (kTiles > 1) {
    _tile_loadd(6, w + 64, kQuadRowBytes);
    _tile_dpbusd(1, 4, 6);
  }
  if constexpr (kTiles > 2) {
    _tile_loadd(5, w + 128, kQuadRowBytes);
    _tile_dpbusd(2, 4, 5);
  }
  if constexpr (kTiles > 3) {
    _tile_loadd(6, w + 192, kQuadRowBytes);
    _tile_dpbusd(3, 4, 6);
  }
}

template <int kTiles, bool kFlip, Q8Out kOut>
void amx_tile(const Q8IgemmArgs& g) {
  constexpr size_t NR = 16 * kColumnTiles;
  configure_tiles();
  const int32_t* bias = static_cast<const int32_t*>(g.w);
  const int32_t* acc_init = kOut == Q8Out::dequantized ? g.acc_init : bias;
  // Each accumulator tile starts as 16 copies of its 16 initial values: a row stride of 0.
  _tile_loadd(0, acc_init, 0);
  if constexpr (kTiles > 1) _tile_loadd(1, acc_init + 16, 0);
  if constexpr (kTiles > 2) _tile_loadd(2, acc_init + 32, 0);
  if constexpr (kTiles > 3) _tile_loadd(3, acc_init + 48, 0);

  const uint8_t* const w = static_cast<const uint8_t*>(g.w) + NR * 8;
  const size_t kc_quads = (g.kc + 3) / 4;
  const uint8_t* const w_end = w + g.ks * kc_quads * kQuadRowBytes;
  const size_t steps_per_tap = (g.kc + kStepBytes - 1) / kStepBytes;
  const size_t steps = g.ks * steps_per_tap;
  const __m512i flip = _mm512_set1_epi8(kFlip ? static_cast<char>(0x80) : 0);
  // A plain GEMM's rows (one tap, u8 read as u8) are often a strided matrix already: the tile
  // loads them in place, when the last row's reads of whole steps stay inside the activations
  // (the bytes past kc meet zero weights, as gathered ones do).
  const uint8_t* first_row = g.a[0] + g.a_offset;
  const ptrdiff_t stride = kRows > 1 ? g.a[1] - g.a[0] : 0;
  bool in_place = !kFlip && g.ks == 1 && g.a[0] != g.zero && stride > 0 &&
                  first_row + (kRows - 1) * stride + steps_per_tap * kStepBytes <= g.a_end;
  for (int i = 1; in_place && i < kRows; ++i) in_place = g.a[i] == g.a[0] + i * stride;

  // Otherwise the rows of each step are gathered into a ring of tile buffers, kAhead steps
  // before the step multiplies them. A tile load cannot take its bytes from the store buffer:
  // it waits until the stores it overlaps reach the L1D, after everything before them in
  // program order has retired, tdpbusd included.
  constexpr size_t kAhead = 2, kRing = kAhead + 2;
  alignas(64) uint8_t ring[kRing][kRows][kStepBytes];
  struct Step {
    size_t tap, k0, bytes;  // step j: tap j / steps_per_tap, k bytes [k0, k0 + bytes) of it
  };
  auto step_at = [&](size_t j) {
    const size_t k0 = (j % steps_per_tap) * kStepBytes;
    return Step{j / steps_per_tap, k0, std::min(kStepBytes, g.kc - k0)};
  };
  auto gather = [&](size_t j) {
    const auto [t, k0, n] = step_at(j);
    // Bytes past kc are zeroed (a masked load reads none of them): they meet the zero weights
    // that pad K to a quad, or the next tap's weights at the end of a short step.
    const __mmask64 valid = n == kStepBytes ? ~__mmask64{0} : (__mmask64{1} << n) - 1;
    const uint8_t* const* a = g.a + t * kRows;
    uint8_t(*to)[kStepBytes] = ring[j % kRing];
#pragma GCC unroll 16
    for (int i = 0; i < kRows; ++i) {
      const uint8_t* row = a[i] != g.zero ? a[i] + g.a_offset : a[i];
      const __m512i bytes = _mm512_maskz_loadu_epi8(valid, row + k0);
      _mm512_store_si512(to[i], _mm512_maskz_mov_epi8(valid, _mm512_xor_si512(bytes, flip)));
    }
  };
  alignas(64) uint8_t w_last[16][kQuadRowBytes];
  if (!in_place)
    for (size_t j = 0; j < std::min(kAhead, steps); ++j) gather(j);
  for (size_t j = 0; j < steps; ++j) {
    if (!in_place && j + kAhead < steps) gather(j + kAhead);
    const auto [t, k0, n] = step_at(j);
    const size_t quads = (n + 3) / 4;
    const uint8_t* step_w = w + (t * kc_quads + k0 / 4) * kQuadRowBytes;
    if (quads < 16 && step_w + 16 * kQuadRowBytes > w_end) {
      // The last step of the block is short: its tile would read past the packed weights.
      std::memset(w_last, 0, sizeof w_last);
      std::memcpy(w_last, step_w, quads * kQuadRowBytes);
      step_w = &w_last[0][0];
    }
    if (in_place) {
      multiply_step<kTiles>(first_row + k0, static_cast<size_t>(stride), step_w);
    } else {
      multiply_step<kTiles>(&ring[j % kRing][0][0], kStepBytes, step_w);
    }
  }

  alignas(64) int32_t c[kRows][NR];
  _tile_stored(0, &c[0][0], NR * 4);
  if constexpr (kTiles > 1) _tile_stored(1, &c[0][16], NR * 4);
  if constexpr (kTiles > 2) _tile_stored(2, &c[0][32], NR * 4);
  if constexpr (kTiles > 3) _tile_stored(3, &c[0][48], NR * 4);
  // The store reads the block's multipliers after its NR biases, so it sees all four tiles;
  // those past nc are not stored.
  __m512i acc[kRows][kColumnTiles];
#pragma GCC unroll 16
  for (int i = 0; i < kRows; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < kColumnTiles; ++j)
      acc[i][j] = j < kTiles ? _mm512_load_si512(&c[i][16 * j]) : _mm512_setzero_si512();
  igemm_tile_store<kRows, kColumnTiles, kOut>(g, acc);
}

// A GEMM row group of at most 4 rows (a QGemm at batch 1, whose m the kernel choice cannot
// know) runs on avx512vnni's 4x64c4 tile, which shares this row's packing (NR 64, KR 4, int8):
// 16 rows of tiles cost the same as 1, so one row took ~6x its vector time (the CIFAR
// MobileNetV2's classifier). Only for one tap: its indirection has MR = 4 pointers per tap.
template <bool kFlip, Q8Out kOut>
void vector_rows(const Q8IgemmArgs& g) {
  namespace vnni = x86::avx512vnni;
  if constexpr (kOut == Q8Out::requantized) {
    return kFlip ? vnni::qs8s8_igemm_4x64c4(g) : vnni::qu8s8_igemm_4x64c4(g);
  } else if constexpr (kOut == Q8Out::dequantized) {
    return kFlip ? vnni::qs8s8_igemm_4x64c4_f32(g) : vnni::qu8s8_igemm_4x64c4_f32(g);
  } else {
    return kFlip ? vnni::qs8s8_igemm_4x64c4_i32(g) : vnni::qu8s8_igemm_4x64c4_i32(g);
  }
}

// The list's 16 x 64 tile; a block of fewer columns (the layer's last, or a layer of fewer
// than 64 channels) multiplies only the tiles it has.
template <int MR, int NR, bool kFlip, Q8Out kOut>
void q8_tile(const Q8IgemmArgs& g) {
  static_assert(MR == kRows && NR == 16 * kColumnTiles, "the AMX rows are 16 x 64");
  if (g.ks == 1 && g.mr <= 4) return vector_rows<kFlip, kOut>(g);
  switch ((g.nc + 15) / 16) {
    case 1: return amx_tile<1, kFlip, kOut>(g);
    case 2: return amx_tile<2, kFlip, kOut>(g);
    case 3: return amx_tile<3, kFlip, kOut>(g);
    default: return amx_tile<4, kFlip, kOut>(g);
  }
}

}  // namespace

#undef OCTET_ROW_IF_avx512amx
#define OCTET_ROW_IF_avx512amx(...) __VA_ARGS__
#include "kernels/gemm/q8_gemm_define.inc"

}  // namespace octet::kernels::x86::avx512amx
