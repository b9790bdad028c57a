// Range, Size, Trilu, EyeLike and OneHot: tensors made from a shape, a few scalars or indices.
// Range, Size and EyeLike depend on constants or shapes only and are folded at plan time; Trilu
// and OneHot run as steps. Portable kernels (fills and masked copies).
#include <cmath>
#include <cstring>
#include <memory>

#include "core/int8_ops.h"
#include "engine/op_registry.h"
#include "engine/ops/batch_use.h"
#include "kernels/kernel_id.h"

namespace octet {
namespace {

template <class F>
void with_number_type(const OpContext& c, ir::DType t, const char* what, F&& f) {
  switch (t) {
    case ir::DType::f32: f(float{}); break;
    case ir::DType::f64: f(double{}); break;
    case ir::DType::s32: f(int32_t{}); break;
    case ir::DType::s64: f(int64_t{}); break;
    case ir::DType::u8: f(uint8_t{}); break;
    case ir::DType::s8: f(int8_t{}); break;
    case ir::DType::b8: c.fail(std::string(what) + " must be a number type");
  }
}

// ---- Range ----
//
// start, start + delta, ... below limit (above it for a negative delta): ceil((limit - start) /
// delta) values, computed in double as ONNX Runtime does, each the previous plus delta in the
// element type.

template <class T>
T scalar_of(const ir::TensorData& t) {
  T v;
  std::memcpy(&v, t.bytes.data(), sizeof(T));
  return v;
}

int64_t range_count(const OpContext& c) {
  const ir::DType t = c.info(0).dtype;
  int64_t n = 0;
  with_number_type(c, t, "start", [&](auto tag) {
    using T = decltype(tag);
    const ir::TensorData* v[3];
    const char* names[3] = {"start", "limit", "delta"};
    for (size_t i = 0; i < 3; ++i) {
      v[i] = &c.constant(i, names[i]);
      if (v[i]->dtype != t) c.fail(std::string(names[i]) + " must have start's type");
      if (v[i]->count() != 1) c.fail(std::string(names[i]) + " must be a scalar, got " + ir::dims_str(v[i]->dims));
    }
    const T start = scalar_of<T>(*v[0]), limit = scalar_of<T>(*v[1]), delta = scalar_of<T>(*v[2]);
    if (delta == T(0)) c.fail("delta must not be zero");
    const double count = std::ceil((1.0 * double(limit - start)) / double(delta));
    if (!(count < 1e12)) c.fail("the range holds too many values");
    n = count > 0 ? int64_t(count) : 0;
  });
  return n;
}

OpImpl range_op() {
  OpImpl op;
  op.want_layout = any_layout;
  op.value_inputs = {0, 1, 2};
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    return {{c.info(0).dtype, {range_count(c)}, Layout::row_major}};
  };
  op.build = [](const OpContext& c, std::span<const void* const>, std::span<void* const> out) -> Kernel {
    const int64_t n = range_count(c);
    const ir::DType t = c.info(0).dtype;
    Kernel k;
    with_number_type(c, t, "start", [&](auto tag) {
      using T = decltype(tag);
      const T start = scalar_of<T>(c.constant(0, "start")), delta = scalar_of<T>(c.constant(2, "delta"));
      auto y = static_cast<T*>(out[0]);
      k = [=] {
        T v = start;
        for (int64_t i = 0; i < n; ++i, v = T(v + delta)) y[i] = v;
      };
    });
    c.report_kernel(kernels::portable_kernel("range_fill"));
    return k;
  };
  return op;
}

// ---- Size ----

OpImpl size_op() {
  OpImpl op;
  op.shape_only = true;
  op.want_layout = any_layout;
  op.infer = [](const OpContext&) -> std::vector<TensorInfo> { return {{ir::DType::s64, {}, Layout::row_major}}; };
  op.build = [](const OpContext& c, std::span<const void* const>, std::span<void* const> out) -> Kernel {
    const int64_t n = c.info(0).count();
    auto y = static_cast<int64_t*>(out[0]);
    return [=] { *y = n; };
  };
  return op;
}

// ---- Trilu ----
//
// The upper (j - i >= k) or lower (j - i <= k) triangle of each matrix of the last two axes,
// zeros elsewhere (zero bytes are zero in every element type; between Q/DQ pairs fused away, on
// the codes, the zero point's code: int8::kZeroCodeAttr).

int64_t trilu_k(const OpContext& c) {
  if (!c.has(1)) return 0;
  const ir::TensorData& k = c.constant(1, "k");
  if (k.dtype != ir::DType::s64 || k.count() != 1) c.fail("k must be one int64 value");
  return k.to_i64()[0];
}

OpImpl trilu_op() {
  OpImpl op;
  op.want_layout = want_row_major;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    if (c.info(0).dims.size() < 2) c.fail("input must have rank >= 2, got " + ir::dims_str(c.info(0).dims));
    trilu_k(c);
    return {{c.info(0).dtype, c.info(0).dims, Layout::row_major}};
  };
  // The images are on axis 0 only above the matrices.
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) {
    return ops::keeps_images_apart_if(c.info(0).dims.size() >= 3 &&
                                      ops::per_image_with_constants(c) == BatchUse::keeps_images_apart);
  };
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const ir::Dims& d = c.info(0).dims;
    const int64_t rows = d[d.size() - 2], cols = d.back(), k = trilu_k(c);
    const int64_t mats = rows > 0 && cols > 0 ? c.info(0).count() / (rows * cols) : 0;
    const bool upper = c.node.attrs.i("upper", 1) != 0;
    const size_t elem = ir::dtype_size(c.info(0).dtype);
    const int zero = int(uint8_t(c.node.attrs.i(int8::kZeroCodeAttr, 0)));  // a byte: elem is 1 when set
    auto x = static_cast<const std::byte*>(in[0]);
    auto y = static_cast<std::byte*>(out[0]);
    c.report_kernel(kernels::portable_kernel("trilu_copy_runs"));
    return [=] {
      for (int64_t m = 0; m < mats; ++m)
        for (int64_t i = 0; i < rows; ++i) {
          // Row i keeps columns [lo, hi).
          const int64_t lo = upper ? std::clamp<int64_t>(i + k, 0, cols) : 0;
          const int64_t hi = upper ? cols : std::clamp<int64_t>(i + k + 1, 0, cols);
          const size_t row = size_t((m * rows + i) * cols) * elem;
          std::memset(y + row, zero, size_t(lo) * elem);
          std::memcpy(y + row + size_t(lo) * elem, x + row + size_t(lo) * elem, size_t(hi - lo) * elem);
          std::memset(y + row + size_t(hi) * elem, zero, size_t(cols - hi) * elem);
        }
    };
  };
  return op;
}

// ---- EyeLike ----

ir::DType onnx_dtype(const OpContext& c, int64_t code, ir::DType dflt) {
  switch (code) {
    case 0: return dflt;
    case 1: return ir::DType::f32;
    case 2: return ir::DType::u8;
    case 3: return ir::DType::s8;
    case 6: return ir::DType::s32;
    case 7: return ir::DType::s64;
    case 9: return ir::DType::b8;
    case 11: return ir::DType::f64;
    default: c.fail("dtype " + std::to_string(code) + " is not supported (float, double, uint8, int8, int32, int64, bool)");
  }
}

OpImpl eye_like_op() {
  OpImpl op;
  op.shape_only = true;
  op.want_layout = any_layout;
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    if (c.info(0).dims.size() != 2) c.fail("input must have rank 2, got " + ir::dims_str(c.info(0).dims));
    return {{onnx_dtype(c, c.node.attrs.i("dtype", 0), c.info(0).dtype), c.info(0).dims, Layout::row_major}};
  };
  op.build = [](const OpContext& c, std::span<const void* const>, std::span<void* const> out) -> Kernel {
    const ir::DType t = onnx_dtype(c, c.node.attrs.i("dtype", 0), c.info(0).dtype);
    const int64_t rows = c.info(0).dims[0], cols = c.info(0).dims[1], k = c.node.attrs.i("k", 0);
    const size_t elem = ir::dtype_size(t);
    std::vector<std::byte> one(elem);
    with_number_type(c, t == ir::DType::b8 ? ir::DType::u8 : t, "dtype", [&](auto tag) {
      using T = decltype(tag);
      const T v = T(1);
      std::memcpy(one.data(), &v, elem);
    });
    auto y = static_cast<std::byte*>(out[0]);
    return [=] {
      std::memset(y, 0, size_t(rows * cols) * elem);
      for (int64_t i = 0; i < rows; ++i)
        if (i + k >= 0 && i + k < cols) std::memcpy(y + size_t(i * cols + i + k) * elem, one.data(), elem);
    };
  };
  return op;
}

// ---- OneHot ----
//
// y has indices' shape with depth inserted at `axis`: on_value where the position equals the
// index (negative ones counted from depth; a fractional or out-of-range one matches nowhere),
// off_value elsewhere. depth (cast to int64 as ORT does) and values must be constants.

int64_t onehot_depth(const OpContext& c) {
  const ir::TensorData& d = c.constant(1, "depth");
  if (d.count() != 1) c.fail("depth must hold one value");
  int64_t v = 0;
  with_number_type(c, d.dtype, "depth", [&](auto tag) { v = int64_t(scalar_of<decltype(tag)>(d)); });
  if (v <= 0) c.fail("depth must be positive, got " + std::to_string(v));
  return v;
}

int64_t onehot_axis(const OpContext& c) {
  return normalize_axis(c, c.node.attrs.i("axis", -1), int64_t(c.info(0).dims.size()) + 1);
}

OpImpl one_hot_op() {
  OpImpl op;
  op.want_layout = want_row_major;
  op.value_inputs = {1, 2};
  op.infer = [](const OpContext& c) -> std::vector<TensorInfo> {
    const ir::TensorData& v = c.constant(2, "values");
    if (v.count() != 2) c.fail("values must hold [off_value, on_value]");
    with_number_type(c, c.info(0).dtype, "indices", [](auto) {});
    ir::Dims d = c.info(0).dims;
    d.insert(d.begin() + onehot_axis(c), onehot_depth(c));
    return {{v.dtype, d, Layout::row_major}};
  };
  op.batch_use = [](const OpContext& c, const std::vector<TensorInfo>&) {
    return ops::keeps_images_apart_if(onehot_axis(c) != 0 &&
                                      ops::per_image_with_constants(c) == BatchUse::keeps_images_apart);
  };
  op.build = [](const OpContext& c, std::span<const void* const> in, std::span<void* const> out) -> Kernel {
    const ir::Dims& d = c.info(0).dims;
    const int64_t axis = onehot_axis(c), depth = onehot_depth(c);
    int64_t outer = 1, inner = 1;
    for (int64_t a = 0; a < int64_t(d.size()); ++a) (a < axis ? outer : inner) *= d[size_t(a)];
    const ir::TensorData& v = c.constant(2, "values");
    const size_t elem = ir::dtype_size(v.dtype);
    const std::vector<std::byte> off(v.bytes.begin(), v.bytes.begin() + std::ptrdiff_t(elem)),
        on(v.bytes.begin() + std::ptrdiff_t(elem), v.bytes.end());
    // The indices as int64 positions, -1 where none matches.
    std::function<int64_t(int64_t)> position;
    with_number_type(c, c.info(0).dtype, "indices", [&](auto tag) {
      using T = decltype(tag);
      auto idx = static_cast<const T*>(in[0]);
      position = [idx, depth](int64_t j) -> int64_t {
        double p = double(idx[j]);
        if (p < 0) p += double(depth);
        return p >= 0 && p < double(depth) && p == std::floor(p) ? int64_t(p) : -1;
      };
    });
    auto y = static_cast<std::byte*>(out[0]);
    c.report_kernel(kernels::portable_kernel("one_hot_fill"));
    return [=] {
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t p = 0; p < depth; ++p) {
          std::byte* row = y + size_t((o * depth + p) * inner) * elem;
          for (int64_t i = 0; i < inner; ++i) std::memcpy(row + size_t(i) * elem, off.data(), elem);
        }
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t p = position(o * inner + i);
          if (p >= 0) std::memcpy(y + size_t((o * depth + p) * inner + i) * elem, on.data(), elem);
        }
    };
  };
  return op;
}

}  // namespace

void register_generator_ops(OpTable& t) {
  t.emplace_back("Range", range_op());
  t.emplace_back("Size", size_op());
  t.emplace_back("Trilu", trilu_op());
  t.emplace_back("EyeLike", eye_like_op());
  t.emplace_back("OneHot", one_hot_op());
}

}  // namespace octet
