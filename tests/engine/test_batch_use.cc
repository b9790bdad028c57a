// Each op declares whether it keeps the images of a batch apart (OpImpl::batch_use) and the
// Session slices a batch only when every step of the slice plan does. Every case runs the same
// model on a batch of 3 with slices of 1 and 2 images and without slicing: the outputs must be
// the same (so a wrong "keeps apart" fails), and whether the session slices must be what the
// op does (so a wrong "mixes" fails too). Where the images are independent, the sliced run is
// also checked against one run per image.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/session.h"
#include "loader/onnx_loader.h"
#include "tests/util/onnx_builder.h"

namespace octet {
namespace {

using testing::OnnxBuilder;
using testing::TensorValue;

struct Result {
  ir::Dims dims;
  std::vector<float> values;
  bool operator==(const Result&) const = default;
};

Result run(const std::string& bytes, int slice, const ir::TensorData& in, bool* sliced = nullptr) {
  SessionOptions o;
  o.batch_slice = slice;
  Session s(loader::load_onnx_bytes(bytes, "batch_use"), o);
  if (sliced) *sliced = s.slices_batches();
  const auto out = s.run({in});
  return {out[0].dims, std::vector<float>(out[0].as<float>(), out[0].as<float>() + out[0].count())};
}

// A batch of 3 images of `image` dims, distinct values so that any mixing shows.
ir::TensorData batch_of(int64_t images, const ir::Dims& image) {
  ir::Dims dims{images};
  dims.insert(dims.end(), image.begin(), image.end());
  ir::TensorData t = ir::TensorData::f32(dims, std::vector<float>(size_t(ir::element_count(dims))));
  auto* v = reinterpret_cast<float*>(t.bytes.data());
  for (int64_t i = 0; i < t.count(); ++i) v[i] = 0.25f * float((i * 7) % 11) - float(i % 3);
  return t;
}

ir::TensorData image_of(const ir::TensorData& batch, int64_t i) {
  ir::Dims dims = batch.dims;
  dims[0] = 1;
  const size_t row = batch.bytes.size() / size_t(batch.dims[0]);
  ir::TensorData t = ir::TensorData::make(batch.dtype, dims);
  ir::copy_bytes(t.bytes.data(), batch.bytes.data() + size_t(i) * row, row);
  return t;
}

// Builds a model of one input x [N, image...] through `body` and checks it as described above.
void check(const std::string& what, const ir::Dims& image, bool keeps_apart,
           const std::function<std::string(OnnxBuilder&, const std::string&)>& body) {
  SCOPED_TRACE(what);
  OnnxBuilder b(13, "batch_use", 3);
  ir::Dims x_dims{-1};
  x_dims.insert(x_dims.end(), image.begin(), image.end());
  b.output(body(b, b.input("x", x_dims)));
  const std::string bytes = b.serialize();
  const ir::TensorData x = batch_of(3, image);
  const Result whole = run(bytes, 0, x);
  for (int slice : {1, 2}) {
    bool sliced = false;
    EXPECT_EQ(run(bytes, slice, x, &sliced), whole) << "slices of " << slice;
    EXPECT_EQ(sliced, keeps_apart) << "slices of " << slice;
  }
  if (!keeps_apart) return;
  // Image by image, alone, gives the same rows.
  std::vector<float> rows;
  for (int64_t i = 0; i < 3; ++i) {
    const Result one = run(bytes, 0, image_of(x, i));
    rows.insert(rows.end(), one.values.begin(), one.values.end());
  }
  EXPECT_EQ(rows, whole.values);
}

TEST(BatchUse, SoftmaxMixesAlongTheBatchAxisCountedEitherWay) {
  for (int64_t axis : {0, -4})
    check("Softmax axis " + std::to_string(axis), {2, 1, 1}, false,
          [&](OnnxBuilder& b, const std::string& x) { return b.node("Softmax", {x}, {{"axis", axis}}); });
  for (int64_t axis : {1, -3})
    check("Softmax axis " + std::to_string(axis), {2, 1, 1}, true,
          [&](OnnxBuilder& b, const std::string& x) { return b.node("Softmax", {x}, {{"axis", axis}}); });
}

TEST(BatchUse, ConcatAndSplitMixOnlyAlongTheBatchAxis) {
  check("Concat axis 0", {2, 1, 1}, false,
        [](OnnxBuilder& b, const std::string& x) { return b.node("Concat", {x, b.node("Relu", {x})}, {{"axis", 0}}); });
  check("Concat axis -4", {2, 1, 1}, false,
        [](OnnxBuilder& b, const std::string& x) { return b.node("Concat", {x, b.node("Relu", {x})}, {{"axis", -4}}); });
  check("Concat axis 1", {2, 1, 1}, true,
        [](OnnxBuilder& b, const std::string& x) { return b.node("Concat", {x, b.node("Relu", {x})}, {{"axis", 1}}); });
  check("Split axis 1", {4, 1}, true, [](OnnxBuilder& b, const std::string& x) {
    return b.node_multi("Split", {x}, 2, {{"axis", 1}})[1];
  });
}

TEST(BatchUse, ReduceMeanMixesOverTheBatchAxisOrAllAxes) {
  check("ReduceMean axes [0]", {2, 1, 1}, false, [](OnnxBuilder& b, const std::string& x) {
    return b.node("ReduceMean", {x}, {{"axes", {0}}, {"keepdims", 1}});
  });
  check("ReduceMean axes [-4]", {2, 1, 1}, false, [](OnnxBuilder& b, const std::string& x) {
    return b.node("ReduceMean", {x}, {{"axes", {-4}}, {"keepdims", 1}});
  });
  check("ReduceMean over all axes", {2, 1, 1}, false,
        [](OnnxBuilder& b, const std::string& x) { return b.node("ReduceMean", {x}, {{"keepdims", 1}}); });
  check("ReduceMean axes [1, 2, 3]", {4, 3, 1}, true, [](OnnxBuilder& b, const std::string& x) {
    return b.node("ReduceMean", {x}, {{"axes", {1, -2, 3}}, {"keepdims", 0}});
  });
  // Eigen's packets start at 16-byte boundaries counted from the first image: an image of 6
  // floats run alone would start its packets elsewhere (ORT's bits only over the whole batch).
  check("ReduceMean axes [1, 2, 3] of 6 floats", {2, 3, 1}, false, [](OnnxBuilder& b, const std::string& x) {
    return b.node("ReduceMean", {x}, {{"axes", {1, -2, 3}}, {"keepdims", 0}});
  });
  check("ReduceMax axes [1, 2, 3] of 6 floats", {2, 3, 1}, true, [](OnnxBuilder& b, const std::string& x) {
    return b.node("ReduceMax", {x}, {{"axes", {1, -2, 3}}, {"keepdims", 0}});
  });
}

TEST(BatchUse, TransposeMixesWhenAxis0Moves) {
  check("Transpose perm [1, 0, 2, 3]", {2, 1, 1}, false,
        [](OnnxBuilder& b, const std::string& x) { return b.node("Transpose", {x}, {{"perm", {1, 0, 2, 3}}}); });
  check("Transpose reversed", {2, 3}, false, [](OnnxBuilder& b, const std::string& x) { return b.node("Transpose", {x}); });
  check("Transpose perm [0, 2, 3, 1]", {2, 3, 1}, true,
        [](OnnxBuilder& b, const std::string& x) { return b.node("Transpose", {x}, {{"perm", {0, 2, 3, 1}}}); });
}

// A literal [1, -1] keeps axis 0 at 1 in the plan of a 1-image slice, yet joins the images of
// any other batch; [0, -1], [-1, 2] and a batch read with Shape keep them in front.
TEST(BatchUse, ReshapeKeepsImagesApartOnlyWhenTheBatchStaysInFront) {
  check("Reshape [1, -1]", {2, 1, 1}, false, [](OnnxBuilder& b, const std::string& x) {
    return b.node("Reshape", {x, b.initializer_i64("shape", {2}, {1, -1})});
  });
  check("Reshape [2, -1]", {2, 1, 1}, false, [](OnnxBuilder& b, const std::string& x) {
    return b.node("Reshape", {x, b.initializer_i64("shape", {2}, {2, -1})});
  });
  check("Reshape [-1]", {2, 1, 1}, false, [](OnnxBuilder& b, const std::string& x) {
    return b.node("Reshape", {x, b.initializer_i64("shape", {1}, {-1})});
  });
  check("Flatten axis 0", {2, 1, 1}, false,
        [](OnnxBuilder& b, const std::string& x) { return b.node("Flatten", {x}, {{"axis", 0}}); });
  check("Reshape [0, -1]", {2, 1, 1}, true, [](OnnxBuilder& b, const std::string& x) {
    return b.node("Reshape", {x, b.initializer_i64("shape", {2}, {0, -1})});
  });
  check("Reshape [-1, 2]", {2, 1, 1}, true, [](OnnxBuilder& b, const std::string& x) {
    return b.node("Reshape", {x, b.initializer_i64("shape", {2}, {-1, 2})});
  });
  check("Flatten axis 1", {2, 1, 1}, true, [](OnnxBuilder& b, const std::string& x) { return b.node("Flatten", {x}); });
  // x.view(x.size(0), -1) as PyTorch exports it: the batch read with Shape and Gather.
  check("Reshape [Shape(x)[0], -1]", {2, 1, 1}, true, [](OnnxBuilder& b, const std::string& x) {
    auto n = b.node("Gather", {b.node("Shape", {x}), b.initializer_i64("zero", {}, {0})}, {{"axis", 0}});
    auto shape = b.node("Concat", {b.node("Unsqueeze", {n, b.initializer_i64("axes", {1}, {0})}),
                                   b.initializer_i64("rest", {1}, {-1})},
                        {{"axis", 0}});
    return b.node("Reshape", {x, shape});
  });
  // The same read, but of the channels: a literal in effect.
  check("Reshape [Shape(x)[1], -1]", {2, 1, 1}, false, [](OnnxBuilder& b, const std::string& x) {
    auto c = b.node("Gather", {b.node("Shape", {x}), b.initializer_i64("one", {}, {1})}, {{"axis", 0}});
    auto shape = b.node("Concat", {b.node("Unsqueeze", {c, b.initializer_i64("axes", {1}, {0})}),
                                   b.initializer_i64("rest", {1}, {-1})},
                        {{"axis", 0}});
    return b.node("Reshape", {x, shape});
  });
}

// A segmentation head's upsampling to a size read with Shape: sizes [N, C] of x and a literal
// [H, W] follow the batch, and keep each image on its own row at any batch.
TEST(BatchUse, ResizeToSizesReadWithShapeKeepsImagesApart) {
  for (const char* mode : {"nearest", "linear"})
    check(std::string("Resize ") + mode + " to [Shape(x)[0:2], 4, 6]", {2, 2, 3}, true,
          [&](OnnxBuilder& b, const std::string& x) {
            auto nc = b.node("Slice", {b.node("Shape", {x}), b.initializer_i64("starts", {1}, {0}),
                                       b.initializer_i64("ends", {1}, {2})});
            auto sizes = b.node("Concat", {nc, b.initializer_i64("hw", {2}, {4, 6})}, {{"axis", 0}});
            return b.node("Resize", {x, "", "", sizes}, {{"mode", std::string(mode)}});
          });
}

TEST(BatchUse, SliceAndGatherMixWhenTheyPickImages) {
  check("Slice axis 0 [0, 1)", {2, 1, 1}, false, [](OnnxBuilder& b, const std::string& x) {
    return b.node("Slice", {x, b.initializer_i64("starts", {1}, {0}), b.initializer_i64("ends", {1}, {1}),
                            b.initializer_i64("axes", {1}, {0})});
  });
  check("Slice axis 0 to the end", {2, 1, 1}, true, [](OnnxBuilder& b, const std::string& x) {
    return b.node("Slice", {x, b.initializer_i64("starts", {1}, {0}), b.initializer_i64("ends", {1}, {INT64_MAX}),
                            b.initializer_i64("axes", {1}, {0})});
  });
  check("Slice axis 1", {4, 1}, true, [](OnnxBuilder& b, const std::string& x) {
    return b.node("Slice", {x, b.initializer_i64("starts", {1}, {1}), b.initializer_i64("ends", {1}, {3}),
                            b.initializer_i64("axes", {1}, {1})});
  });
  check("Gather axis 0", {2, 1, 1}, false, [](OnnxBuilder& b, const std::string& x) {
    return b.node("Gather", {x, b.initializer_i64("index", {1}, {0})}, {{"axis", 0}});
  });
  check("Gather axis 1", {4, 1}, true, [](OnnxBuilder& b, const std::string& x) {
    return b.node("Gather", {x, b.initializer_i64("index", {2}, {3, 0})}, {{"axis", 1}});
  });
}

TEST(BatchUse, MatMulMixesWhenTheImagesAreSummedOver) {
  check("MatMul x W", {4}, true, [](OnnxBuilder& b, const std::string& x) {
    return b.node("MatMul", {x, b.random_normal_init("w", {4, 3})});
  });
  // Batched: image i of x times its own transpose.
  check("MatMul x x^T batched", {2, 3}, true, [](OnnxBuilder& b, const std::string& x) {
    return b.node("MatMul", {x, b.node("Transpose", {x}, {{"perm", {0, 2, 1}}})});
  });
  // x^T x: every output value sums over the images.
  check("Gemm transA", {4}, false, [](OnnxBuilder& b, const std::string& x) {
    return b.node("Gemm", {x, b.node("Relu", {x})}, {{"transA", 1}});
  });
}

// An element-wise op keeps images apart, but not when one operand is the batch size itself
// (read with Shape): each image's result would depend on how many images it runs with.
TEST(BatchUse, AConstantReadFromTheBatchSizeMixes) {
  check("Add(x, float(Shape(x)[0]))", {2}, false, [](OnnxBuilder& b, const std::string& x) {
    auto n = b.node("Gather", {b.node("Shape", {x}), b.initializer_i64("zero", {}, {0})}, {{"axis", 0}});
    return b.node("Add", {x, b.node("Cast", {n}, {{"to", int64_t{1}}})});
  });
  check("Add(x, float(Shape(x)[1]))", {2}, true, [](OnnxBuilder& b, const std::string& x) {
    auto c = b.node("Gather", {b.node("Shape", {x}), b.initializer_i64("one", {}, {1})}, {{"axis", 0}});
    return b.node("Add", {x, b.node("Cast", {c}, {{"to", int64_t{1}}})});
  });
}

// An op nobody declared mixes the images: the safe default.
TEST(BatchUse, AnOpWithoutADeclarationMixes) {
  const ir::Node node{};
  const OpContext c{node, 13};
  EXPECT_EQ(batch_use_of(OpImpl{}, c, {}), BatchUse::mixes_images);
  OpImpl declared;
  declared.batch_use = [](const OpContext&, const std::vector<TensorInfo>&) { return BatchUse::keeps_images_apart; };
  EXPECT_EQ(batch_use_of(declared, c, {}), BatchUse::keeps_images_apart);
}

TEST(BatchUse, DynamicQuantizeLinearMixesTheBatchIntoOneRange) {
  check("DynamicQuantizeLinear", {2, 1, 1}, false, [](OnnxBuilder& b, const std::string& x) {
    auto q = b.node_multi("DynamicQuantizeLinear", {x}, 3);
    return b.node("DequantizeLinear", {q[0], q[1], q[2]});
  });
}

// The bundled models (conv nets whose Flatten is a Reshape to [Shape(x)[0], -1]) still slice,
// one image at a time too.
TEST(BatchUse, TheBundledConvNetsStillSlice) {
  for (const char* name : {"tinynet", "resnet8"}) {
    SCOPED_TRACE(name);
    const std::string path = std::string(OCTET_SOURCE_DIR) + "/models/" + name + ".onnx";
    for (int slice : {1, 3}) {
      SessionOptions o;
      o.batch_slice = slice;
      Session s = Session::load(path, o);
      EXPECT_TRUE(s.slices_batches()) << "slices of " << slice;
      SessionOptions whole_options;
      whole_options.batch_slice = 0;
      Session whole = Session::load(path, whole_options);
      ir::Dims image(s.inputs()[0].dims.begin() + 1, s.inputs()[0].dims.end());
      const ir::TensorData x = batch_of(4, image);
      const auto a = s.run({x}), b = whole.run({x});
      ASSERT_EQ(a[0].dims, b[0].dims);
      EXPECT_EQ(a[0].bytes, b[0].bytes) << "slices of " << slice;
    }
  }
}

}  // namespace
}  // namespace octet
