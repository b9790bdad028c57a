#pragma once
// NonMaxSuppression's selection, as ONNX Runtime's CPU kernel computes it
// (object_detection/non_max_suppression.cc): per image, per class, candidates by score
// descending (ties: lower box index first), each kept unless its IoU with a box already kept for
// the class exceeds the threshold, up to max_per_class.
#include <cstdint>
#include <optional>
#include <vector>

namespace octet::ops {

struct NmsProblem {
  const float* boxes = nullptr;   // [batches, boxes, 4]
  const float* scores = nullptr;  // [batches, classes, boxes]
  int64_t batches = 0, classes = 0, boxes_per_image = 0;
  int64_t max_per_class = 0;      // 0: nothing is selected
  float iou_threshold = 0;
  std::optional<float> score_threshold;  // candidates score above it (strictly) when given
  bool center_point_box = false;  // boxes are [x_center, y_center, width, height], else [y1, x1, y2, x2]
};

// The selected (batch, class, box) triples in ONNX Runtime's order.
std::vector<int64_t> non_max_suppression(const NmsProblem& p);

}  // namespace octet::ops
