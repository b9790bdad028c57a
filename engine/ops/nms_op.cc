// NonMaxSuppression (opset 10, 11): selected indices [count, 3], run between two stages.
#include <algorithm>
#include <cmath>

#include "engine/op_registry.h"
#include "engine/ops/nms.h"

namespace octet {
namespace ops {
namespace {

struct Candidate {
  float score;
  int64_t box;
};

// The order ONNX Runtime's priority queue pops candidates in: higher score first, then lower box.
bool pops_later(const Candidate& a, const Candidate& b) {
  return a.score < b.score || (a.score == b.score && a.box > b.box);
}

void min_max(float a, float b, float& lo, float& hi) {
  if (a >= b) {
    lo = b;
    hi = a;
  } else {
    lo = a;
    hi = b;
  }
}

// Whether box a suppresses box b: ONNX Runtime's float expressions in their order (flipped
// corners are put in order first; an empty intersection or a degenerate box never suppresses).
bool overlaps_too_much(const float* a, const float* b, bool center_point_box, float iou_threshold) {
  float ax0, ax1, ay0, ay1, bx0, bx1, by0, by1;
  if (!center_point_box) {
    min_max(a[1], a[3], ax0, ax1);
    min_max(b[1], b[3], bx0, bx1);
  } else {
    const float aw = a[2] / 2, bw = b[2] / 2;
    ax0 = a[0] - aw;
    ax1 = a[0] + aw;
    bx0 = b[0] - bw;
    bx1 = b[0] + bw;
  }
  const float ix0 = std::max(ax0, bx0), ix1 = std::min(ax1, bx1);
  if (ix1 <= ix0) return false;
  if (!center_point_box) {
    min_max(a[0], a[2], ay0, ay1);
    min_max(b[0], b[2], by0, by1);
  } else {
    const float ah = a[3] / 2, bh = b[3] / 2;
    ay0 = a[1] - ah;
    ay1 = a[1] + ah;
    by0 = b[1] - bh;
    by1 = b[1] + bh;
  }
  const float iy0 = std::max(ay0, by0), iy1 = std::min(ay1, by1);
  if (iy1 <= iy0) return false;
  const float inter = (ix1 - ix0) * (iy1 - iy0);
  if (inter <= 0.0f) return false;
  const float area_a = (ax1 - ax0) * (ay1 - ay0);
  const float area_b = (bx1 - bx0) * (by1 - by0);
  const float uni = area_a + area_b - inter;
  if (area_a <= 0.0f || area_b <= 0.0f || uni <= 0.0f) return false;
  return inter / uni > iou_threshold;
}

}  // namespace

std::vector<int64_t> non_max_suppression(const NmsProblem& p) {
  std::vector<int64_t> selected;
  if (p.max_per_class <= 0) return selected;
  std::vector<Candidate> heap;
  std::vector<int64_t> kept;
  heap.reserve(size_t(p.boxes_per_image));
  for (int64_t b = 0; b < p.batches; ++b) {
    const float* boxes = p.boxes + b * p.boxes_per_image * 4;
    for (int64_t c = 0; c < p.classes; ++c) {
      const float* scores = p.scores + (b * p.classes + c) * p.boxes_per_image;
      heap.clear();
      for (int64_t i = 0; i < p.boxes_per_image; ++i)
        if (!p.score_threshold || scores[i] > *p.score_threshold) heap.push_back({scores[i], i});
      std::make_heap(heap.begin(), heap.end(), pops_later);
      kept.clear();
      while (!heap.empty() && int64_t(kept.size()) < p.max_per_class) {
        std::pop_heap(heap.begin(), heap.end(), pops_later);
        const int64_t box = heap.back().box;
        heap.pop_back();
        bool keep = true;
        for (int64_t k : kept)
          if (overlaps_too_much(boxes + box * 4, boxes + k * 4, p.center_point_box, p.iou_threshold)) {
            keep = false;
            break;
          }
        if (!keep) continue;
        kept.push_back(box);
        selected.insert(selected.end(), {b, c, box});
      }
    }
  }
  return selected;
}

}  // namespace ops

namespace {

std::vector<ir::TensorData> nms(const OpContext& c) {
  const ir::TensorData& boxes = *c.in_const[0];
  const ir::TensorData& scores = *c.in_const[1];
  if (boxes.dtype != ir::DType::f32 || scores.dtype != ir::DType::f32) c.fail("boxes and scores must be float");
  if (boxes.dims.size() != 3 || scores.dims.size() != 3) c.fail("boxes and scores must be 3-D");
  if (boxes.dims[0] != scores.dims[0] || boxes.dims[1] != scores.dims[2] || boxes.dims[2] != 4)
    c.fail("boxes " + ir::dims_str(boxes.dims) + " and scores " + ir::dims_str(scores.dims) +
           " do not match ([batches, boxes, 4] and [batches, classes, boxes])");
  const int64_t center = c.node.attrs.i("center_point_box", 0);
  if (center != 0 && center != 1) c.fail("center_point_box must be 0 or 1");
  ops::NmsProblem p;
  p.boxes = reinterpret_cast<const float*>(boxes.bytes.data());
  p.scores = reinterpret_cast<const float*>(scores.bytes.data());
  p.batches = boxes.dims[0];
  p.classes = scores.dims[1];
  p.boxes_per_image = boxes.dims[1];
  p.center_point_box = center == 1;
  auto scalar = [&](size_t i) -> const ir::TensorData* {
    if (!c.has(i)) return nullptr;
    const ir::TensorData& t = *c.in_const[i];
    if (t.count() < 1) c.fail("input " + std::to_string(i) + " ('" + c.node.inputs[i] + "') is empty");
    return &t;
  };
  if (const ir::TensorData* t = scalar(2)) {
    if (t->dtype != ir::DType::s64) c.fail("max_output_boxes_per_class must be int64");
    p.max_per_class = std::max<int64_t>(t->to_i64()[0], 0);
  }
  if (const ir::TensorData* t = scalar(3)) {
    if (t->dtype != ir::DType::f32) c.fail("iou_threshold must be float");
    p.iou_threshold = reinterpret_cast<const float*>(t->bytes.data())[0];
    if (!(p.iou_threshold >= 0 && p.iou_threshold <= 1)) c.fail("iou_threshold must be in range [0, 1]");
  }
  if (const ir::TensorData* t = scalar(4)) {
    if (t->dtype != ir::DType::f32) c.fail("score_threshold must be float");
    p.score_threshold = reinterpret_cast<const float*>(t->bytes.data())[0];
  }
  const std::vector<int64_t> selected = ops::non_max_suppression(p);
  return {ir::TensorData::s64({int64_t(selected.size() / 3), 3}, selected)};
}

}  // namespace

void register_nms_op(OpTable& t) { t.emplace_back("NonMaxSuppression", value_shaped_op(nms)); }

}  // namespace octet
