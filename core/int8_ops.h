#pragma once
// One row per INT8 op octet runs (core/int8_ops.cc): where the loader accepts it (domain,
// opset, attributes), the float op it computes and how fuse_qdq forms it from a QDQ unit,
// what octet's quantizers write for that float op, its inputs by name, and the OpImpl that
// runs it. The loader, the QDQ pass and calib read this table instead of keeping lists of
// their own, so a new INT8 op is one row plus its OpImpl (engine/ops/) and kernel.
//
// It sits in its own library under the loader (octet_int8_ops, beside octet_ir) because the
// loader reads it and the engine and calib are built on the loader.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir.h"

namespace octet::int8 {

inline constexpr const char* kMicrosoftDomain = "com.microsoft";  // ONNX Runtime's contrib ops
inline constexpr const char* kOctetDomain = "octet";               // octet's own, never read from a file

// What the op reads and writes.
enum class Family {
  qlinear,           // 8-bit tensors with scales and zero points in and out (QGemm may write float)
  integer,           // int32 accumulator out (ConvInteger, MatMulInteger)
  integer_to_float,  // integer product with the float scales and bias applied: float out
  rewritten,         // a file form passes::expand_dynamic_quantize_matmul turns into other rows
};

// How fuse_qdq forms the op from DequantizeLinear -> float op -> QuantizeLinear.
enum class Fusion {
  none,      // not formed by fuse_qdq (read from files, or written by another pass)
  conv,      // x per tensor; w per tensor or per output channel (axis 0); bias int32 or float
  gemm,      // transA 0 (beta 1 with C); B per tensor or per column; without a Q it writes float
  matmul,    // both operands per tensor
  binary,    // both operands and the output per tensor, of one 8-bit type
  unary,     // one input, the same 8-bit type in and out
  reduce,    // unary; the constant, non-empty axes of input 1 become the `axes` attribute
  variadic,  // every input per tensor, of one 8-bit type (Concat)
};

// What octet's quantizers (calib/quantize.cc, calib/quantize_dynamic.cc) do with the float op.
enum class QuantRule {
  none,            // left in float
  conv,            // activation 0; constant weights 1 per output channel (axis 0); constant bias 2
  conv_transpose,  // as conv, the weights [C, M / group, k...] per output channel along axis 1
  gemm,            // activation 0; constant 2-D B per column; transA 0, alpha 1; C a per-column bias, beta 1
  matmul,          // activation 0; constant 2-D B per column (axis 1)
  binary,          // activations 0 and 1
  unary,           // activation 0
  probability,     // activation 0; output in [0, 1]: scale 1/256 whatever calibration saw (ORT's Softmax rule)
  reduce,          // activation 0; axes (input 1) a constant, non-empty list
  variadic,        // every input an activation
  dynamic_conv,    // dynamic: constant 4-D weights and bias; x quantized at run time
  dynamic_matmul,  // dynamic: constant 2-D B (Gemm: transA 0, alpha and beta 1, transposed when transB)
};

// Checks the loader makes beyond the attribute schema (bit flags).
enum ImportCheck : unsigned {
  kNoChecks = 0,
  kNchwOnly = 1,  // channels_last must be 0: octet runs the NCHW form
  kPoolPads = 2,  // pads smaller than kernel_shape, as ONNX Runtime requires
};

// An attribute the loader accepts, with its default (nullopt: required).
struct AttrSpec {
  std::string name;
  std::optional<ir::AttrValue> dflt;
};

struct Int8Op {
  std::string op;
  std::string domain;  // "" (ONNX), kMicrosoftDomain or kOctetDomain
  Family family = Family::qlinear;
  std::vector<std::string> replaces;  // the float op(s) it computes
  // Inputs by name, in order. Names are roles, the same across rows (ONNX Runtime's QLinearAdd
  // calls its output C; here it is y like everywhere else). `repeated` follows `slots` any
  // number of times (QLinearConcat's inputs).
  std::vector<std::string> slots;
  std::vector<std::string> repeated;

  Fusion fusion = Fusion::none;
  // Attributes fuse_qdq sets or drops on the float node it turns into this op (may be empty).
  void (*fused_attrs)(ir::Node& n, const ir::Graph& g) = nullptr;

  QuantRule quantizer = QuantRule::none;
  bool folds_relu = false;  // calib: a Relu / Clip right after the float op folds into the output clamp

  bool imported = true;  // the loader reads it from files
  int64_t min_opset = 1;  // of the default domain; contrib ops are version 1 of theirs
  std::string attrs_like;  // take the attribute schema of this (float) op's importer
  std::vector<AttrSpec> attrs;
  unsigned import_checks = kNoChecks;

  std::string impl;  // where its OpImpl is registered (engine/ops/...), for readers and the table test

  bool has_slot(std::string_view name) const;
  size_t slot(std::string_view name) const;  // throws ir::Error when the op has no such input
};

const std::vector<Int8Op>& ops();
const Int8Op* find(std::string_view op);  // nullptr: not an INT8 op
// The row fuse_qdq forms from `float_op`, the one octet's static quantizer writes QDQ around
// (fuse_qdq then forms it), and the one its dynamic quantizer writes; nullptr when none.
const Int8Op* fused_from(std::string_view float_op);
const Int8Op* static_form(std::string_view float_op);
const Int8Op* dynamic_form(std::string_view float_op);
// Float ops octet's static quantizer writes a QDQ unit around though no INT8 op computes them:
// ONNX Runtime's CPU provider runs the unit as DequantizeLinear -> float op -> QuantizeLinear
// (ConvTranspose: no QDQ selector takes it and QLinearConvTranspose has no CPU kernel), and so
// does octet. Their rule, QuantRule::none for any other op.
QuantRule float_unit_rule(std::string_view float_op);

// Float ops that move data without computing on it: between equal Q/DQ parameters they run on
// the 8-bit integers (fuse_qdq drops the pair; calib gives the output its input's parameters).
// Trilu's zeros are then the zero point's code, which fuse_qdq hands it in kZeroCodeAttr.
bool moves_data_only(std::string_view float_op);
inline constexpr char kZeroCodeAttr[] = "zero_code";

// Float ops that write one input's data into another's: ScatterND and ScatterElements, data
// (input 0) and updates (input 2). With data, updates and output at equal Q/DQ parameters they
// run on the integers when they replace, or pick with max / min (order-preserving on codes);
// add and mul compute, and stay in float. fuse_qdq only: octet's quantizer leaves them in float
// (the updates have a range of their own, which the data's parameters would clip).
bool scatters_data_only(std::string_view float_op);

}  // namespace octet::int8
