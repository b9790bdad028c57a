#pragma once
// What a driver, and then a plan step, says it runs: the name users see (`octet info --kernels`,
// the profiles, explain) and whether any part of it is a scalar reference kernel, the last
// resort whose time measures octet's missing SIMD kernel rather than the hardware. The mark
// comes from the kernel's level (a list row of level Isa::scalar) or from reference_kernel(),
// never from the name.
#include <string>
#include <string_view>
#include <utility>

#include "kernels/isa.h"

namespace octet::kernels {

struct KernelId {
  std::string name;
  bool scalar = false;
};

// A row of a kernel list (kernels/kernel_list.h): scalar when its level is.
template <class Row>
KernelId row_kernel(const Row& row) {
  return {row.name, row.isa == Isa::scalar};
}

// A portable reference kernel of kernels/ref/ that is not a list row (its signature takes whole
// tensors): scalar.
inline KernelId reference_kernel(std::string name) { return {std::move(name), true}; }

// Portable code that is the right tool rather than a fallback (a memcpy of runs, a transpose,
// a table built at plan time): not scalar.
inline KernelId portable_kernel(std::string name) { return {std::move(name), false}; }

// The parts of one step, joined in its name: scalar when any part is.
inline KernelId operator+(KernelId a, std::string_view text) {
  a.name += text;
  return a;
}
inline KernelId operator+(std::string_view text, KernelId a) {
  // Not a.name.insert(0, text): GCC 12 flags that insert with a false -Wrestrict.
  std::string name(text);
  name += a.name;
  a.name = std::move(name);
  return a;
}
inline KernelId operator+(KernelId a, const KernelId& b) {
  a.name += b.name;
  a.scalar = a.scalar || b.scalar;
  return a;
}

}  // namespace octet::kernels
