#pragma once
// Classification metrics from a [count, classes] score matrix and integer labels.
#include <cstdint>
#include <vector>

namespace octet {

// The k highest-scoring classes of one row, highest first; equal scores rank the lower class
// first, so the first is the argmax every octet report uses.
std::vector<int> top_classes(const float* row, int classes, int k);

// Models with more classes get no confusion matrix: its memory grows with the square of the
// class count (1000 classes: a million cells nobody reads in a terminal).
constexpr int kMaxConfusionClasses = 100;

struct ClassificationMetrics {
  int64_t images = 0, labelled = 0;
  int64_t top1_correct = 0, top5_correct = 0;
  std::vector<int64_t> per_class_total, per_class_correct;
  std::vector<std::vector<int64_t>> confusion;  // [true class][predicted class]; empty above kMaxConfusionClasses
  std::vector<int> predictions;                 // top-1 per image

  double top1() const { return labelled ? double(top1_correct) / double(labelled) : 0.0; }
  double top5() const { return labelled ? double(top5_correct) / double(labelled) : 0.0; }
};

// Labels of -1 (unknown) count in predictions but not in accuracy.
ClassificationMetrics classify(const float* scores, int64_t count, int classes, const std::vector<int>& labels);

// Share of images whose top-1 class is the same in both, and the largest |a - b|.
struct Agreement {
  int64_t same_top1 = 0, images = 0;
  double max_abs_diff = 0, max_abs_ref = 0;
};
Agreement compare_scores(const float* a, const float* b, int64_t count, int classes);

}  // namespace octet
