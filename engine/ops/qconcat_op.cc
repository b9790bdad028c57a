// com.microsoft.QLinearConcat (Y_scale, Y_zero_point, then X_i, X_i_scale, X_i_zero_point for
// each input; attribute axis), and so the QDQ unit of a Concat whose inputs and output are
// quantized per tensor, which fuse_qdq turns into it. As ONNX Runtime computes it: an input
// whose scale and zero point equal the output's is copied; any other goes through the
// 256-entry table Q_y(DQ_x(byte)) first (the same division and rounding as QuantizeLinear).
// Layout and copies are Concat's (engine/ops/concat.h); where a copy moves runs of bytes (any
// channels-last concat) the table runs on each run on its way, else over a scratch image first.
#include "engine/ops/batch_use.h"
#include "engine/ops/concat.h"
#include "engine/ops/qparams.h"
#include "kernels/quantize/lookup.h"
#include "kernels/ref/qelementwise.h"

namespace octet {
namespace {

using ir::DType;

constexpr size_t kYScale = 0, kYZeroPoint = 1;

std::vector<size_t> data_inputs(const OpContext& c) {
  if (c.in.size() < 5 || (c.in.size() - 2) % 3 != 0)
    c.fail("takes Y_scale, Y_zero_point and one (X, X_scale, X_zero_point) triple per input, got " +
           std::to_string(c.in.size()) + " inputs");
  std::vector<size_t> data;
  for (size_t i = 2; i < c.in.size(); i += 3) data.push_back(i);
  return data;
}

void check(const OpContext& c, const std::vector<size_t>& data) {
  const DType t = c.info(kYZeroPoint).dtype;
  ops::require_q8(c, kYZeroPoint, "Y_zero_point");
  ops::require_scale(c, kYScale, "Y_scale");
  ops::require_zero_point(c, kYZeroPoint, "Y_zero_point", t);
  for (size_t i : data) {
    if (c.info(i).dtype != t)
      c.fail("input " + std::to_string(i) + " is " + ir::dtype_name(c.info(i).dtype) + ", the output " + ir::dtype_name(t));
    ops::require_scale(c, i + 1, "X_scale");
    ops::require_zero_point(c, i + 2, "X_zero_point", t);
  }
}

std::optional<Layout> want(const OpContext&, size_t i) {
  if (i >= 2 && (i - 2) % 3 == 0) return std::nullopt;  // data: any layout, like Concat
  return Layout::row_major;
}

// For each data input: empty (copy as is) or the requantization table.
template <class T>
std::vector<std::vector<T>> tables(const ops::ParamInputs& p, const std::vector<size_t>& data) {
  const kernels::QuantParams y = p[kYScale].quant(p[kYZeroPoint]);
  std::vector<std::vector<T>> out;
  for (size_t i : data) {
    const kernels::QuantParams x = p[i + 1].quant(p[i + 2]);
    if (x.scale == y.scale && x.zero_point == y.zero_point) {
      out.emplace_back();
      continue;
    }
    std::vector<T> table(256);
    for (int byte = 0; byte < 256; ++byte)
      table[size_t(byte)] = kernels::requantize_code(static_cast<T>(static_cast<uint8_t>(byte)), x, y);
    out.push_back(std::move(table));
  }
  return out;
}

Kernel build_qconcat(const OpContext& c, std::span<const void* const> in, std::span<void* const> out) {
  const std::vector<size_t> data = data_inputs(c);
  check(c, data);
  kernels::KernelId name;
  const auto pieces = ops::concat_pieces(c, data, in, out[0], &name);
  std::vector<size_t> params;
  for (size_t i : data) params.push_back(i + 1), params.push_back(i + 2);
  params.push_back(kYScale);
  params.push_back(kYZeroPoint);
  // One scratch image per input that needs a table: the table runs there, then the copy.
  size_t scratch_bytes = 0;
  for (size_t i : data) scratch_bytes = std::max(scratch_bytes, c.info(i).bytes());
  auto scratch = std::make_shared<std::vector<uint8_t>>(scratch_bytes);
  std::vector<int64_t> counts;
  for (const auto& piece : pieces) counts.push_back(c.info(piece.input).count());
  pthreadpool_t pool = c.threadpool;
  const kernels::Q8LookupKernel* fast = kernels::choose_q8_lookup(c.isa);
  const kernels::KernelId lookup_name = fast != nullptr ? kernels::row_kernel(*fast) : kernels::reference_kernel("q8_lookup__ref");
  return ops::visit_q8_type(c.info(kYZeroPoint).dtype, [&](auto tag) -> Kernel {
    using T = decltype(tag);
    const ops::ParamInputs p(c, in);
    bool constant = true;
    for (size_t i : params) constant = constant && p[i].constant;
    auto run = [=](const std::vector<std::vector<T>>& t) {
      for (size_t k = 0; k < pieces.size(); ++k) {
        if (t[k].empty() && pieces[k].in_place()) continue;
        const void* src = pieces[k].src;
        const auto* table = reinterpret_cast<const uint8_t*>(t[k].data());
        if (!t[k].empty() && fast != nullptr && pieces[k].copy->maps_runs()) {
          pieces[k].copy->run_mapped(src, pieces[k].dst, fast->rows, table, pool);
          continue;
        }
        if (!t[k].empty()) {
          if (fast != nullptr)
            kernels::q8_lookup(*fast, size_t(counts[k]), static_cast<const uint8_t*>(src),
                               table, scratch->data(), pool);
          else
            kernels::q8_lookup__ref(counts[k], static_cast<const T*>(src), t[k].data(), reinterpret_cast<T*>(scratch->data()));
          src = scratch->data();
        }
        pieces[k].copy->run(src, pieces[k].dst, pool);
      }
    };
    if (constant) {
      auto t = std::make_shared<const std::vector<std::vector<T>>>(tables<T>(p, data));
      bool lookup = false, copy = false;
      for (size_t k = 0; k < pieces.size(); ++k) {
        lookup = lookup || !(*t)[k].empty();
        copy = copy || !(*t)[k].empty() || !pieces[k].in_place();
      }
      if (!copy) name = {"in_place"};
      c.report_kernel(lookup ? lookup_name + " + " + name : name);
      return [t, run] { run(*t); };
    }
    c.report_kernel(lookup_name + " + " + name);
    return [p, data, run] { run(tables<T>(p, data)); };
  });
}

}  // namespace

void register_qconcat_op(OpTable& t) {
  OpImpl op;
  op.want_layout = want;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    const std::vector<size_t> data = data_inputs(c);
    check(c, data);
    return {ops::concat_output(c, data)};
  };
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>& out) {
    return ops::concat_per_image(c, data_inputs(c),
                                 normalize_axis(c, c.node.attrs.i("axis"), int64_t(out[0].dims.size())));
  };
  op.build = build_qconcat;
  t.emplace_back("QLinearConcat", op);
}

}  // namespace octet
