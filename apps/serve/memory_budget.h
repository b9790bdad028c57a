#pragma once
// A server-wide budget of bytes for what requests hold at once: a request reserves the bytes of
// its body before reading it and an image's decoding reserves what decoding it can take at most
// (io/datasets/image_decode.h) before decoding, so concurrent uploads cannot together take
// more memory than the budget, however many arrive.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <optional>

namespace octet::serve {

class MemoryBudget {
 public:
  explicit MemoryBudget(size_t bytes) : capacity_(bytes) {}
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  // Bytes held until it is destroyed.
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& o) noexcept : budget_(o.budget_), bytes_(o.bytes_) { o.budget_ = nullptr; }
    Lease& operator=(Lease&& o) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { release(); }
    size_t bytes() const { return budget_ ? bytes_ : 0; }

   private:
    friend class MemoryBudget;
    Lease(MemoryBudget* b, size_t bytes) : budget_(b), bytes_(bytes) {}
    void release();
    MemoryBudget* budget_ = nullptr;
    size_t bytes_ = 0;
  };

  // `bytes`, waiting up to `wait` for leases to end; nullopt when they did not free enough (or
  // `bytes` is more than the whole budget).
  std::optional<Lease> reserve(size_t bytes, std::chrono::milliseconds wait);

  size_t capacity() const { return capacity_; }
  size_t in_use() const;

 private:
  const size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable freed_;
  size_t used_ = 0;
};

}  // namespace octet::serve
