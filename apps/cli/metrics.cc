#include "apps/cli/metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace octet {

std::vector<int> top_classes(const float* row, int classes, int k) {
  std::vector<int> order(size_t(std::max(classes, 0)));
  std::iota(order.begin(), order.end(), 0);
  k = std::clamp(k, 0, int(order.size()));
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](int a, int b) { return row[a] > row[b] || (row[a] == row[b] && a < b); });
  order.resize(size_t(k));
  return order;
}

namespace {

int argmax(const float* row, int classes) { return int(std::max_element(row, row + classes) - row); }

}  // namespace

ClassificationMetrics classify(const float* scores, int64_t count, int classes, const std::vector<int>& labels) {
  ClassificationMetrics m;
  m.images = count;
  m.per_class_total.assign(size_t(classes), 0);
  m.per_class_correct.assign(size_t(classes), 0);
  if (classes <= kMaxConfusionClasses) m.confusion.assign(size_t(classes), std::vector<int64_t>(size_t(classes), 0));
  for (int64_t i = 0; i < count; ++i) {
    const float* row = scores + i * classes;
    const int pred = argmax(row, classes);
    m.predictions.push_back(pred);
    const int label = i < int64_t(labels.size()) ? labels[size_t(i)] : -1;
    if (label < 0 || label >= classes) continue;
    ++m.labelled;
    ++m.per_class_total[size_t(label)];
    if (!m.confusion.empty()) m.confusion[size_t(label)][size_t(pred)]++;
    if (pred == label) {
      ++m.top1_correct;
      ++m.per_class_correct[size_t(label)];
    }
    // Top-5: the label is among the 5 highest scores (ties broken by class index).
    const std::vector<int> top5 = top_classes(row, classes, 5);
    if (std::find(top5.begin(), top5.end(), label) != top5.end()) ++m.top5_correct;
  }
  return m;
}

Agreement compare_scores(const float* a, const float* b, int64_t count, int classes) {
  Agreement g;
  g.images = count;
  for (int64_t i = 0; i < count; ++i) {
    g.same_top1 += argmax(a + i * classes, classes) == argmax(b + i * classes, classes);
    for (int c = 0; c < classes; ++c) {
      g.max_abs_diff = std::max(g.max_abs_diff, double(std::abs(a[i * classes + c] - b[i * classes + c])));
      g.max_abs_ref = std::max(g.max_abs_ref, double(std::abs(b[i * classes + c])));
    }
  }
  return g;
}

}  // namespace octet
