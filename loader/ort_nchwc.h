#pragma once
// Which BatchNormalization nodes ONNX Runtime's NCHWc layout pass (its CPU provider's level-3
// rewrite, active when MLAS has an NCHWc block: 8 floats on x86-64, 16 with AVX-512F) turns into
// a 1x1 depthwise NCHWc Conv: the question behind ir::kOrtNchwcBlocksAttr. docs/kernels.md
// ("BatchNormalization no conv absorbs") states the rules this follows.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace onnx {
class ModelProto;
}

namespace octet::loader {

// The pools ORT's NCHWc pass may block: the channel counts its shape inference knows for their
// inputs come from one input_channels_ort_knows over these ops (loader/ort_shapes.h).
inline const char* const kOrtNchwcPools[] = {"MaxPool", "AveragePool", "GlobalMaxPool", "GlobalAveragePool"};

// The BatchNormalization nodes of the main graph that ORT's pass rewrites, by output name, with
// the blocks (8, 16) at which it does, given the channels ORT knows for the kOrtNchwcPools'
// inputs. Throws nothing.
std::map<std::string, std::vector<int64_t>> batchnorms_ort_rewrites(
    const onnx::ModelProto& model, const std::map<std::string, int64_t>& pool_channels);

}  // namespace octet::loader
