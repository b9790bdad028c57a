#pragma once
// The fixed start of a skip message that says this CPU lacks an instruction-set level a test
// needs. tools/ci_tally.py lists such tests, and the microkernels a sweep prints with it, under
// "not tested on this machine" at the end of the CI log; every other skip fails CI.
namespace octet::testing {

inline constexpr char kIsaNotOnCpu[] = "ISA not on this CPU: ";

}  // namespace octet::testing
