#pragma once
// TopK's selection when k is small against the axis, as ONNX Runtime 1.30's CPU kernel makes it
// (math/top_k.cc; probed): a binary heap of k indices, the worst kept at the root (a parent is
// never `before` a child). Filled from the back, each new index sifted down; a later index
// replaces the root only when `better` (values only, strictly) than the root; emptied root
// first into the output from the back. The order "value, then index" is no order once a NaN is
// in the row (it compares neither way with anything), and then which NaN is kept and where it
// lands is whatever these steps leave: another heap (std::partial_sort's) leaves another answer,
// hence ORT's steps, its choice between two children included.
#include <cstdint>
#include <utility>

namespace octet::ops {

template <class Before>
void topk_sift_down(int64_t* h, int64_t i, int64_t size, const Before& before) {
  for (;;) {
    const int64_t l = 2 * i + 1, r = l + 1;
    int64_t to = -1;
    if (r < size) {
      const bool below_l = before(h[i], h[l]);
      if (below_l && before(h[r], h[l])) to = l;
      else if (below_l || before(h[i], h[r])) to = r;
    } else if (l < size && before(h[i], h[l])) {
      to = l;
    }
    if (to < 0) return;
    std::swap(h[i], h[to]);
    i = to;
  }
}

// The heap of the k best of indices 0 .. len-1 in heap[0 .. k): in heap order, which is TopK's
// output order with sorted = 0.
template <class Before, class Better>
void topk_heap_fill(int64_t len, int64_t k, int64_t* heap, const Before& before, const Better& better) {
  for (int64_t i = 0; i < k; ++i) {
    heap[k - 1 - i] = i;
    topk_sift_down(heap, k - 1 - i, k, before);
  }
  for (int64_t i = k; i < len; ++i)
    if (better(i, heap[0])) {
      heap[0] = i;
      topk_sift_down(heap, 0, k, before);
    }
}

// The k best of indices 0 .. len-1 into order[0 .. k), best first; `heap` holds k scratch indices
// (it may be `order`).
template <class Before, class Better>
void topk_heap_select(int64_t len, int64_t k, int64_t* heap, int64_t* order, const Before& before, const Better& better) {
  topk_heap_fill(len, k, heap, before, better);
  for (int64_t i = k - 1; i >= 0; --i) {
    const int64_t top = heap[0];
    heap[0] = heap[i];
    topk_sift_down(heap, 0, i, before);
    order[i] = top;
  }
}

}  // namespace octet::ops
