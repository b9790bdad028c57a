#pragma once
// Splitting a streaming pass (every output element from its own input elements: quantize,
// dequantize, table lookups, element-wise arithmetic) over a pthreadpool. Each piece writes only
// its own slice of the output, so any split gives the bytes one thread gives.
#include <pthreadpool.h>

#include <algorithm>
#include <cstddef>

namespace octet::kernels {

// Elements per piece of a split element-wise pass. A smaller tensor runs on the calling thread
// alone: its pass costs about what handing half of it to another core and waiting for that core
// costs (the wake-up, and the output's cache lines moving to whichever core reads them next).
inline constexpr size_t kEltwiseMinPiece = 32 * 1024;

// Runs body(start, count) over [0, range) in pieces of `tile`, on the pool when there is more
// than one piece.
template <class Body>
void parallel_pieces(pthreadpool_t pool, size_t range, size_t tile, const Body& body) {
  if (range == 0) return;
  if (pool == nullptr || range <= tile || pthreadpool_get_threads_count(pool) <= 1) {
    body(size_t{0}, range);
    return;
  }
  struct Context {
    const Body* body;
  } ctx{&body};
  pthreadpool_parallelize_1d_tile_1d(
      pool, [](void* p, size_t start, size_t count) { (*static_cast<Context*>(p)->body)(start, count); }, &ctx,
      range, tile, 0);
}

// body(start, count) over the n elements of a streaming pass, in pieces of kEltwiseMinPiece.
template <class Body>
void parallel_elements(pthreadpool_t pool, size_t n, const Body& body) {
  parallel_pieces(pool, n, kEltwiseMinPiece, body);
}

}  // namespace octet::kernels
