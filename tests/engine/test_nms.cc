// ops::non_max_suppression (four kept boxes tested at once, extents computed once per box)
// against ONNX Runtime's algorithm written out pair by pair (SuppressByIOU's expressions, its
// priority queue's order), on random boxes and on the cases that decide a branch: flipped
// corners, zero and negative sizes, identical boxes, NaN and infinite coordinates and scores,
// score ties, every count of kept boxes below and across a group of four.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <queue>
#include <random>

#include "engine/ops/nms.h"

namespace octet {
namespace {

void max_min(float a, float b, float& lo, float& hi) {
  if (a >= b) lo = b, hi = a;
  else lo = a, hi = b;
}

bool suppress_by_iou(const float* boxes, int64_t i1, int64_t i2, bool center, float threshold) {
  const float* b1 = boxes + 4 * i1;
  const float* b2 = boxes + 4 * i2;
  float x1_min, x1_max, x2_min, x2_max, y1_min, y1_max, y2_min, y2_max;
  if (!center) {
    max_min(b1[1], b1[3], x1_min, x1_max);
    max_min(b2[1], b2[3], x2_min, x2_max);
  } else {
    x1_min = b1[0] - b1[2] / 2, x1_max = b1[0] + b1[2] / 2;
    x2_min = b2[0] - b2[2] / 2, x2_max = b2[0] + b2[2] / 2;
  }
  const float ix_min = std::max(x1_min, x2_min), ix_max = std::min(x1_max, x2_max);
  if (ix_max <= ix_min) return false;
  if (!center) {
    max_min(b1[0], b1[2], y1_min, y1_max);
    max_min(b2[0], b2[2], y2_min, y2_max);
  } else {
    y1_min = b1[1] - b1[3] / 2, y1_max = b1[1] + b1[3] / 2;
    y2_min = b2[1] - b2[3] / 2, y2_max = b2[1] + b2[3] / 2;
  }
  const float iy_min = std::max(y1_min, y2_min), iy_max = std::min(y1_max, y2_max);
  if (iy_max <= iy_min) return false;
  const float inter = (ix_max - ix_min) * (iy_max - iy_min);
  if (inter <= 0.0f) return false;
  const float area1 = (x1_max - x1_min) * (y1_max - y1_min);
  const float area2 = (x2_max - x2_min) * (y2_max - y2_min);
  const float uni = area1 + area2 - inter;
  if (area1 <= 0.0f || area2 <= 0.0f || uni <= 0.0f) return false;
  return inter / uni > threshold;
}

std::vector<int64_t> reference(const ops::NmsProblem& p) {
  struct Box {
    float score;
    int64_t index;
    bool operator<(const Box& o) const { return score < o.score || (score == o.score && index > o.index); }
  };
  std::vector<int64_t> out;
  for (int64_t b = 0; b < p.batches; ++b)
    for (int64_t c = 0; c < p.classes; ++c) {
      const float* s = p.scores + (b * p.classes + c) * p.boxes_per_image;
      std::vector<Box> candidates;
      for (int64_t i = 0; i < p.boxes_per_image; ++i)
        if (!p.score_threshold || s[i] > *p.score_threshold) candidates.push_back({s[i], i});
      // Built from the whole vector, as ORT builds it: with NaN scores the order depends on it.
      std::priority_queue<Box> q(std::less<Box>(), std::move(candidates));
      std::vector<int64_t> kept;
      while (!q.empty() && int64_t(kept.size()) < p.max_per_class) {
        const int64_t i = q.top().index;
        q.pop();
        bool keep = true;
        for (int64_t k : kept)
          if (suppress_by_iou(p.boxes + b * p.boxes_per_image * 4, i, k, p.center_point_box, p.iou_threshold)) {
            keep = false;
            break;
          }
        if (!keep) continue;
        kept.push_back(i);
        out.insert(out.end(), {b, c, i});
      }
    }
  return out;
}

struct Data {
  std::vector<float> boxes, scores;
};

// Coordinates of few distinct values (so that boxes touch, coincide and flip), with specials.
Data make(std::mt19937& rng, int64_t batches, int64_t classes, int64_t n, bool specials) {
  Data d;
  std::uniform_int_distribution<int> pick(0, 11);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (int64_t i = 0; i < batches * n * 4; ++i) {
    const int k = pick(rng);
    float v = k < 6 ? float(k) : u(rng) * 6.0f;
    if (specials && k == 11) v = (i % 3 == 0) ? NAN : (i % 3 == 1 ? INFINITY : -INFINITY);
    d.boxes.push_back(v);
  }
  for (int64_t i = 0; i < batches * classes * n; ++i) {
    const int k = pick(rng);
    float v = k < 4 ? 0.25f * float(k) : u(rng);
    if (specials && k == 11) v = (i % 2 == 0) ? NAN : INFINITY;
    d.scores.push_back(v);
  }
  return d;
}

TEST(NonMaxSuppression, EqualsOrtsAlgorithmPairByPair) {
  std::mt19937 rng(11);
  int cases = 0;
  for (bool specials : {false, true})
    for (int64_t n : {1, 2, 3, 4, 5, 7, 8, 9, 13, 40, 120})
      for (bool center : {false, true})
        for (float iou : {0.0f, 0.3f, 0.5f, 1.0f})
          for (int64_t max_out : {1, 3, 4, 5, 8, 1000}) {
            const Data d = make(rng, 2, 3, n, specials);
            ops::NmsProblem p;
            p.boxes = d.boxes.data();
            p.scores = d.scores.data();
            p.batches = 2, p.classes = 3, p.boxes_per_image = n;
            p.max_per_class = max_out;
            p.iou_threshold = iou;
            p.center_point_box = center;
            if (max_out != 3) p.score_threshold = max_out == 1000 ? 0.2f : 0.0f;
            const auto want = reference(p);
            const auto got = ops::non_max_suppression(p);
            ASSERT_EQ(got, want) << "n " << n << " center " << center << " iou " << iou << " max " << max_out
                                 << " specials " << specials;
            cases += want.size() > 3;
          }
  EXPECT_GT(cases, 100);  // most cases keep several boxes
}

TEST(NonMaxSuppression, NoneWhenMaxIsZero) {
  const std::vector<float> boxes = {0, 0, 1, 1}, scores = {0.9f};
  ops::NmsProblem p;
  p.boxes = boxes.data(), p.scores = scores.data();
  p.batches = p.classes = p.boxes_per_image = 1;
  EXPECT_TRUE(ops::non_max_suppression(p).empty());
  p.max_per_class = 1;
  EXPECT_EQ(ops::non_max_suppression(p), (std::vector<int64_t>{0, 0, 0}));
}

}  // namespace
}  // namespace octet
