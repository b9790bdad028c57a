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

// A box's extent and area as ONNX Runtime computes them for each pair it compares (flipped
// corners put in order; centre +- half size), computed once per box: the same floats, so the
// same answers, without redoing them for every pair.
struct Extent {
  float x0, x1, y0, y1, area;
};

Extent extent_of(const float* b, bool center_point_box) {
  Extent e;
  if (!center_point_box) {
    min_max(b[1], b[3], e.x0, e.x1);
    min_max(b[0], b[2], e.y0, e.y1);
  } else {
    const float w = b[2] / 2, h = b[3] / 2;
    e.x0 = b[0] - w;
    e.x1 = b[0] + w;
    e.y0 = b[1] - h;
    e.y1 = b[1] + h;
  }
  e.area = (e.x1 - e.x0) * (e.y1 - e.y0);
  return e;
}

// Whether `kept` suppresses the candidate `a`: ONNX Runtime's SuppressByIOU, its expressions in
// their order (an empty intersection or a degenerate box never suppresses).
bool overlaps_too_much(const Extent& a, const Extent& kept, float iou_threshold) {
  const float ix0 = std::max(a.x0, kept.x0), ix1 = std::min(a.x1, kept.x1);
  if (ix1 <= ix0) return false;
  const float iy0 = std::max(a.y0, kept.y0), iy1 = std::min(a.y1, kept.y1);
  if (iy1 <= iy0) return false;
  const float inter = (ix1 - ix0) * (iy1 - iy0);
  if (inter <= 0.0f) return false;
  const float uni = a.area + kept.area - inter;
  if (a.area <= 0.0f || kept.area <= 0.0f || uni <= 0.0f) return false;
  return inter / uni > iou_threshold;
}

}  // namespace

std::vector<int64_t> non_max_suppression(const NmsProblem& p) {
  std::vector<int64_t> selected;
  if (p.max_per_class <= 0) return selected;
  std::vector<Candidate> heap;
  std::vector<Extent> extents(size_t(p.boxes_per_image)), kept;
  heap.reserve(size_t(p.boxes_per_image));
  for (int64_t b = 0; b < p.batches; ++b) {
    const float* boxes = p.boxes + b * p.boxes_per_image * 4;
    for (int64_t i = 0; i < p.boxes_per_image; ++i) extents[size_t(i)] = extent_of(boxes + i * 4, p.center_point_box);
    for (int64_t c = 0; c < p.classes; ++c) {
      const float* scores = p.scores + (b * p.classes + c) * p.boxes_per_image;
      heap.clear();
      if (!p.score_threshold) {
        for (int64_t i = 0; i < p.boxes_per_image; ++i) heap.push_back({scores[i], i});
      } else {
        // Most of a detector's scores are below the threshold: blocks of 16 without a candidate
        // are passed over in one test (a vector compare where the compiler makes one).
        const float threshold = *p.score_threshold;
        int64_t i = 0;
        for (; i + 16 <= p.boxes_per_image; i += 16) {
          bool any = false;
          for (int64_t j = 0; j < 16; ++j) any |= scores[i + j] > threshold;
          if (!any) continue;
          for (int64_t j = i; j < i + 16; ++j)
            if (scores[j] > threshold) heap.push_back({scores[j], j});
        }
        for (; i < p.boxes_per_image; ++i)
          if (scores[i] > threshold) heap.push_back({scores[i], i});
      }
      std::make_heap(heap.begin(), heap.end(), pops_later);
      kept.clear();
      while (!heap.empty() && int64_t(kept.size()) < p.max_per_class) {
        std::pop_heap(heap.begin(), heap.end(), pops_later);
        const int64_t box = heap.back().box;
        heap.pop_back();
        const Extent& e = extents[size_t(box)];
        bool keep = true;
        for (const Extent& k : kept)
          if (overlaps_too_much(e, k, p.iou_threshold)) {
            keep = false;
            break;
          }
        if (!keep) continue;
        kept.push_back(e);
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
