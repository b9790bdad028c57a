#pragma once
// GapOrder::eigen_packets4 (kernels/ref/pool2d.h) over a value generator: the one scalar
// statement of Eigen's 4-float packet sum, which ORT's ReduceMean / ReduceSum over trailing
// axes, its GlobalAveragePool-like ReduceMean and its InstanceNormalization statistics all run.
// The SIMD kernels (kernels/elementwise/eltwise_loops.inc, gap_sums_eigen) take the same steps lane by lane.
#include <cstddef>

namespace octet::kernels {

// The float sum of value(0 .. n) with `lead` values before the first packet (lead > n: none
// whole). Under one whole packet: in order. Otherwise the even packets in one sum and the odd in
// another, added, then a last even packet, the four lanes as (l0 + l2) + (l1 + l3), then the
// lead and the trailing values in order.
template <class Value>
float sum_eigen_packets4(size_t n, size_t lead, Value value) {
  if (n == 0) return 0.0f;
  const size_t packets = n >= lead ? (n - lead) / 4 : 0;
  if (packets == 0) {
    float sum = value(size_t{0});
    for (size_t p = 1; p < n; ++p) sum += value(p);
    return sum;
  }
  float even[4], odd[4];
  for (size_t j = 0; j < 4; ++j) even[j] = value(lead + j);
  if (packets > 1) {
    for (size_t j = 0; j < 4; ++j) odd[j] = value(lead + 4 + j);
    size_t k = 2;
    for (; k + 2 <= packets; k += 2)
      for (size_t j = 0; j < 4; ++j) {
        even[j] += value(lead + 4 * k + j);
        odd[j] += value(lead + 4 * k + 4 + j);
      }
    for (size_t j = 0; j < 4; ++j) even[j] += odd[j];
    if (k < packets)
      for (size_t j = 0; j < 4; ++j) even[j] += value(lead + 4 * k + j);
  }
  float sum = (even[0] + even[2]) + (even[1] + even[3]);
  for (size_t p = 0; p < lead; ++p) sum += value(p);
  for (size_t p = lead + 4 * packets; p < n; ++p) sum += value(p);
  return sum;
}

}  // namespace octet::kernels
