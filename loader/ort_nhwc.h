#pragma once
// Which ReduceMean nodes of a QDQ model ONNX Runtime runs channels-last: the question behind
// ir::kOrtChannelsLastAttr. ORT's CPU provider turns a QDQ Conv unit into QLinearConv and its
// layout pass then runs that QLinearConv on NHWC data, with Transposes around it that its
// transpose optimizer pushes downstream. A Transpose pushed through a ReduceMean turns its axes
// {2, 3} into {1, 2} of the NHWC tensor, which ORT sums in another order (kernels/ref/qreduce.h).
#include <set>
#include <string>

namespace onnx {
class ModelProto;
}

namespace octet::loader {

// The output names of the main graph's ReduceMean nodes ORT runs channels-last, as far as
// octet follows its passes: a ReduceMean over exactly the two spatial axes of a 4-D tensor,
// keepdims 1, whose input is a per-tensor DequantizeLinear of a tensor a QDQ Conv unit produces
// (a QuantizeLinear of a Conv, or of a Relu or Clip after it, whose input and weight are
// DequantizeLinear outputs) or an ONNX QLinearConv produces. Chains through other ops are not followed (taken as NCHW). Throws nothing.
std::set<std::string> reduce_means_ort_runs_channels_last(const onnx::ModelProto& model);

}  // namespace octet::loader
