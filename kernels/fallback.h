#pragma once
// The one way an op asks a fast driver (F32Conv, F32WinogradConv, F32DwConv, F32PointwiseDwConv,
// F32Gemm, Q8Conv, Q8DwConv, Q8Gemm) for a problem. A driver's answer is one of three, as
// XNNPACK's status codes keep them apart:
//   - it runs the problem: make_fast returns the driver;
//   - the problem is valid but outside what its microkernels do under the ISA cap on this CPU
//     (groups > 1, a zero-sized GEMM, no microkernel at this level): the constructor throws
//     kernels::Unsupported.
//     make_fast returns the reason; the op runs the reference kernel and reports it, and the
//     plan keeps the reason beside the kernel name (octet info --kernels);
//   - the arguments are wrong (a zero point outside its type, a clamp outside the output type,
//     per-channel data of the wrong length): the constructor throws std::invalid_argument,
//     which make_fast lets through. A caller's bug is an error, never a silent fallback.
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

namespace octet::kernels {

// "Valid, but not for these microkernels": derived from std::invalid_argument so that code
// constructing a driver directly (tests, benchmarks) still sees one exception for "cannot".
struct Unsupported : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

template <class Driver>
struct FastDriver {
  std::shared_ptr<Driver> driver;  // nullptr when unsupported
  std::string why_not;             // set when driver is nullptr

  explicit operator bool() const { return driver != nullptr; }
};

template <class Driver, class... Args>
FastDriver<Driver> make_fast(Args&&... args) {
  std::shared_ptr<Driver> d;
  try {
    d = std::make_shared<Driver>(std::forward<Args>(args)...);
  } catch (const Unsupported& e) {
    return {nullptr, e.what()};
  }
  return {std::move(d), {}};
}

}  // namespace octet::kernels
