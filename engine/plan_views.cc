// Views: values that live inside another value's memory, so that no step copies them there.
//
// A Reshape (Flatten, Squeeze, Unsqueeze, Identity: OpImpl::output_is_input) gives its input's
// bytes another shape: its output is a view of the input, and the step copies nothing.
//
// A Concat's inputs can be written by their producers straight into their places in its
// output, and the Concat then copies only the others (its build skips a piece whose source is
// its destination). Along an axis with nothing but extent-1 dimensions outside it in memory
// (a row-major join along axis 0 at batch 1, YOLO's boxes of three scales), each input is one
// block of the output: any producer writes it as it would its own tensor, and any step may read
// it there. Along the innermost memory axis (channels-last feature maps joined along C:
// SqueezeNet's fire modules, Inception's branches, YOLO's C3 blocks) each input is rows of its
// channels, the output's C apart: only a producer that honours OpContext::out_row_stride
// (OpImpl::strided_output) can write that, and only the Concat may read it.
//
// A view's memory is its owner's: place_in_arena keeps the owner alive from the first producer
// to the last reader of any of its views.
#include <set>
#include <tuple>

#include "engine/plan.h"

namespace octet {

void Plan::choose_views() {
  if (!options_.views) return;
  std::map<std::string, int> readers;
  for (const Pending& p : pending_)
    for (const auto& name : p.inputs)
      if (!name.empty()) ++readers[name];
  const std::set<std::string> graph_outputs(graph_.outputs.begin(), graph_.outputs.end());

  auto owner_of = [&](const std::string& name) -> std::pair<std::string, size_t> {
    const PlanValue& v = values_.at(name);
    if (v.view_of.empty()) return {name, 0};
    return {v.view_of, v.view_offset};
  };
  auto has_views = [&](const std::string& name) {
    for (const auto& [n, v] : values_)
      if (v.view_of == name) return true;
    return false;
  };
  // `name` (an owner) and every view of it move into `owner`'s memory, `offset` bytes in.
  auto move_into = [&](const std::string& name, const std::string& owner, size_t offset) {
    for (auto& [n, v] : values_)
      if (v.view_of == name) {
        v.view_of = owner;
        v.view_offset += offset;
      }
    PlanValue& v = values_.at(name);
    v.view_of = owner;
    v.view_offset = offset;
  };

  for (const Pending& p : pending_) {
    if (!p.node || p.inputs.empty() || p.inputs[0].empty() || p.outputs.empty() || p.outputs[0].empty()) continue;
    if (!find_op(p.node->op)->output_is_input) continue;
    const PlanValue& x = values_.at(p.inputs[0]);
    PlanValue& y = values_.at(p.outputs[0]);
    if (x.constant || x.row_stride != 0 || x.info.bytes() != y.info.bytes()) continue;
    std::tie(y.view_of, y.view_offset) = owner_of(p.inputs[0]);
  }

  // Last Concat first: a Concat whose output is itself a block of a later one places its inputs
  // where that one holds them.
  for (size_t s = pending_.size(); s-- > 0;) {
    const Pending& p = pending_[s];
    if (!p.node || p.node->op != "Concat" || p.outputs.empty() || p.outputs[0].empty()) continue;
    const PlanValue& y = values_.at(p.outputs[0]);
    if (y.row_stride != 0) continue;
    const int rank = int(y.info.dims.size());
    int64_t axis = p.node->attrs.i("axis");
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) continue;
    const std::vector<int> order = memory_order(rank, y.info.layout);
    int64_t outer = 1, inner = 1;
    bool before = true;
    for (int d : order) {
      if (d == axis) before = false;
      else if (before) outer *= y.info.dims[size_t(d)];
      else inner *= y.info.dims[size_t(d)];
    }
    const bool blocks = outer == 1;
    if (!blocks && inner != 1) continue;  // neither blocks nor rows of the innermost axis
    const auto [owner, base] = owner_of(p.outputs[0]);
    const size_t elem = ir::dtype_size(y.info.dtype);
    std::set<std::string> seen;
    int64_t at = 0;
    for (const std::string& name : p.inputs) {
      const PlanValue& x = values_.at(name);
      const size_t offset = base + size_t(at * inner) * elem;
      at += x.info.dims[size_t(axis)];
      if (!seen.insert(name).second || x.constant || x.row_stride != 0) continue;
      if (x.info.layout != y.info.layout && !same_memory(x.info.dims, x.info.layout, y.info.layout)) continue;
      if (blocks) {
        // A view of the whole of its owner's bytes brings the owner (a Reshape of a Concat's output).
        const auto [x_owner, x_offset] = owner_of(name);
        const PlanValue& o = values_.at(x_owner);
        if (x_offset != 0 || o.info.bytes() != x.info.bytes() || o.producer < 0 || o.row_stride != 0) continue;
        if (x_owner == owner) continue;  // already part of this output
        move_into(x_owner, owner, offset);
        continue;
      }
      if (x.producer < 0 || !x.view_of.empty() || readers[name] != 1 || graph_outputs.count(name) || has_views(name))
        continue;
      const Pending& q = pending_[size_t(x.producer)];
      if (!q.node || q.outputs.empty() || q.outputs[0] != name) continue;
      const OpImpl* producer = find_op(q.node->op);
      if (!producer->strided_output || !producer->strided_output(context(*q.node, q.inputs, q.input_infos))) continue;
      move_into(name, owner, offset);
      values_.at(name).row_stride = y.info.dims[size_t(axis)];
    }
  }
}

}  // namespace octet
