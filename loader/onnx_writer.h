#pragma once
// Writes ir::Graph as an ONNX model that ONNX Runtime can run: the way octet hands a graph
// back to the rest of the world (e.g. the QDQ model produced by calibration).
//
// The loader normalises every op to its newest form (Clip bounds, Squeeze/Unsqueeze axes and
// Pad pads as inputs, legacy attributes dropped); the writer emits opset max(graph opset, 13)
// and turns each op back into the form valid at that opset (e.g. ReduceMean axes become an
// attribute again below opset 18). Loading what it writes gives the same graph back when the
// graph was loaded at opset 13 or later (older ones come back in their opset-13 form).
#include <string>

#include "core/ir.h"

namespace octet::loader {

struct WriteOptions {
  std::string producer = "octet";  // ModelProto.producer_name
  std::string doc;                 // ModelProto.doc_string
};

// Serializes `g` as an ONNX ModelProto (IR version 8). Throws ir::Error naming the node when
// the graph holds something ONNX cannot express, e.g. the octet-internal attributes
// "fused_act" / "fused_act_params" that passes::fuse_activations adds: write a graph before
// activation fusion.
std::string save_onnx_bytes(const ir::Graph& g, const WriteOptions& o = {});

// Writes the model atomically: to "<path>.tmp-XXXXXX" in the same directory, then renames it
// over `path`. On any failure nothing is left behind and an existing file at `path` is
// untouched; the ir::Error names the path.
void save_onnx(const ir::Graph& g, const std::string& path, const WriteOptions& o = {});

}  // namespace octet::loader
