// Every microkernel list obeys kernels/kernel_list.h: unique names that say their level, feature
// masks that hold their level's features (and only this architecture's), best first (no row after
// a row of a level it includes), and a family's scalar reference row last where it has one. A row
// added in the wrong place, or with a mask that does not match its level, fails here.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "kernels/conv/dequantized_epilogue.h"
#include "kernels/conv/dwconv_list.h"
#include "kernels/conv/f32_gconv_list.h"
#include "kernels/conv/q8_gconv_list.h"
#include "kernels/quantize/quantize.h"
#include "kernels/elementwise/eltwise_list.h"
#include "kernels/elementwise/reduce_more_list.h"
#include "kernels/gemm/f32_gemm_list.h"
#include "kernels/conv/f32_winograd_list.h"
#include "kernels/kernel_list.h"
#include "kernels/pool/argmax_pool_list.h"
#include "kernels/pool/lrn_list.h"
#include "kernels/pool/pool_list.h"
#include "kernels/gemm/q8_gemm_list.h"
#include "kernels/quantize/q8_lookup_list.h"
#include "kernels/resize/resize_list.h"
#include "kernels/sample/sample_list.h"
#include "kernels/elementwise/strided_gather_list.h"

namespace octet::kernels {
namespace kernel_lists_test {

enum class ScalarRow { none, last };

template <class List, class NameOf>
void check_list(const char* list_name, const List& list, NameOf name_of, ScalarRow scalar) {
  SCOPED_TRACE(list_name);
  std::set<std::string> names;
  const auto* first = std::data(list);
  const size_t n = std::size(list);
  for (size_t i = 0; i < n; ++i) {
    const auto& row = first[i];
    const std::string name = name_of(row) != nullptr ? name_of(row) : "";
    ASSERT_FALSE(name.empty()) << "row " << i << " has no name";
    EXPECT_TRUE(names.insert(name).second) << name << " is listed twice";
    const Features level = isa_features(row.isa);
    EXPECT_EQ(row_features(row) & level, level) << name << ": its mask lacks features of " << isa_name(row.isa);
    EXPECT_TRUE(isa_of_this_arch(row.isa)) << name << ": level " << isa_name(row.isa) << " is not of this architecture";
    if (row.isa == Isa::scalar) {
      EXPECT_TRUE(name.ends_with("__ref") || name.ends_with("__scalar"))
          << name << ": a scalar row is named <op>__ref or <tile>__scalar";
      EXPECT_EQ(row_features(row), 0u) << name << ": a scalar row needs no feature";
      for (size_t j = i + 1; j < n; ++j)
        EXPECT_EQ(first[j].isa, Isa::scalar) << name << ": scalar rows come after every vector row";
    } else {
      EXPECT_NE(name.find(std::string("__") + isa_name(row.isa)), std::string::npos)
          << name << ": the name says its level " << isa_name(row.isa);
    }
    // Best first: no row comes after a row whose level it strictly includes.
    for (size_t j = 0; j < i; ++j) {
      const Isa before = first[j].isa;
      EXPECT_FALSE(before != row.isa && isa_allows(row.isa, before))
          << name << " (" << isa_name(row.isa) << ") comes after " << name_of(first[j]) << " (" << isa_name(before)
          << "), a level it includes: lists are best first";
    }
  }
  if (scalar == ScalarRow::last) {
    ASSERT_GT(n, 0u);
    EXPECT_EQ(first[n - 1].isa, Isa::scalar) << "the family's reference is its last row";
  }
}

const auto by_name = [](const auto& row) { return row.name; };

TEST(KernelLists, FollowTheConvention) {
  check_list("f32_gemm", kF32GemmKernels, [](const F32GemmKernel& r) { return r.gemm_name; }, ScalarRow::none);
  check_list("f32_igemm", kF32GemmKernels, [](const F32GemmKernel& r) { return r.igemm_name; }, ScalarRow::none);
  check_list("q8_gemm", kQ8GemmKernels, by_name, ScalarRow::last);
  check_list("f32_dwconv", kF32DwConvKernels, by_name, ScalarRow::last);
  check_list("q8_dwconv", kQ8DwConvKernels, by_name, ScalarRow::last);
  check_list("f32_gconv", kF32GconvKernels, by_name, ScalarRow::last);
  check_list("q8_gconv", kQ8GconvKernels, by_name, ScalarRow::none);
  check_list("f32_winograd", kF32WinogradKernels, by_name, ScalarRow::none);
  check_list("q8_quantize", kQ8QuantizeKernels, by_name, ScalarRow::none);
  check_list("q8_dequantize", kQ8QuantizeKernels, [](const Q8QuantizeKernel& r) { return r.dequantize_name; },
             ScalarRow::none);
  check_list("q8_lookup", kQ8LookupKernels, by_name, ScalarRow::none);
  check_list("strided_gather", kStridedGatherKernels, by_name, ScalarRow::none);
  check_list("dequantized_epilogue", kDequantizedEpilogueKernels, by_name, ScalarRow::last);
#define OCTET_CHECK(list) check_list(#list, list, by_name, ScalarRow::none);
  OCTET_CHECK(kF32AddUkernels) OCTET_CHECK(kF32MulUkernels) OCTET_CHECK(kF32SubUkernels) OCTET_CHECK(kF32DivUkernels)
  OCTET_CHECK(kF32ClampUkernels) OCTET_CHECK(kF32AddClampUkernels) OCTET_CHECK(kF32SigmoidUkernels)
  OCTET_CHECK(kF32WhereUkernels)
  OCTET_CHECK(kF32SiluUkernels) OCTET_CHECK(kF32ScaleShiftUkernels) OCTET_CHECK(kF32GeluUkernels) OCTET_CHECK(kF32GeluTanhUkernels)
  OCTET_CHECK(kF32LayerNormUkernels) OCTET_CHECK(kF32GapUkernels) OCTET_CHECK(kQu8AddUkernels)
  OCTET_CHECK(kQs8AddUkernels) OCTET_CHECK(kQu8MulUkernels) OCTET_CHECK(kQs8MulUkernels) OCTET_CHECK(kQu8GapUkernels)
  OCTET_CHECK(kQs8GapUkernels)
  OCTET_CHECK(kF32StridedSumsUkernels) OCTET_CHECK(kF32StridedMaxUkernels)
  OCTET_CHECK(kF32StridedMinUkernels) OCTET_CHECK(kF32PReluUkernels)
  OCTET_CHECK(kF32SoftmaxUkernels) OCTET_CHECK(kF32LogSoftmaxUkernels) OCTET_CHECK(kF32ArgMaxUkernels)
  OCTET_CHECK(kF32ArgMinUkernels) OCTET_CHECK(kF32ReduceMaxUkernels) OCTET_CHECK(kF32ReduceMinUkernels)
  OCTET_CHECK(kF32MaxPoolUkernels) OCTET_CHECK(kQu8MaxPoolUkernels) OCTET_CHECK(kQs8MaxPoolUkernels)
  OCTET_CHECK(kF32AvgPoolUkernels) OCTET_CHECK(kQu8AvgPoolUkernels) OCTET_CHECK(kQs8AvgPoolUkernels)
  OCTET_CHECK(kF32ResizeLinearUkernels) OCTET_CHECK(kQu8ResizeLinearUkernels) OCTET_CHECK(kQs8ResizeLinearUkernels)
  OCTET_CHECK(kF32ResizeCubicUkernels) OCTET_CHECK(kF32LrnUkernels) OCTET_CHECK(kF32MaxPoolArgmaxUkernels)
  OCTET_CHECK(kF32MapReduceUkernels) OCTET_CHECK(kF32EigenFoldUkernels) OCTET_CHECK(kF32SubDivUkernels)
  OCTET_CHECK(kF32RoiAlignAvgUkernels) OCTET_CHECK(kF32RoiAlignMaxUkernels) OCTET_CHECK(kF32GridSampleLinearUkernels)
  OCTET_CHECK(kF32GridSampleLinear4Ukernels)
  OCTET_CHECK(kF32GridSampleCubicUkernels)
  OCTET_CHECK(kF32CumSumUkernels)
#undef OCTET_CHECK
  // Every activation of kernels/elementwise/activation_list.h.
#define OCTET_CHECK_ACT(KIND, OP, ...) check_list("kF32" #OP "Ukernels", kF32##OP##Ukernels, by_name, ScalarRow::none);
  OCTET_F32_ACTIVATIONS(OCTET_CHECK_ACT)
#undef OCTET_CHECK_ACT
}

// The feature a row needs beside its level is part of its mask: the VBMI lookup runs only where
// the CPU has VBMI, whatever the cap.
TEST(KernelLists, ExtraFeaturesDecideWhereARowRuns) {
  for (const Q8LookupKernel& k : kQ8LookupKernels) {
    if (!(k.features & kAvx512Vbmi)) continue;
    EXPECT_EQ(k.isa, Isa::avx512) << k.name;
    for (Isa cap : kAllIsas)
      EXPECT_EQ(row_runs(k, cap), isa_runs(k.isa, cap) && cpu_has(kAvx512Vbmi)) << k.name << " under " << isa_name(cap);
  }
}

}  // namespace kernel_lists_test
}  // namespace octet::kernels
