// MaxPool's Indices and MaxUnpool against ONNX Runtime: the indices byte for byte at every level
// (both storage orders, batch 3: they count across the batch), and a SegNet-style
// encoder-decoder (Conv -> MaxPool with Indices -> Conv -> MaxUnpool -> Conv) at batch 1 and 5.
#include <gtest/gtest.h>

#include "tests/parity/parity_fixture.h"

namespace octet::parity {
namespace maxunpool_parity {

using testing::ElemType;
using testing::OnnxBuilder;

TEST(MaxPoolIndicesParity, IndicesAreOrtsAtEveryLevel) {
  OCTET_SKIP_WITHOUT_ORT();
  for (int64_t order : {0, 1}) {
    OnnxBuilder b(13);
    const ir::Dims dims{3, 19, 13, 11};
    auto out = b.node_multi("MaxPool", {b.input("x", dims)}, 2,
                            {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 0, 1, 1}}, {"storage_order", order}});
    b.output(out[0]);
    b.output(out[1], ElemType::s64);
    expect_ort_bytes_at_every_level(b, "maxpool_indices_storage_order" + std::to_string(order),
                                    {{"x", random_inputs({dims}, dims[0], 3)[0]}});
  }
}

class MaxUnpoolParity : public ParityTest {};

TEST_F(MaxUnpoolParity, SegNetBlock) {
  OCTET_SKIP_WITHOUT_ORT();
  OnnxBuilder b(13);
  auto x = b.input("x", {-1, 3, 16, 16});
  auto conv = [&](const std::string& in, int64_t cin, int64_t cout) {
    return b.node("Relu", {b.node("Conv", {in, b.random_normal_init("", {cout, cin, 3, 3}, 0.0f, 0.3f), b.random_normal_init("", {cout})},
                                  {{"pads", {1, 1, 1, 1}}})});
  };
  const testing::Attrs window = {{"kernel_shape", {2, 2}}, {"strides", {2, 2}}};
  auto pooled = b.node_multi("MaxPool", {conv(x, 3, 16)}, 2, window);
  auto up = b.node("MaxUnpool", {conv(pooled[0], 16, 16), pooled[1]}, window);
  b.output(conv(up, 16, 8));
  check_model(b, "segnet_block");
}

}  // namespace maxunpool_parity
}  // namespace octet::parity
