#pragma once
// Which BatchNormalization nodes ONNX Runtime's NCHWc layout pass (its CPU provider's level-3
// rewrite, active when MLAS has an NCHWc block: 8 floats on x86-64, 16 with AVX-512F) turns into
// a 1x1 depthwise NCHWc Conv: the question behind ir::kOrtNchwcBlocksAttr. docs/kernels.md
// ("BatchNormalization no conv absorbs") states the rules this follows.
#include <set>
#include <string>

namespace onnx {
class ModelProto;
}

namespace octet::loader {

// The output names of the BatchNormalization nodes of the main graph that ORT's pass rewrites
// with an NCHWc block of `block` floats. Throws nothing.
std::set<std::string> batchnorms_ort_blocks(const onnx::ModelProto& model, int block);

}  // namespace octet::loader
