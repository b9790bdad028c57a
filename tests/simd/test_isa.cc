// The ISA levels: parsing, their feature sets, and the cap OCTET_ISA / --isa put on them.
#include <gtest/gtest.h>

#include "kernels/isa.h"
#include "tests/util/skip_reasons.h"

namespace octet::kernels {
namespace {

TEST(Isa, NamesRoundTrip) {
  for (Isa isa : kAllIsas) {
    std::optional<Isa> parsed = parse_isa(isa_name(isa));
    ASSERT_TRUE(parsed.has_value()) << isa_name(isa);
    EXPECT_EQ(*parsed, isa);
  }
  EXPECT_FALSE(parse_isa("avx512_vnni").has_value());
  EXPECT_FALSE(parse_isa("").has_value());
#if OCTET_ARCH_X86
  EXPECT_EQ(isa_names(), "scalar|avx2|avxvnni|avx256vnni|avx512|avx512vnni|avx512amx");
  EXPECT_FALSE(parse_isa("neon").has_value());
#elif OCTET_ARCH_ARM64
  EXPECT_EQ(isa_names(), "scalar|neon|neondot|neoni8mm");
  EXPECT_FALSE(parse_isa("avx2").has_value());
#endif
}

// A level allows exactly the levels whose features it has: the honest-name rules of isa.h.
TEST(Isa, LevelsAllowTheirSubsetsOnly) {
  for (Isa cap : {Isa::scalar, Isa::avx2, Isa::avxvnni, Isa::avx256vnni, Isa::avx512, Isa::avx512vnni, Isa::avx512amx,
                  Isa::neon, Isa::neondot, Isa::neoni8mm}) {
    EXPECT_TRUE(isa_allows(cap, cap)) << isa_name(cap);
    EXPECT_TRUE(isa_allows(cap, Isa::scalar)) << isa_name(cap);
  }
  EXPECT_TRUE(isa_allows(Isa::avx512vnni, Isa::avx256vnni));
  EXPECT_TRUE(isa_allows(Isa::avx512vnni, Isa::avx512));
  // The tile unit comes on top of the vector level: AMX rows never run under avx512vnni.
  EXPECT_TRUE(isa_allows(Isa::avx512amx, Isa::avx512vnni));
  EXPECT_FALSE(isa_allows(Isa::avx512vnni, Isa::avx512amx));
  EXPECT_FALSE(isa_allows(Isa::avx512amx, Isa::avxvnni));
  EXPECT_TRUE(isa_allows(Isa::avxvnni, Isa::avx2));
  EXPECT_TRUE(isa_allows(Isa::neoni8mm, Isa::neondot));
  // The VEX form is a different instruction set from the EVEX one.
  EXPECT_FALSE(isa_allows(Isa::avx512, Isa::avxvnni));
  EXPECT_FALSE(isa_allows(Isa::avx512vnni, Isa::avxvnni));
  EXPECT_FALSE(isa_allows(Isa::avxvnni, Isa::avx256vnni));
  // The 256-bit level keeps off zmm.
  EXPECT_FALSE(isa_allows(Isa::avx256vnni, Isa::avx512));
  EXPECT_FALSE(isa_allows(Isa::avx512, Isa::avx256vnni));
  EXPECT_FALSE(isa_allows(Isa::neondot, Isa::avx2));
  EXPECT_FALSE(isa_allows(Isa::avx512vnni, Isa::neon));
  EXPECT_GT(isa_rank(Isa::avx512vnni), isa_rank(Isa::avx256vnni));
  EXPECT_GT(isa_rank(Isa::avx512amx), isa_rank(Isa::avx512vnni));
  EXPECT_GT(isa_rank(Isa::neoni8mm), isa_rank(Isa::neondot));
}

TEST(Isa, ScalarAlwaysRunsAndActiveIsSupported) {
  EXPECT_TRUE(isa_supported(Isa::scalar));
  EXPECT_TRUE(isa_supported(active_isa()));
  EXPECT_TRUE(isa_allows(detected_isa(), active_isa()));
  for (Isa isa : kAllIsas)
    if (isa_supported(isa)) {
      EXPECT_GE(isa_rank(detected_isa()), isa_rank(isa)) << isa_name(isa);
    }
  std::vector<Isa> runnable = runnable_isas();
  ASSERT_FALSE(runnable.empty());
  EXPECT_EQ(runnable.front(), Isa::scalar);
  EXPECT_EQ(runnable.back(), active_isa());
  std::string ran;
  for (Isa isa : runnable) ran += std::string(isa_name(isa)) + " ";
  RecordProperty("runnable_isas", ran);
  std::printf("runnable ISA levels here: %s(detected %s)\n", ran.c_str(), isa_name(detected_isa()));
  // For the CI tally's "not tested on this machine" list (tools/ci_tally.py): a level counts as
  // tested when any stage's CPU (the AArch64 stage runs several CPU models) has it.
  for (Isa isa : kAllIsas)
    std::printf("%s%s (level)\n", isa_supported(isa) ? "ISA on this CPU: " : ::octet::testing::kIsaNotOnCpu,
                isa_name(isa));
}

TEST(Isa, LimitCapsTheActiveLevelAndRejectsUnsupported) {
  const Isa before = active_isa();
  set_isa_limit(Isa::scalar);
  EXPECT_EQ(active_isa(), Isa::scalar);
  EXPECT_EQ(runnable_isas().size(), 1u);
  for (Isa isa : kAllIsas) {
    if (isa_supported(isa)) continue;
    try {
      set_isa_limit(isa);
      ADD_FAILURE() << "set_isa_limit accepted unsupported " << isa_name(isa);
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("does not support"), std::string::npos) << e.what();
    }
  }
  set_isa_limit(before);
  EXPECT_EQ(active_isa(), before);
}

}  // namespace
}  // namespace octet::kernels
