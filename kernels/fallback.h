#pragma once
// The one way an op asks a fast driver (F32Conv, F32WinogradConv, F32DwConv, F32Gemm, Q8Conv,
// Q8DwConv, Q8Gemm) for a problem: make_fast returns the driver, or why none of its
// microkernels takes the problem under the cap. The op then runs the reference kernel itself
// and reports the reason, which the plan keeps beside the kernel name (octet info --kernels).
// A driver signals "no microkernel" either by throwing std::invalid_argument from its
// constructor (F32Conv, F32WinogradConv, F32Gemm) or by choosing no microkernel (F32DwConv
// and the INT8 drivers, whose kernel() is then nullptr and which would run their reference
// loop); both come out here
// as the same value, so no op catches exceptions or looks for "__ref" in a kernel name.
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

namespace octet::kernels {

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
  } catch (const std::invalid_argument& e) {
    return {nullptr, e.what()};
  }
  if constexpr (requires { d->kernel() == nullptr; }) {
    if (d->kernel() == nullptr)
      return {nullptr, "no microkernel runs it under the ISA cap on this CPU"};
  }
  return {std::move(d), {}};
}

}  // namespace octet::kernels
