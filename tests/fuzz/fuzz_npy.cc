// Bytes -> the .npy decoder (`octet run --input`, npy: datasets, compare). Clean errors only.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <vector>

#include "io/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::byte> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = std::byte(data[i]);
  try {
    octet::npy::Array a = octet::npy::decode(bytes, "fuzz.npy");
    (void)octet::npy::describe(a);
  } catch (const std::exception&) {
  }
  return 0;
}
