#include "engine/ops/fused_activation.h"

namespace octet::ops {

kernels::Activation fused_activation(const ir::Node& n) {
  kernels::Activation act = fused_activation(n, "fused_act", "fused_act_params");
  if (n.attrs.has(kScaleShiftAttr)) {
    const std::vector<float> p = n.attrs.floats(kScaleShiftAttr);
    act.scale_shift = true;
    act.scale = p.at(0);
    act.shift = p.at(1);
  }
  return act;
}

kernels::Activation fused_activation(const ir::Node& n, const std::string& kind_attr, const std::string& params_attr) {
  using kernels::Activation;
  if (!n.attrs.has(kind_attr)) return {};
  const std::string& kind = n.attrs.s(kind_attr);
  const std::vector<float> p = n.attrs.has(params_attr) ? n.attrs.floats(params_attr) : std::vector<float>{};
  if (kind == "Relu") return Activation::relu();
  if (kind == "Clip") return Activation::clip(p.at(0), p.at(1));
  if (kind == "Sigmoid") return Activation::sigmoid();
  if (kind == "HardSigmoid") return Activation::hard_sigmoid(p.at(0), p.at(1));
  if (kind == "HardSwish") return Activation::hard_swish();
  if (kind == "Silu") return Activation::silu();
  if (kind == "LeakyRelu") return Activation::leaky_relu(p.at(0));
  if (kind == "Gelu") return Activation::gelu();
  if (kind == "GeluTanh") return Activation::gelu_tanh();
  if (kind == "Erf") return Activation::erf();
  if (kind == "Tanh") return Activation::tanh();
  throw std::logic_error("unknown fused activation " + kind);
}

std::string fused_activation_name(const ir::Node& n) {
  return n.attrs.has("fused_act") ? n.attrs.s("fused_act") : "";
}

}  // namespace octet::ops
