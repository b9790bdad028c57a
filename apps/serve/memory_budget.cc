#include "apps/serve/memory_budget.h"

namespace octet::serve {

MemoryBudget::Lease& MemoryBudget::Lease::operator=(Lease&& o) noexcept {
  if (this != &o) {
    release();
    budget_ = o.budget_;
    bytes_ = o.bytes_;
    o.budget_ = nullptr;
  }
  return *this;
}

void MemoryBudget::Lease::release() {
  if (!budget_) return;
  {
    std::lock_guard<std::mutex> lock(budget_->mutex_);
    budget_->used_ -= bytes_;
  }
  budget_->freed_.notify_all();
  budget_ = nullptr;
}

std::optional<MemoryBudget::Lease> MemoryBudget::reserve(size_t bytes, std::chrono::milliseconds wait) {
  if (bytes > capacity_) return std::nullopt;
  std::unique_lock<std::mutex> lock(mutex_);
  if (!freed_.wait_for(lock, wait, [&] { return capacity_ - used_ >= bytes; })) return std::nullopt;
  used_ += bytes;
  return Lease(this, bytes);
}

size_t MemoryBudget::in_use() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return used_;
}

}  // namespace octet::serve
