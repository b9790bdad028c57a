#include "loader/importers.h"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <optional>

#include "kernels/ref/activation.h"

namespace octet::loader {
namespace {

using ir::AttrValue;
using ir::Error;
using ir::Node;
using ir::TensorData;

using int8::AttrSpec;

struct Importer {
  int64_t min_opset = 1;  // of the default domain; contrib ops have no opset of their own here
  std::vector<AttrSpec> attrs;
  std::function<void(Node&, ImportContext&)> normalize;  // may be empty
};

// An op's domain: the INT8 table's for the INT8 ops the loader reads, else the default ONNX one.
std::string domain_of(const std::string& op) {
  const int8::Int8Op* r = int8::find(op);
  return r && r->imported ? r->domain : "";
}

AttrValue ints() { return std::vector<int64_t>{}; }
AttrValue str(const char* s) { return std::string(s); }
AttrValue i64(int64_t v) { return v; }
AttrValue f32(float v) { return v; }

// Moves an attribute that later opsets take as an input into that input slot.
void attr_to_input(Node& n, ImportContext& ctx, const std::string& attr, size_t slot,
                   TensorData data) {
  if (n.inputs.size() <= slot) n.inputs.resize(slot + 1);
  n.inputs[slot] = ctx.add_constant(n.name + "." + attr, std::move(data));
  n.attrs.erase(attr);
}

void axes_attr_to_input(Node& n, ImportContext& ctx) {
  if (!n.attrs.has("axes")) return;
  auto axes = n.attrs.ints("axes");
  attr_to_input(n, ctx, "axes", 1, TensorData::s64({int64_t(axes.size())}, axes));
}

void reject_unless(Node& n, const std::string& attr, int64_t allowed, const std::string& why) {
  if (n.attrs.has(attr) && n.attrs.i(attr) != allowed)
    throw Error(attr + "=" + std::to_string(n.attrs.i(attr)) + " is not supported (" + why + ")");
}

// BatchNormalization and Dropout before opset 7. Like ONNX's 6 -> 7 version converter, only an
// explicit is_test=0 means training; a missing is_test is taken as inference.
void drop_is_test(Node& n) {
  if (n.attrs.i("is_test") == 0) throw Error("is_test=0 is not supported (training mode; inference only)");
  n.attrs.erase("is_test");
}

// QuantizeLinear's output_dtype (opset 21): 0 lets y_zero_point's type (or uint8) decide.
void check_quantized_output_dtype(const Node& n) {
  const int64_t t = n.attrs.i("output_dtype");
  if (t == 0 || t == onnx::TensorProto::UINT8 || t == onnx::TensorProto::INT8) return;
  throw Error("output_dtype=" + onnx_type_name(t) +
              " is not supported (uint8 or int8; float8, 4-bit and 16-bit outputs are not implemented)");
}

void reject_blocked(const Node& n) {
  if (n.attrs.i("block_size") != 0)
    throw Error("block_size=" + std::to_string(n.attrs.i("block_size")) +
                " is not supported (blocked quantization; octet quantizes per tensor or per axis)");
}

// An optional attribute naming a float type that octet only has in float32 (0: unspecified).
void require_float32_type_attr(const Node& n, const std::string& attr, const char* what) {
  const int64_t t = n.attrs.i(attr);
  if (t != 0 && t != onnx::TensorProto::FLOAT)
    throw Error(attr + "=" + onnx_type_name(t) + " is not supported (" + what + ")");
}

// An optional attribute without a default (Compress's and Unique's axis: absent means the
// flattened input): the schema's default is this impossible value, erased again here.
constexpr int64_t kAbsentAxis = std::numeric_limits<int64_t>::min();
void erase_absent_axis(Node& n, ImportContext&) {
  if (n.attrs.i("axis") == kAbsentAxis) n.attrs.erase("axis");
}

void reject_channels_last_node(Node& n, ImportContext&) {
  if (n.attrs.i("channels_last") != 0)
    throw Error("channels_last=1 is not supported (octet expects the NCHW form of this op; ONNX Runtime "
                "writes the NHWC form only into its own optimized graphs)");
}

// A pool window padded by its own size or more would take pure padding (-inf for MaxPool) at
// an edge; ONNX Runtime refuses such pads, so octet does too.
void check_pool_pads(Node& n, ImportContext&) {
  const auto& kernel = n.attrs.ints("kernel_shape");
  const auto& pads = n.attrs.ints("pads");
  if (pads.empty()) return;
  if (pads.size() != 2 * kernel.size())
    throw Error("pads has " + std::to_string(pads.size()) + " values, kernel_shape " +
                std::to_string(kernel.size()) + " axes (needs begin and end per axis)");
  for (size_t i = 0; i < pads.size(); ++i)
    if (pads[i] < 0 || pads[i] >= kernel[i % kernel.size()])
      throw Error("pads " + ir::dims_str(pads) + " must be non-negative and smaller than kernel_shape " +
                  ir::dims_str(kernel));
}

bool cast_target_supported(int64_t to) {
  switch (to) {
    case onnx::TensorProto::FLOAT:
    case onnx::TensorProto::DOUBLE:
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::INT64:
    case onnx::TensorProto::BOOL: return true;
    default: return false;
  }
}

// The checks an INT8 op's row asks for beyond its attribute schema.
std::function<void(Node&, ImportContext&)> import_checks(unsigned checks) {
  if (checks == int8::kNoChecks) return {};
  return [checks](Node& n, ImportContext& ctx) {
    if (checks & int8::kNchwOnly) reject_channels_last_node(n, ctx);
    if (checks & int8::kPoolPads) check_pool_pads(n, ctx);
  };
}

// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, Cast, and every INT8 op of the
// table (core/int8_ops.cc) that files may hold.
void add_quantization_importers(std::map<std::string, Importer>& t) {
  // axis defaults to 1 from opset 13 on; before, the op is per tensor and axis is never read.
  // saturate only matters for float8 outputs, which are rejected, so any value is accepted.
  t["QuantizeLinear"] = {10,
                         {{"axis", i64(1)}, {"saturate", i64(1)}, {"block_size", i64(0)},
                          {"output_dtype", i64(0)}, {"precision", i64(0)}},
                         [](Node& n, ImportContext&) {
                           reject_blocked(n);
                           check_quantized_output_dtype(n);
                           require_float32_type_attr(n, "precision", "the division is done in float32");
                         }};
  t["DequantizeLinear"] = {10,
                           {{"axis", i64(1)}, {"block_size", i64(0)}, {"output_dtype", i64(0)}},
                           [](Node& n, ImportContext&) {
                             reject_blocked(n);
                             require_float32_type_attr(n, "output_dtype", "float32 output only");
                           }};
  t["DynamicQuantizeLinear"] = {11, {}, {}};
  // Before opset 6 `to` is a type name string; those files predate quantization entirely.
  // saturate (19) and round_mode (24) only affect float8 targets.
  t["Cast"] = {6,
               {{"to", std::nullopt}, {"saturate", i64(1)}, {"round_mode", str("up")}},
               [](Node& n, ImportContext&) {
                 if (!std::holds_alternative<int64_t>(n.attrs.all().at("to")))
                   throw Error("attribute 'to' should be int (a TensorProto data type)");
                 if (!cast_target_supported(n.attrs.i("to")))
                   throw Error("Cast to " + onnx_type_name(n.attrs.i("to")) +
                               " is not supported (float, double, uint8, int8, int32, int64, bool)");
               }};

  // The target type is input 1's element type, which the loader has already checked.
  t["CastLike"] = {15, {{"saturate", i64(1)}, {"round_mode", str("up")}}, {}};

  for (const int8::Int8Op& r : int8::ops()) {
    if (!r.imported) continue;
    const auto& attrs = r.attrs_like.empty() ? r.attrs : t.at(r.attrs_like).attrs;
    t[r.op] = {r.min_opset, attrs, import_checks(r.import_checks)};
  }
}

const std::map<std::string, Importer>& importers() {
  static const std::map<std::string, Importer> table = [] {
    std::map<std::string, Importer> t;
    const std::vector<AttrSpec> conv_geometry = {{"auto_pad", str("NOTSET")}, {"dilations", ints()},
                                                 {"kernel_shape", ints()}, {"pads", ints()},
                                                 {"strides", ints()}};
    auto conv_attrs = conv_geometry;
    conv_attrs.push_back({"group", i64(1)});
    t["Conv"] = {1, conv_attrs, {}};
    auto deconv_attrs = conv_attrs;
    deconv_attrs.insert(deconv_attrs.end(), {{"output_padding", ints()}, {"output_shape", ints()}});
    t["ConvTranspose"] = {1, deconv_attrs, {}};

    t["BatchNormalization"] = {1,
                               {{"epsilon", f32(1e-5f)}, {"momentum", f32(0.9f)},
                                {"spatial", i64(1)}, {"training_mode", i64(0)},
                                {"is_test", i64(1)}, {"consumed_inputs", ints()}},
                               [](Node& n, ImportContext&) {
                                 drop_is_test(n);
                                 n.attrs.erase("consumed_inputs");
                                 reject_unless(n, "training_mode", 0, "inference only");
                                 reject_unless(n, "spatial", 1, "per-activation BatchNorm");
                                 // Outputs 1-4 (running and saved mean / variance) may be declared
                                 // by exporters that never read them: the loader drops them once
                                 // the whole graph shows no reader (onnx_loader.cc).
                               }};
    t["Relu"] = {1, {}, {}};
    t["Sigmoid"] = {1, {}, {}};
    for (const kernels::ActivationRow& row : kernels::kActivationRows) {
      std::vector<AttrSpec> attrs;
      for (int i = 0; i < 2; ++i)
        if (row.attr[i]) attrs.push_back({row.attr[i], f32(row.dflt[i])});
      t[row.op] = {row.since, attrs, {}};
    }
    // Opset 1 of LeakyRelu, Elu, Selu and PRelu carried the legacy consumed_inputs (dropped).
    auto drop_consumed = [](Node& n, ImportContext&) { n.attrs.erase("consumed_inputs"); };
    for (const char* op : {"LeakyRelu", "Elu", "Selu"}) {
      t.at(op).attrs.push_back({"consumed_inputs", ints()});
      t.at(op).normalize = drop_consumed;
    }
    t["PRelu"] = {1, {{"consumed_inputs", ints()}}, drop_consumed};
    // Before opset 7 Pow broadcasts only with broadcast=1, B's shape then a suffix of A's (numpy's
    // rule) unless an `axis` attribute aligns it elsewhere, which octet rejects as unknown.
    // octet broadcasts like numpy either way (a superset).
    t["Pow"] = {1, {{"broadcast", i64(0)}}, [](Node& n, ImportContext&) { n.attrs.erase("broadcast"); }};
    t["Gelu"] = {20, {{"approximate", str("none")}}, {}};
    t["InstanceNormalization"] = {6, {{"epsilon", f32(1e-5f)}}, {}};
    t["LayerNormalization"] = {17, {{"axis", i64(-1)}, {"epsilon", f32(1e-5f)}, {"stash_type", i64(1)}}, {}};
    // ONNX's GroupNormalization runs on the GroupNorm op (engine/ops/group_norm_op.cc), which
    // tells a scale and bias per group (before opset 21) from one per channel by their size.
    t["GroupNormalization"] = {18,
                               {{"num_groups", i64(-1)}, {"epsilon", f32(1e-5f)}, {"stash_type", i64(1)}},
                               [](Node& n, ImportContext& ctx) {
                                 if (n.attrs.i("num_groups") < 1)
                                   throw Error("required attribute 'num_groups' is missing or below 1");
                                 reject_unless(n, "stash_type", 1, "statistics of float32 inputs only");
                                 // Opset 21's attribute: a graph written back (octet quantize) at 18
                                 // must not carry it.
                                 if (ctx.opset < 21) n.attrs.erase("stash_type");
                               }};
    t["Clip"] = {1,
                 {{"min", f32(-std::numeric_limits<float>::infinity())},
                  {"max", f32(std::numeric_limits<float>::infinity())}},
                 [](Node& n, ImportContext& ctx) {
                   // Before opset 11 the bounds are attributes; from 11 on they are optional inputs.
                   if (ctx.opset >= 11) {
                     n.attrs.erase("min");
                     n.attrs.erase("max");
                     return;
                   }
                   float lo = n.attrs.f("min"), hi = n.attrs.f("max");
                   attr_to_input(n, ctx, "min", 1, TensorData::f32({}, std::vector<float>{lo}));
                   attr_to_input(n, ctx, "max", 2, TensorData::f32({}, std::vector<float>{hi}));
                 }};
    for (const char* op : {"Add", "Sub", "Mul", "Div"}) t[op] = {7, {}, {}};
    t["GlobalAveragePool"] = {1, {}, {}};
    t["GlobalMaxPool"] = {1, {}, {}};
    t["LRN"] = {1, {{"size", std::nullopt}, {"alpha", f32(1e-4f)}, {"beta", f32(0.75f)}, {"bias", f32(1.0f)}}, {}};
    t["Where"] = {9, {}, {}};
    // Before opset 7 the comparisons and And / Or / Xor broadcast only with broadcast=1 and an axis.
    for (const char* op : {"Equal", "Greater", "Less", "And", "Or", "Xor"}) t[op] = {7, {}, {}};
    for (const char* op : {"GreaterOrEqual", "LessOrEqual"}) t[op] = {12, {}, {}};
    t["Not"] = {1, {}, {}};
    t["IsNaN"] = {9, {}, {}};
    t["IsInf"] = {10, {{"detect_negative", i64(1)}, {"detect_positive", i64(1)}}, {}};
    t["Sign"] = {9, {}, {}};
    t["Shrink"] = {9, {{"lambd", f32(0.5f)}, {"bias", f32(0.0f)}}, {}};
    t["Mod"] = {10, {{"fmod", i64(0)}}, {}};
    // Before opset 8 Sum / Mean do not broadcast; octet always does (a superset). Opset 1's
    // consumed_inputs is not taken.
    for (const char* op : {"Sum", "Mean"}) t[op] = {6, {}, {}};
    // From opset 18 (ReduceMin / ReduceMax too) the axes are an input.
    for (const char* op : {"ReduceMean", "ReduceMin", "ReduceMax"})
      t[op] = {1,
               {{"keepdims", i64(1)}, {"noop_with_empty_axes", i64(0)}, {"axes", ints()}},
               [](Node& n, ImportContext& ctx) {
                 if (ctx.opset >= 18) n.attrs.erase("axes");
                 else if (n.attrs.ints("axes").empty()) n.attrs.erase("axes");
                 else axes_attr_to_input(n, ctx);
               }};
    // ReduceSum takes its axes as an input from opset 13 (the others from 18).
    t["ReduceSum"] = {1,
                      {{"keepdims", i64(1)}, {"noop_with_empty_axes", i64(0)}, {"axes", ints()}},
                      [](Node& n, ImportContext& ctx) {
                        if (ctx.opset >= 13) n.attrs.erase("axes");
                        else if (n.attrs.ints("axes").empty()) n.attrs.erase("axes");
                        else axes_attr_to_input(n, ctx);
                      }};
    // ReduceL1 / L2 / SumSquare / LogSum / LogSumExp / Prod take their axes as an input from
    // opset 18, like ReduceMean.
    for (const char* op : {"ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp", "ReduceProd"})
      t[op] = t.at("ReduceMean");
    t["LpNormalization"] = {1, {{"axis", i64(-1)}, {"p", i64(2)}}, {}};
    t["MeanVarianceNormalization"] = {9, {{"axes", AttrValue(std::vector<int64_t>{0, 2, 3})}}, {}};
    t["CumSum"] = {11, {{"exclusive", i64(0)}, {"reverse", i64(0)}}, {}};
    // Before opset 13 Hardmax flattens the input to 2-D at `axis`, whose default is 1 (-1 from 13).
    t["Hardmax"] = {1, {{"axis", i64(-1)}}, [](Node& n, ImportContext& ctx) {
                      n.attrs.set("coerce_2d", int64_t(ctx.opset < 13));
                    }};
    // Before opset 8 Min / Max do not broadcast; octet always does (a superset).
    for (const char* op : {"Min", "Max"}) t[op] = {6, {}, {}};
    auto pool_attrs = conv_geometry;
    pool_attrs.push_back({"ceil_mode", i64(0)});
    auto avg_attrs = pool_attrs;
    avg_attrs.push_back({"count_include_pad", i64(0)});
    t["AveragePool"] = {1, avg_attrs, check_pool_pads};  // opsets 1-6 only lack count_include_pad
    auto max_attrs = pool_attrs;
    max_attrs.push_back({"storage_order", i64(0)});
    t["MaxPool"] = {1, max_attrs, check_pool_pads};
    t["MaxUnpool"] = {9, {{"kernel_shape", std::nullopt}, {"pads", ints()}, {"strides", ints()}}, {}};
    // Before opset 7 `broadcast` allows C to broadcast; octet always does (a superset).
    t["Gemm"] = {1,
                 {{"alpha", f32(1.0f)}, {"beta", f32(1.0f)}, {"transA", i64(0)}, {"transB", i64(0)},
                  {"broadcast", i64(0)}},
                 [](Node& n, ImportContext&) { n.attrs.erase("broadcast"); }};
    t["MatMul"] = {1, {}, {}};
    t["Flatten"] = {1, {{"axis", i64(1)}}, {}};
    t["Reshape"] = {5, {{"allowzero", i64(0)}}, {}};
    // Before opset 13 Softmax flattens the input to 2-D at `axis`, whose default is 1.
    for (const char* op : {"Softmax", "LogSoftmax"})
      t[op] = {1, {{"axis", i64(-1)}}, [](Node& n, ImportContext& ctx) {
                 n.attrs.set("coerce_2d", int64_t(ctx.opset < 13));
               }};
    for (const char* op : {"ArgMax", "ArgMin"})
      t[op] = {1, {{"axis", i64(0)}, {"keepdims", i64(1)}, {"select_last_index", i64(0)}}, {}};
    t["DepthToSpace"] = {1, {{"blocksize", std::nullopt}, {"mode", str("DCR")}}, [](Node& n, ImportContext&) {
                           const auto& mode = n.attrs.s("mode");
                           if (mode != "DCR" && mode != "CRD")
                             throw Error("mode '" + mode + "' is not supported (DCR, CRD)");
                         }};
    t["SpaceToDepth"] = {1, {{"blocksize", std::nullopt}}, {}};
    t["Pad"] = {2, {{"mode", str("constant")}, {"pads", ints()}, {"value", f32(0.0f)}},
                [](Node& n, ImportContext& ctx) {
                  if (ctx.opset < 11) {
                    auto pads = n.attrs.ints("pads");
                    attr_to_input(n, ctx, "pads", 1, TensorData::s64({int64_t(pads.size())}, pads));
                    float v = n.attrs.f("value");
                    attr_to_input(n, ctx, "value", 2, TensorData::f32({}, std::vector<float>{v}));
                  } else {
                    n.attrs.erase("pads");
                    n.attrs.erase("value");
                  }
                  const auto& mode = n.attrs.s("mode");
                  if (mode != "constant" && mode != "reflect" && mode != "edge")
                    throw Error("mode '" + mode + "' is not supported (constant, reflect, edge)");
                }};
    // Resize-10 takes (X, scales) and always maps coordinates asymmetrically with Resize-10's
    // own nearest rounding ("simple"); from 11 on (X, roi, scales, sizes). Both become the latter.
    const std::vector<AttrSpec> resize_attrs = {
        {"mode", str("nearest")},
        {"coordinate_transformation_mode", str("half_pixel")},
        {"nearest_mode", str("round_prefer_floor")},
        {"cubic_coeff_a", f32(-0.75f)},
        {"exclude_outside", i64(0)},
        {"extrapolation_value", f32(0.0f)},
        {"antialias", i64(0)},
        {"axes", ints()},
        {"keep_aspect_ratio_policy", str("stretch")}};
    t["Resize"] = {10, resize_attrs, [](Node& n, ImportContext& ctx) {
                     if (ctx.opset >= 11) return;
                     if (n.inputs.size() != 2) throw Error("Resize-10 takes 2 inputs (X, scales)");
                     n.inputs = {n.inputs[0], "", n.inputs[1]};
                     n.attrs.set("coordinate_transformation_mode", std::string("asymmetric"));
                     n.attrs.set("nearest_mode", std::string("simple"));
                   }};
    // Upsample (deprecated at 10): Resize-10's arithmetic, scales an attribute before opset 9.
    t["Upsample"] = {7, {{"mode", str("nearest")}, {"scales", AttrValue(std::vector<float>{})}},
                     [resize_attrs](Node& n, ImportContext& ctx) {
                       if (ctx.opset < 9) {
                         const auto scales = n.attrs.floats("scales");
                         if (scales.empty()) throw Error("attribute 'scales' is required before opset 9");
                         if (n.inputs.size() != 1) throw Error("Upsample-7 takes 1 input (X)");
                         attr_to_input(n, ctx, "scales", 1, TensorData::f32({int64_t(scales.size())}, scales));
                       }
                       n.attrs.erase("scales");
                       if (n.inputs.size() != 2) throw Error("Upsample takes 2 inputs (X, scales)");
                       n.inputs = {n.inputs[0], "", n.inputs[1]};
                       for (const AttrSpec& a : resize_attrs)
                         if (!n.attrs.has(a.name)) n.attrs.set(a.name, *a.dflt);
                       n.attrs.set("coordinate_transformation_mode", std::string("asymmetric"));
                       n.attrs.set("nearest_mode", std::string("simple"));
                     }};
    // RoiAlign-10 has no coordinate_transformation_mode: its rois are output_half_pixel.
    t["RoiAlign"] = {10,
                     {{"mode", str("avg")},
                      {"output_height", i64(1)},
                      {"output_width", i64(1)},
                      {"sampling_ratio", i64(0)},
                      {"spatial_scale", f32(1.0f)},
                      {"coordinate_transformation_mode", str("half_pixel")}},
                     [](Node& n, ImportContext& ctx) {
                       if (ctx.opset < 16) n.attrs.set("coordinate_transformation_mode", std::string("output_half_pixel"));
                     }};
    // GridSample-16's modes bilinear and bicubic are opset 20's linear and cubic (an absent mode is
    // bilinear, the default of both).
    t["GridSample"] = {16, {{"mode", str("bilinear")}, {"padding_mode", str("zeros")}, {"align_corners", i64(0)}},
                       [](Node& n, ImportContext& ctx) {
                         std::string mode = n.attrs.s("mode");
                         if (ctx.opset < 20 && (mode == "linear" || mode == "cubic"))
                           throw Error("mode '" + mode + "' is opset 20's name (bilinear, bicubic before it)");
                         if (ctx.opset >= 20 && mode == "bicubic")
                           throw Error("mode 'bicubic' is not an opset 20 name (linear, cubic)");
                         if (mode == "bilinear") mode = "linear";
                         else if (mode == "bicubic") mode = "cubic";
                         n.attrs.set("mode", mode);
                       }};
    t["Concat"] = {4, {{"axis", std::nullopt}}, {}};
    t["Transpose"] = {1, {{"perm", ints()}}, {}};
    // Before opset 10 starts / ends / axes are attributes; from 10 on they are inputs 1-3 (+ steps 4).
    t["Slice"] = {1, {{"starts", ints()}, {"ends", ints()}, {"axes", ints()}}, [](Node& n, ImportContext& ctx) {
                    if (ctx.opset >= 10) {
                      for (const char* k : {"starts", "ends", "axes"}) n.attrs.erase(k);
                      return;
                    }
                    auto starts = n.attrs.ints("starts"), ends = n.attrs.ints("ends");
                    auto axes = n.attrs.ints("axes");
                    if (starts.size() != ends.size())
                      throw Error("starts and ends must have the same length");
                    attr_to_input(n, ctx, "starts", 1, TensorData::s64({int64_t(starts.size())}, starts));
                    attr_to_input(n, ctx, "ends", 2, TensorData::s64({int64_t(ends.size())}, ends));
                    if (axes.empty()) n.attrs.erase("axes");
                    else attr_to_input(n, ctx, "axes", 3, TensorData::s64({int64_t(axes.size())}, axes));
                  }};
    // Before opset 13 the split sizes are an attribute; from 13 on an optional input; from 18
    // num_outputs may say how many equal parts.
    t["Split"] = {2, {{"axis", i64(0)}, {"split", ints()}, {"num_outputs", i64(0)}}, [](Node& n, ImportContext& ctx) {
                    if (ctx.opset >= 13) {
                      n.attrs.erase("split");
                      return;
                    }
                    auto split = n.attrs.ints("split");
                    if (split.empty()) n.attrs.erase("split");
                    else attr_to_input(n, ctx, "split", 1, TensorData::s64({int64_t(split.size())}, split));
                  }};
    t["Identity"] = {1, {}, {}};
    t["Dropout"] = {1,
                    {{"ratio", f32(0.5f)}, {"seed", i64(0)}, {"is_test", i64(1)}, {"consumed_inputs", ints()}},
                    [](Node& n, ImportContext& ctx) {
                      drop_is_test(n);
                      n.attrs.erase("consumed_inputs");
                      if (n.outputs.size() > 1 && !n.outputs[1].empty())
                        throw Error("the mask output is not supported (inference only)");
                      // From opset 12 training_mode is an input: only a known false is inference.
                      if (n.has_input(2)) {
                        auto it = ctx.graph.values.find(n.inputs[2]);
                        const auto* t = it != ctx.graph.values.end() && it->second.constant
                                            ? &*it->second.constant : nullptr;
                        if (!t || t->count() != 1 || t->to_i64()[0] != 0)
                          throw Error("training mode (training_mode input '" + n.inputs[2] +
                                      "' not a constant false) is not supported (inference only)");
                      }
                    }};
    t["Constant"] = {1,
                     {{"value", std::nullopt}},
                     {}};  // value_float & co. are turned into `value` before validation
    t["ConstantOfShape"] = {9, {{"value", AttrValue(TensorData::f32({1}, std::vector<float>{0.0f}))}}, {}};
    t["Expand"] = {8, {}, {}};
    t["Shape"] = {1, {{"start", i64(0)}, {"end", i64(std::numeric_limits<int64_t>::max())}}, {}};
    t["Gather"] = {1, {{"axis", i64(0)}}, {}};
    t["Unsqueeze"] = {1, {{"axes", ints()}}, [](Node& n, ImportContext& ctx) {
                        if (ctx.opset >= 13) n.attrs.erase("axes");
                        else axes_attr_to_input(n, ctx);
                      }};
    t["Squeeze"] = {1, {{"axes", ints()}}, [](Node& n, ImportContext& ctx) {
                      if (ctx.opset >= 13) n.attrs.erase("axes");
                      else if (n.attrs.ints("axes").empty()) n.attrs.erase("axes");
                      else axes_attr_to_input(n, ctx);
                    }};
    // Before opset 10 k is an attribute; from 10 on input 1. sorted=0 leaves the order to the
    // implementation: octet gives ORT's (engine/ops/index_ops.cc).
    t["TopK"] = {1, {{"axis", i64(-1)}, {"k", i64(-1)}, {"largest", i64(1)}, {"sorted", i64(1)}},
                 [](Node& n, ImportContext& ctx) {
                   if (ctx.opset < 10) {
                     if (n.attrs.i("k") < 0) throw Error("required attribute 'k' is missing");
                     attr_to_input(n, ctx, "k", 1, TensorData::s64({1}, std::vector<int64_t>{n.attrs.i("k")}));
                   } else {
                     n.attrs.erase("k");
                   }
                 }};
    // Output shapes decided by input values: run between the stages of a graph (engine/stages.cc).
    t["NonZero"] = {9, {}, {}};
    t["NonMaxSuppression"] = {10, {{"center_point_box", i64(0)}}, {}};
    t["Compress"] = {9, {{"axis", i64(kAbsentAxis)}}, erase_absent_axis};
    t["Unique"] = {11, {{"axis", i64(kAbsentAxis)}, {"sorted", i64(1)}}, erase_absent_axis};
    t["GatherElements"] = {11, {{"axis", i64(0)}}, {}};
    t["GatherND"] = {11, {{"batch_dims", i64(0)}}, {}};
    t["ScatterND"] = {11, {{"reduction", str("none")}}, {}};
    t["ScatterElements"] = {11, {{"axis", i64(0)}, {"reduction", str("none")}}, {}};
    t["Scatter"] = {9, {{"axis", i64(0)}}, {}};  // ScatterElements before it (deprecated at 11)
    t["Tile"] = {6, {}, {}};
    t["Range"] = {11, {}, {}};
    t["Size"] = {1, {}, {}};
    t["Trilu"] = {14, {{"upper", i64(1)}}, {}};
    t["EyeLike"] = {9, {{"dtype", i64(0)}, {"k", i64(0)}}, {}};
    t["OneHot"] = {9, {{"axis", i64(-1)}}, {}};
    add_quantization_importers(t);
    return t;
  }();
  return table;
}

// Constant's value_float / value_ints / ... become one `value` tensor attribute.
void normalize_constant(Node& n) {
  const auto& a = n.attrs;
  std::optional<TensorData> v;
  if (a.has("value_float")) v = TensorData::f32({}, std::vector<float>{a.f("value_float")});
  else if (a.has("value_floats")) v = TensorData::f32({int64_t(a.floats("value_floats").size())}, a.floats("value_floats"));
  else if (a.has("value_int")) v = TensorData::s64({}, std::vector<int64_t>{a.i("value_int")});
  else if (a.has("value_ints")) v = TensorData::s64({int64_t(a.ints("value_ints").size())}, a.ints("value_ints"));
  for (const char* k : {"value_float", "value_floats", "value_int", "value_ints"}) n.attrs.erase(k);
  if (v) n.attrs.set("value", std::move(*v));
}

std::string unsupported_op(const Node& n) {
  if (n.domain == kMicrosoftDomain) {
    std::string known;
    for (const auto& op : supported_contrib_ops()) known += (known.empty() ? "" : ", ") + op;
    return "op type '" + n.op + "' of domain '" + kMicrosoftDomain + "' is not supported (octet runs " + known +
           " from that domain)";
  }
  if (domain_of(n.op) == kMicrosoftDomain)
    return "op type '" + n.op + "' is not supported in the default ONNX domain (octet runs it as a " +
           kMicrosoftDomain + " contrib op: set the node's domain)";
  return "op type '" + n.op + "' is not supported";
}

std::string type_name(const AttrValue& v) {
  static const char* names[] = {"int", "float", "string", "ints", "floats", "tensor"};
  return names[v.index()];
}

}  // namespace

std::string onnx_type_name(int64_t code) {
  // TensorProto.DataType, written out because the ONNX headers octet builds against may predate
  // the newest codes (float8 from ONNX 1.14, 4-bit from 1.16, ...).
  static const char* names[] = {"UNDEFINED", "FLOAT",   "UINT8",     "INT8",           "UINT16",
                                "INT16",     "INT32",   "INT64",     "STRING",         "BOOL",
                                "FLOAT16",   "DOUBLE",  "UINT32",    "UINT64",         "COMPLEX64",
                                "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
                                "FLOAT8E5M2FNUZ", "UINT4", "INT4",   "FLOAT4E2M1",     "FLOAT8E8M0",
                                "UINT2",     "INT2"};
  if (code >= 0 && code < int64_t(std::size(names))) return names[code];
  return "type code " + std::to_string(code);
}

std::string ImportContext::add_constant(const std::string& hint, ir::TensorData data) {
  std::string name = hint;
  for (int k = 1; graph.values.count(name); ++k) name = hint + "_" + std::to_string(k);
  ir::Value v;
  v.name = name;
  v.dtype = data.dtype;
  v.dims = data.dims;
  v.constant = std::move(data);
  graph.values[name] = std::move(v);
  return name;
}

void import_node(Node& node, ImportContext& ctx) {
  auto it = importers().find(node.op);
  if (it == importers().end() || domain_of(node.op) != node.domain) throw Error(unsupported_op(node));
  const Importer& imp = it->second;
  if (node.domain.empty() && ctx.opset < imp.min_opset)
    throw Error(node.op + " before opset " + std::to_string(imp.min_opset) + " is not supported");

  if (node.op == "Constant") normalize_constant(node);
  if ((node.op == "Softmax" || node.op == "LogSoftmax" || node.op == "Hardmax") && ctx.opset < 13 &&
      !node.attrs.has("axis"))
    node.attrs.set("axis", int64_t(1));

  for (const auto& [name, value] : node.attrs.all()) {
    const AttrSpec* spec = nullptr;
    for (const auto& s : imp.attrs) if (s.name == name) spec = &s;
    if (!spec) throw Error("attribute '" + name + "' is not supported");
    const AttrValue& ref = spec->dflt ? *spec->dflt : value;
    // An empty list in the schema accepts ints; a float default accepts an int (ONNX writers vary).
    bool ok = ref.index() == value.index() ||
              (std::holds_alternative<float>(ref) && std::holds_alternative<int64_t>(value));
    if (!ok) throw Error("attribute '" + name + "' should be " + type_name(ref) + ", is " + type_name(value));
    if (std::holds_alternative<float>(ref) && std::holds_alternative<int64_t>(value))
      node.attrs.set(name, float(std::get<int64_t>(value)));
  }
  for (const auto& s : imp.attrs) {
    if (node.attrs.has(s.name)) continue;
    if (!s.dflt) throw Error("required attribute '" + s.name + "' is missing");
    node.attrs.set(s.name, *s.dflt);
  }
  if (imp.normalize) imp.normalize(node, ctx);
}

namespace {

std::vector<std::string> ops_of_domain(const std::string& domain) {
  std::vector<std::string> v;
  for (const auto& [op, imp] : importers())
    if (domain_of(op) == domain) v.push_back(op);
  return v;
}

}  // namespace

const ImportSchema* import_schema(const std::string& op) {
  static const std::map<std::string, ImportSchema> schemas = [] {
    std::map<std::string, ImportSchema> m;
    for (const auto& [name, imp] : importers()) m[name] = {imp.min_opset, imp.attrs};
    return m;
  }();
  auto it = schemas.find(op);
  return it == schemas.end() ? nullptr : &it->second;
}

const std::vector<std::string>& supported_ops() {
  static const std::vector<std::string> ops = ops_of_domain("");
  return ops;
}

const std::vector<std::string>& supported_contrib_ops() {
  static const std::vector<std::string> ops = ops_of_domain(kMicrosoftDomain);
  return ops;
}

}  // namespace octet::loader
