// The ISA levels: parsing, ordering, and the cap OCTET_ISA / --isa put on them.
#include <gtest/gtest.h>

#include "kernels/isa.h"

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
  EXPECT_EQ(isa_names(), "scalar|avx2|avxvnni|avx512|avx512vnni");
}

TEST(Isa, ScalarAlwaysRunsAndActiveIsSupported) {
  EXPECT_TRUE(isa_supported(Isa::scalar));
  EXPECT_TRUE(isa_supported(active_isa()));
  EXPECT_LE(active_isa(), detected_isa());
  std::vector<Isa> runnable = runnable_isas();
  ASSERT_FALSE(runnable.empty());
  EXPECT_EQ(runnable.front(), Isa::scalar);
  EXPECT_EQ(runnable.back(), active_isa());
  std::string ran;
  for (Isa isa : runnable) ran += std::string(isa_name(isa)) + " ";
  RecordProperty("runnable_isas", ran);
  std::printf("runnable ISA levels here: %s(detected %s)\n", ran.c_str(), isa_name(detected_isa()));
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
