// Transpose, ChannelShuffle, Slice, Split, Concat, DepthToSpace and SpaceToDepth: data movement on any element type and
// either layout.
// Each is one StridedCopy per output (or per Concat input) planned once: a slice or concat
// along the channels of a channels-last tensor copies runs of channels per pixel, a transpose
// that only renames memory order (NCHW -> NHWC of a channels-last tensor) is one memcpy.
#include <limits>
#include <memory>

#include "engine/op_registry.h"
#include "engine/ops/batch_use.h"
#include "engine/ops/concat.h"
#include "engine/ops/reshape.h"
#include "kernels/elementwise/strided_copy.h"

namespace octet {
namespace {

using kernels::StridedCopy;

// ---- Transpose ----

// The perm attribute for a tensor of `rank` dimensions, normalised and checked.
std::vector<int64_t> transpose_perm(const OpContext& c, int64_t rank) {
  std::vector<int64_t> perm = c.node.attrs.ints("perm");
  if (perm.empty()) {  // the default reverses the dimensions
    for (int64_t k = rank - 1; k >= 0; --k) perm.push_back(k);
    return perm;
  }
  if (int64_t(perm.size()) != rank)
    c.fail("perm has " + std::to_string(perm.size()) + " entries for an input of rank " + std::to_string(rank));
  std::vector<bool> seen(size_t(rank), false);
  for (auto& p : perm) {
    p = normalize_axis(c, p, rank);
    if (seen[size_t(p)]) c.fail("perm repeats dimension " + std::to_string(p));
    seen[size_t(p)] = true;
  }
  return perm;
}

// True when a transpose by `perm` whose output is laid out `out` keeps the memory order of its
// input's layout `in`: the output's bytes are then the input's.
bool keeps_memory_order(int rank, Layout in, const std::vector<int64_t>& perm, Layout out) {
  const std::vector<int> in_order = memory_order(rank, in), out_order = memory_order(rank, out);
  for (int k = 0; k < rank; ++k)
    if (perm[size_t(out_order[size_t(k)])] != in_order[size_t(k)]) return false;
  return true;
}

// The output's layout: the one that keeps the input's memory order when there is one, so the
// output is a view of the input (OpImpl::output_is_input_when) and its consumers see the layout
// the input had (ConvNeXt's permute to [N, H, W, C] of a channels-last feature map and back
// meet the residual branch channels-last again); row-major otherwise.
Layout transpose_layout(const TensorInfo& x, const std::vector<int64_t>& perm) {
  const int rank = int(x.dims.size());
  for (Layout l : {Layout::row_major, Layout::channels_last}) {
    if (l == Layout::channels_last && rank != 4) continue;  // feature maps; [N, L, C] stays for MatMul
    if (keeps_memory_order(rank, x.layout, perm, l)) return l;
  }
  return Layout::row_major;
}

OpImpl transpose_op() {
  OpImpl op;
  op.want_layout = any_layout;
  // perm as transpose_perm reads it, checked by infer before the plan asks
  op.output_is_input_when = [](const ir::Node& node, const TensorInfo& x, const TensorInfo& y) {
    const int rank = int(x.dims.size());
    std::vector<int64_t> perm = node.attrs.ints("perm");
    if (perm.empty())
      for (int k = rank - 1; k >= 0; --k) perm.push_back(k);
    for (int64_t& p : perm) p = p < 0 ? p + rank : p;
    return keeps_memory_order(rank, x.layout, perm, y.layout);
  };
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    auto perm = transpose_perm(c, int64_t(c.info(0).dims.size()));
    ir::Dims out;
    for (int64_t p : perm) out.push_back(c.info(0).dims[size_t(p)]);
    return {{c.info(0).dtype, out, transpose_layout(c.info(0), perm)}};
  };
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) {
    return ops::keeps_images_apart_if(transpose_perm(c, int64_t(c.info(0).dims.size())).at(0) == 0);
  };
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    if (in[0] == out[0]) {  // a view (output_is_input_when)
      c.report_kernel({"view"});
      return [] {};
    }
    const TensorInfo& x = c.info(0);
    auto perm = transpose_perm(c, int64_t(c.info(0).dims.size()));
    auto in_strides = x.strides();
    ir::Dims out_dims;
    std::vector<int64_t> src;
    for (int64_t p : perm) {
      out_dims.push_back(x.dims[size_t(p)]);
      src.push_back(in_strides[size_t(p)]);
    }
    auto dst = strides_of(out_dims, transpose_layout(x, perm));
    auto copy = std::make_shared<const StridedCopy>(int(out_dims.size()), out_dims.data(), src.data(), dst.data(),
                                                    int(ir::dtype_size(x.dtype)));
    c.report_kernel(copy->kernel_id());
    const void* xp = in[0];
    void* yp = out[0];
    pthreadpool_t pool = c.threadpool;
    return [=] { copy->run(xp, yp, pool); };
  };
  return op;
}

// ---- ChannelShuffle: Reshape -> Transpose -> Reshape in one copy ----
// ---- ReshapeTranspose: Reshape -> Transpose in one copy (the same op, no second shape) ----
//
// ShuffleNet's channel shuffle, [N, C, H, W] -> [N, g, C/g, H, W] -> perm [0, 2, 1, 3, 4] ->
// [N, C, H, W] (passes::fuse_channel_shuffle forms the node, inputs x, shape1, shape2; attribute
// perm). The reshapes only rename memory, so the whole chain is one strided copy from x viewed
// as the intermediate shape. On a channels-last x that view exists and the output stays
// channels-last: a permutation of each pixel's channels, with no relayout on either side.

struct ShufflePlan {
  ir::Dims split;                  // the first reshape's shape
  ir::Dims moved;                  // the transposed intermediate shape
  std::vector<int64_t> src, dst;   // its strides in x and in y
  ir::Dims out;                    // y's dims
  Layout layout = Layout::row_major;
  bool viewable = true;            // false: x must be read row-major first (a copy)
};

ShufflePlan shuffle_plan(const OpContext& c) {
  const TensorInfo& x = c.info(0);
  ShufflePlan p;
  p.split = ops::reshape_target(c, x.dims, 1);
  auto split_strides = view_strides(x.dims, x.strides(), p.split);
  if (!split_strides) {
    p.viewable = false;
    split_strides = strides_of(p.split, Layout::row_major);
  }
  for (int64_t k : transpose_perm(c, int64_t(p.split.size()))) {
    p.moved.push_back(p.split[size_t(k)]);
    p.src.push_back((*split_strides)[size_t(k)]);
  }
  p.out = c.in.size() > 2 ? ops::reshape_target(c, p.moved, 2) : p.moved;
  if (x.layout == Layout::channels_last && p.out.size() == x.dims.size() && p.viewable) {
    if (auto dst = view_strides(p.out, strides_of(p.out, Layout::channels_last), p.moved)) {
      p.dst = *dst;
      p.layout = Layout::channels_last;
      return p;
    }
  }
  p.dst = strides_of(p.moved, Layout::row_major);
  return p;
}

OpImpl channel_shuffle_op() {
  OpImpl op;
  op.want_layout = [](const OpContext&, size_t i) -> std::optional<Layout> {
    return i == 0 ? std::nullopt : std::optional(Layout::row_major);
  };
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    const ShufflePlan p = shuffle_plan(c);
    return {{c.info(0).dtype, p.out, p.layout}};
  };
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const TensorInfo& x = c.info(0);
    const ShufflePlan p = shuffle_plan(c);
    const int elem = int(ir::dtype_size(x.dtype));
    auto copy = std::make_shared<const StridedCopy>(int(p.moved.size()), p.moved.data(), p.src.data(), p.dst.data(),
                                                    elem);
    const void* xp = in[0];
    void* yp = out[0];
    pthreadpool_t pool = c.threadpool;
    if (p.viewable) {
      c.report_kernel(copy->kernel_id());
      return [=] { copy->run(xp, yp, pool); };
    }
    // x's layout does not split into the intermediate shape: read it row-major first.
    auto relayout = std::make_shared<const StridedCopy>(relayout_copy(x, Layout::row_major));
    auto scratch = std::make_shared<std::vector<std::byte>>(x.bytes());
    c.report_kernel(relayout->kernel_id() + " + " + copy->kernel_id());
    return [=] {
      relayout->run(xp, scratch->data(), pool);
      copy->run(scratch->data(), yp, pool);
    };
  };
  // Apart when the images stay on axis 0 through both reshapes and the transpose, at the
  // planned batch and at another (the shapes are read with Shape and follow the batch).
  op.batch_use_sees_batch_constants = true;
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>& out) {
    const ir::Dims& in = c.info(0).dims;
    const std::vector<int64_t> perm = c.node.attrs.ints("perm");
    if (in.empty() || perm.empty() || perm[0] != 0 || out.empty() || out[0].dims.empty() || out[0].dims[0] != in[0])
      return BatchUse::mixes_images;
    const AtOtherBatch other(c);
    if (!other.known()) return BatchUse::mixes_images;
    try {
      const ShufflePlan here = shuffle_plan(c), there = shuffle_plan(other.context());
      ir::Dims out_there = out[0].dims;
      out_there[0] = other_batch(in[0]);
      return ops::keeps_images_apart_if(here.split[0] == in[0] && there.split[0] == other_batch(in[0]) &&
                                        there.out == out_there);
    } catch (const ir::Error&) {
      return BatchUse::mixes_images;
    }
  };
  return op;
}

// ---- Slice ----

struct SliceBox {
  ir::Dims out;                 // output extents
  std::vector<int64_t> start;   // first source index per dimension
  std::vector<int64_t> step;    // source step per dimension
};

// ONNX Slice (opset 10+, attributes moved to inputs by the importer): starts and ends are
// clamped to the dimension, for negative steps to [-1, dim - 1] at the end.
SliceBox slice_box(const OpContext& c) {
  const ir::Dims& d = c.info(0).dims;
  const int64_t rank = int64_t(d.size());
  if (!c.has(1) || !c.has(2)) c.fail("starts and ends are required");
  auto starts = c.constant(1, "starts").to_i64();
  auto ends = c.constant(2, "ends").to_i64();
  std::vector<int64_t> axes, steps;
  if (c.has(3)) axes = c.constant(3, "axes").to_i64();
  if (c.has(4)) steps = c.constant(4, "steps").to_i64();
  if (axes.empty())
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(int64_t(k));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (starts.size() != ends.size() || axes.size() != starts.size() || steps.size() != starts.size())
    c.fail("starts, ends, axes and steps must have the same length");
  SliceBox b{d, std::vector<int64_t>(size_t(rank), 0), std::vector<int64_t>(size_t(rank), 1)};
  std::vector<bool> seen(size_t(rank), false);
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t a = normalize_axis(c, axes[k], rank);
    if (seen[size_t(a)]) c.fail("axes repeat dimension " + std::to_string(a));
    seen[size_t(a)] = true;
    const int64_t n = d[size_t(a)], step = steps[k];
    if (step == 0) c.fail("a step of 0 is not allowed");
    int64_t s = starts[k], e = ends[k];
    if (s < 0) s += n;
    if (e < 0 && e > std::numeric_limits<int64_t>::min() + n) e += n;
    else if (e < 0) e = -1;
    // Counted in unsigned magnitudes: a step of INT64_MIN has no int64 negation, and
    // `span + step - 1` overflows for steps near INT64_MAX.
    const uint64_t stride = step > 0 ? uint64_t(step) : uint64_t(0) - uint64_t(step);
    int64_t count = 0;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, n);
      e = std::clamp<int64_t>(e, 0, n);
      if (e > s) count = int64_t(1 + uint64_t(e - s - 1) / stride);
    } else {
      s = std::clamp<int64_t>(s, 0, n - 1);
      e = std::clamp<int64_t>(e, -1, n - 1);
      if (s > e) count = int64_t(1 + uint64_t(s - e - 1) / stride);
    }
    b.out[size_t(a)] = count;
    b.start[size_t(a)] = s;
    b.step[size_t(a)] = count > 1 ? step : 1;  // one element needs no step (and a huge one overflows offsets)
  }
  return b;
}

// A box of x (start, step per dimension, extents `out`) copied into a dense tensor of the same layout.
Kernel box_copy(const OpContext& c, const TensorInfo& x, const SliceBox& b, Layout out_layout, const void* in,
                void* out) {
  auto in_strides = x.strides();
  auto dst = strides_of(b.out, out_layout);
  std::vector<int64_t> src(in_strides.size());
  int64_t offset = 0;
  for (size_t k = 0; k < in_strides.size(); ++k) {
    src[k] = in_strides[k] * b.step[k];
    if (b.out[k] > 0) offset += b.start[k] * in_strides[k];
  }
  const size_t elem = ir::dtype_size(x.dtype);
  auto copy =
      std::make_shared<const StridedCopy>(int(b.out.size()), b.out.data(), src.data(), dst.data(), int(elem));
  c.report_kernel(copy->kernel_id());
  const void* xp = static_cast<const std::byte*>(in) + offset * int64_t(elem);
  void* yp = out;
  if (xp == yp) return [] {};  // a Split's output left where it is (engine/plan_views.cc)
  pthreadpool_t pool = c.threadpool;
  return [=] { copy->run(xp, yp, pool); };
}

OpImpl slice_op() {
  OpImpl op;
  op.want_layout = [](const OpContext&, size_t i) -> std::optional<Layout> {
    return i == 0 ? std::nullopt : std::optional(Layout::row_major);
  };
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    return {{c.info(0).dtype, slice_box(c).out, c.info(0).layout}};
  };
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    return box_copy(c, c.info(0), slice_box(c), c.info(0).layout, in[0], out[0]);
  };
  // Apart when axis 0 is kept whole and the rest of the box is the same at any batch: checked
  // at the other batch extent too, since "ends = 1" keeps all of axis 0 when planned for one
  // image, and ends read with Shape follow the batch.
  op.batch_use_sees_batch_constants = true;
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) {
    const AtOtherBatch other(c);
    if (!ops::is_activation(c, 0) || c.info(0).dims.empty() || !other.known()) return BatchUse::mixes_images;
    const int64_t n = c.info(0).dims[0];
    try {
      SliceBox here = slice_box(c), there = slice_box(other.context());
      if (here.out[0] != n || there.out[0] != other_batch(n) || here.start[0] != 0 || there.start[0] != 0 ||
          here.step[0] != 1 || there.step[0] != 1)
        return BatchUse::mixes_images;
      here.out[0] = there.out[0];
      return ops::keeps_images_apart_if(here.out == there.out && here.start == there.start && here.step == there.step);
    } catch (const ir::Error&) {
      return BatchUse::mixes_images;
    }
  };
  return op;
}

// ---- Split ----

std::vector<int64_t> split_sizes(const OpContext& c, int64_t axis) {
  const int64_t n = c.info(0).dims[size_t(axis)];
  const int64_t parts = int64_t(c.node.outputs.size());
  if (c.has(1)) {
    auto sizes = c.constant(1, "split").to_i64();
    if (int64_t(sizes.size()) != parts)
      c.fail("split has " + std::to_string(sizes.size()) + " sizes for " + std::to_string(parts) + " outputs");
    int64_t sum = 0;
    for (int64_t s : sizes) {
      if (s < 0) c.fail("split sizes must not be negative");
      sum += s;
    }
    if (sum != n) c.fail("split sizes add up to " + std::to_string(sum) + ", the axis has " + std::to_string(n));
    return sizes;
  }
  // Equal parts; from opset 18 the last may be smaller (ceil division).
  const int64_t each = (n + parts - 1) / parts;
  if (c.opset < 18 && n % parts)
    c.fail("the axis (" + std::to_string(n) + ") does not split into " + std::to_string(parts) + " equal parts");
  std::vector<int64_t> sizes;
  for (int64_t k = 0, left = n; k < parts; ++k, left -= each) sizes.push_back(std::max<int64_t>(0, std::min(each, left)));
  return sizes;
}

OpImpl split_op() {
  OpImpl op;
  op.want_layout = [](const OpContext&, size_t i) -> std::optional<Layout> {
    return i == 0 ? std::nullopt : std::optional(Layout::row_major);
  };
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    const TensorInfo& x = c.info(0);
    const int64_t axis = normalize_axis(c, c.node.attrs.i("axis", 0), int64_t(x.dims.size()));
    std::vector<TensorInfo> outs;
    for (int64_t s : split_sizes(c, axis)) {
      ir::Dims d = x.dims;
      d[size_t(axis)] = s;
      outs.push_back({x.dtype, d, x.layout});
    }
    return outs;
  };
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) {
    const int64_t axis = normalize_axis(c, c.node.attrs.i("axis", 0), int64_t(c.info(0).dims.size()));
    return ops::keeps_images_apart_if(axis != 0 && ops::per_image_with_constants(c) == BatchUse::keeps_images_apart);
  };
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const TensorInfo& x = c.info(0);
    const int64_t axis = normalize_axis(c, c.node.attrs.i("axis", 0), int64_t(x.dims.size()));
    std::vector<Kernel> parts;
    int64_t at = 0;
    auto sizes = split_sizes(c, axis);
    for (size_t k = 0; k < sizes.size(); ++k) {
      SliceBox b{x.dims, std::vector<int64_t>(x.dims.size(), 0), std::vector<int64_t>(x.dims.size(), 1)};
      b.out[size_t(axis)] = sizes[k];
      b.start[size_t(axis)] = at;
      at += sizes[k];
      if (out[k]) parts.push_back(box_copy(c, x, b, x.layout, in[0], out[k]));
    }
    return [parts] {
      for (const auto& p : parts) p();
    };
  };
  return op;
}

// ---- Concat ----

std::vector<size_t> all_inputs(const OpContext& c) {
  std::vector<size_t> v(c.in.size());
  for (size_t i = 0; i < v.size(); ++i) v[i] = i;
  return v;
}

OpImpl concat_op() {
  OpImpl op;
  op.want_layout = any_layout;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> { return {ops::concat_output(c, all_inputs(c))}; };
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>& out) {
    return ops::concat_per_image(c, all_inputs(c), normalize_axis(c, c.node.attrs.i("axis"), int64_t(out[0].dims.size())));
  };
  // Its copies read and write rows any stride apart (views, engine/plan_views.cc).
  op.strided_output = [](const OpContext&) { return true; };
  op.strided_input = [](const OpContext&, size_t) { return true; };
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    kernels::KernelId name;
    auto pieces = ops::concat_pieces(c, all_inputs(c), in, out[0], &name);
    std::erase_if(pieces, [](const ops::ConcatPiece& p) { return p.in_place(); });
    if (pieces.empty()) name = {"in_place"};
    c.report_kernel(name);
    pthreadpool_t pool = c.threadpool;
    return [pieces, pool] {
      for (const auto& p : pieces) p.copy->run(p.src, p.dst, pool);
    };
  };
  return op;
}

// ---- DepthToSpace, SpaceToDepth ----

// One StridedCopy over the 6-D view of the moved blocks, in either layout (the output takes the
// input's): DepthToSpace reads channel (i * b + j) * C' + c (DCR) or c * b * b + i * b + j (CRD)
// at (h, w) into channel c at (h * b + i, w * b + j); SpaceToDepth is DCR's inverse.
OpImpl space_depth_op(bool to_space) {
  OpImpl op;
  op.want_layout = any_layout;
  auto geometry = [to_space](const OpContext& c) {
    const TensorInfo& x = c.info(0);
    if (x.dims.size() != 4) c.fail("input must have rank 4 (N, C, H, W), got " + ir::dims_str(x.dims));
    const int64_t b = c.node.attrs.i("blocksize");
    if (b <= 0) c.fail("blocksize must be positive");
    const int64_t n = x.dims[0], ch = x.dims[1], h = x.dims[2], w = x.dims[3];
    ir::Dims out;
    if (to_space) {
      if (ch % (b * b) != 0) c.fail("channels (" + std::to_string(ch) + ") are not a multiple of blocksize^2");
      out = {n, ch / (b * b), h * b, w * b};
    } else {
      if (h % b != 0 || w % b != 0) c.fail("H and W must be multiples of blocksize");
      out = {n, ch * b * b, h / b, w / b};
    }
    return out;
  };
  op.infer = [geometry](const OpContext& c) -> std::vector<TensorInfo> {
    return {{c.info(0).dtype, geometry(c), c.info(0).layout}};
  };
  op.batch_use = ops::broadcast_per_image;
  op.build = [geometry, to_space](const OpContext& c, std::span<const void* const> in,
                                  std::span<void* const> out) -> Kernel {
    const TensorInfo& x = c.info(0);
    const TensorInfo y{x.dtype, geometry(c), x.layout};
    const int64_t b = c.node.attrs.i("blocksize");
    const auto xs = x.strides(), ys = y.strides();
    std::vector<int64_t> dims, src, dst;
    if (to_space) {
      // Output viewed as [N, C', H, i, W, j].
      const int64_t cp = y.dims[1];
      const bool crd = c.node.attrs.has("mode") && c.node.attrs.s("mode") == "CRD";
      dims = {y.dims[0], cp, x.dims[2], b, x.dims[3], b};
      dst = {ys[0], ys[1], b * ys[2], ys[2], b * ys[3], ys[3]};
      const int64_t s_c = crd ? b * b * xs[1] : xs[1];
      const int64_t s_i = crd ? b * xs[1] : b * cp * xs[1];
      const int64_t s_j = crd ? xs[1] : cp * xs[1];
      src = {xs[0], s_c, xs[2], s_i, xs[3], s_j};
    } else {
      // Input viewed as [N, C, H', i, W', j] into channel (i * b + j) * C + c.
      const int64_t ch = x.dims[1];
      dims = {x.dims[0], ch, y.dims[2], b, y.dims[3], b};
      src = {xs[0], xs[1], b * xs[2], xs[2], b * xs[3], xs[3]};
      dst = {ys[0], ys[1], ys[2], b * ch * ys[1], ys[3], ch * ys[1]};
    }
    auto copy = std::make_shared<const StridedCopy>(6, dims.data(), src.data(), dst.data(), int(ir::dtype_size(x.dtype)));
    c.report_kernel(copy->kernel_id());
    const void* xp = in[0];
    void* yp = out[0];
    pthreadpool_t pool = c.threadpool;
    return [=] { copy->run(xp, yp, pool); };
  };
  return op;
}

}  // namespace

void register_transform_ops(OpTable& t) {
  t.emplace_back("DepthToSpace", space_depth_op(true));
  t.emplace_back("SpaceToDepth", space_depth_op(false));
  t.emplace_back("Transpose", transpose_op());
  t.emplace_back("ChannelShuffle", channel_shuffle_op());
  t.emplace_back("ReshapeTranspose", channel_shuffle_op());
  t.emplace_back("Slice", slice_op());
  t.emplace_back("Split", split_op());
  t.emplace_back("Concat", concat_op());
}

}  // namespace octet

namespace octet::ops {

namespace {
Layout concat_layout(const OpContext& c, const std::vector<size_t>& data) {
  for (size_t i : data)
    if (c.info(i).layout != Layout::channels_last) return Layout::row_major;
  return Layout::channels_last;
}
}  // namespace

TensorInfo concat_output(const OpContext& c, const std::vector<size_t>& data) {
  if (data.empty()) c.fail("needs at least one input");
  const TensorInfo& first = c.info(data[0]);
  const int64_t axis = normalize_axis(c, c.node.attrs.i("axis"), int64_t(first.dims.size()));
  ir::Dims out = first.dims;
  out[size_t(axis)] = 0;
  for (size_t i : data) {
    const auto& d = c.info(i).dims;
    if (c.info(i).dtype != first.dtype)
      c.fail("input " + std::to_string(i) + " is " + ir::dtype_name(c.info(i).dtype) + " but input " +
             std::to_string(data[0]) + " is " + ir::dtype_name(first.dtype) + "; Concat joins tensors of one type");
    bool ok = d.size() == out.size();
    for (size_t k = 0; ok && k < d.size(); ++k) ok = int64_t(k) == axis || d[k] == first.dims[k];
    if (!ok)
      c.fail("input " + std::to_string(i) + " " + ir::dims_str(d) + " does not match " + ir::dims_str(first.dims) +
             " outside axis " + std::to_string(axis));
    out[size_t(axis)] += d[size_t(axis)];
  }
  return {first.dtype, out, concat_layout(c, data)};
}

std::vector<ConcatPiece> concat_pieces(const OpContext& c, const std::vector<size_t>& data,
                                       std::span<const void* const> in, void* out, kernels::KernelId* kernel) {
  const TensorInfo y = concat_output(c, data);
  const int64_t axis = normalize_axis(c, c.node.attrs.i("axis"), int64_t(y.dims.size()));
  const auto dst = strides_of(y.dims, y.layout, c.out_row_stride);
  const int elem = int(ir::dtype_size(y.dtype));
  std::vector<ConcatPiece> pieces;
  int64_t at = 0;
  for (size_t i : data) {
    const TensorInfo& x = c.info(i);
    auto src = strides_of(x.dims, x.layout, i < c.in_row_stride.size() ? c.in_row_stride[i] : 0);
    auto copy = std::make_shared<const kernels::StridedCopy>(int(x.dims.size()), x.dims.data(), src.data(), dst.data(), elem);
    if (kernel->name.empty() || copy->kernel_id().scalar) *kernel = copy->kernel_id();
    pieces.push_back({copy, i, in[i], static_cast<std::byte*>(out) + at * dst[size_t(axis)] * elem});
    at += x.dims[size_t(axis)];
  }
  return pieces;
}

}  // namespace octet::ops
