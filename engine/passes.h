#pragma once
// Graph rewrites applied once after loading, before any plan is built. Each returns how
// many nodes it changed, for `octet info`.
#include <string>
#include <vector>

#include "engine/ir.h"

namespace octet::passes {

int remove_identities(ir::Graph& g);   // Identity and inference Dropout
int fold_constants(ir::Graph& g);      // nodes whose inputs are all constants (Constant included)
int fold_batchnorm(ir::Graph& g);      // BatchNormalization into the preceding Conv's weights and bias
int fuse_activations(ir::Graph& g);    // Relu / Clip / Sigmoid / HardSigmoid / HardSwish into Conv or Gemm
int remove_unused(ir::Graph& g);       // nodes and constants nothing reads

struct PassCount {
  std::string pass;
  int changed;
};
// The default pipeline, in order.
std::vector<PassCount> optimize(ir::Graph& g);

}  // namespace octet::passes
