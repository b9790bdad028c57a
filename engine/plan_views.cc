// Views: values that live inside another value's memory, so that no step copies them there.
//
// A Reshape (Flatten, Squeeze, Unsqueeze, Identity: OpImpl::output_is_input) gives its input's
// bytes another shape, and a Transpose whose output layout keeps the input's memory order
// (OpImpl::output_is_input_when) its dimensions another order: the output is a view of the
// input, and the step copies nothing.
//
// A Concat's inputs can be written by their producers straight into their places in its
// output, and the Concat then copies only the others (its build skips a piece whose source is
// its destination). Along an axis with nothing but extent-1 dimensions outside it in memory (a
// row-major join along axis 0 at batch 1, YOLO's boxes of three scales), or when there is one
// input, each input is one block of the output: any producer writes it as it would its own
// tensor, and any step may read it there. Along the innermost memory axis (channels-last feature
// maps joined along C: SqueezeNet's fire modules, Inception's branches, YOLO's C3 blocks) each
// input is rows of its channels, the output's C apart: only a producer that honours
// OpContext::out_row_stride (OpImpl::strided_output) can write that, and only the Concat may
// read it. A QLinearConcat's input counts only when it is copied as it is (the output's scale and
// zero point). A Split whose outputs a Concat joins back where it took them leaves them in its
// input, which becomes the Concat's output (YOLOv5's head).
//
// A view's memory is its owner's: place_in_arena keeps the owner alive from the first producer
// to the last reader of any of its views.
#include <algorithm>
#include <set>
#include <tuple>
#include <vector>

#include "engine/plan.h"

namespace octet {

void Plan::choose_views() {
  if (!options_.views) return;
  std::map<std::string, std::vector<size_t>> reader_steps;  // once per input slot that reads it
  for (size_t s = 0; s < pending_.size(); ++s)
    for (const auto& name : pending_[s].inputs)
      if (!name.empty()) reader_steps[name].push_back(s);
  auto read_once = [&](const std::string& name) { return reader_steps[name].size() == 1; };
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
  // `name` (an owner) and every view of it move into `owner`'s memory, `offset` bytes in; `name`'s
  // rows then `row_stride` elements apart (0: dense).
  auto move_into = [&](const std::string& name, const std::string& owner, size_t offset, int64_t row_stride = 0) {
    for (auto& [n, v] : values_)
      if (v.view_of == name) {
        v.view_of = owner;
        v.view_offset += offset;
      }
    PlanValue& v = values_.at(name);
    v.view_of = owner;
    v.view_offset = offset;
    v.row_stride = row_stride;
  };

  for (const Pending& p : pending_) {
    if (!p.node || p.inputs.empty() || p.inputs[0].empty() || p.outputs.empty() || p.outputs[0].empty()) continue;
    const OpImpl* op = find_op(p.node->op);
    const PlanValue& x = values_.at(p.inputs[0]);
    PlanValue& y = values_.at(p.outputs[0]);
    if (!op->output_is_input && !(op->output_is_input_when && op->output_is_input_when(*p.node, x.info, y.info)))
      continue;
    if (x.constant || x.row_stride != 0 || x.info.bytes() != y.info.bytes()) continue;
    std::tie(y.view_of, y.view_offset) = owner_of(p.inputs[0]);
  }

  // The Split step and its input when a Split's outputs are joined back by Concat `p` each where
  // the Split took it from, and the Split's input can become the Concat's output (the same
  // dims and layout, read by the Split alone); {-1, ""} otherwise.
  auto joined_split = [&](const Pending& p, size_t axis) -> std::pair<int, std::string> {
    const PlanValue& y = values_.at(p.outputs[0]);
    int step = -1;
    int64_t at = 0;
    for (const std::string& name : p.inputs) {
      const PlanValue& x = values_.at(name);
      const int64_t here = at;
      at += x.info.dims[axis];
      if (x.constant || x.producer < 0) continue;
      const Pending& q = pending_[size_t(x.producer)];
      if (!q.node || q.node->op != "Split") continue;
      if (step >= 0 && step != x.producer) return {-1, ""};  // two Splits: not this case
      const PlanValue& s = values_.at(q.inputs[0]);
      int64_t split_axis = q.node->attrs.i("axis", 0);
      if (split_axis < 0) split_axis += int64_t(s.info.dims.size());
      if (split_axis != int64_t(axis) || s.info.dims != y.info.dims || s.info.dtype != y.info.dtype ||
          s.info.layout != y.info.layout)
        return {-1, ""};
      int64_t taken = 0;  // where the Split took this output from
      for (const std::string& out : q.outputs) {
        if (out == name) break;
        if (out.empty()) return {-1, ""};
        taken += values_.at(out).info.dims[axis];
      }
      if (taken != here) return {-1, ""};
      step = x.producer;
    }
    if (step < 0) return {-1, ""};
    const std::string& input = pending_[size_t(step)].inputs[0];
    const PlanValue& s = values_.at(input);
    if (s.constant || s.producer < 0 || !s.view_of.empty() || s.row_stride != 0 || !read_once(input) ||
        graph_outputs.count(input) || has_views(input))
      return {-1, ""};
    return {step, input};
  };

  // A Concat's data inputs in order, each with whether it is copied as it is: every input of a
  // Concat; a QLinearConcat's whose scale and zero point are the output's (the others are
  // requantized on the way).
  auto concat_pieces = [&](const Pending& p) {
    std::vector<std::pair<std::string, bool>> pieces;
    if (p.node->op == "Concat") {
      for (const auto& name : p.inputs) pieces.emplace_back(name, true);
      return pieces;
    }
    auto same_constant = [&](size_t a, size_t b) {
      if (a >= p.inputs.size() || b >= p.inputs.size() || p.inputs[a].empty() || p.inputs[b].empty()) return false;
      const ir::TensorData* ta = values_.at(p.inputs[a]).constant;
      const ir::TensorData* tb = values_.at(p.inputs[b]).constant;
      return ta && tb && ta->dtype == tb->dtype && ta->bytes == tb->bytes;
    };
    for (size_t i = 2; i < p.inputs.size(); i += 3)
      pieces.emplace_back(p.inputs[i], same_constant(i + 1, 0) && same_constant(i + 2, 1));
    return pieces;
  };

  // The axis of a Concat (or, with `quantized`, a QLinearConcat) step; -1 for any other step.
  auto concat_axis = [&](const Pending& p, bool quantized = false) -> int64_t {
    if (!p.node || (p.node->op != "Concat" && !(quantized && p.node->op == "QLinearConcat")) || p.outputs.empty() ||
        p.outputs[0].empty())
      return -1;
    const int64_t rank = int64_t(values_.at(p.outputs[0]).info.dims.size());
    int64_t axis = p.node->attrs.i("axis");
    if (axis < 0) axis += rank;
    return axis >= 0 && axis < rank ? axis : -1;
  };
  // DenseNet: each dense layer's Concat joins every map of the block so far (x0, y1 .. yk) and
  // the block's last Concat joins them all, in the same order, along channels-last C. Each
  // earlier Concat's output is then the first channels of the last one's: a view with the last
  // one's rows, when every step reading it takes such a view (OpImpl::strided_input: the next
  // layer's BatchNormalization), and each map is written once, in its place in the last one.
  std::map<std::string, std::string> prefix_of;  // an earlier Concat's output -> the last one's
  for (size_t k = 0; k < pending_.size(); ++k) {
    const Pending& p = pending_[k];
    const int64_t axis = concat_axis(p);
    if (axis < 0) continue;
    const std::string& out = p.outputs[0];
    const PlanValue& y = values_.at(out);
    if (memory_order(int(y.info.dims.size()), y.info.layout).back() != axis || graph_outputs.count(out)) continue;
    const Pending* last = nullptr;
    for (size_t l = k + 1; l < pending_.size(); ++l) {
      const Pending& q = pending_[l];
      if (concat_axis(q) != axis || q.inputs.size() <= p.inputs.size() ||
          !std::equal(p.inputs.begin(), p.inputs.end(), q.inputs.begin()))
        continue;
      const PlanValue& z = values_.at(q.outputs[0]);
      if (z.info.layout == y.info.layout && z.info.dtype == y.info.dtype && (!last || q.inputs.size() > last->inputs.size()))
        last = &q;
    }
    if (!last) continue;
    bool taken = true;
    for (size_t r : reader_steps[out]) {
      const Pending& q = pending_[r];
      const OpImpl* impl = q.node ? find_op(q.node->op) : nullptr;
      for (size_t i = 0; i < q.inputs.size(); ++i)
        if (q.inputs[i] == out)
          taken = taken && impl && impl->strided_input && impl->strided_input(context(*q.node, q.inputs, q.input_infos), i);
    }
    if (taken) prefix_of[out] = last->outputs[0];
  }

  // Last Concat first: a Concat whose output is itself a block of a later one places its inputs
  // where that one holds them.
  for (size_t s = pending_.size(); s-- > 0;) {
    const Pending& p = pending_[s];
    const int64_t axis = concat_axis(p, true);
    if (axis < 0) continue;
    const PlanValue& y = values_.at(p.outputs[0]);
    if (y.row_stride != 0) continue;
    const std::vector<std::pair<std::string, bool>> pieces = concat_pieces(p);
    const std::vector<int> order = memory_order(int(y.info.dims.size()), y.info.layout);
    int64_t outer = 1, inner = 1;
    bool before = true;
    for (int d : order) {
      if (d == axis) before = false;
      else if (before) outer *= y.info.dims[size_t(d)];
      else inner *= y.info.dims[size_t(d)];
    }
    // One input is the whole output (DenseNet's first dense layer of each block joins one map).
    const bool blocks = outer == 1 || pieces.size() == 1;
    if (!blocks && inner != 1) continue;  // neither blocks nor rows of the innermost axis
    const auto [owner, base] = owner_of(p.outputs[0]);
    const size_t elem = ir::dtype_size(y.info.dtype);
    // The earlier Concats this one's output begins with are views of it (above).
    std::set<std::string> prefixes;
    for (const auto& [earlier, last] : prefix_of)
      if (last == p.outputs[0] && !blocks && values_.at(earlier).view_of.empty() && !has_views(earlier)) {
        move_into(earlier, owner, base, y.info.dims[size_t(axis)]);
        prefixes.insert(earlier);
      }
    // A map read by this Concat and by those views only is in its place for all of them.
    auto read_in_place = [&](const std::string& name) {
      for (size_t r : reader_steps[name])
        if (r != s && (pending_[r].outputs.empty() || !prefixes.count(pending_[r].outputs[0]))) return false;
      return true;
    };
    // A Split's output joined back where the Split took it from (YOLOv5's head recomputes the
    // boxes' x, y, w, h and passes the 80 class scores through): the Split's input becomes the
    // Concat's output, and neither step copies that piece. The Concat's other pieces then
    // overwrite the Split's input, which is safe only once the Split has read it: no other piece
    // may be written in place by a step before the Split.
    const auto [split_step, split_input] =
        p.node->op == "Concat" ? joined_split(p, size_t(axis)) : std::pair<int, std::string>{-1, ""};
    if (split_step >= 0) move_into(split_input, owner, base);
    std::set<std::string> seen;
    int64_t at = 0;
    for (const auto& [name, as_is] : pieces) {
      const PlanValue& x = values_.at(name);
      const size_t offset = base + size_t(at * inner) * elem;
      at += x.info.dims[size_t(axis)];
      if (!as_is) continue;
      if (split_step >= 0 && x.producer == split_step) {
        // joined_split checked it sits where the Split took it from.
        if (read_once(name) && !graph_outputs.count(name) && x.view_of.empty() && !has_views(name)) {
          move_into(name, owner, offset, blocks ? 0 : y.info.dims[size_t(axis)]);
        }
        continue;
      }
      if (!seen.insert(name).second || x.constant || x.row_stride != 0) continue;
      if (split_step >= 0 && x.producer <= split_step) continue;
      if (x.info.layout != y.info.layout && !same_memory(x.info.dims, x.info.layout, y.info.layout)) continue;
      if (blocks) {
        // A view of the whole of its owner's bytes brings the owner (a Reshape of a Concat's output).
        const auto [x_owner, x_offset] = owner_of(name);
        const PlanValue& o = values_.at(x_owner);
        if (x_offset != 0 || o.info.bytes() != x.info.bytes() || o.producer < 0 || o.row_stride != 0) continue;
        if (split_step >= 0 && o.producer <= split_step) continue;
        if (x_owner == owner) continue;  // already part of this output
        move_into(x_owner, owner, offset);
        continue;
      }
      if (x.producer < 0 || !x.view_of.empty() || !read_in_place(name) || graph_outputs.count(name) || has_views(name))
        continue;
      const Pending& q = pending_[size_t(x.producer)];
      if (!q.node || q.outputs.empty() || q.outputs[0] != name) continue;
      const OpImpl* producer = find_op(q.node->op);
      if (!producer->strided_output || !producer->strided_output(context(*q.node, q.inputs, q.input_infos))) continue;
      move_into(name, owner, offset, y.info.dims[size_t(axis)]);
    }
  }
}

}  // namespace octet
