#pragma once
// Whether the programs under test run with AddressSanitizer. The test code itself is compiled
// without instrumentation in the sanitizer tree (tests/CMakeLists.txt), so the compiler's own
// __has_feature(address_sanitizer) says nothing there: the build defines OCTET_TESTS_UNDER_ASAN.

namespace octet::testing {

#if defined(OCTET_TESTS_UNDER_ASAN) || defined(__SANITIZE_ADDRESS__)
inline constexpr bool kUnderAddressSanitizer = true;
#else
inline constexpr bool kUnderAddressSanitizer = false;
#endif

}  // namespace octet::testing
