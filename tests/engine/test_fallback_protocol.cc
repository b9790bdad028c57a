// make_fast's three answers (kernels/fallback.h): a driver, a reason to run the reference
// kernel (a valid problem its microkernels do not take), or an error for wrong arguments,
// which must never turn into a silent fallback.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "kernels/conv/f32_conv.h"
#include "kernels/conv/f32_winograd.h"
#include "kernels/conv/q8_conv.h"
#include "kernels/fallback.h"
#include "kernels/gemm/f32_gemm.h"
#include "kernels/gemm/q8_gemm.h"
#include "kernels/isa.h"

namespace octet::kernels {
namespace fallback_protocol_test {

const Isa kBest = active_isa();

TEST(FallbackProtocol, AValidProblemOutsideTheFamilyFallsBackWithItsReason) {
  Conv2dShape five;  // Winograd F(2x2, 3x3) takes 3x3 kernels only
  five.in_h = five.in_w = five.out_h = five.out_w = 8;
  five.in_c = five.out_c = 4;
  five.kernel_h = five.kernel_w = 5;
  five.pad_top = five.pad_left = 2;
  const std::vector<float> w(4 * 4 * 25, 0.5f);
  const auto conv = make_fast<F32WinogradConv>(five, w.data(), nullptr, Activation{}, kBest);
  EXPECT_FALSE(conv);
  EXPECT_NE(conv.why_not.find("needs a 3x3 kernel"), std::string::npos) << conv.why_not;

  const std::vector<int8_t> b(4, 1);
  const float multiplier[] = {0.5f};
  const Requantization rq{multiplier, 0, 0, 255};
  const auto empty = make_fast<Q8Gemm>(0, 4, Q8::u8, 0, b.data(), false, nullptr, rq, Q8::u8, kBest);
  EXPECT_FALSE(empty) << "a GEMM with k = 0 is valid; the reference kernel runs it";
  EXPECT_FALSE(empty.why_not.empty());
}

TEST(FallbackProtocol, WrongArgumentsAreErrorsNotFallbacks) {
  const std::vector<int8_t> b(16, 1);
  const float multiplier[] = {0.5f};
  const Requantization rq{multiplier, 0, 0, 255};
  // A uint8 zero point of 300 is a caller's bug: the reference kernel would compute garbage.
  EXPECT_THROW(make_fast<Q8Gemm>(4, 4, Q8::u8, 300, b.data(), false, nullptr, rq, Q8::u8, kBest), std::invalid_argument);
  const Requantization wide{multiplier, 0, -5, 300};
  EXPECT_THROW(make_fast<Q8Gemm>(4, 4, Q8::u8, 0, b.data(), false, nullptr, wide, Q8::u8, kBest), std::invalid_argument);
  Conv2dShape s;
  s.in_c = 4;
  s.out_c = 3;
  const float three[] = {0.5f, 0.5f};  // two multipliers for three output channels
  const Requantization short_rq{three, 0, 0, 255};
  const std::vector<int8_t> w(12, 1);
  EXPECT_THROW(make_fast<Q8Conv>(s, Q8::u8, 0, w.data(), nullptr, short_rq, Q8::u8, kBest), std::invalid_argument);
}

TEST(FallbackProtocol, ASupportedProblemGetsItsDriver) {
  const std::vector<float> b(16, 0.25f);
  const auto gemm = make_fast<F32Gemm>(4, 4, b.data(), false, nullptr, Activation{}, kBest);
  ASSERT_TRUE(gemm) << gemm.why_not;
  EXPECT_TRUE(gemm.why_not.empty());
}

}  // namespace fallback_protocol_test
}  // namespace octet::kernels
