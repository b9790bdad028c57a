#pragma once
// What the INT8 ops share: checks and readers for scales, zero points and int32 biases,
// dispatch from element types to the reference kernels' template instantiations, and the
// channels-last view of an activation. The math itself is in docs/requantization.md.
//
// Quantization parameters are normally constants: they are then read, and everything derived
// from them (requantization multipliers, zero-point arrays, lookup tables) computed, once
// while the plan is built. ONNX also allows them to be computed at run time (a
// DynamicQuantizeLinear feeding ConvInteger, or the ONNX node tests, which feed every input
// of QLinearConv as a graph input); the same derivation then runs before each kernel call.
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "engine/op_registry.h"
#include "engine/ops/fused_activation.h"
#include "kernels/q8_type.h"
#include "kernels/ref/qmath.h"

namespace octet::ops {

inline bool is_q8(ir::DType t) { return t == ir::DType::u8 || t == ir::DType::s8; }

template <class T>
constexpr ir::DType dtype_of() {
  return std::is_same_v<T, uint8_t> ? ir::DType::u8 : ir::DType::s8;
}

// ---- Plan-time checks (shapes and types are known even for run-time values) ----

inline void require_q8(const OpContext& c, size_t i, const char* what) {
  const ir::DType t = c.info(i).dtype;
  if (!is_q8(t))
    c.fail(std::string(what) + " is " + ir::dtype_name(t) + "; expected uint8 or int8");
}

// A float32 scale with 1 value (per tensor) or `per_channel` values (0: per tensor only).
inline void require_scale(const OpContext& c, size_t i, const char* what, int64_t per_channel = 0) {
  const TensorInfo& s = c.info(i);
  if (s.dtype != ir::DType::f32) c.fail(std::string(what) + " must be float32, got " + ir::dtype_name(s.dtype));
  if (s.count() != 1 && (per_channel == 0 || s.count() != per_channel || s.dims.size() != 1))
    c.fail(std::string(what) + " " + ir::dims_str(s.dims) + " must be a scalar" +
           (per_channel ? " or a 1-D tensor of " + std::to_string(per_channel) + " values" : std::string()));
}

// An optional zero point of element type `type` with 1 or `per_channel` values.
inline void require_zero_point(const OpContext& c, size_t i, const char* what, ir::DType type,
                               int64_t per_channel = 0) {
  if (!c.has(i)) return;
  const TensorInfo& z = c.info(i);
  if (z.dtype != type)
    c.fail(std::string(what) + " is " + ir::dtype_name(z.dtype) + "; it must have the type of its tensor (" +
           ir::dtype_name(type) + ")");
  if (z.count() != 1 && (per_channel == 0 || z.count() != per_channel || z.dims.size() != 1))
    c.fail(std::string(what) + " " + ir::dims_str(z.dims) + " must be a scalar" +
           (per_channel ? " or a 1-D tensor of " + std::to_string(per_channel) + " values" : std::string()));
}

// The output element type an output zero point decides: its own type, uint8 when absent.
inline ir::DType quantized_output_type(const OpContext& c, size_t zero_point) {
  if (!c.has(zero_point)) return ir::DType::u8;
  require_q8(c, zero_point, "the output zero point");
  require_zero_point(c, zero_point, "the output zero point", c.info(zero_point).dtype);
  return c.info(zero_point).dtype;
}

// A Relu or Clip fused into the op narrows the output clamp; nothing else can be fused.
inline void require_clamp_activation(const OpContext& c) {
  const std::string act = fused_activation_name(c.node);
  if (!act.empty() && act != "Relu" && act != "Clip")
    c.fail("a fused " + act + " is not supported on an INT8 output (only Relu and Clip fold into the clamp)");
}

// ---- Reading parameter values (from constants while planning, or at run time) ----

// One input as the kernels see it: where its data is, what it holds.
struct ParamInput {
  bool present = false;
  bool constant = true;  // known while planning (absent inputs count as constant)
  ir::DType dtype = ir::DType::f32;
  int64_t count = 0;
  const void* data = nullptr;

  std::vector<float> floats() const {
    const auto* p = static_cast<const float*>(data);
    return std::vector<float>(p, p + count);
  }
  // Integer values (uint8, int8 or int32) as int32; an absent zero point is {0}.
  std::vector<int32_t> ints() const {
    if (!present) return {0};
    std::vector<int32_t> v(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
      switch (dtype) {
        case ir::DType::u8: v[size_t(i)] = static_cast<const uint8_t*>(data)[i]; break;
        case ir::DType::s8: v[size_t(i)] = static_cast<const int8_t*>(data)[i]; break;
        default: v[size_t(i)] = static_cast<const int32_t*>(data)[i]; break;
      }
    }
    return v;
  }
  float scalar() const { return *static_cast<const float*>(data); }
  int32_t int_scalar() const { return ints()[0]; }
  kernels::QuantParams quant(const ParamInput& zero_point) const { return {scalar(), zero_point.int_scalar()}; }
};

// The inputs of one node; optional inputs past the last one given read as absent.
class ParamInputs {
 public:
  ParamInputs(const OpContext& c, std::span<const void* const> in) : inputs_(c.in.size()) {
    for (size_t i = 0; i < c.in.size(); ++i) {
      if (!c.has(i)) continue;
      inputs_[i] = {true, i < c.in_const.size() && c.in_const[i] != nullptr, c.in[i]->dtype, c.in[i]->count(), in[i]};
    }
  }
  const ParamInput& operator[](size_t i) const {
    static const ParamInput absent;
    return i < inputs_.size() ? inputs_[i] : absent;
  }

 private:
  std::vector<ParamInput> inputs_;
};

// The kernel of an op whose parameters `derive` computes from the inputs listed in `params`:
// derived once now when all of them are constants, otherwise before every call of `run`.
template <class Derive, class Run>
Kernel with_params(const OpContext& c, std::span<const void* const> in, std::initializer_list<size_t> params,
                   Derive derive, Run run) {
  const ParamInputs inputs(c, in);
  bool constant = true;
  for (size_t i : params) constant = constant && inputs[i].constant;
  if (constant) {
    auto derived = std::make_shared<const decltype(derive(inputs))>(derive(inputs));
    return [derived, run] { run(*derived); };
  }
  return [inputs, derive, run] { run(derive(inputs)); };
}

// The output clamp of a TY output: its full range, narrowed by a fused Relu or Clip
// (docs/requantization.md section 6).
template <class TY>
void output_clamp(const kernels::Activation& act, kernels::QuantParams y, int32_t* qmin, int32_t* qmax) {
  *qmin = kernels::qmin_of<TY>();
  *qmax = kernels::qmax_of<TY>();
  if (act.kind == kernels::ActKind::relu)
    kernels::output_range<TY>(0.0f, std::numeric_limits<float>::infinity(), y, qmin, qmax);
  else if (act.kind == kernels::ActKind::clip)
    kernels::output_range<TY>(act.min, act.max, y, qmin, qmax);
}

// ---- Element types -> template instantiations ----

// Calls f(TX{}, TW{}) / f(TX{}, TW{}, TY{}) for the operand types the INT8 conv and GEMM
// reference kernels are built for (kernels/ref/q8_type_combinations.inc); returns an empty
// Kernel for any other combination.
template <class F>
Kernel visit_q8_acc_types(ir::DType x, ir::DType w, F&& f) {
#define OCTET_Q8_ACC(TX, TW) \
  if (x == dtype_of<TX>() && w == dtype_of<TW>()) return f(TX{}, TW{});
#define OCTET_Q8_REQ(TX, TW, TY)
#include "kernels/ref/q8_type_combinations.inc"
#undef OCTET_Q8_ACC
#undef OCTET_Q8_REQ
  return {};
}

template <class F>
Kernel visit_q8_req_types(ir::DType x, ir::DType w, ir::DType y, F&& f) {
#define OCTET_Q8_ACC(TX, TW)
#define OCTET_Q8_REQ(TX, TW, TY) \
  if (x == dtype_of<TX>() && w == dtype_of<TW>() && y == dtype_of<TY>()) return f(TX{}, TW{}, TY{});
#include "kernels/ref/q8_type_combinations.inc"
#undef OCTET_Q8_ACC
#undef OCTET_Q8_REQ
  return {};
}

// "uint8 x int8 -> uint8, ..." for messages.
inline std::string q8_req_type_list() {
  std::string s;
  auto name = [](ir::DType t) { return std::string(ir::dtype_name(t)); };
#define OCTET_Q8_ACC(TX, TW)
#define OCTET_Q8_REQ(TX, TW, TY)                                                                          \
  s += (s.empty() ? "" : ", ") + name(dtype_of<TX>()) + " x " + name(dtype_of<TW>()) + " -> " + \
       name(dtype_of<TY>());
#include "kernels/ref/q8_type_combinations.inc"
#undef OCTET_Q8_ACC
#undef OCTET_Q8_REQ
  return s;
}

// The fast kernels' run-time tag for an 8-bit tensor type; nullopt for any other type.
inline std::optional<kernels::Q8> q8_tag(ir::DType t) {
  if (t == ir::DType::u8) return kernels::Q8::u8;
  if (t == ir::DType::s8) return kernels::Q8::s8;
  return std::nullopt;
}

// Calls f(T{}) with T = uint8_t or int8_t.
template <class F>
Kernel visit_q8_type(ir::DType t, F&& f) {
  if (t == ir::DType::u8) return f(uint8_t{});
  return f(int8_t{});
}

// ---- Layout ----

// An activation's data in channels-last (NHWC) order. The planner hands channels-last data to
// ops that ask for it, except when constant folding evaluates an op on row-major constants:
// then a channels-last copy is made before each call.
class ChannelsLastInput {
 public:
  ChannelsLastInput(const TensorInfo& info, const void* data) : info_(info), data_(data) {
    if (!same_memory(info.dims, info.layout, Layout::channels_last))
      copy_ = std::make_shared<std::vector<std::byte>>(info.bytes());
  }
  const void* get() const {
    if (!copy_) return data_;
    relayout(info_, data_, Layout::channels_last, copy_->data());
    return copy_->data();
  }

 private:
  TensorInfo info_;
  const void* data_;
  std::shared_ptr<std::vector<std::byte>> copy_;
};

}  // namespace octet::ops
