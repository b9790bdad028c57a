// Session::run slices a large batch into slices of images when every image is computed on its
// own; the result must be the unsliced run's, and a model that mixes images must not be sliced.
#include <gtest/gtest.h>

#include <cmath>


#include "engine/session.h"
#include "kernels/cache_budgets.h"
#include "kernels/isa.h"
#include "loader/onnx_loader.h"
#include "tests/util/onnx_builder.h"

namespace octet {
namespace {

using testing::OnnxBuilder;

ir::Graph conv_head(bool softmax_over_batch, int64_t batch_axis = 0) {
  OnnxBuilder b(13, "slices", 5);
  auto x = b.input("x", {-1, 3, 9, 9});
  auto y = b.node("Relu", {b.node("Conv", {x, b.random_normal_init("w", {8, 3, 3, 3}), b.random_normal_init("b", {8})},
                                  {{"pads", {1, 1, 1, 1}}})});
  auto flat = b.node("Flatten", {b.node("GlobalAveragePool", {y})});
  auto logits = b.node("Gemm", {flat, b.random_normal_init("fc", {4, 8}), b.random_normal_init("fcb", {4})},
                       {{"transB", 1}});
  b.output(softmax_over_batch ? b.node("Softmax", {logits}, {{"axis", batch_axis}}) : logits);
  return loader::load_onnx_bytes(b.serialize(), "slices");
}

std::vector<float> run(bool softmax_over_batch, int slice, int batch, int64_t batch_axis = 0) {
  SessionOptions o;
  o.batch_slice = slice;
  Session s(conv_head(softmax_over_batch, batch_axis), o);
  auto in = ir::TensorData::f32({batch, 3, 9, 9}, testing::random_normal(size_t(batch) * 3 * 81, 9));
  auto out = s.run({in});
  EXPECT_EQ(out[0].dims, (ir::Dims{batch, 4}));
  return {out[0].as<float>(), out[0].as<float>() + out[0].count()};
}

TEST(BatchSlices, SlicedRunEqualsWholeBatchRun) {
  for (int slice : {1, 2, 3}) {
    const std::vector<float> whole = run(false, 0, 7), sliced = run(false, slice, 7);
    ASSERT_EQ(whole.size(), sliced.size());
    // The same kernels on the same rows: bit-identical.
    for (size_t i = 0; i < whole.size(); ++i) ASSERT_EQ(whole[i], sliced[i]) << "slice " << slice << " at " << i;
  }
}

TEST(BatchSlices, AModelMixingImagesIsNotSliced) {
  // Softmax over axis 0 (or -2, the same axis of the [N, 4] logits counted from the back)
  // normalizes across the batch: per-image runs would give all ones.
  for (int64_t axis : {0, -2}) {
    const std::vector<float> whole = run(true, 0, 6, axis), sliced = run(true, 1, 6, axis);
    for (size_t i = 0; i < whole.size(); ++i) ASSERT_EQ(whole[i], sliced[i]) << "axis " << axis << " at " << i;
    float column = 0;
    for (int r = 0; r < 6; ++r) column += sliced[size_t(r) * 4];
    EXPECT_NEAR(column, 1.0f, 1e-5f) << "axis " << axis;
  }
}

// Issue 16's case: one Softmax over axis -4 of [N, 2, 1, 1] is the batch axis counted from the
// back; `octet run --random --batch 3` once returned all ones (each image normalised alone).
TEST(BatchSlices, SoftmaxOverAxisMinus4OfRank4IsNotSliced) {
  OnnxBuilder b(13, "softmax_minus4", 2);
  b.output(b.node("Softmax", {b.input("x", {-1, 2, 1, 1})}, {{"axis", int64_t{-4}}}));
  SessionOptions o;
  o.batch_slice = 1;
  Session s(loader::load_onnx_bytes(b.serialize(), "softmax_minus4"), o);
  EXPECT_FALSE(s.slices_batches());
  const std::vector<float> x = {0.0f, 1.0f, 1.0f, 2.0f, 2.0f, 3.0f};  // images 0, 1, 2
  const auto out = s.run({ir::TensorData::f32({3, 2, 1, 1}, x)});
  const float* y = out[0].as<float>();
  for (int c = 0; c < 2; ++c) {
    // Each channel normalised over the 3 images: exp(c + i) / sum_j exp(c + j).
    const double sum = std::exp(0.0) + std::exp(1.0) + std::exp(2.0);
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(y[i * 2 + c], std::exp(double(i)) / sum, 1e-6) << "image " << i;
  }
}

// DynamicQuantizeLinear's range spans the batch: slicing would quantize each image with its
// own range and differ from the whole-batch run (and from ONNX Runtime).
TEST(BatchSlices, ADynamicQuantizationModelIsNotSliced) {
  OnnxBuilder b(13, "dynamic_slices", 6);
  auto x = b.input("x", {-1, 16});
  auto q = b.node_multi("DynamicQuantizeLinear", {x}, 3);
  std::vector<int64_t> w(16 * 4);
  for (size_t i = 0; i < w.size(); ++i) w[i] = int64_t(i % 11) - 5;
  auto acc = b.node("MatMulInteger", {q[0], b.initializer("w", testing::TensorValue::s8({16, 4}, w)), q[2]});
  b.output(b.node("Mul", {b.node("Cast", {acc}, {{"to", int64_t{1}}}), q[1]}));
  auto run_dynamic = [&](int slice) {
    SessionOptions o;
    o.batch_slice = slice;
    Session s(loader::load_onnx_bytes(b.serialize(), "dynamic_slices"), o);
    // Image 0 spans [-100, 100], image 1 [-1, 1]: one range for both, or one each.
    std::vector<float> v(32);
    for (int i = 0; i < 16; ++i) v[size_t(i)] = float(i - 8) * 12.5f, v[size_t(16 + i)] = float(i - 8) / 8.0f;
    auto out = s.run({ir::TensorData::f32({2, 16}, v)});
    return std::vector<float>(out[0].as<float>(), out[0].as<float>() + out[0].count());
  };
  EXPECT_EQ(run_dynamic(0), run_dynamic(1));
}

}  // namespace
}  // namespace octet

namespace octet {
namespace {

// The automatic slice: many images when the weights dwarf one image's activations (they share
// each pass over the weights), one image when an image's activations alone overflow the cache.
TEST(BatchSlices, AutomaticSliceWeighsWeightsAgainstActivations) {
  const size_t cache = kernels::per_core_cache_bytes();
  {
    // 1024 x 1024 float weights (4 MiB) against 8 KB of activations per image.
    OnnxBuilder b(13, "wide_fc", 3);
    b.output(b.node("MatMul", {b.input("x", {-1, 1024}), b.random_normal_init("w", {1024, 1024})}));
    Session s(loader::load_onnx_bytes(b.serialize(), "wide_fc"));
    EXPECT_TRUE(s.slices_batches());
    EXPECT_EQ(s.batch_slice(), 16) << "activations " << s.activation_bytes_per_image() << " cache " << cache;
  }
  {
    // An image of 16 x 1024 x 1024 floats (64 MiB in, 64 MiB out): more than any core's cache.
    OnnxBuilder b(13, "big_maps", 3);
    b.output(b.node("Relu", {b.input("x", {-1, 16, 1024, 1024})}));
    Session s(loader::load_onnx_bytes(b.serialize(), "big_maps"));
    EXPECT_EQ(s.batch_slice(), 1) << "activations " << s.activation_bytes_per_image() << " cache " << cache;
  }
  {
    // A 3x3 conv 512 -> 512 at 8x16 (32 Winograd tiles, so it runs as Winograd at batch 1):
    // 9 MiB of weights in the graph, 16 MiB once Winograd has transformed them (16 positions x
    // 512 x 512 floats), which is what each pass reads. The slice must count the kernels'
    // bytes, not the graph's (which would give about half).
    OnnxBuilder b(13, "winograd_weights", 3);
    b.output(b.node("Conv", {b.input("x", {-1, 512, 8, 16}), b.random_normal_init("w", {512, 512, 3, 3})},
                    {{"pads", {1, 1, 1, 1}}}));
    Session s(loader::load_onnx_bytes(b.serialize(), "winograd_weights"));
    const size_t activations = s.activation_bytes_per_image();
    const size_t transformed = size_t{16} * 512 * 512 * sizeof(float);
    EXPECT_GE(size_t(s.batch_slice()), std::min<size_t>(16, transformed / (4 * activations)))
        << "activations " << activations << " cache " << cache;
  }
  // Asked for, a slice is taken as it is.
  SessionOptions o;
  o.batch_slice = 3;
  EXPECT_EQ(Session(conv_head(false), o).batch_slice(), 3);
}

}  // namespace
}  // namespace octet

namespace octet {
namespace {

// A conv net (conv, pool, Flatten, Gemm) keeps its images apart: it slices at any slice size.
TEST(BatchSlices, AConvNetSlices) {
  for (int slice : {1, 2, 16}) {
    SessionOptions o;
    o.batch_slice = slice;
    EXPECT_TRUE(Session(conv_head(false), o).slices_batches()) << "slices of " << slice;
  }
}

}  // namespace
}  // namespace octet

namespace octet {
namespace {

std::vector<float> run_threads(int threads, int slice, int batch) {
  SessionOptions o;
  o.batch_slice = slice;
  o.threads = threads;
  Session s(conv_head(false), o);
  auto in = ir::TensorData::f32({batch, 3, 9, 9}, testing::random_normal(size_t(batch) * 3 * 81, 9));
  auto out = s.run({in});
  EXPECT_EQ(out[0].dims, (ir::Dims{batch, 4}));
  return {out[0].as<float>(), out[0].as<float>() + out[0].count()};
}

// With threads, a batch is shared out: each thread runs its images (shares of 4 and 3 for 7
// images on 2 threads, in slices of the slice size) through a plan of its own. The result is
// the one-thread whole-batch run's, bit for bit (the same kernels on the same rows).
TEST(BatchSlices, ImagesSharedOverThreadsEqualTheOneThreadRun) {
  for (int threads : {2, 3})
    for (int slice : {-1, 1, 2, 3})
      for (int batch : {1, 2, 3, 7}) {
        const std::vector<float> one = run_threads(1, 0, batch), shared = run_threads(threads, slice, batch);
        ASSERT_EQ(one.size(), shared.size());
        for (size_t i = 0; i < one.size(); ++i)
          ASSERT_EQ(one[i], shared[i]) << threads << " threads, slice " << slice << ", batch " << batch << " at " << i;
      }
}

TEST(BatchSlices, OnlyAModelThatKeepsImagesApartSharesThemOverThreads) {
  SessionOptions o;
  o.threads = 2;
  EXPECT_EQ(Session(conv_head(false), o).image_threads(), 2);
  EXPECT_EQ(Session(conv_head(true), o).image_threads(), 1);  // Softmax over the batch
  o.batch_slice = 0;  // never sliced: each step splits instead
  EXPECT_EQ(Session(conv_head(false), o).image_threads(), 1);
  o.batch_slice = -1;
  o.threads = 1;
  EXPECT_EQ(Session(conv_head(false), o).image_threads(), 1);
  // The model mixing images still runs right with threads: its Softmax normalises over the batch.
  o.threads = 2;
  o.batch_slice = 1;
  Session mixed(conv_head(true), o);
  auto out = mixed.run({ir::TensorData::f32({6, 3, 9, 9}, testing::random_normal(6 * 3 * 81, 9))});
  float column = 0;
  for (int r = 0; r < 6; ++r) column += out[0].as<float>()[r * 4];
  EXPECT_NEAR(column, 1.0f, 1e-5f);
}

}  // namespace
}  // namespace octet
