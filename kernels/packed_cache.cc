#include "kernels/packed_cache.h"

#include <cstring>

namespace octet::kernels {
namespace {

// 64-bit multiply-xorshift over 8-byte words (the tail zero-padded), seeded with the length.
// Not cryptographic: a key also carries every shape parameter, so a collision would need two
// different arrays of the same length, in the same slot of the same layer kind.
uint64_t hash_bytes(const void* data, size_t n) {
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
  uint64_t h = n * kMul ^ 0xD6E8FEB86659FD93ull;
  const auto* p = static_cast<const unsigned char*>(data);
  size_t i = 0;
  auto mix = [&](uint64_t w) {
    h ^= w + kMul + (h << 6) + (h >> 2);
    h *= kMul;
    h ^= h >> 29;
  };
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    mix(w);
  }
  if (i < n) {
    uint64_t w = 0;
    std::memcpy(&w, p + i, n - i);
    mix(w);
  }
  return h;
}

}  // namespace

PackKey& PackKey::add(int64_t v) {
  text_ += '|';
  text_ += std::to_string(v);
  return *this;
}

PackKey& PackKey::add(const std::string& s) {
  text_ += '|';
  text_ += s;
  return *this;
}

PackKey& PackKey::add_bytes(const void* data, size_t n) {
  if (data == nullptr) return add(std::string("none"));
  add(int64_t(n));
  text_ += ':';
  text_ += std::to_string(hash_bytes(data, n));
  return *this;
}

size_t PackedCache::bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_;
}

size_t PackedCache::entries() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

size_t PackedCache::hits() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hits_;
}

}  // namespace octet::kernels
