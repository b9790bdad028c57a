// Convolution taps that read only padding, cropped from the kernel:
//
//   3x3 conv, dilation 12, pads 12, on a 6x6 map: for every output pixel the eight outer taps
//   fall 12 pixels beyond the image, into the padding; only the centre tap meets the image.
//   ->  1x1 conv, pads 0: the same output, 1/9 of the multiply-adds.
//
// Tap k of an axis (input extent H, stride s, dilation d, leading pad p) reads rows
// o·s − p + k·d for the outputs o = 0 .. O−1; it is live when one of them lies in [0, H). The
// kernel is cropped to the span of live taps [k0, k1] on each axis, with the leading pad
// reduced by k0·d and the trailing one by (K−1−k1)·d, which leaves the output extent and every
// remaining tap's position unchanged. A dead tap contributes nothing: 0·w in float, and
// (x_zp − x_zp)·(w − w_zp) = 0 in QLinearConv and ConvInteger, which pad with the input zero
// point (ONNX Runtime's im2col too), so INT8 stays bit-exact. Weight scales, zero points and
// bias are per output channel and stay valid. Applied only when both new pads are >= 0 and
// the conv's geometry, resolved again, gives the same output dims; a conv whose every tap on
// an axis is dead (its output is the bias) is left alone.
#include <algorithm>
#include <optional>

#include "engine/graph_edit.h"
#include "engine/ops/spatial.h"
#include "engine/passes.h"

namespace octet::passes {
namespace {

// The input holding the constant weights of a conv octet runs, or -1 for other nodes.
int weight_input(const ir::Node& n) {
  if (!n.domain.empty()) return -1;
  if (n.op == "Conv" || n.op == "ConvInteger" || n.op == "ConvIntegerToFloat") return 1;
  if (n.op == "QLinearConv") return 3;
  return -1;
}

struct LiveSpan {
  int64_t first = -1, last = -1;  // -1: no tap is live
};

// The live taps of one axis (the file's comment): the first and last.
LiveSpan live_taps(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_begin) {
  LiveSpan span;
  for (int64_t k = 0; k < kernel; ++k) {
    const int64_t start = k * dilation - pad_begin;  // the row output 0 reads
    // The first output whose row is >= 0, then whether that row is inside the map.
    const int64_t o = start >= 0 ? 0 : (-start + stride - 1) / stride;
    if (o >= out || start + o * stride >= in) continue;
    if (span.first < 0) span.first = k;
    span.last = k;
  }
  return span;
}

// w [M, C/group, k...] cropped to [first[i], first[i] + kept[i]) on each spatial axis i.
ir::TensorData crop_weights(const ir::TensorData& w, const std::vector<int64_t>& first,
                            const std::vector<int64_t>& kept) {
  const size_t rank = w.dims.size(), spatial = rank - 2;
  ir::Dims dims = {w.dims[0], w.dims[1]};
  dims.insert(dims.end(), kept.begin(), kept.end());
  ir::TensorData out = ir::TensorData::make(w.dtype, dims);
  const size_t elem = ir::dtype_size(w.dtype);
  // Row-major strides of the old tensor.
  std::vector<int64_t> stride(rank, 1);
  for (size_t i = rank - 1; i > 0; --i) stride[i - 1] = stride[i] * w.dims[i];
  const int64_t row = kept.back();  // contiguous elements along the last axis
  std::vector<int64_t> at(rank, 0);  // index into the new tensor, last axis always 0
  std::byte* dst = out.bytes.data();
  for (int64_t copied = 0; copied < out.count(); copied += row) {
    int64_t src = at[0] * stride[0] + at[1] * stride[1];
    for (size_t i = 0; i < spatial; ++i) src += (at[2 + i] + first[i]) * stride[2 + i];
    std::copy_n(w.bytes.data() + size_t(src) * elem, size_t(row) * elem, dst);
    dst += size_t(row) * elem;
    for (size_t i = rank - 1; i-- > 0;) {  // the next row: an odometer over every axis but the last
      if (++at[i] < dims[i]) break;
      at[i] = 0;
    }
  }
  return out;
}

std::string kernel_str(const std::vector<int64_t>& k) {
  std::string s;
  for (size_t i = 0; i < k.size(); ++i) {
    if (i) s += 'x';
    s += std::to_string(k[i]);
  }
  return s;
}

// The conv's geometry with x of dims `x_dims`, or nothing when it does not resolve.
std::optional<ops::ConvGeometry> geometry(const ir::Node& n, int64_t opset, size_t wi, const ir::Dims& x_dims,
                                          const ir::TensorData& w) {
  std::vector<TensorInfo> infos(wi + 1);
  infos[0] = {ir::DType::f32, x_dims, Layout::row_major};
  infos[wi] = {w.dtype, w.dims, Layout::row_major};
  OpContext ctx{n, opset, {}, {}};
  for (size_t i = 0; i <= wi; ++i) ctx.in.push_back(i == 0 || i == wi ? &infos[i] : nullptr);
  try {
    return ops::conv_geometry(ctx, 0, wi);
  } catch (const ir::Error&) {
    return std::nullopt;
  }
}

}  // namespace

std::string pruned_taps_note(const ir::Node& n) {
  if (!n.attrs.has(kPrunedTapsAttr)) return "";
  const auto& from = n.attrs.ints(kPrunedTapsAttr);
  const auto& to = n.attrs.ints("kernel_shape");
  return "taps " + kernel_str(from) + " -> " + kernel_str(to) + ": the others read only padding";
}

int prune_dead_taps(ir::Graph& g, const KnownDims& dims_of) {
  int pruned = 0;
  for (auto& n : g.nodes) {
    const int wi = weight_input(n);
    if (wi < 0 || !n.has_input(size_t(wi)) || !g.is_constant(n.input(size_t(wi))) || n.attrs.has(kPrunedTapsAttr))
      continue;
    const ir::TensorData& w = *g.value(n.input(size_t(wi))).constant;
    if (w.dims.size() < 3) continue;
    bool one_tap = true;
    for (size_t i = 2; i < w.dims.size(); ++i) one_tap = one_tap && w.dims[i] == 1;
    if (one_tap) continue;
    const std::optional<ir::Dims> x_dims = dims_of(n.input(0));
    if (!x_dims || x_dims->size() != w.dims.size()) continue;
    const auto before = geometry(n, g.opset, size_t(wi), *x_dims, w);
    if (!before) continue;
    const ops::Window& win = before->window;
    const size_t r = win.in.size();
    std::vector<int64_t> first(r), kept(r), pad_begin(r), pad_end(r);
    bool smaller = false, applies = true;
    for (size_t i = 0; i < r && applies; ++i) {
      const LiveSpan live = live_taps(win.in[i], win.out[i], win.kernel[i], win.strides[i], win.dilations[i],
                                      win.pad_begin[i]);
      applies = live.first >= 0;
      first[i] = live.first;
      kept[i] = live.last - live.first + 1;
      pad_begin[i] = win.pad_begin[i] - live.first * win.dilations[i];
      pad_end[i] = win.pad_end[i] - (win.kernel[i] - 1 - live.last) * win.dilations[i];
      applies = applies && pad_begin[i] >= 0 && pad_end[i] >= 0;
      smaller = smaller || kept[i] < win.kernel[i];
    }
    if (!applies || !smaller) continue;
    ir::Node cropped = n;
    std::vector<int64_t> pads = pad_begin;
    pads.insert(pads.end(), pad_end.begin(), pad_end.end());
    cropped.attrs.set("pads", pads);
    cropped.attrs.set("auto_pad", std::string("NOTSET"));
    cropped.attrs.set("kernel_shape", kept);
    cropped.attrs.set(kPrunedTapsAttr, win.kernel);
    ir::TensorData new_w = crop_weights(w, first, kept);
    const auto after = geometry(cropped, g.opset, size_t(wi), *x_dims, new_w);
    if (!after || after->out_dims() != before->out_dims()) continue;
    // A new name: the original initializer may be shared with another conv.
    const std::string old_w = n.input(size_t(wi));
    cropped.inputs[size_t(wi)] = graph_edit::add_constant(g, n.name + ".cropped_weight", std::move(new_w));
    n = std::move(cropped);
    ++pruned;
    const bool is_input = std::find(g.inputs.begin(), g.inputs.end(), old_w) != g.inputs.end();
    if (g.consumers(old_w).empty() && !is_input && !g.is_graph_output(old_w)) g.values.erase(old_w);
  }
  return pruned;
}

}  // namespace octet::passes
