#pragma once
// How every microkernel list of octet is written, and the helpers they share.
//
// One list per family, one style:
//
//   kernels/<family>/<name>_list.inc
//       The X-list: one row per kernel (or, for a family whose every level defines the same set
//       of functions, one row per level), written OCTET_<FAMILY>(level, ...), the level first,
//       then the tile and parameters. Rows sit behind `#if OCTET_ARCH_X86` /
//       `#if OCTET_ARCH_ARM64` guards; rows that run anywhere (the scalar reference rows) sit
//       outside them.
//   kernels/<family>/<name>_list.h
//       The row struct, the function types, and two expansions of the .inc: the declarations
//       (in namespace <level>, checked against the definitions by each
//       level's file of the family, which includes this header) and the table
//       k<Family>KernelRows.
//
// Row fields, in this order:
//   name      what the plan, the tests and the benchmarks print ("f32_gemm_6x16__avx2"); unique
//             within the list, ends in "__<level>[_<variant>]" or "__ref" for a scalar row
//   isa       the level (kernels/isa.h) whose flags compiled it and which a cap must include
//   features  the CPU features it needs: isa_features(isa), plus any extension used beside the
//             level (q8_lookup__avx512vbmi: avx512 | kAvx512Vbmi). Runs here when
//             (features & cpu) == features and the cap allows `isa`: row_runs().
//   fn...     the function pointers, then the row's parameters (tile, packing, ...).
//
// Order: best first. A driver takes the first row that runs (first_runnable); the GEMM families
// weigh every row that runs with a cost model, and the order only breaks exact ties.
//
// Scalar rows: at level Isa::scalar with no features, after every vector row. Either the
// family's portable reference kernel, where it has the microkernel's signature, named
// "<op>__ref"; or a portable microkernel written over the family's own tile template and
// packing, named "<tile>__scalar" (the INT8 IGEMM: kernels/gemm/q8_gemm__scalar.cc), so that its
// driver has one path at every level. A step running either is marked scalar through its level
// (engine: KernelId), never through its name. A family whose reference has another signature
// (most: the references take whole tensors) has no scalar row; its driver names the reference
// with reference_kernel() (engine/kernel_id.h).
//
// Because the rows are guarded, a build may have none for a family (an architecture still without
// them): each table is its rows followed by one value-initialised terminator, used through the
// span of the rows before it, so an empty list is valid and drivers fall back to the reference
// exactly as when no row runs on the CPU.
//
// Templated levels: the families written once over a level's ops header (element-wise,
// pooling, FP32 depthwise, Winograd transforms, QLinearSoftmax, linear resize, quantize; the
// FP32 GEMM tiles on x86) are compiled at every level of kernels/template_levels.h, which the
// build generates from kernels/CMakeLists.txt. Their lists take their rows from it:
// OCTET_TEMPLATE_LEVELS(X, ...) is X(level, ...) per level, OCTET_TEMPLATE_LEVEL_LANES(X) is
// X(level, float32 lanes per vector), both best first.
//
// tests/simd/test_kernel_lists.cc checks every list against this page.
#include <cstddef>
#include <iterator>
#include <span>

#include "kernels/isa.h"
#include "kernels/template_levels.h"

namespace octet::kernels {

template <class T, size_t N>
constexpr std::span<const T> rows_before_terminator(const T (&rows_and_terminator)[N]) {
  return {rows_and_terminator, N - 1};
}

// A row's feature mask (a list still without the field: its level's).
template <class Row>
constexpr Features row_features(const Row& row) {
  if constexpr (requires { row.features; })
    return row.features;
  else
    return isa_features(row.isa);
}

// Whether a row runs on this CPU under the cap: the cap includes its level and the CPU has every
// feature it needs.
template <class Row>
bool row_runs(const Row& row, Isa cap) {
  return isa_allows(cap, row.isa) && cpu_has(row_features(row));
}

// The first row of a list (best first) that runs here under `cap`; nullptr when none does.
template <class List>
auto first_runnable(const List& list, Isa cap) -> decltype(&*std::begin(list)) {
  for (const auto& k : list)
    if (row_runs(k, cap)) return &k;
  return nullptr;
}

// The features a row of `level` needs when it uses nothing beside the level.
#define OCTET_LEVEL_FEATURES(level) ::octet::kernels::isa_features(::octet::kernels::Isa::level)

}  // namespace octet::kernels
