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

// The boxes kept for a class, a field per array, padded to whole groups of 4 with boxes of area 0
// (which never suppress), so that a candidate is tested against four at once.
using F4 = float __attribute__((vector_size(16)));
using I4 = int32_t __attribute__((vector_size(16)));

struct KeptBoxes {
  std::vector<F4> x0, x1, y0, y1, area;
  size_t count = 0;

  void clear() {
    x0.clear(), x1.clear(), y0.clear(), y1.clear(), area.clear();
    count = 0;
  }
  void add(const Extent& e) {
    if (count % 4 == 0) {
      const F4 zero = {0, 0, 0, 0};
      x0.push_back(zero), x1.push_back(zero), y0.push_back(zero), y1.push_back(zero), area.push_back(zero);
    }
    const size_t g = count / 4, l = count % 4;
    x0[g][l] = e.x0, x1[g][l] = e.x1, y0[g][l] = e.y0, y1[g][l] = e.y1, area[g][l] = e.area;
    ++count;
  }
};

// Whether a box kept for the class suppresses the candidate: ONNX Runtime's SuppressByIOU (an
// empty intersection or a degenerate box never suppresses; else IoU > threshold), against four
// kept boxes at a time: the same float operations per lane (std::max(a, b) is b where a < b,
// std::min(a, b) b where b < a), each early "false" a lane mask. tests/engine/test_nms.cc holds
// the pair test written out as ORT's, and checks the two agree.
bool suppressed(const Extent& a, const KeptBoxes& kept, float iou_threshold) {
  const F4 ax0 = a.x0 - F4{}, ax1 = a.x1 - F4{}, ay0 = a.y0 - F4{}, ay1 = a.y1 - F4{}, aarea = a.area - F4{};
  const F4 zero = {0, 0, 0, 0}, threshold = iou_threshold - F4{};
  auto pick = [](I4 m, F4 yes, F4 no) { return F4((m & I4(yes)) | (~m & I4(no))); };
  for (size_t g = 0; g < kept.x0.size(); ++g) {
    const F4 ix0 = pick(ax0 < kept.x0[g], kept.x0[g], ax0), ix1 = pick(kept.x1[g] < ax1, kept.x1[g], ax1);
    const F4 iy0 = pick(ay0 < kept.y0[g], kept.y0[g], ay0), iy1 = pick(kept.y1[g] < ay1, kept.y1[g], ay1);
    const F4 inter = (ix1 - ix0) * (iy1 - iy0);
    const F4 uni = aarea + kept.area[g] - inter;
    const I4 no = (ix1 <= ix0) | (iy1 <= iy0) | (inter <= zero) | (aarea <= zero) | (kept.area[g] <= zero) | (uni <= zero);
    const I4 yes = ~no & (inter / uni > threshold);
    if ((yes[0] | yes[1] | yes[2] | yes[3]) != 0) return true;
  }
  return false;
}

}  // namespace

std::vector<int64_t> non_max_suppression(const NmsProblem& p) {
  std::vector<int64_t> selected;
  if (p.max_per_class <= 0) return selected;
  std::vector<Candidate> heap;
  std::vector<Extent> extents(size_t(p.boxes_per_image));
  KeptBoxes kept;
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
      while (!heap.empty() && int64_t(kept.count) < p.max_per_class) {
        std::pop_heap(heap.begin(), heap.end(), pops_later);
        const int64_t box = heap.back().box;
        heap.pop_back();
        const Extent& e = extents[size_t(box)];
        if (suppressed(e, kept, p.iou_threshold)) continue;
        kept.add(e);
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
