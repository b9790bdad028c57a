// The indexing ops of detector post-processing and export glue against ONNX Runtime at batches 1
// and 5 (the batch is sliced where the ops keep images apart): TopK's candidates picked from the
// boxes with GatherElements and GatherND, Tile and OneHot of run-time indices, Trilu of
// per-image matrices, and YOLOv5's ScatterND writes into the grid. An index out of range fails
// the run with the node's name.
#include <gtest/gtest.h>

#include "engine/session.h"
#include "tests/parity/parity_fixture.h"

namespace octet::parity {
namespace index_ops_parity {

using testing::ElemType;
using testing::OnnxBuilder;
using testing::TensorValue;

std::string i64s(OnnxBuilder& b, std::vector<int64_t> v) { return b.initializer_i64("", {int64_t(v.size())}, v); }

class IndexOpsParity : public ParityTest {};

TEST_F(IndexOpsParity, TopKCandidatesPickedFromTheBoxes) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto scores = b.input("scores", {-1, 840});
  auto boxes = b.input("boxes", {-1, 840, 4});
  auto top = b.node_multi("TopK", {scores, i64s(b, {50})}, 2, {{"axis", int64_t(1)}});
  b.output(top[0]);  // the int64 indices are checked through what they pick (the harness compares floats)
  auto idx = b.node("Unsqueeze", {top[1], i64s(b, {2})});
  b.output(b.node("GatherElements", {boxes, b.node("Tile", {idx, i64s(b, {1, 1, 4})})}, {{"axis", int64_t(1)}}));
  b.output(b.node("GatherND", {boxes, idx}, {{"batch_dims", int64_t(1)}}));
  auto few = b.node_multi("TopK", {b.input("logits", {-1, 3, 12}), i64s(b, {4})}, 2, {{"largest", int64_t(0)}});
  b.output(b.node("OneHot", {few[1], b.initializer_i64("", {}, {12}), b.initializer("", {2}, {0.0f, 1.0f})}));
  check_model(b, "topk_candidates");
}

TEST_F(IndexOpsParity, TriluOfPerImageMatrices) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(14);
  auto x = b.input("x", {-1, 6, 7});
  b.output(b.node("Trilu", {x, b.initializer("", TensorValue::scalar_s64(1))}));
  b.output(b.node("Trilu", {x, b.initializer("", TensorValue::scalar_s64(-2))}, {{"upper", int64_t(0)}}));
  check_model(b, "trilu");
}

// YOLOv5's Detect head (export without its grid folded) writes xy and wh into the last axis of
// [1, 3, H, W, 85] with ScatterND over every coordinate tuple.
TEST_F(IndexOpsParity, ScatterNdIntoTheGrid) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(16);  // ScatterND's reduction
  const int64_t a = 3, h = 4, w = 5, c = 9;
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < a; ++i)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x)
        for (int64_t k = 0; k < 2; ++k) idx.insert(idx.end(), {0, i, y, x, k});
  auto grid = b.input("p", {1, a, h, w, c});
  auto xy = b.node("Mul", {b.input("xy", {1, a, h, w, 2}), b.initializer("", TensorValue::scalar_f32(2.0f))});
  auto y = b.node("ScatterND", {grid, b.initializer_i64("", {1, a, h, w, 2, 5}, idx), xy});
  b.output(b.node("ScatterND", {y, b.initializer_i64("", {2, 1}, {0, 0}), b.input("u", {2, a, h, w, c})},
                  {{"reduction", "add"}}));
  check_model(b, "scatter_nd_grid", {1});
}

// A run-time index out of range is an error that names the node, never a read out of bounds.
TEST(IndexOps, OutOfRangeIndexIsAnError) {
  OnnxBuilder b(13);
  auto x = b.input("x", {2, 5});
  auto k = b.node("Cast", {b.input("i", {2, 3})}, {{"to", int64_t(7)}});
  b.output(b.node("GatherElements", {x, k}, {{"axis", int64_t(1)}}));
  const std::string path = ::testing::TempDir() + "/gather_elements_oob.onnx";
  b.save(path);
  Session s = Session::load(path);
  auto run = [&](float v) {
    std::vector<float> i(6, v);
    return s.run({ir::TensorData::f32({2, 5}, std::vector<float>(10, 1.0f)), ir::TensorData::f32({2, 3}, i)});
  };
  EXPECT_NO_THROW(run(-5.0f));  // -5 is element 0
  try {
    run(5.0f);
    ADD_FAILURE() << "index 5 of an axis of 5 was accepted";
  } catch (const ir::Error& e) {
    EXPECT_NE(std::string(e.what()).find("GatherElements"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
  }
  EXPECT_THROW(run(-6.0f), ir::Error);
}

}  // namespace index_ops_parity
}  // namespace octet::parity
