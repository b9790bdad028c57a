#pragma once
// Packed weights shared by every plan of a Session. A plan is built per set of input shapes
// (batch 1, a batch slice, the last partial slice, ...), and all of them read the same
// weights: a driver that packs asks the cache it was given for the packing of the same bytes
// with the same parameters, and only packs when there is none, so the Session holds one copy.
//
// The cache is passed explicitly, as XNNPACK passes its weights cache to an operator's
// creation: the planner puts the Session's in the OpContext (engine/op_registry.h), each op
// hands it to the driver constructors that pack, and a driver built without one (nullptr:
// tests, benchmarks) packs a private copy.
//
// The key is the packing's full recipe: the driver's name for its layout, every parameter
// that changes the packed bytes, and a 64-bit hash of every input array (weights, bias,
// multipliers) with its length. Contents, not addresses: a folded constant freed with an old
// plan may be reallocated at the same address with other values.
//
// Drivers hold the packing through a shared_ptr; packed_size(packing) reports its bytes.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace octet::kernels {

class PackKey {
 public:
  explicit PackKey(std::string layout) : text_(std::move(layout)) {}
  PackKey& add(int64_t v);
  PackKey& add(const std::string& s);
  // A hash of n bytes (nothing when data is nullptr: "absent" is part of the key too).
  PackKey& add_bytes(const void* data, size_t n);
  template <class T>
  PackKey& add_array(const T* data, size_t count) {
    return add_bytes(data, data == nullptr ? 0 : count * sizeof(T));
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

// The bytes a packing holds, for PackedCache::bytes(): arrays here, the packed-weight classes
// beside their own definitions (found by argument-dependent lookup).
template <class T>
size_t packed_size(const std::vector<T>& v) {
  return v.size() * sizeof(T);
}

class PackedCache {
 public:
  // The packing stored under key, or make()'s result, stored there first.
  template <class T, class Make>
  std::shared_ptr<const T> get(const PackKey& key, Make&& make) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(key.text());
    if (it == entries_.end()) {
      auto made = std::make_shared<const T>(make());
      it = entries_.emplace(key.text(), Entry{made, packed_size(*made)}).first;
      bytes_ += it->second.bytes;
    } else {
      ++hits_;
    }
    return std::static_pointer_cast<const T>(it->second.object);
  }
  size_t bytes() const;    // packed bytes held
  size_t entries() const;  // distinct packings
  size_t hits() const;     // requests answered without packing

 private:
  struct Entry {
    std::shared_ptr<const void> object;
    size_t bytes = 0;
  };
  mutable std::mutex mutex_;
  std::map<std::string, Entry> entries_;
  size_t bytes_ = 0, hits_ = 0;
};

// What drivers call: the packing under key in `cache`, or make()'s own when cache is nullptr.
template <class T, class Make>
std::shared_ptr<const T> shared_packing(PackedCache* cache, const PackKey& key, Make&& make) {
  if (cache != nullptr) return cache->get<T>(key, std::forward<Make>(make));
  return std::make_shared<const T>(make());
}

}  // namespace octet::kernels
