#include "engine/op_registry.h"

#include <cstring>
#include <map>

namespace octet {

const TensorInfo& OpContext::info(size_t i) const {
  if (!has(i)) fail("input " + std::to_string(i) + " is required");
  return *in[i];
}

const ir::TensorData& OpContext::constant(size_t i, const char* what) const {
  if (!has(i)) fail(std::string(what) + " (input " + std::to_string(i) + ") is required");
  if (i >= in_const.size() || !in_const[i])
    fail(std::string(what) + " ('" + node.inputs[i] + "') must be a constant; octet does not "
         "support it computed at run time");
  return *in_const[i];
}

void OpContext::fail(const std::string& msg) const {
  throw ir::Error(ir::Graph::describe(node) + ", opset " + std::to_string(opset) + ": " + msg);
}

bool OpContext::follows_batch(size_t i) const {
  if (i >= in_const.size() || !in_const[i] || i >= in_const_at_other_batch.size()) return false;
  const ir::TensorData* here = in_const[i];
  const ir::TensorData* there = in_const_at_other_batch[i];
  if (!there) return true;
  return there != here && (there->dtype != here->dtype || there->dims != here->dims || there->bytes != here->bytes);
}

AtOtherBatch::AtOtherBatch(const OpContext& c) : infos_(c.in.size()), ctx_(c) {
  ctx_.kernel_name = nullptr;
  ctx_.kernel_scalar = nullptr;
  ctx_.fallback = nullptr;
  for (size_t i = 0; i < c.in.size(); ++i) {
    if (!c.in[i]) continue;
    infos_[i] = *c.in[i];
    if (const ir::TensorData* here = i < c.in_const.size() ? c.in_const[i] : nullptr) {
      const ir::TensorData* there = i < c.in_const_at_other_batch.size() ? c.in_const_at_other_batch[i] : here;
      if (!there) {
        known_ = false;
        there = here;
      }
      ctx_.in_const[i] = there;
      infos_[i].dtype = there->dtype;
      infos_[i].dims = there->dims;
    } else if (!infos_[i].dims.empty()) {
      infos_[i].dims[0] = other_batch(infos_[i].dims[0]);
    }
    ctx_.in[i] = &infos_[i];
  }
  ctx_.in_const_at_other_batch = ctx_.in_const;
}

BatchUse batch_use_of(const OpImpl& impl, const OpContext& c, const std::vector<TensorInfo>& out) {
  if (!impl.batch_use) return BatchUse::mixes_images;
  if (!impl.batch_use_sees_batch_constants)
    for (size_t i = 0; i < c.in.size(); ++i)
      if (c.follows_batch(i)) return BatchUse::mixes_images;
  // A declaration that cannot make sense of a step (a rank-0 tensor, an axis out of range) must
  // not fail a plan that never slices: the step is taken as mixing.
  try {
    return impl.batch_use(c, out);
  } catch (const std::exception&) {
    return BatchUse::mixes_images;
  }
}

int64_t normalize_axis(const OpContext& c, int64_t axis, int64_t rank) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    c.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return a;
}

std::optional<Layout> any_layout(const OpContext&, size_t) { return std::nullopt; }
std::optional<Layout> channels_last_map(const OpContext&, size_t input) {
  return input == 0 ? Layout::channels_last : Layout::row_major;
}
std::optional<Layout> want_row_major(const OpContext&, size_t) { return Layout::row_major; }
std::optional<Layout> want_channels_last(const OpContext&, size_t) { return Layout::channels_last; }

OpImpl value_shaped_op(std::function<std::vector<ir::TensorData>(const OpContext&)> outputs_from_values) {
  OpImpl impl;
  impl.want_layout = want_row_major;
  auto known = [](const OpContext& c) {
    for (size_t i = 0; i < c.in.size(); ++i)
      if (c.in[i] && (i >= c.in_const.size() || !c.in_const[i]))
        c.fail("its output shape depends on the values of '" + c.node.inputs[i] +
               "', which a plan does not know: the session runs it between two stages");
  };
  impl.infer = [known, outputs_from_values](const OpContext& c) {
    known(c);
    std::vector<TensorInfo> outs;
    for (const auto& t : outputs_from_values(c)) outs.push_back({t.dtype, t.dims, Layout::row_major});
    return outs;
  };
  impl.build = [known, outputs_from_values](const OpContext& c, std::span<const void* const>,
                                             std::span<void* const> out) -> Kernel {
    known(c);
    std::vector<ir::TensorData> results = outputs_from_values(c);
    std::vector<void*> dst(out.begin(), out.end());
    return [results = std::move(results), dst] {
      for (size_t i = 0; i < results.size() && i < dst.size(); ++i)
        if (dst[i]) ir::copy_bytes(dst[i], results[i].bytes.data(), results[i].bytes.size());
    };
  };
  impl.batch_use = [](const OpContext&, const std::vector<TensorInfo>&) { return BatchUse::mixes_images; };
  impl.outputs_from_values = std::move(outputs_from_values);
  return impl;
}

namespace {
const std::map<std::string, OpImpl>& op_table() {
  static const std::map<std::string, OpImpl> table = [] {
    OpTable t;
    register_conv_ops(t);
    register_conv_transpose_ops(t);
    register_pool_ops(t);
    register_global_maxpool_op(t);
    register_where_op(t);
    register_pow_op(t);
    register_compare_ops(t);
    register_lrn_op(t);
    register_maxunpool_op(t);
    register_elementwise_ops(t);
    register_gemm_ops(t);
    register_shape_ops(t);
    register_transform_ops(t);
    register_misc_ops(t);
    register_reduce_more_ops(t);
    register_norm_ops(t);
    register_group_norm_op(t);
    register_quantize_ops(t);
    register_qconv_ops(t);
    register_qgemm_ops(t);
    register_qelementwise_ops(t);
    register_se_ops(t);
    register_pwdw_ops(t);
    register_dynamic_ops(t);
    register_qsoftmax_op(t);
    register_qconcat_op(t);
    register_qbatchnorm_op(t);
    register_qgroup_norm_op(t);
    register_resize_ops(t);
    register_sample_ops(t);
    register_index_ops(t);
    register_scatter_ops(t);
    register_generator_ops(t);
    register_value_shaped_ops(t);
    register_nms_op(t);
    return std::map<std::string, OpImpl>(t.begin(), t.end());
  }();
  return table;
}
}  // namespace

std::vector<std::string> registered_ops() {
  std::vector<std::string> names;
  for (const auto& [name, impl] : op_table()) names.push_back(name);
  return names;
}

const OpImpl* find_op(const std::string& op_type) {
  const auto& table = op_table();
  auto it = table.find(op_type);
  return it == table.end() ? nullptr : &it->second;
}

}  // namespace octet

namespace octet {

std::vector<ir::TensorData> evaluate_now(const OpImpl& impl, const OpContext& ctx,
                                         const std::vector<TensorInfo>& row_major_outs,
                                         const std::vector<const void*>& in) {
  // Constants are row-major; an op that wants another layout (Conv reads NHWC) gets a
  // relayouted copy, exactly as the planner would insert a relayout step before it.
  OpContext c = ctx;
  std::vector<TensorInfo> infos(ctx.in.size());
  std::vector<std::vector<std::byte>> moved;
  std::vector<const void*> ptrs = in;
  bool relaid = false;
  for (size_t i = 0; i < ctx.in.size(); ++i) {
    if (!ctx.in[i]) continue;
    infos[i] = *ctx.in[i];
    auto want = impl.want_layout ? impl.want_layout(ctx, i) : std::nullopt;
    if (want && *want != infos[i].layout) {
      if (!same_memory(infos[i].dims, infos[i].layout, *want)) {
        moved.emplace_back(infos[i].bytes());
        relayout(infos[i], in[i], *want, moved.back().data());
        ptrs[i] = moved.back().data();
      }
      infos[i].layout = *want;
      relaid = true;
    }
    c.in[i] = &infos[i];
  }
  const std::vector<TensorInfo> outs = relaid ? impl.infer(c) : row_major_outs;
  std::vector<std::vector<std::byte>> bufs;
  std::vector<void*> out_ptrs;
  for (const auto& o : outs) {
    bufs.emplace_back(o.bytes() + 1);  // + 1: a valid address for empty tensors
    out_ptrs.push_back(bufs.back().data());
  }
  impl.build(c, ptrs, out_ptrs)();
  std::vector<ir::TensorData> result;
  for (size_t i = 0; i < outs.size(); ++i) {
    ir::TensorData t = ir::TensorData::make(outs[i].dtype, outs[i].dims);
    if (same_memory(outs[i].dims, outs[i].layout, Layout::row_major))
      ir::copy_bytes(t.bytes.data(), bufs[i].data(), t.bytes.size());
    else
      relayout(outs[i], bufs[i].data(), Layout::row_major, t.bytes.data());
    result.push_back(std::move(t));
  }
  return result;
}

}  // namespace octet
