#include "tests/sweep/sweep_cases.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <tuple>

#include "core/ir.h"
#include "kernels/ref/activation.h"
#include "tests/util/qdq_patterns.h"

namespace octet::sweep {
namespace sweep_gen {

using testing::Attrs;
using testing::ElemType;
using testing::OnnxBuilder;
using testing::QParams;
using testing::TensorValue;
using Dims = std::vector<int64_t>;

std::string join(const Dims& d, const char* sep = "x") {
  std::string s;
  for (size_t i = 0; i < d.size(); ++i) s += (i ? sep : "") + std::to_string(d[i]);
  return s.empty() ? "scalar" : s;
}
std::string i64s(OnnxBuilder& b, const Dims& v) { return b.initializer_i64("", {int64_t(v.size())}, v); }
std::string f32(OnnxBuilder& b, float v) { return b.initializer("", TensorValue::scalar_f32(v)); }

// Round(a) / Round(b) of the sweep's inputs in [-2, 2]: NaN (0 / 0), +-inf, +-0 and few other
// values, many equal: what a comparison-based order (TopK, Unique) cannot order.
std::string nan_zeros_infs(OnnxBuilder& b, const Dims& d) {
  return b.node("Div", {b.node("Round", {b.input("a", d)}), b.node("Round", {b.input("b", d)})});
}

const char* mode_name(Mode m) { return m == Mode::fp32 ? "fp32" : m == Mode::qdq ? "qdq" : "dynamic"; }
const QParams kAct{1.0f / 64, 128, ElemType::u8};

struct Builder {
  std::vector<Case> cases;
  std::set<std::string> ids;
  void add(Mode m, const std::string& op, const std::string& attrs, std::function<void(OnnxBuilder&)> build,
           bool scalar_ok = false, int64_t opset = 17) {
    Case c{std::string(mode_name(m)) + "/" + op + "/" + attrs, m, std::move(build), opset, scalar_ok};
    if (!ids.insert(c.id).second) throw std::logic_error("duplicate sweep case id " + c.id);
    cases.push_back(std::move(c));
  }
};

// ---- Convolution ----
struct ConvGeom {
  int64_t c = 8, m = 8, h = 12, w = 12, group = 1, kh = 3, kw = 3, sh = 1, sw = 1, dh = 1, dw = 1;
  Dims pads = {1, 1, 1, 1};  // top, left, bottom, right (ONNX order: begins then ends)
  std::string auto_pad;      // "" (NOTSET), SAME_UPPER, SAME_LOWER, VALID
  int64_t batch = 1;
  std::string id() const {
    std::string s = "c" + std::to_string(c) + "_m" + std::to_string(m) + "_" + std::to_string(h) + "x" +
                    std::to_string(w) + "_k" + std::to_string(kh) + "x" + std::to_string(kw) + "_s" +
                    std::to_string(sh) + "x" + std::to_string(sw) + "_d" + std::to_string(dh) + "x" +
                    std::to_string(dw) + "_g" + std::to_string(group);
    s += auto_pad.empty() ? "_p" + join(pads, ".") : "_" + auto_pad;
    if (batch != 1) s += "_n" + std::to_string(batch);
    return s;
  }
  Attrs attrs() const {
    Attrs a = {{"kernel_shape", {kh, kw}}, {"strides", {sh, sw}}, {"dilations", {dh, dw}}, {"group", group}};
    if (auto_pad.empty()) a.push_back({"pads", {pads[0], pads[1], pads[2], pads[3]}});
    else a.push_back({"auto_pad", auto_pad});
    return a;
  }
};

ConvGeom same_padded(ConvGeom g) {
  const int64_t ph = g.dh * (g.kh - 1), pw = g.dw * (g.kw - 1);
  g.pads = {ph / 2, pw / 2, ph - ph / 2, pw - pw / 2};
  return g;
}

void add_conv(Builder& s, Mode mode, const ConvGeom& g) {
  const Dims w_dims = {g.m, g.c / g.group, g.kh, g.kw};
  s.add(mode, "Conv", g.id(), [g, mode, w_dims](OnnxBuilder& b) {
    const std::string x = b.input("x", {g.batch, g.c, g.h, g.w});
    if (mode == Mode::fp32) {
      b.output(b.node("Conv", {x, b.random_normal_init("", w_dims, 0, 0.3f), b.random_normal_init("", {g.m})}, g.attrs()));
    } else if (mode == Mode::qdq) {
      auto w = testing::qdq_weights(b, w_dims, true);
      auto y = b.node("Conv", {testing::qdq(b, x, kAct), w.dq, testing::qdq_bias(b, g.m, kAct.scale, w.scales)}, g.attrs());
      const float k = float(g.c / g.group * g.kh * g.kw);
      b.output(testing::qdq(b, y, {0.3f * std::sqrt(k) / 64, 128, ElemType::u8}));
    } else {
      b.output(testing::dynamic_conv(b, x, w_dims, g.attrs(), true));
    }
  });
}

std::vector<ConvGeom> conv_space() {
  std::vector<ConvGeom> v;
  // Kernel sizes 1..11, square, and the asymmetric ones of Inception-style nets.
  for (int64_t k = 1; k <= 11; ++k) {
    ConvGeom g;
    g.kh = g.kw = k;
    v.push_back(same_padded(g));
  }
  for (auto [kh, kw] : {std::pair{1, 7}, {7, 1}, {1, 3}, {3, 1}, {1, 5}, {5, 1}}) {
    ConvGeom g;
    g.kh = kh, g.kw = kw;
    v.push_back(same_padded(g));
  }
  // Strides and dilations.
  for (int64_t k : {1, 3, 5})
    for (int64_t st : {2, 3}) {
      ConvGeom g;
      g.kh = g.kw = k, g.sh = g.sw = st;
      v.push_back(same_padded(g));
    }
  {
    ConvGeom g;
    g.sh = 1, g.sw = 2;
    v.push_back(same_padded(g));
  }
  for (int64_t k : {3, 5})
    for (int64_t d : {2, 3}) {
      ConvGeom g;
      g.kh = g.kw = k, g.dh = g.dw = d, g.h = g.w = 16;
      v.push_back(same_padded(g));
    }
  {
    ConvGeom g;
    g.dh = 1, g.dw = 2;
    v.push_back(same_padded(g));
  }
  // Groups from 1 to C: grouped, depthwise, depthwise with a channel multiplier.
  for (int64_t k : {1, 3})
    for (int64_t group : {2, 4, 8, 16}) {
      ConvGeom g;
      g.c = g.m = 16, g.group = group, g.kh = g.kw = k;
      v.push_back(same_padded(g));
    }
  for (auto [c, m, group] : {std::tuple{16, 32, 16}, {16, 24, 8}, {12, 12, 3}, {24, 24, 24}, {3, 3, 3}, {5, 10, 5}}) {
    ConvGeom g;
    g.c = c, g.m = m, g.group = group;
    v.push_back(same_padded(g));
  }
  {
    ConvGeom g;  // depthwise 5x5 stride 2 (MobileNetV3, EfficientNet)
    g.c = g.m = g.group = 16, g.kh = g.kw = 5, g.sh = g.sw = 2;
    v.push_back(same_padded(g));
    g.kh = g.kw = 3, g.dh = g.dw = 2;  // depthwise dilated stride 2
    v.push_back(same_padded(g));
  }
  // Pads: none, symmetric, asymmetric.
  for (Dims p : {Dims{0, 0, 0, 0}, Dims{2, 2, 2, 2}, Dims{0, 0, 1, 1}, Dims{1, 0, 0, 1}, Dims{2, 1, 0, 0}, Dims{0, 2, 1, 0}}) {
    ConvGeom g;
    g.pads = p;
    v.push_back(g);
  }
  {
    ConvGeom g;  // asymmetric pads on a depthwise stride-2 conv (TF-exported SAME)
    g.c = g.m = g.group = 16, g.sh = g.sw = 2, g.pads = {0, 0, 1, 1};
    v.push_back(g);
  }
  // auto_pad.
  for (const char* ap : {"SAME_UPPER", "SAME_LOWER", "VALID"})
    for (int64_t k : {2, 3})
      for (int64_t st : {1, 2}) {
        ConvGeom g;
        g.kh = g.kw = k, g.sh = g.sw = st, g.auto_pad = ap;
        v.push_back(g);
      }
  // Odd channel counts and spatial sizes, batch > 1.
  for (auto [c, m, h] : {std::tuple{3, 16, 15}, {5, 7, 9}, {17, 33, 7}, {64, 64, 6}}) {
    ConvGeom g;
    g.c = c, g.m = m, g.h = g.w = h;
    v.push_back(same_padded(g));
  }
  {
    ConvGeom g;
    g.batch = 3;
    v.push_back(same_padded(g));
  }
  // Mixed: a deterministic sample of the whole space.
  std::mt19937 rng(2024);
  auto pick = [&](int64_t lo, int64_t hi) { return lo + int64_t(rng() % uint32_t(hi - lo + 1)); };
  for (int i = 0; i < 24; ++i) {
    ConvGeom g;
    static const std::vector<std::tuple<int64_t, int64_t, int64_t>> cmg = {
        {8, 8, 1}, {8, 16, 2}, {16, 16, 16}, {12, 24, 4}, {6, 6, 3}, {16, 8, 1}, {32, 32, 32}, {9, 18, 9}};
    auto [c, m, group] = cmg[pick(0, int64_t(cmg.size()) - 1)];
    g.c = c, g.m = m, g.group = group;
    g.kh = pick(1, 7), g.kw = pick(1, 7);
    g.sh = pick(1, 3), g.sw = pick(1, 3);
    g.dh = pick(1, 3), g.dw = pick(1, 3);
    const int64_t min_h = std::max<int64_t>(7, g.dh * (g.kh - 1) + 1), min_w = std::max<int64_t>(7, g.dw * (g.kw - 1) + 1);
    g.h = pick(min_h, min_h + 10), g.w = pick(min_w, min_w + 10);
    g.pads = {pick(0, g.kh - 1), pick(0, g.kw - 1), pick(0, g.kh - 1), pick(0, g.kw - 1)};
    v.push_back(g);
  }
  // Groups of 4 and 2 channels (ResNeXt's, F32NarrowGroupConv): stride 2, dilation, 1x7 and
  // 7x1, channels not a multiple of 8, asymmetric pads with two images.
  for (auto [c, group, kh, kw, st, dil] : {std::tuple{20, 5, 3, 3, 2, 1}, {24, 12, 3, 3, 1, 2}, {12, 3, 1, 7, 1, 1},
                                           {20, 10, 7, 1, 2, 1}, {12, 6, 1, 1, 2, 1}}) {
    ConvGeom g;
    g.c = g.m = c, g.group = group, g.kh = kh, g.kw = kw, g.sh = g.sw = st, g.dh = g.dw = dil;
    v.push_back(same_padded(g));
  }
  {
    ConvGeom g;
    g.c = g.m = 36, g.group = 9, g.pads = {0, 1, 1, 0}, g.batch = 2;
    v.push_back(g);
  }
  return v;
}

// 3-D convolutions (NCDHW: torchvision's video classifiers).
struct Conv3dGeom {
  int64_t c = 8, m = 8, d = 5, h = 8, w = 8, group = 1;
  Dims k = {3, 3, 3}, s = {1, 1, 1}, dil = {1, 1, 1};
  Dims pads = {1, 1, 1, 1, 1, 1};
  int64_t batch = 1;
  std::string id() const {
    std::string r = "3d_c" + std::to_string(c) + "_m" + std::to_string(m) + "_" + std::to_string(d) + "x" +
                    std::to_string(h) + "x" + std::to_string(w) + "_k" + join(k, "x") + "_s" + join(s, "x") + "_d" +
                    join(dil, "x") + "_g" + std::to_string(group) + "_p" + join(pads, ".");
    if (batch != 1) r += "_n" + std::to_string(batch);
    return r;
  }
  Attrs attrs() const {
    return {{"kernel_shape", k}, {"strides", s}, {"dilations", dil}, {"group", group}, {"pads", pads}};
  }
};

void add_conv3d(Builder& s, Mode mode, const Conv3dGeom& g) {
  const Dims w_dims = {g.m, g.c / g.group, g.k[0], g.k[1], g.k[2]};
  s.add(mode, "Conv", g.id(), [g, mode, w_dims](OnnxBuilder& b) {
    const std::string x = b.input("x", {g.batch, g.c, g.d, g.h, g.w});
    if (mode == Mode::fp32) {
      b.output(b.node("Conv", {x, b.random_normal_init("", w_dims, 0, 0.3f), b.random_normal_init("", {g.m})}, g.attrs()));
    } else if (mode == Mode::qdq) {
      auto w = testing::qdq_weights(b, w_dims, true);
      auto y = b.node("Conv", {testing::qdq(b, x, kAct), w.dq, testing::qdq_bias(b, g.m, kAct.scale, w.scales)}, g.attrs());
      const float k = float(g.c / g.group * g.k[0] * g.k[1] * g.k[2]);
      b.output(testing::qdq(b, y, {0.3f * std::sqrt(k) / 64, 128, ElemType::u8}));
    } else {
      b.output(testing::dynamic_conv(b, x, w_dims, g.attrs(), true));
    }
  });
}

std::vector<Conv3dGeom> conv3d_space() {
  std::vector<Conv3dGeom> v;
  // The kernels of r3d_18 (3x3x3), r2plus1d_18 (1x3x3 then 3x1x1) and their 1x1x1 shortcuts.
  for (Dims k : {Dims{1, 1, 1}, Dims{3, 3, 3}, Dims{1, 3, 3}, Dims{3, 1, 1}, Dims{2, 2, 2}}) {
    Conv3dGeom g;
    g.k = k;
    g.pads = {k[0] / 2, k[1] / 2, k[2] / 2, k[0] / 2, k[1] / 2, k[2] / 2};
    v.push_back(g);
  }
  {
    Conv3dGeom g;  // the stems: 3 -> 16, 3x7x7 and 1x7x7, stride (1, 2, 2)
    g.c = 3, g.m = 16, g.h = g.w = 16, g.k = {3, 7, 7}, g.s = {1, 2, 2}, g.pads = {1, 3, 3, 1, 3, 3};
    v.push_back(g);
    g.k = {1, 7, 7}, g.pads = {0, 3, 3, 0, 3, 3};
    v.push_back(g);
  }
  {
    Conv3dGeom g;  // strides: a stage's entry (2, 2, 2), the shortcut 1x1x1 stride 2
    g.m = 16, g.s = {2, 2, 2};
    v.push_back(g);
    g.k = {1, 1, 1}, g.pads = {0, 0, 0, 0, 0, 0};
    v.push_back(g);
  }
  {
    Conv3dGeom g;  // dilations, asymmetric pads
    g.dil = {2, 1, 2}, g.pads = {2, 1, 2, 2, 1, 2};
    v.push_back(g);
    g.dil = {1, 1, 1}, g.pads = {0, 1, 2, 1, 0, 0};
    v.push_back(g);
  }
  for (auto [c, m, group] : {std::tuple{8, 16, 2}, {16, 16, 16}, {12, 12, 4}}) {
    Conv3dGeom g;  // grouped, depthwise (mc3 / CSN-style channel-separated convs)
    g.c = c, g.m = m, g.group = group;
    v.push_back(g);
  }
  {
    Conv3dGeom g;  // depth 1, odd channels, batch 2
    g.d = 1, g.c = 5, g.m = 7, g.batch = 2;
    v.push_back(g);
  }
  return v;
}

// ---- Pooling ----
struct PoolGeom {
  int64_t k = 3, s = 2, d = 1, ceil = 0, cip = 0;
  Dims pads = {0, 0, 0, 0};
  std::string auto_pad;
  int64_t c = 16, h = 13;
  std::string id() const {
    std::string r = "k" + std::to_string(k) + "_s" + std::to_string(s) + "_d" + std::to_string(d) +
                    (auto_pad.empty() ? "_p" + join(pads, ".") : "_" + auto_pad) + "_ceil" + std::to_string(ceil) +
                    "_cip" + std::to_string(cip) + "_c" + std::to_string(c) + "_" + std::to_string(h);
    return r;
  }
  Attrs attrs(bool avg) const {
    Attrs a = {{"kernel_shape", {k, k}}, {"strides", {s, s}}, {"ceil_mode", ceil}};
    if (d != 1) a.push_back({"dilations", {d, d}});
    if (avg) a.push_back({"count_include_pad", cip});
    if (auto_pad.empty()) a.push_back({"pads", {pads[0], pads[1], pads[2], pads[3]}});
    else a.push_back({"auto_pad", auto_pad});
    return a;
  }
};

std::vector<PoolGeom> pool_space(bool avg) {
  std::vector<PoolGeom> v;
  for (int64_t k : {2, 3, 5})
    for (int64_t s : {1, 2, 3}) {
      PoolGeom g;
      g.k = k, g.s = s;
      v.push_back(g);
    }
  for (Dims p : {Dims{1, 1, 1, 1}, Dims{0, 0, 1, 1}, Dims{1, 0, 0, 1}, Dims{2, 2, 2, 2}})
    for (int64_t ceil : {0, 1})
      for (int64_t cip : avg ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0}) {
        PoolGeom g;
        g.k = p[0] == 2 ? 5 : 3, g.pads = p, g.ceil = ceil, g.cip = cip;
        v.push_back(g);
      }
  for (int64_t ceil : {0, 1}) {
    PoolGeom g;
    g.h = 14, g.ceil = ceil;  // ceil_mode with an even size: a partial last window
    v.push_back(g);
  }
  for (int64_t d : {2, 3}) {
    PoolGeom g;
    g.d = d, g.s = 1;
    v.push_back(g);
  }
  for (const char* ap : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
    PoolGeom g;
    g.auto_pad = ap;
    v.push_back(g);
  }
  for (auto [c, h] : {std::pair{3, 9}, {17, 7}, {64, 8}}) {
    PoolGeom g;
    g.c = c, g.h = h, g.pads = {1, 1, 1, 1};
    v.push_back(g);
  }
  return v;
}

void add_pool(Builder& s, Mode mode, const std::string& op, const PoolGeom& g) {
  const bool avg = op == "AveragePool";
  s.add(mode, op, g.id(), [=](OnnxBuilder& b) {
    std::string x = b.input("x", {1, g.c, g.h, g.h});
    if (mode == Mode::qdq) x = testing::qdq(b, x, kAct);
    std::string y = b.node(op, {x}, g.attrs(avg));
    b.output(mode == Mode::qdq ? testing::qdq(b, y, kAct) : y);
  }, false, g.d != 1 && avg ? 19 : 17);
}

// 3-D pools (NCDHW): kernel, strides and pads per axis.
struct Pool3dGeom {
  Dims k = {3, 3, 3}, s = {2, 2, 2}, pads = {0, 0, 0, 0, 0, 0}, dil = {1, 1, 1};
  int64_t ceil = 0, cip = 0, c = 16, d = 6, h = 9;
  std::string id() const {
    return "3d_k" + join(k, "x") + "_s" + join(s, "x") + "_d" + join(dil, "x") + "_p" + join(pads, ".") + "_ceil" +
           std::to_string(ceil) + "_cip" + std::to_string(cip) + "_c" + std::to_string(c) + "_" + std::to_string(d) +
           "x" + std::to_string(h);
  }
  Attrs attrs(bool avg) const {
    Attrs a = {{"kernel_shape", k}, {"strides", s}, {"ceil_mode", ceil}, {"pads", pads}};
    if (dil != Dims{1, 1, 1}) a.push_back({"dilations", dil});
    if (avg) a.push_back({"count_include_pad", cip});
    return a;
  }
};

std::vector<Pool3dGeom> pool3d_space(bool avg) {
  std::vector<Pool3dGeom> v;
  v.push_back({});
  v.push_back({{2, 2, 2}, {2, 2, 2}});
  v.push_back({{1, 3, 3}, {1, 2, 2}, {0, 1, 1, 0, 1, 1}});  // spatial only (video stems)
  v.push_back({{3, 3, 3}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}});
  for (int64_t cip : avg ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0}) {
    Pool3dGeom g{{3, 3, 3}, {2, 2, 2}, {1, 0, 1, 0, 1, 1}};
    g.ceil = 1, g.cip = cip, g.d = 7, g.h = 8;  // asymmetric pads, a partial last window
    v.push_back(g);
  }
  if (!avg) {
    Pool3dGeom g{{2, 2, 2}, {1, 1, 1}};
    g.dil = {2, 1, 2};
    v.push_back(g);
  }
  {
    Pool3dGeom g;
    g.c = 5, g.d = 1, g.k = {1, 2, 2};  // depth 1, odd channels
    v.push_back(g);
  }
  return v;
}

void add_pool3d(Builder& s, Mode mode, const std::string& op, const Pool3dGeom& g) {
  const bool avg = op == "AveragePool";
  s.add(mode, op, g.id(), [=](OnnxBuilder& b) {
    std::string x = b.input("x", {1, g.c, g.d, g.h, g.h});
    if (mode == Mode::qdq) x = testing::qdq(b, x, kAct);
    std::string y = b.node(op, {x}, g.attrs(avg));
    b.output(mode == Mode::qdq ? testing::qdq(b, y, kAct) : y);
  }, false, g.dil != Dims{1, 1, 1} && avg ? 19 : 17);
}

// ---- Gemm and MatMul ----
void add_gemm(Builder& s, Mode mode, int64_t m, int64_t k, int64_t n, int64_t ta, int64_t tb, float alpha, float beta,
              const std::string& c_shape, bool b_const, bool c_const = true) {
  std::string id = "m" + std::to_string(m) + "_k" + std::to_string(k) + "_n" + std::to_string(n) + "_tA" +
                   std::to_string(ta) + "_tB" + std::to_string(tb) + "_a" + std::to_string(int(alpha * 10)) + "_b" +
                   std::to_string(int(beta * 10)) + "_C" + c_shape + (b_const ? "" : "_Binput") +
                   (c_const ? "" : "_Cinput");
  s.add(mode, "Gemm", id, [=](OnnxBuilder& b) {
    std::string a = b.input("a", ta ? Dims{k, m} : Dims{m, k});
    const Dims b_dims = tb ? Dims{n, k} : Dims{k, n};
    // "S": a rank-0 scalar.
    Dims c_dims = c_shape == "none" || c_shape == "S" ? Dims{} : c_shape == "N" ? Dims{n} : c_shape == "MN" ? Dims{m, n} :
                  c_shape == "1N" ? Dims{1, n} : c_shape == "M1" ? Dims{m, 1} : Dims{1};
    Attrs attrs = {{"transA", ta}, {"transB", tb}, {"alpha", alpha}, {"beta", beta}};
    if (mode == Mode::fp32) {
      std::string bb = b_const ? b.random_normal_init("", b_dims, 0, 0.3f) : b.input("b", b_dims);
      std::vector<std::string> in = {a, bb};
      if (c_shape != "none") in.push_back(c_const ? b.random_normal_init("", c_dims, 0, 0.5f) : b.input("c", c_dims));
      b.output(b.node("Gemm", in, attrs));
    } else if (mode == Mode::qdq) {
      auto w = testing::qdq_weights(b, b_dims, true, 0.3f, tb ? 0 : 1);
      std::vector<std::string> in = {testing::qdq(b, a, kAct), w.dq};
      if (c_shape == "N") in.push_back(testing::qdq_bias(b, n, kAct.scale, w.scales));
      b.output(testing::qdq(b, b.node("Gemm", in, attrs), {0.3f * std::sqrt(float(k)) / 64, 128, ElemType::u8}));
    } else {
      b.output(testing::dynamic_matmul(b, a, k, n, c_shape == "N"));
    }
  });
}

// QDQ options: int8 activations (zero point 0, B too when it is an input), weights per column.
void add_matmul(Builder& s, Mode mode, Dims a_dims, Dims b_dims, bool b_const, bool s8 = false,
                bool per_column = false) {
  const std::string id = join(a_dims) + "_by_" + join(b_dims) + (b_const ? "_Bconst" : "_Binput") +
                         (s8 ? "_s8" : "") + (per_column ? "_percolumn" : "");
  s.add(mode, "MatMul", id, [=](OnnxBuilder& b) {
    std::string a = b.input("a", a_dims);
    if (mode == Mode::fp32) {
      b.output(b.node("MatMul", {a, b_const ? b.random_normal_init("", b_dims, 0, 0.3f) : b.input("b", b_dims)}));
    } else if (mode == Mode::qdq) {
      const QParams act = s8 ? QParams{kAct.scale, 0, ElemType::s8} : kAct;
      std::string bb = b_const ? testing::qdq_weights(b, b_dims, per_column, 0.3f, int64_t(b_dims.size()) - 1).dq
                               : testing::qdq(b, b.input("b", b_dims), act);
      const float k = float(a_dims.back());
      const float y_scale = (b_const ? 0.3f : 1.0f) * std::sqrt(k) / 64;
      b.output(testing::qdq(b, b.node("MatMul", {testing::qdq(b, a, act), bb}),
                            s8 ? QParams{y_scale, 0, ElemType::s8} : QParams{y_scale, 128, ElemType::u8}));
    } else {
      b.output(testing::dynamic_matmul(b, a, b_dims[0], b_dims[1], false));
    }
  });
}

// ---- Element-wise ----
void add_binary(Builder& s, Mode mode, const std::string& op, const Dims& a, const Dims& bd, bool b_const) {
  s.add(mode, op, join(a) + "_and_" + join(bd) + (b_const ? "_const" : "_input"), [=](OnnxBuilder& b) {
    std::string x = b.input("a", a);
    std::string y = b_const ? (op == "Div" ? b.random_uniform_init("", bd, 0.5f, 2.0f) : b.random_normal_init("", bd))
                            : b.input("b", bd);
    if (mode == Mode::qdq) {
      x = testing::qdq(b, x, kAct);
      y = testing::qdq(b, y, kAct);
    }
    std::string z = b.node(op, {x, y});
    b.output(mode == Mode::qdq ? testing::qdq(b, z, {1.0f / 32, 128, ElemType::u8}) : z);
  });
}

std::vector<std::pair<Dims, Dims>> broadcasts() {
  return {{{1, 16, 8, 8}, {1, 16, 8, 8}}, {{2, 16, 8, 8}, {16, 1, 1}}, {{1, 16, 8, 8}, {1, 16, 1, 1}},
          {{1, 16, 8, 8}, {1}},           {{1, 16, 8, 8}, {}},         {{1, 16, 8, 8}, {8}},
          {{1, 16, 1, 8}, {1, 1, 8, 1}},  {{2, 3, 4, 5, 6}, {3, 1, 5, 1}}, {{1, 7, 5, 3}, {1, 7, 5, 3}},
          {{1, 16, 8, 8}, {1, 1, 8, 8}},  {{2, 1, 7, 3}, {1, 5, 1, 3}}, {{6, 1}, {1, 9}}};
}

// Integer operands from the float inputs: x * 60 cast to `t` (|x| * 60 for uint8), -120 ... 120.
std::string integers(OnnxBuilder& b, const std::string& x, ElemType t) {
  const std::string v = b.node("Mul", {t == ElemType::u8 ? b.node("Abs", {x}) : x, f32(b, 60.0f)});
  return b.node("Cast", {v}, {{"to", int64_t(t)}});
}

const char* type_name(ElemType t) {
  return t == ElemType::u8 ? "u8" : t == ElemType::s8 ? "s8" : t == ElemType::s32 ? "s32" : "s64";
}

// A condition computed at run time: input `name` > 0, cast to bool.
std::string positive(OnnxBuilder& b, const std::string& name, const Dims& dims) {
  return b.node("Cast", {b.node("Relu", {b.input(name, dims)})}, {{"to", int64_t(ElemType::b8)}});
}

// Input `name` times a constant of 1s with NaN, +-inf and 0 among them: NaN, +-inf, +-0 at fixed
// places of random values.
std::string with_specials(OnnxBuilder& b, const std::string& name, const Dims& dims) {
  std::vector<float> v(size_t(ir::element_count(dims)));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = i % 7 == 2 ? NAN : i % 11 == 4 ? INFINITY : i % 13 == 6 ? -INFINITY : i % 5 == 0 ? 0.0f : 1.0f;
  return b.node("Mul", {b.input(name, dims), b.initializer("", TensorValue::f32(dims, v))});
}

// A bool result as uint8 (0 or 1), which the sweep compares value by value.
std::string bool_bytes(OnnxBuilder& b, const std::string& x) {
  return b.node("Cast", {x}, {{"to", int64_t(ElemType::u8)}});
}

void add_unary(Builder& s, Mode mode, const std::string& op, const std::string& tag, Attrs attrs, Dims dims,
               std::vector<float> extra = {}, int64_t opset = 17) {
  s.add(mode, op, tag + "_" + join(dims), [=](OnnxBuilder& b) {
    std::string x = b.input("x", dims);
    if (mode == Mode::qdq) x = testing::qdq(b, x, kAct);
    std::vector<std::string> in = {x};
    for (float e : extra) in.push_back(std::isnan(e) ? "" : f32(b, e));
    std::string y = b.node(op, in, attrs);
    QParams out = op == "Sigmoid" || op == "HardSigmoid" || op == "Softmax" ? QParams{1.0f / 256, 0, ElemType::u8} : kAct;
    b.output(mode == Mode::qdq ? testing::qdq(b, y, out) : y);
  }, false, opset);
}

// Resize over a feature map: scales (roi and sizes omitted) or sizes, FP32 or as a QDQ unit
// (nearest runs on the codes, linear and cubic in float). `extra` attributes (cubic's a and
// exclude_outside, tf_crop_and_resize's extrapolation_value) add their own tag; a non-empty
// `roi` is given as the roi input.
void add_resize(Builder& s, Mode mode, const std::string& resize_mode, const std::string& transform,
                std::vector<float> scales, std::vector<int64_t> sizes, Dims dims, Attrs extra = {},
                std::string extra_tag = "", std::vector<float> roi = {}) {
  const std::string tag = resize_mode + extra_tag + "_" + transform + (sizes.empty() ? "_scales" : "_sizes") + "_" +
                          join(dims);
  s.add(mode, "Resize", tag, [=](OnnxBuilder& b) {
    std::string x = b.input("x", dims);
    if (mode == Mode::qdq) x = testing::qdq(b, x, kAct);
    Attrs attrs = {{"mode", resize_mode}, {"coordinate_transformation_mode", transform}};
    attrs.insert(attrs.end(), extra.begin(), extra.end());
    const std::string r = roi.empty() ? "" : b.initializer("", {int64_t(roi.size())}, roi);
    std::string y;
    if (sizes.empty()) {
      y = b.node("Resize", {x, r, b.initializer("", {int64_t(scales.size())}, scales)}, attrs);
    } else {
      y = b.node("Resize", {x, r, "", b.initializer_i64("", {int64_t(sizes.size())}, sizes)}, attrs);
    }
    b.output(mode == Mode::qdq ? testing::qdq(b, y, kAct) : y);
  });
}

// ---- Transposed convolution ----
struct DeconvGeom {
  int64_t c = 8, m = 8, h = 7, w = 7, group = 1, kh = 3, kw = 3, sh = 2, sw = 2, dh = 1, dw = 1;
  Dims pads = {1, 1, 1, 1};
  Dims output_padding;   // empty: absent
  Dims output_shape;     // empty: absent
  std::string auto_pad;  // "" (NOTSET), SAME_UPPER, SAME_LOWER, VALID
  bool bias = true;
  int64_t batch = 1;
  std::string id() const {
    std::string s = "c" + std::to_string(c) + "_m" + std::to_string(m) + "_" + std::to_string(h) + "x" +
                    std::to_string(w) + "_k" + std::to_string(kh) + "x" + std::to_string(kw) + "_s" +
                    std::to_string(sh) + "x" + std::to_string(sw) + "_d" + std::to_string(dh) + "x" +
                    std::to_string(dw) + "_g" + std::to_string(group);
    s += auto_pad.empty() ? "_p" + join(pads, ".") : "_" + auto_pad;
    if (!output_padding.empty()) s += "_op" + join(output_padding, ".");
    if (!output_shape.empty()) s += "_os" + join(output_shape, ".");
    if (!bias) s += "_nobias";
    if (batch != 1) s += "_n" + std::to_string(batch);
    return s;
  }
  Attrs attrs() const {
    Attrs a = {{"kernel_shape", {kh, kw}}, {"strides", {sh, sw}}, {"dilations", {dh, dw}}, {"group", group}};
    if (auto_pad.empty()) a.push_back({"pads", {pads[0], pads[1], pads[2], pads[3]}});
    else a.push_back({"auto_pad", auto_pad});
    if (!output_padding.empty()) a.push_back({"output_padding", output_padding});
    if (!output_shape.empty()) a.push_back({"output_shape", output_shape});
    return a;
  }
};

void add_deconv(Builder& s, Mode mode, const DeconvGeom& g) {
  const Dims w_dims = {g.c, g.m / g.group, g.kh, g.kw};
  s.add(mode, "ConvTranspose", g.id(), [g, mode, w_dims](OnnxBuilder& b) {
    const std::string x = b.input("x", {g.batch, g.c, g.h, g.w});
    if (mode == Mode::fp32) {
      std::vector<std::string> in = {x, b.random_normal_init("", w_dims, 0, 0.3f)};
      if (g.bias) in.push_back(b.random_normal_init("", {g.m}));
      b.output(b.node("ConvTranspose", in, g.attrs()));
    } else {
      // Per output channel (axis 1) as ORT's quantize_static does for ConvTranspose, per tensor
      // when grouped (axis 1 then holds M / group channels).
      auto w = testing::qdq_weights(b, w_dims, g.group == 1, 0.3f, 1);
      std::vector<std::string> in = {testing::qdq(b, x, kAct), w.dq};
      if (g.bias) in.push_back(testing::qdq_bias(b, g.m, kAct.scale, w.scales));
      auto y = b.node("ConvTranspose", in, g.attrs());
      const float k = float(g.c / g.group * g.kh * g.kw) / float(g.sh * g.sw);
      b.output(testing::qdq(b, y, {0.3f * std::sqrt(k) / 64, 128, ElemType::u8}));
    }
  });
}

// ConvTranspose then an activation the fusion pass moves into its gather pass: Relu, LeakyRelu,
// Clip (ReLU6), Sigmoid, HardSwish, SiLU (Sigmoid and Mul). QDQ: the activation inside the float
// unit (DQ -> ConvTranspose -> act -> Q, fused), or with `across` after its own Q/DQ pair as
// ORT's tool writes it (never fused: the activation runs on its INT8 table, as in ORT).
void add_deconv_act(Builder& s, Mode mode, const DeconvGeom& g, const std::string& act, bool across = false) {
  const Dims w_dims = {g.c, g.m / g.group, g.kh, g.kw};
  std::string id = g.id() + "_" + act;
  for (char& ch : id) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  s.add(mode, "ConvTranspose", id + (across ? "_qdq" : ""), [g, mode, w_dims, act, across](OnnxBuilder& b) {
    const float k = float(g.c / g.group * g.kh * g.kw) / float(g.sh * g.sw);
    const QParams yq{0.3f * std::sqrt(k) / 64, 128, ElemType::u8};
    const std::string x = b.input("x", {g.batch, g.c, g.h, g.w});
    std::vector<std::string> in;
    if (mode == Mode::fp32) {
      in = {x, b.random_normal_init("", w_dims, 0, 0.3f), b.random_normal_init("", {g.m})};
    } else {
      auto w = testing::qdq_weights(b, w_dims, g.group == 1, 0.3f, 1);
      in = {testing::qdq(b, x, kAct), w.dq, testing::qdq_bias(b, g.m, kAct.scale, w.scales)};
    }
    std::string t = b.node("ConvTranspose", in, g.attrs());
    if (across) t = testing::qdq(b, t, yq);
    std::string y;
    if (act == "Clip") y = b.node("Clip", {t, f32(b, 0.0f), f32(b, 6.0f)});
    else if (act == "LeakyRelu") y = b.node("LeakyRelu", {t}, {{"alpha", 0.1f}});
    else if (act == "Silu") y = b.node("Mul", {t, b.node("Sigmoid", {t})});
    else y = b.node(act, {t});
    const bool unit = act == "Sigmoid" || act == "Silu";
    b.output(mode == Mode::fp32 ? y : testing::qdq(b, y, act == "Sigmoid" ? QParams{1.0f / 256, 0, ElemType::u8} : unit ? QParams{yq.scale, 32, ElemType::u8} : yq));
  });
}

// 3-D transposed convolutions (NCDHW: a volumetric or video decoder's upsampling). `act`: an
// activation after it (fused into the gather pass; in QDQ inside the float unit).
struct Deconv3dGeom {
  int64_t c = 8, m = 8, d = 3, h = 5, w = 5, group = 1;
  Dims k = {3, 3, 3}, s = {2, 2, 2}, dil = {1, 1, 1};
  Dims pads = {1, 1, 1, 1, 1, 1};
  Dims output_padding;   // empty: absent
  Dims output_shape;     // empty: absent
  std::string auto_pad;  // "" (NOTSET), SAME_UPPER, SAME_LOWER, VALID
  bool bias = true;
  int64_t batch = 1;
  std::string act;
  std::string id() const {
    std::string r = "3d_c" + std::to_string(c) + "_m" + std::to_string(m) + "_" + std::to_string(d) + "x" +
                    std::to_string(h) + "x" + std::to_string(w) + "_k" + join(k, "x") + "_s" + join(s, "x") + "_d" +
                    join(dil, "x") + "_g" + std::to_string(group);
    r += auto_pad.empty() ? "_p" + join(pads, ".") : "_" + auto_pad;
    if (!output_padding.empty()) r += "_op" + join(output_padding, ".");
    if (!output_shape.empty()) r += "_os" + join(output_shape, ".");
    if (!bias) r += "_nobias";
    if (batch != 1) r += "_n" + std::to_string(batch);
    if (!act.empty()) r += "_" + act;
    for (char& ch : r) ch = char(std::tolower(static_cast<unsigned char>(ch)));
    return r;
  }
  Attrs attrs() const {
    Attrs a = {{"kernel_shape", k}, {"strides", s}, {"dilations", dil}, {"group", group}};
    if (auto_pad.empty()) a.push_back({"pads", pads});
    else a.push_back({"auto_pad", auto_pad});
    if (!output_padding.empty()) a.push_back({"output_padding", output_padding});
    if (!output_shape.empty()) a.push_back({"output_shape", output_shape});
    return a;
  }
};

void add_deconv3d(Builder& s, Mode mode, const Deconv3dGeom& g) {
  const Dims w_dims = {g.c, g.m / g.group, g.k[0], g.k[1], g.k[2]};
  s.add(mode, "ConvTranspose", g.id(), [g, mode, w_dims](OnnxBuilder& b) {
    const std::string x = b.input("x", {g.batch, g.c, g.d, g.h, g.w});
    std::vector<std::string> in;
    if (mode == Mode::fp32) {
      in = {x, b.random_normal_init("", w_dims, 0, 0.3f)};
      if (g.bias) in.push_back(b.random_normal_init("", {g.m}));
    } else {
      // Per output channel (axis 1) as ORT's quantize_static writes it, per tensor when grouped.
      auto w = testing::qdq_weights(b, w_dims, g.group == 1, 0.3f, 1);
      in = {testing::qdq(b, x, kAct), w.dq};
      if (g.bias) in.push_back(testing::qdq_bias(b, g.m, kAct.scale, w.scales));
    }
    std::string y = b.node("ConvTranspose", in, g.attrs());
    if (!g.act.empty()) y = b.node(g.act, {y});
    const float k = float(g.c / g.group * g.k[0] * g.k[1] * g.k[2]) / float(g.s[0] * g.s[1] * g.s[2]);
    b.output(mode == Mode::fp32 ? y : testing::qdq(b, y, {0.3f * std::sqrt(k) / 64, 128, ElemType::u8}));
  });
}

std::vector<Deconv3dGeom> deconv3d_space() {
  std::vector<Deconv3dGeom> v;
  for (int64_t k : {2, 3})  // kernels 2 and 3, stride 1 and 2, no padding
    for (int64_t st : {1, 2}) {
      Deconv3dGeom g;
      g.k = {k, k, k};
      g.s = {st, st, st};
      g.pads = {0, 0, 0, 0, 0, 0};
      v.push_back(g);
    }
  {
    Deconv3dGeom g;  // 2x upsampling (3-D U-Net decoder), k2 s2, 16 -> 8
    g.c = 16, g.k = {2, 2, 2}, g.pads = {0, 0, 0, 0, 0, 0};
    v.push_back(g);
  }
  {
    Deconv3dGeom g;  // 3x3x3 s2 p1 op1: exact 2x on every axis
    g.output_padding = {1, 1, 1};
    v.push_back(g);
  }
  {
    Deconv3dGeom g;  // 3x3x3 s1 p1: a "same" deconv; no bias
    g.s = {1, 1, 1}, g.bias = false;
    v.push_back(g);
  }
  {
    Deconv3dGeom g;  // the plane only (1x2x2 s(1,2,2)), then the depth only (3x1x1 s(2,1,1)), asymmetric pads
    g.k = {1, 2, 2}, g.s = {1, 2, 2}, g.pads = {0, 0, 0, 0, 0, 0};
    v.push_back(g);
    g.k = {3, 1, 1}, g.s = {2, 1, 1}, g.pads = {1, 0, 0, 2, 0, 0};
    v.push_back(g);
  }
  {
    Deconv3dGeom g;  // dilations (stride 1 and stride 2 with output_padding on one axis)
    g.dil = {2, 2, 2}, g.s = {1, 1, 1}, g.pads = {2, 2, 2, 2, 2, 2};
    v.push_back(g);
    g.dil = {1, 2, 2}, g.s = {2, 2, 2}, g.pads = {1, 1, 1, 1, 1, 1}, g.output_padding = {0, 1, 1};
    v.push_back(g);
  }
  {
    Deconv3dGeom g;  // output_shape (pads derived from it)
    g.output_shape = {6, 10, 11};
    v.push_back(g);
  }
  for (const char* ap : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
    Deconv3dGeom g;
    g.auto_pad = ap;
    v.push_back(g);
    g.k = {2, 4, 4};  // even kernels: odd total padding
    v.push_back(g);
  }
  {
    Deconv3dGeom g;  // 2 groups, 4 outputs per group of 2 inputs, depthwise (groups = C)
    g.group = 2;
    v.push_back(g);
    g.c = 4, g.m = 16, g.group = 2;
    v.push_back(g);
    g.c = g.m = g.group = 8;
    v.push_back(g);
    g.c = 4, g.m = 12, g.group = 4, g.k = {2, 2, 2}, g.pads = {0, 0, 0, 0, 0, 0};  // channel multiplier 3
    v.push_back(g);
  }
  {
    Deconv3dGeom g;  // odd channels, batch 2, depth 1
    g.c = 5, g.m = 11, g.d = 1, g.h = 4, g.w = 6, g.batch = 2, g.k = {1, 3, 3}, g.pads = {0, 1, 1, 0, 1, 1};
    v.push_back(g);
  }
  {
    Deconv3dGeom g;  // deep input: K over MLAS's 128-channel blocks
    g.c = 160, g.m = 12, g.d = 2, g.h = g.w = 3, g.output_padding = {1, 1, 1};
    v.push_back(g);
  }
  for (const char* act : {"Relu", "Sigmoid"}) {  // an activation fused into the gather pass
    Deconv3dGeom g;
    g.output_padding = {1, 1, 1};
    g.act = act;
    v.push_back(g);
  }
  return v;
}

std::vector<DeconvGeom> deconv_space() {
  std::vector<DeconvGeom> v;
  for (int64_t k = 1; k <= 5; ++k)  // kernels 1..5, stride 1 and 2, no padding
    for (int64_t st : {1, 2}) {
      DeconvGeom g;
      g.kh = g.kw = k;
      g.sh = g.sw = st;
      g.pads = {0, 0, 0, 0};
      v.push_back(g);
    }
  for (auto [kh, kw] : {std::pair{1, 3}, {3, 1}}) {
    DeconvGeom g;
    g.kh = kh, g.kw = kw;
    g.pads = {kh / 2, kw / 2, kh / 2, kw / 2};
    v.push_back(g);
  }
  {
    DeconvGeom g;  // 2x upsampling (U-Net decoder), k2 s2
    g.kh = g.kw = 2;
    g.pads = {0, 0, 0, 0};
    g.c = 16;
    g.m = 8;
    v.push_back(g);
  }
  {
    DeconvGeom g;  // stride 3, k4
    g.kh = g.kw = 4;
    g.sh = g.sw = 3;
    v.push_back(g);
  }
  {
    DeconvGeom g;  // stride 2 x 1, asymmetric pads
    g.sh = 2, g.sw = 1;
    g.pads = {0, 1, 2, 1};
    v.push_back(g);
  }
  {
    DeconvGeom g;  // dilations
    g.dh = g.dw = 2;
    g.pads = {2, 2, 2, 2};
    g.sh = g.sw = 1;
    v.push_back(g);
  }
  {
    DeconvGeom g;  // dilation 2 with stride 2 and output_padding
    g.dh = g.dw = 2;
    g.output_padding = {1, 1};
    v.push_back(g);
  }
  {
    DeconvGeom g;  // 3x3 s2 p1 op1: exact 2x (FCN / decoder heads)
    g.output_padding = {1, 1};
    v.push_back(g);
  }
  {
    DeconvGeom g;  // output_padding on one axis only, no bias
    g.output_padding = {0, 1};
    g.bias = false;
    v.push_back(g);
  }
  {
    DeconvGeom g;  // output_shape (pads derived from it)
    g.output_shape = {14, 15};
    v.push_back(g);
  }
  for (const char* ap : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
    DeconvGeom g;
    g.auto_pad = ap;
    v.push_back(g);
    g.kh = g.kw = 4;  // an even kernel: odd total padding
    v.push_back(g);
  }
  {
    DeconvGeom g;  // 2 groups
    g.group = 2;
    v.push_back(g);
  }
  {
    DeconvGeom g;  // depthwise k4 s2 p1 (bilinear-style upsampling)
    g.c = g.m = g.group = 16;
    g.kh = g.kw = 4;
    v.push_back(g);
  }
  {
    DeconvGeom g;  // grouped with 2 output channels per group
    g.c = 8, g.m = 16, g.group = 4;
    v.push_back(g);
  }
  {
    DeconvGeom g;  // channels not a multiple of the vector width, batch 2
    g.c = 5, g.m = 11, g.h = 5, g.w = 6;
    g.batch = 2;
    v.push_back(g);
  }
  {
    DeconvGeom g;  // a K deeper than MLAS's 128-channel block
    g.c = 160, g.m = 12, g.h = 4, g.w = 4;
    v.push_back(g);
  }
  {
    DeconvGeom g;  // 1x1 spatial input
    g.h = g.w = 1;
    g.kh = g.kw = 4;
    g.pads = {0, 0, 0, 0};
    v.push_back(g);
  }
  return v;
}

// Dilated convs on maps smaller than their dilation (DeepLabV3's ASPP): taps that read only
// padding at every output, cropped by passes::prune_dead_taps (partly, for the strided one).
std::vector<ConvGeom> dead_tap_space() {
  std::vector<ConvGeom> v;
  for (int64_t d : {12, 36}) {
    ConvGeom g;
    g.c = 32, g.m = 16, g.h = g.w = 6, g.dh = g.dw = d, g.pads = {d, d, d, d};
    v.push_back(g);
  }
  ConvGeom g;  // rows: stride 2, dilation 3, pad top 6 only: tap 0 dead, tap 1 live at the last output
  g.h = 4, g.w = 7, g.sh = 2, g.dh = 3, g.pads = {6, 1, 0, 1};
  v.push_back(g);
  g = {};  // depthwise
  g.c = g.m = g.group = 16, g.h = g.w = 4, g.dh = g.dw = 6, g.pads = {6, 6, 6, 6};
  v.push_back(g);
  return v;
}

// Depthwise convs with large kernels (ConvNeXt's 7x7 with pad 3, 1x7 / 7x1, 9x9 and 11x11
// whose pads exceed the map, dilated, strided), channels off the vector widths: INT8 only.
std::vector<ConvGeom> large_depthwise_space() {
  std::vector<ConvGeom> v;
  auto dw = [&](int64_t c, int64_t hw, int64_t kh, int64_t kw, int64_t st, int64_t d) {
    ConvGeom g;
    g.c = g.m = g.group = c, g.h = g.w = hw, g.kh = kh, g.kw = kw, g.sh = g.sw = st, g.dh = g.dw = d;
    const int64_t ph = d * (kh - 1) / 2, pw = d * (kw - 1) / 2;
    g.pads = {ph, pw, ph, pw};
    v.push_back(g);
  };
  dw(96, 14, 7, 7, 1, 1);
  dw(40, 7, 7, 7, 1, 1);
  dw(24, 12, 1, 7, 1, 1);
  dw(24, 12, 7, 1, 1, 1);
  dw(20, 13, 9, 9, 2, 1);
  dw(17, 6, 11, 11, 1, 1);
  dw(16, 12, 7, 7, 1, 2);
  return v;
}

// ---- Indexing and generators: TopK, GatherElements, GatherND, Scatter*, Tile, Range, Size,
// Trilu, EyeLike, OneHot ----

// Indices into an axis of `len`, `count` of them, both signs, deterministic.
Dims some_indices(int64_t count, int64_t len) {
  Dims v;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t k = (i * 7 + 3) % len;
    v.push_back(i % 3 == 1 ? k - len : k);
  }
  return v;
}
std::string index_tensor(OnnxBuilder& b, const Dims& dims, Dims values, bool s32) {
  return s32 ? b.initializer("", TensorValue::s32(dims, values)) : b.initializer_i64("", dims, values);
}
int64_t count_of(const Dims& d) {
  int64_t n = 1;
  for (int64_t e : d) n *= e;
  return n;
}

void add_index_cases(Builder& s) {
  // TopK: values and int64 indices, sorted, ties by the lower index (integer data, and floats
  // made of few distinct values).
  struct TopkCase {
    Dims d;
    int64_t k, axis, largest;
  };
  for (const TopkCase& c : std::vector<TopkCase>{{{1, 8400}, 100, -1, 1}, {{2, 6, 4, 5}, 3, 1, 1}, {{2, 6, 4, 5}, 1, -1, 1},
                                                 {{2, 6, 4, 5}, 2, 2, 0}, {{3, 17}, 17, 1, 1}, {{2, 9}, 0, 1, 1}, {{4, 3}, 2, 0, 0}})
    s.add(Mode::fp32, "TopK", join(c.d) + "_k" + std::to_string(c.k) + "_axis" + std::to_string(c.axis) +
                                  (c.largest ? "" : "_smallest"), [=](OnnxBuilder& b) {
      auto y = b.node_multi("TopK", {b.input("x", c.d), i64s(b, {c.k})}, 2, {{"axis", c.axis}, {"largest", c.largest}});
      b.output(y[0]);
      b.output(y[1], ElemType::s64);
    });
  for (int64_t largest : {0, 1}) {
    s.add(Mode::fp32, "TopK", "s32_ties_3x50_k10" + std::string(largest ? "" : "_smallest"), [=](OnnxBuilder& b) {
      auto y = b.node_multi("TopK", {integers(b, b.input("x", {3, 50}), ElemType::s32), i64s(b, {10})}, 2,
                            {{"largest", largest}});
      b.output(y[0], ElemType::s32);
      b.output(y[1], ElemType::s64);
    });
    s.add(Mode::fp32, "TopK", "f32_ties_2x40x3_k7_axis1" + std::string(largest ? "" : "_smallest"), [=](OnnxBuilder& b) {
      auto x = b.node("Cast", {b.node("Cast", {b.node("Mul", {b.input("x", {2, 40, 3}), f32(b, 2.0f)})}, {{"to", int64_t(6)}})},
                      {{"to", int64_t(1)}});
      auto y = b.node_multi("TopK", {x, i64s(b, {7})}, 2, {{"axis", int64_t(1)}, {"largest", largest}});
      b.output(y[0]);
      b.output(y[1], ElemType::s64);
    });
  }
  // k large against the axis: quickselect then sort, ties included.
  s.add(Mode::fp32, "TopK", "s32_ties_3x50_k40", [](OnnxBuilder& b) {
    auto y = b.node_multi("TopK", {integers(b, b.input("x", {3, 50}), ElemType::s32), i64s(b, {40})}, 2);
    b.output(y[0], ElemType::s32);
    b.output(y[1], ElemType::s64);
  });
  // NaN, +-0 and +-inf: k = 1 (the scan), 3 and 5 of 24 (ORT's heap), 12 of 24 (nth_element).
  for (int64_t k : {1, 3, 5, 12})
    for (int64_t largest : {1, 0})
      s.add(Mode::fp32, "TopK", "nan_zeros_6x24_k" + std::to_string(k) + (largest ? "" : "_smallest"), [=](OnnxBuilder& b) {
        auto y = b.node_multi("TopK", {nan_zeros_infs(b, {6, 24}), i64s(b, {k})}, 2, {{"largest", largest}});
        b.output(y[0]);
        b.output(y[1], ElemType::s64);
      });
  // sorted = 0: the order ORT's selection leaves, its heap's array (k < 4 or small against the
  // axis) or std::nth_element's partition.
  struct UnsortedCase {
    std::string id;
    Dims d;
    int64_t k, axis, largest;
    int kind;  // 0 random floats, 1 int32 with ties, 2 NaN, +-0, +-inf
  };
  for (const UnsortedCase& c : std::vector<UnsortedCase>{{"3x50_k3", {3, 50}, 3, -1, 1, 0},
                                                         {"3x50_k10_smallest", {3, 50}, 10, -1, 0, 0},
                                                         {"3x50_k40", {3, 50}, 40, -1, 1, 0},
                                                         {"1x8400_k100", {1, 8400}, 100, -1, 1, 0},
                                                         {"2x40x3_k7_axis1", {2, 40, 3}, 7, 1, 1, 0},
                                                         {"2x40x3_k30_axis1_smallest", {2, 40, 3}, 30, 1, 0, 0},
                                                         {"s32_ties_3x50_k10", {3, 50}, 10, -1, 1, 1},
                                                         {"s32_ties_3x50_k40_smallest", {3, 50}, 40, -1, 0, 1},
                                                         {"nan_zeros_6x24_k5", {6, 24}, 5, -1, 1, 2},
                                                         {"nan_zeros_6x24_k12_smallest", {6, 24}, 12, -1, 0, 2}})
    s.add(Mode::fp32, "TopK", "unsorted_" + c.id, [=](OnnxBuilder& b) {
      const std::string x = c.kind == 2   ? nan_zeros_infs(b, c.d)
                            : c.kind == 1 ? integers(b, b.input("x", c.d), ElemType::s32)
                                          : b.input("x", c.d);
      auto y = b.node_multi("TopK", {x, i64s(b, {c.k})}, 2, {{"axis", c.axis}, {"largest", c.largest}, {"sorted", int64_t(0)}});
      b.output(y[0], c.kind == 1 ? ElemType::s32 : ElemType::f32);
      b.output(y[1], ElemType::s64);
    });
  s.add(Mode::fp32, "TopK", "opset9_k_attr_2x30_k4", [](OnnxBuilder& b) {
    auto y = b.node_multi("TopK", {b.input("x", {2, 30})}, 2, {{"k", int64_t(4)}});
    b.output(y[0]);
    b.output(y[1], ElemType::s64);
  }, false, 9);
  // The indices TopK computes picking from another tensor (indices at run time).
  s.add(Mode::fp32, "GatherElements", "topk_indices_2x20x4_axis1", [](OnnxBuilder& b) {
    auto y = b.node_multi("TopK", {b.input("scores", {2, 20, 4}), i64s(b, {5})}, 2, {{"axis", int64_t(1)}});
    b.output(b.node("GatherElements", {b.input("boxes", {2, 20, 4}), y[1]}, {{"axis", int64_t(1)}}));
  });
  for (bool s32 : {false, true})
    for (int64_t axis : {0, 1, -1}) {
      const Dims d = {2, 6, 4, 5};
      Dims id = {2, 3, 4, 5};
      id[size_t(axis < 0 ? axis + 4 : axis)] = 7;
      const int64_t len = d[size_t(axis < 0 ? axis + 4 : axis)];
      s.add(Mode::fp32, "GatherElements", std::string(s32 ? "s32_" : "") + "2x6x4x5_idx" + join(id) + "_axis" + std::to_string(axis),
            [=](OnnxBuilder& b) {
              b.output(b.node("GatherElements", {b.input("x", d), index_tensor(b, id, some_indices(count_of(id), len), s32)},
                              {{"axis", axis}}));
            });
    }
  struct NdCase {
    Dims d, id;
    int64_t batch_dims;
  };
  for (const NdCase& c : std::vector<NdCase>{{{2, 3, 4}, {5, 2}, 0}, {{2, 3, 4}, {2, 2, 3}, 0}, {{2, 3, 4}, {4, 1}, 0},
                                             {{2, 3, 4}, {2, 5, 1}, 1}, {{2, 3, 4, 5}, {2, 3, 2, 1}, 2}})
    {
      // Each tuple's entries index the axes after the batch axes. int64 only (ONNX's type list).
      Dims vals;
      const int64_t q = c.id.back();
      for (int64_t i = 0, n = count_of(c.id); i < n; ++i) {
        const int64_t len = c.d[size_t(c.batch_dims + i % q)];
        vals.push_back((i * 5 + 1) % len - (i % 4 == 2 ? len : 0));
      }
      s.add(Mode::fp32, "GatherND", join(c.d) + "_idx" + join(c.id) + "_b" + std::to_string(c.batch_dims),
            [=](OnnxBuilder& b) {
              b.output(b.node("GatherND", {b.input("x", c.d), b.initializer_i64("", c.id, vals)}, {{"batch_dims", c.batch_dims}}));
            });
    }
  for (const char* red : {"none", "add", "mul", "max", "min"}) {
    const std::string r = red;
    const int64_t opset = r == "none" ? 17 : r == "max" || r == "min" ? 18 : 16;
    // Repeated tuples combine in order (none: the last wins).
    s.add(Mode::fp32, "ScatterND", r + "_4x4x4_idx3x1", [=](OnnxBuilder& b) {
      b.output(b.node("ScatterND", {b.input("x", {4, 4, 4}), b.initializer_i64("", {3, 1}, {1, -1, 1}), b.input("u", {3, 4, 4})},
                      {{"reduction", r}}));
    }, false, opset);
    s.add(Mode::fp32, "ScatterND", r + "_2x5x6_idx4x2", [=](OnnxBuilder& b) {
      b.output(b.node("ScatterND", {b.input("x", {2, 5, 6}), b.initializer_i64("", {4, 2}, {0, 1, 1, -1, 0, 1, 1, 0}),
                                    b.input("u", {4, 6})}, {{"reduction", r}}));
    }, false, opset);
    for (int64_t axis : {0, 1})
      s.add(Mode::fp32, "ScatterElements", r + "_3x5_idx2x4_axis" + std::to_string(axis), [=](OnnxBuilder& b) {
        const int64_t len = axis == 0 ? 3 : 5;
        b.output(b.node("ScatterElements", {b.input("x", {3, 5}), b.initializer_i64("", {2, 4}, some_indices(8, len)),
                                            b.input("u", {2, 4})}, {{"axis", axis}, {"reduction", r}}));
      }, false, opset);
  }
  s.add(Mode::fp32, "ScatterElements", "s32_idx_2x3x4_axis-1", [](OnnxBuilder& b) {
    b.output(b.node("ScatterElements", {b.input("x", {2, 3, 4}), b.initializer("", TensorValue::s32({2, 3, 2}, some_indices(12, 4))),
                                        b.input("u", {2, 3, 2})}, {{"axis", int64_t(-1)}}));
  });
  s.add(Mode::fp32, "Scatter", "opset10_3x5_axis1", [](OnnxBuilder& b) {
    b.output(b.node("Scatter", {b.input("x", {3, 5}), b.initializer_i64("", {3, 2}, some_indices(6, 5)), b.input("u", {3, 2})},
                    {{"axis", int64_t(1)}}));
  }, false, 10);
  for (auto [x, reps] : std::vector<std::pair<Dims, Dims>>{{{2, 3, 4}, {1, 2, 3}}, {{2, 6, 4, 5}, {1, 1, 2, 1}}, {{3}, {4}},
                                                            {{2, 3, 4}, {2, 1, 1}}, {{1, 16, 1, 1}, {1, 1, 8, 8}}, {{2, 3}, {0, 2}}}) {
    const Dims xd = x, r = reps;
    s.add(Mode::fp32, "Tile", join(xd) + "_reps" + join(r, "."), [=](OnnxBuilder& b) {
      b.output(b.node("Tile", {b.input("x", xd), i64s(b, r)}));
    });
  }
  s.add(Mode::fp32, "Tile", "s64_2x3_reps2.2", [](OnnxBuilder& b) {
    b.output(b.node("Tile", {integers(b, b.input("x", {2, 3}), ElemType::s64), i64s(b, {2, 2})}), ElemType::s64);
  });
  // Range (folded at plan time) added to an input.
  for (auto [start, limit, delta] : std::vector<std::tuple<float, float, float>>{{0, 10, 1}, {1, 2, 0.1f}, {5, -3, -0.7f}}) {
    const float a = start, l = limit, dl = delta;
    const int64_t n = std::max<int64_t>(0, int64_t(std::ceil((double(l) - a) / dl)));
    s.add(Mode::fp32, "Range", "f32_" + std::to_string(int(a * 10)) + "_" + std::to_string(int(l * 10)) + "_" + std::to_string(int(dl * 10)),
          [=](OnnxBuilder& b) {
            b.output(b.node("Add", {b.input("x", {n}), b.node("Range", {f32(b, a), f32(b, l), f32(b, dl)})}));
          });
  }
  s.add(Mode::fp32, "Range", "s64_10_-7_-3_as_gather_indices", [](OnnxBuilder& b) {
    auto r = b.node("Range", {b.initializer("", TensorValue::scalar_s64(10)), b.initializer("", TensorValue::scalar_s64(-7)),
                              b.initializer("", TensorValue::scalar_s64(-3))});
    b.output(b.node("Gather", {b.input("x", {12, 3}), r}));
  });
  s.add(Mode::fp32, "Size", "2x3x4", [](OnnxBuilder& b) { b.output(b.node("Size", {b.input("x", {2, 3, 4})}), ElemType::s64); });
  for (int64_t upper : {0, 1})
    for (int64_t k : {0, 1, -2, 7}) {
      s.add(Mode::fp32, "Trilu", std::string(upper ? "upper" : "lower") + "_k" + std::to_string(k) + "_2x4x5",
            [=](OnnxBuilder& b) {
              b.output(b.node("Trilu", {b.input("x", {2, 4, 5}), b.initializer("", TensorValue::scalar_s64(k))}, {{"upper", upper}}));
            });
    }
  s.add(Mode::fp32, "Trilu", "default_k_6x3", [](OnnxBuilder& b) { b.output(b.node("Trilu", {b.input("x", {6, 3})})); });
  s.add(Mode::fp32, "Trilu", "s32_lower_3x4x4", [](OnnxBuilder& b) {
    b.output(b.node("Trilu", {integers(b, b.input("x", {3, 4, 4}), ElemType::s32)}, {{"upper", int64_t(0)}}), ElemType::s32);
  });
  for (int64_t k : {0, 1, -2})
    s.add(Mode::fp32, "EyeLike", "4x5_k" + std::to_string(k) + "_plus_x", [=](OnnxBuilder& b) {
      auto x = b.input("x", {4, 5});
      b.output(b.node("Add", {x, b.node("EyeLike", {x}, {{"k", k}})}));
    });
  s.add(Mode::fp32, "EyeLike", "dtype_int32_3x3", [](OnnxBuilder& b) {
    b.output(b.node("EyeLike", {b.input("x", {3, 3})}, {{"dtype", int64_t(6)}}), ElemType::s32);
  });
  for (int64_t axis : {-1, 0, 1, 2}) {
    s.add(Mode::fp32, "OneHot", "2x3_depth5_axis" + std::to_string(axis), [=](OnnxBuilder& b) {
      auto idx = b.node("Cast", {b.node("Mul", {b.input("x", {2, 3}), f32(b, 3.0f)})}, {{"to", int64_t(7)}});
      b.output(b.node("OneHot", {idx, b.initializer_i64("", {}, {5}), b.initializer("", {2}, {-1.0f, 2.5f})}, {{"axis", axis}}));
    });
  }
  s.add(Mode::fp32, "OneHot", "f32_indices_float_depth_4x2_depth6", [](OnnxBuilder& b) {
    auto idx = b.node("Cast", {b.node("Cast", {b.node("Mul", {b.input("x", {4, 2}), f32(b, 4.0f)})}, {{"to", int64_t(6)}})},
                      {{"to", int64_t(1)}});
    b.output(b.node("OneHot", {idx, b.initializer("", TensorValue::scalar_f32(6.0f)), b.initializer("", {2}, {0.0f, 1.0f})}));
  });
}

// ---- Output shapes decided by values: NonZero, NonMaxSuppression, Compress, Unique (the graph
// runs in stages, engine/stages.cc) ----

// Floats of few distinct values (x * scale rounded toward zero), so that Unique finds repeats.
std::string few_values(OnnxBuilder& b, const std::string& x, float scale) {
  return b.node("Cast", {b.node("Cast", {b.node("Mul", {x, f32(b, scale)})}, {{"to", int64_t(6)}})}, {{"to", int64_t(1)}});
}

// 0.45 -> "0.45"
std::string fmt_float(float v) {
  std::string t = std::to_string(v);
  while (t.size() > 1 && t.back() == '0') t.pop_back();
  if (t.back() == '.') t.pop_back();
  return t;
}

void add_value_shaped_cases(Builder& s) {
  // NonZero of activations: about half zero (Relu), none, every dtype ONNX Runtime takes, a scalar.
  for (const Dims& d : std::vector<Dims>{{3, 4, 5}, {17}, {2, 1, 3, 1}})
    s.add(Mode::fp32, "NonZero", "relu_" + join(d), [=](OnnxBuilder& b) {
      b.output(b.node("NonZero", {b.node("Relu", {b.input("x", d)})}), ElemType::s64);
    });
  s.add(Mode::fp32, "NonZero", "all_zero_4x3", [](OnnxBuilder& b) {
    b.output(b.node("NonZero", {b.node("Relu", {b.node("Neg", {b.node("Abs", {b.input("x", {4, 3})})})})}), ElemType::s64);
  });
  s.add(Mode::fp32, "NonZero", "bool_2x3x4", [](OnnxBuilder& b) {
    b.output(b.node("NonZero", {positive(b, "x", {2, 3, 4})}), ElemType::s64);
  });
  for (ElemType t : {ElemType::u8, ElemType::s32, ElemType::s64})
    s.add(Mode::fp32, "NonZero", std::string(type_name(t)) + "_3x7", [=](OnnxBuilder& b) {
      b.output(b.node("NonZero", {integers(b, few_values(b, b.input("x", {3, 7}), 0.7f), t)}), ElemType::s64);
    });
  s.add(Mode::fp32, "NonZero", "scalar", [](OnnxBuilder& b) {
    b.output(b.node("NonZero", {b.node("Relu", {b.input("x", {})})}), ElemType::s64);
  });
  // What exporters write after it: the coordinates as rows, picking the elements (three stages).
  s.add(Mode::fp32, "NonZero", "transpose_gathernd_2x5x6", [](OnnxBuilder& b) {
    auto x = b.input("x", {2, 5, 6});
    auto idx = b.node("Transpose", {b.node("NonZero", {b.node("Relu", {x})})}, {{"perm", {1, 0}}});
    b.output(b.node("Mul", {b.node("GatherND", {x, idx}), f32(b, 3.0f)}));
  });
  s.add(Mode::fp32, "NonZero", "twice_4x6", [](OnnxBuilder& b) {
    auto x = b.input("x", {4, 6});
    auto first = b.node("NonZero", {b.node("Relu", {x})});
    b.output(b.node("NonZero", {b.node("Relu", {b.node("Sub", {b.node("Cast", {first}, {{"to", int64_t(1)}}), f32(b, 1.5f)})})}),
             ElemType::s64);
  });

  // NonMaxSuppression: random corners (flipped about half the time) or centres, thresholds given
  // or not, several images and classes.
  struct NmsCase {
    int64_t batches, classes, boxes, max_out;  // max_out < 0: input absent
    float iou, score;                          // score < -10: input absent
    int64_t center;
  };
  for (const NmsCase& c : std::vector<NmsCase>{{1, 1, 30, 10, 0.5f, -100, 0}, {1, 3, 40, 5, 0.3f, 0.2f, 0},
                                               {2, 2, 25, 100, 0.5f, 0.0f, 0}, {1, 2, 40, 8, 0.45f, -100, 1},
                                               {2, 3, 16, 3, 0.0f, -1.0f, 0}, {1, 4, 50, 50, 1.0f, 0.5f, 1},
                                               {1, 2, 20, 0, 0.5f, -100, 0}, {1, 2, 20, -1, 0.5f, -100, 0},
                                               {1, 80, 64, 100, 0.45f, 0.25f, 0}})
    s.add(Mode::fp32, "NonMaxSuppression",
          std::to_string(c.batches) + "x" + std::to_string(c.classes) + "x" + std::to_string(c.boxes) + "_max" +
              (c.max_out < 0 ? std::string("absent") : std::to_string(c.max_out)) + "_iou" + fmt_float(c.iou) +
              (c.score < -10 ? std::string("") : "_score" + fmt_float(c.score)) + (c.center ? "_center" : ""),
          [=](OnnxBuilder& b) {
            auto boxes = b.node("Mul", {b.input("boxes", {c.batches, c.boxes, 4}), f32(b, 3.0f)});
            auto scores = b.node("Sigmoid", {b.input("scores", {c.batches, c.classes, c.boxes})});
            std::vector<std::string> in{boxes, scores, c.max_out < 0 ? "" : i64s(b, {c.max_out}), f32(b, c.iou)};
            if (c.score >= -10) in.push_back(f32(b, c.score));
            b.output(b.node("NonMaxSuppression", in, {{"center_point_box", c.center}}), ElemType::s64);
          });
  // Ties: scores of few values, identical boxes.
  s.add(Mode::fp32, "NonMaxSuppression", "ties_1x2x30_max10", [](OnnxBuilder& b) {
    auto boxes = b.node("Mul", {few_values(b, b.input("boxes", {1, 30, 4}), 1.5f), f32(b, 2.0f)});
    auto scores = few_values(b, b.input("scores", {1, 2, 30}), 2.0f);
    b.output(b.node("NonMaxSuppression", {boxes, scores, i64s(b, {10}), f32(b, 0.4f)}), ElemType::s64);
  });

  // Compress: each axis, none (flattened), a condition shorter or longer than the axis, none true.
  struct CompressCase {
    Dims d;
    int64_t cond, axis;  // axis 99: none
  };
  for (const CompressCase& c : std::vector<CompressCase>{{{3, 4, 5}, 3, 0}, {{3, 4, 5}, 4, 1}, {{3, 4, 5}, 5, -1},
                                                         {{3, 4, 5}, 2, 2}, {{3, 4, 5}, 9, 1}, {{3, 4, 5}, 60, 99},
                                                         {{3, 4, 5}, 7, 99}, {{2, 6}, 20, 99}})
    s.add(Mode::fp32, "Compress", join(c.d) + "_cond" + std::to_string(c.cond) +
                                      (c.axis == 99 ? std::string("") : "_axis" + std::to_string(c.axis)),
          [=](OnnxBuilder& b) {
            testing::Attrs attrs;
            if (c.axis != 99) attrs.push_back({"axis", c.axis});
            b.output(b.node("Compress", {b.input("x", c.d), positive(b, "c", {c.cond})}, attrs));
          });
  s.add(Mode::fp32, "Compress", "none_true_3x4_axis1", [](OnnxBuilder& b) {
    auto none = b.node("Cast", {b.node("Relu", {b.node("Neg", {b.node("Abs", {b.input("c", {4})})})})}, {{"to", int64_t(ElemType::b8)}});
    b.output(b.node("Compress", {b.input("x", {3, 4}), none}, {{"axis", int64_t(1)}}));
  });
  s.add(Mode::fp32, "Compress", "s64_4x5_axis0", [](OnnxBuilder& b) {
    b.output(b.node("Compress", {integers(b, b.input("x", {4, 5}), ElemType::s64), positive(b, "c", {4})}, {{"axis", int64_t(0)}}),
             ElemType::s64);
  });

  // Unique: flattened or along an axis, sorted or in order of first occurrence, all four outputs.
  for (int64_t sorted : {0, 1}) {
    for (int64_t axis : {99, 0, 1, -1}) {
      const Dims d = axis == 99 ? Dims{4, 9} : Dims{6, 5, 4};
      s.add(Mode::fp32, "Unique", join(d) + (axis == 99 ? std::string("") : "_axis" + std::to_string(axis)) +
                                      (sorted ? "" : "_unsorted"),
            [=](OnnxBuilder& b) {
              testing::Attrs attrs{{"sorted", sorted}};
              if (axis != 99) attrs.push_back({"axis", axis});
              // Along an axis: slices made of two values, so that some repeat.
              auto x = axis == 99 ? few_values(b, b.input("x", d), 2.0f)
                                  : b.node("Cast", {positive(b, "x", d)}, {{"to", int64_t(1)}});
              auto y = b.node_multi("Unique", {x}, 4, attrs);
              b.output(y[0]);
              for (int i = 1; i < 4; ++i) b.output(y[size_t(i)], ElemType::s64);
            });
    }
    for (ElemType t : {ElemType::s64, ElemType::s8})
      s.add(Mode::fp32, "Unique", std::string(type_name(t)) + "_40" + (sorted ? "" : "_unsorted"), [=](OnnxBuilder& b) {
        auto y = b.node_multi("Unique", {integers(b, few_values(b, b.input("x", {40}), 0.05f), t)}, 4, {{"sorted", sorted}});
        b.output(y[0], t);
        for (int i = 1; i < 4; ++i) b.output(y[size_t(i)], ElemType::s64);
      });
  }
  // In a QDQ graph they run on the float between DQ and Q, as ORT (NMS's boxes and scores are
  // float in every exporter's graph); moving codes through a cut and requantizing them is exact.
  s.add(Mode::qdq, "Compress", "2x6x4x5_axis1", [](OnnxBuilder& b) {
    auto x = testing::qdq(b, b.input("x", {2, 6, 4, 5}), kAct);
    b.output(testing::qdq(b, b.node("Compress", {x, positive(b, "c", {6})}, {{"axis", int64_t(1)}}), kAct));
  });
  s.add(Mode::qdq, "Unique", "40_sorted", [](OnnxBuilder& b) {
    auto x = testing::qdq(b, few_values(b, b.input("x", {40}), 0.05f), kAct);
    b.output(testing::qdq(b, b.node("Unique", {x}), kAct));
  });
  s.add(Mode::qdq, "NonMaxSuppression", "1x3x40_max10_iou0.45_score0.3", [](OnnxBuilder& b) {
    auto boxes = testing::qdq(b, b.node("Mul", {b.input("boxes", {1, 40, 4}), f32(b, 0.5f)}), kAct);
    auto scores = testing::qdq(b, b.node("Sigmoid", {b.input("scores", {1, 3, 40})}), {1.0f / 255, 0, ElemType::u8});
    b.output(b.node("NonMaxSuppression", {boxes, scores, i64s(b, {10}), f32(b, 0.45f), f32(b, 0.3f)}), ElemType::s64);
  });
  // NaN, +-0 and +-inf: which key a NaN joins is the map's walk, as ORT's.
  for (int64_t sorted : {1, 0}) {
    const std::string order = sorted ? "" : "_unsorted";
    s.add(Mode::fp32, "Unique", "nan_zeros_60" + order, [=](OnnxBuilder& b) {
      auto y = b.node_multi("Unique", {nan_zeros_infs(b, {60})}, 4, {{"sorted", sorted}});
      b.output(y[0]);
      for (size_t i = 1; i < 4; ++i) b.output(y[i], ElemType::s64);
    });
    s.add(Mode::fp32, "Unique", "nan_zeros_30x2_axis0" + order, [=](OnnxBuilder& b) {
      auto y = b.node_multi("Unique", {nan_zeros_infs(b, {30, 2})}, 4, {{"sorted", sorted}, {"axis", int64_t(0)}});
      b.output(y[0]);
      for (size_t i = 1; i < 4; ++i) b.output(y[i], ElemType::s64);
    });
  }
  // Only Y used, then planned on: the second stage reads the count.
  s.add(Mode::fp32, "Unique", "y_then_softmax_30", [](OnnxBuilder& b) {
    auto y = b.node("Unique", {few_values(b, b.input("x", {30}), 2.0f)});
    b.output(b.node("Softmax", {y}));
  });
}

// The INT8 forms of the ops that only move bytes: between equal Q/DQ parameters.
void add_index_qdq_cases(Builder& s) {
  s.add(Mode::qdq, "GatherElements", "2x6x4x5_idx2x3x4x5_axis1", [](OnnxBuilder& b) {
    auto x = testing::qdq(b, b.input("x", {2, 6, 4, 5}), kAct);
    auto y = b.node("GatherElements", {x, b.initializer_i64("", {2, 3, 4, 5}, some_indices(120, 6))}, {{"axis", int64_t(1)}});
    b.output(testing::qdq(b, y, kAct));
  });
  s.add(Mode::qdq, "GatherND", "2x3x4_idx2x5x1_b1", [](OnnxBuilder& b) {
    auto x = testing::qdq(b, b.input("x", {2, 3, 4}), kAct);
    auto y = b.node("GatherND", {x, b.initializer_i64("", {2, 5, 1}, some_indices(10, 3))}, {{"batch_dims", int64_t(1)}});
    b.output(testing::qdq(b, y, kAct));
  });
  s.add(Mode::qdq, "Tile", "2x3x4_reps1.2.3", [](OnnxBuilder& b) {
    auto x = testing::qdq(b, b.input("x", {2, 3, 4}), kAct);
    b.output(testing::qdq(b, b.node("Tile", {x, i64s(b, {1, 2, 3})}), kAct));
  });
  // Trilu's zeros are the zero point's code (uint8 128, int8 -3).
  for (const QParams& q : {kAct, QParams{1.0f / 32, -3, ElemType::s8}})
    for (int64_t upper : {1, 0})
      s.add(Mode::qdq, "Trilu", std::string(upper ? "upper" : "lower") + "_k1_2x4x5_" + type_name(q.type), [=](OnnxBuilder& b) {
        auto x = testing::qdq(b, b.input("x", {2, 4, 5}), q);
        b.output(testing::qdq(b, b.node("Trilu", {x, b.initializer("", TensorValue::scalar_s64(1))}, {{"upper", upper}}), q));
      });
  // ScatterND with data and updates at the output's parameters: replacing, max and min move or
  // pick codes; add and mul (and updates at other parameters) stay in float between DQ and Q.
  for (const char* red : {"none", "max", "min", "add"}) {
    const std::string r = red;
    s.add(Mode::qdq, "ScatterND", r + "_4x4x4_idx3x1", [=](OnnxBuilder& b) {
      auto x = testing::qdq(b, b.input("x", {4, 4, 4}), kAct);
      auto u = testing::qdq(b, b.input("u", {3, 4, 4}), kAct);
      auto y = b.node("ScatterND", {x, b.initializer_i64("", {3, 1}, {1, -1, 1}), u}, {{"reduction", r}});
      b.output(testing::qdq(b, y, kAct));
    }, false, r == "none" ? 17 : 18);
  }
  s.add(Mode::qdq, "ScatterND", "none_2x5x6_idx4x2_s8", [](OnnxBuilder& b) {
    const QParams q{1.0f / 32, -3, ElemType::s8};
    auto x = testing::qdq(b, b.input("x", {2, 5, 6}), q);
    auto u = testing::qdq(b, b.input("u", {4, 6}), q);
    b.output(testing::qdq(b, b.node("ScatterND", {x, b.initializer_i64("", {4, 2}, {0, 1, 1, -1, 0, 1, 1, 0}), u}), q));
  });
  for (const char* red : {"none", "max"}) {
    const std::string r = red;
    s.add(Mode::qdq, "ScatterElements", r + "_3x5_idx2x4_axis1", [=](OnnxBuilder& b) {
      auto x = testing::qdq(b, b.input("x", {3, 5}), kAct);
      auto u = testing::qdq(b, b.input("u", {2, 4}), kAct);
      b.output(testing::qdq(b, b.node("ScatterElements", {x, b.initializer_i64("", {2, 4}, some_indices(8, 5)), u},
                                      {{"axis", int64_t(1)}, {"reduction", r}}), kAct));
    }, false, r == "none" ? 16 : 18);
  }
  s.add(Mode::qdq, "ScatterND", "none_4x4x4_updates_own_scale", [](OnnxBuilder& b) {
    auto x = testing::qdq(b, b.input("x", {4, 4, 4}), kAct);
    auto u = testing::qdq(b, b.input("u", {3, 4, 4}), QParams{1.0f / 32, 128, ElemType::u8});
    b.output(testing::qdq(b, b.node("ScatterND", {x, b.initializer_i64("", {3, 1}, {1, -1, 1}), u}), kAct));
  });
}

// ---- ArgMax / ArgMin, LogSoftmax, LayerNormalization, Gelu, DepthToSpace / SpaceToDepth,
// Upsample, Shape and CastLike over their attributes ----
void add_argmax_norm_layout_cases(Builder& s) {
  // Floor(4x) makes runs of equal values along every axis, so select_last_index decides ties.
  for (const char* op : {"ArgMax", "ArgMin"})
    for (Dims d : {Dims{2, 3, 4, 5}, Dims{1, 16, 7, 7}})
      for (int64_t axis = -int64_t(d.size()); axis < int64_t(d.size()); ++axis)
        for (int64_t keep : {0, 1})
          for (int64_t last : {0, 1}) {
            if ((keep == 0 || last == 1) && axis != 1 && axis != -1) continue;
            const std::string tag = "axis" + std::to_string(axis) + "_keep" + std::to_string(keep) + "_last" +
                                    std::to_string(last) + "_" + join(d);
            s.add(Mode::fp32, op, tag, [=](OnnxBuilder& b) {
              auto ties = b.node("Floor", {b.node("Mul", {b.input("x", d), f32(b, 4.0f)})});
              b.output(b.node(op, {ties}, {{"axis", axis}, {"keepdims", keep}, {"select_last_index", last}}),
                       ElemType::s64);
            });
          }

  for (Dims d : {Dims{4, 100}, Dims{2, 3, 4, 5}, Dims{1, 16, 7, 7}})
    for (int64_t axis = -int64_t(d.size()); axis < int64_t(d.size()); ++axis)
      add_unary(s, Mode::fp32, "LogSoftmax", "axis" + std::to_string(axis), {{"axis", axis}}, d);
  // Before opset 13 LogSoftmax, like Softmax, flattens the input to 2-D at its axis.
  for (int64_t axis : {1, 2, -1})
    s.add(Mode::fp32, "LogSoftmax", "opset11_axis" + std::to_string(axis) + "_2x3x4x5", [=](OnnxBuilder& b) {
      b.output(b.node("LogSoftmax", {b.input("x", {2, 3, 4, 5})}, {{"axis", axis}}));
    }, false, 11);

  // LayerNormalization over the last axes: Scale (and B) of the normalised shape; the Mean and
  // InvStdDev outputs when asked.
  struct LayerNormCase {
    Dims d;
    int64_t axis;
    bool bias, stats;
    float eps;
  };
  for (const LayerNormCase& c : std::vector<LayerNormCase>{{{2, 5, 16}, -1, true, false, 1e-5f},
                                                           {{2, 5, 16}, -2, true, false, 1e-5f},
                                                           {{2, 5, 16}, 1, false, false, 1e-3f},
                                                           {{1, 16, 7, 7}, 1, true, false, 1e-6f},
                                                           {{1, 49, 96}, -1, true, true, 1e-6f},
                                                           {{3, 1001}, -1, false, true, 1e-5f},
                                                           {{2, 3, 4, 5}, 0, true, false, 1e-5f}}) {
    const int64_t rank = int64_t(c.d.size()), axis = c.axis < 0 ? c.axis + rank : c.axis;
    const Dims norm(c.d.begin() + axis, c.d.end());
    char eps[16];
    std::snprintf(eps, sizeof eps, "%g", c.eps);
    const std::string tag = "axis" + std::to_string(c.axis) + (c.bias ? "_bias" : "") + (c.stats ? "_stats" : "") +
                            "_eps" + eps + "_" + join(c.d);
    s.add(Mode::fp32, "LayerNormalization", tag, [=](OnnxBuilder& b) {
      std::vector<std::string> in = {b.input("x", c.d), b.random_uniform_init("", norm, 0.5f, 1.5f)};
      if (c.bias) in.push_back(b.random_normal_init("", norm));
      const Attrs attrs = {{"axis", c.axis}, {"epsilon", c.eps}};
      if (!c.stats) return b.output(b.node("LayerNormalization", in, attrs));
      for (const std::string& y : b.node_multi("LayerNormalization", in, 3, attrs)) b.output(y);
    });
  }

  for (const char* approximate : {"none", "tanh"})
    for (Dims d : {Dims{1, 16, 8, 8}, Dims{3, 1001}})
      add_unary(s, Mode::fp32, "Gelu", approximate, {{"approximate", approximate}}, d, {}, 20);

  for (int64_t block : {2, 3}) {
    for (const char* mode : {"DCR", "CRD"})
      s.add(Mode::fp32, "DepthToSpace", std::string(mode) + "_block" + std::to_string(block) + "_2x36x3x5",
            [=](OnnxBuilder& b) {
              b.output(b.node("DepthToSpace", {b.input("x", {2, 36, 3, 5})}, {{"blocksize", block}, {"mode", mode}}));
            });
    s.add(Mode::fp32, "SpaceToDepth", "block" + std::to_string(block) + "_2x5x6x12", [=](OnnxBuilder& b) {
      b.output(b.node("SpaceToDepth", {b.input("x", {2, 5, 6, 12})}, {{"blocksize", block}}));
    });
  }

  // Upsample (deprecated at opset 10): scales as an attribute at opset 7, as an input at 9.
  for (const char* mode : {"nearest", "linear"})
    for (std::vector<float> scales : {std::vector<float>{1, 1, 2, 2}, std::vector<float>{1, 1, 2, 3}}) {
      const std::string tag = std::string(mode) + "_" + std::to_string(int(scales[2])) + "x" +
                              std::to_string(int(scales[3])) + "_1x8x5x7";
      s.add(Mode::fp32, "Upsample", "opset7_" + tag, [=](OnnxBuilder& b) {
        b.output(b.node("Upsample", {b.input("x", {1, 8, 5, 7})}, {{"mode", mode}, {"scales", scales}}));
      }, false, 7);
      s.add(Mode::fp32, "Upsample", "opset9_" + tag, [=](OnnxBuilder& b) {
        b.output(b.node("Upsample", {b.input("x", {1, 8, 5, 7}), b.initializer("", {4}, scales)}, {{"mode", mode}}));
      }, false, 9);
    }

  // Shape's start / end (opset 15), fed into arithmetic so that its values reach an output.
  for (Dims range : {Dims{}, Dims{1}, Dims{-2, -1}, Dims{1, 3}, Dims{-10, 10}}) {
    Attrs attrs;
    if (!range.empty()) attrs.push_back({"start", range[0]});
    if (range.size() > 1) attrs.push_back({"end", range[1]});
    s.add(Mode::fp32, "Shape", "range" + (range.empty() ? std::string("_all") : "_" + join(range, "_")) + "_2x3x4x5",
          [=](OnnxBuilder& b) { b.output(b.node("Shape", {b.input("x", {2, 3, 4, 5})}, attrs), ElemType::s64); });
  }

  // A Pad by zeros in front of a window op becomes its padding (passes::fold_pads_into_windows):
  // ORT's PadFusion folds the same ones (and MaxPool's, which octet leaves).
  for (const char* window : {"AveragePool", "Conv", "MaxPool"})
    for (bool own_pads : {false, true}) {
      s.add(Mode::fp32, "Pad+" + std::string(window), std::string(own_pads ? "own_pads" : "no_own_pads") + "_1x8x9x10",
            [=](OnnxBuilder& b) {
              auto p = b.node("Pad", {b.input("x", {1, 8, 9, 10}), i64s(b, {0, 0, 1, 2, 0, 0, 2, 0})});
              Attrs attrs = {{"kernel_shape", {3, 3}}, {"strides", {2, 1}}};
              if (own_pads) attrs.push_back({"pads", {0, 0, 0, 1}});
              if (own_pads && std::string(window) == "AveragePool") attrs.push_back({"count_include_pad", 1});
              std::vector<std::string> in = {p};
              if (std::string(window) == "Conv") in.push_back(b.random_normal_init("", {6, 8, 3, 3}));
              b.output(b.node(window, in, attrs));
            });
    }

  // CastLike to the type of a second input: int32 truncates, float32 copies.
  s.add(Mode::fp32, "CastLike", "to_int32_2x3x4x5", [](OnnxBuilder& b) {
    auto like = b.initializer("", TensorValue::ints(ElemType::s32, {1}, {0}));
    b.output(b.node("CastLike", {b.node("Mul", {b.input("x", {2, 3, 4, 5}), f32(b, 10.0f)}), like}), ElemType::s32);
  });
  s.add(Mode::fp32, "CastLike", "to_float_2x3x4x5", [](OnnxBuilder& b) {
    b.output(b.node("CastLike", {b.input("x", {2, 3, 4, 5}), f32(b, 0.0f)}));
  });
}

std::vector<Case> make() {
  Builder s;
  // Convolutions in the three precisions; the INT8 ones on a stratified share of the space.
  const auto convs = conv_space();
  for (const ConvGeom& g : convs) add_conv(s, Mode::fp32, g);
  for (size_t i = 0; i < convs.size(); ++i) if (i % 2 == 0) add_conv(s, Mode::qdq, convs[i]);
  for (size_t i = 0; i < convs.size(); ++i) if (i % 3 == 0) add_conv(s, Mode::dynamic, convs[i]);
  for (const ConvGeom& g : dead_tap_space())
    for (Mode mode : {Mode::fp32, Mode::qdq, Mode::dynamic}) add_conv(s, mode, g);
  for (const ConvGeom& g : large_depthwise_space()) add_conv(s, Mode::qdq, g);
  {
    ConvGeom g;  // 1-D
    s.add(Mode::fp32, "Conv", "1d_k3_s2", [](OnnxBuilder& b) {
      b.output(b.node("Conv", {b.input("x", {1, 8, 20}), b.random_normal_init("", {8, 8, 3}), b.random_normal_init("", {8})},
                      {{"pads", {1, 1}}, {"strides", {2}}}));
    });
    s.add(Mode::fp32, "Conv", "3d_k3", [](OnnxBuilder& b) {
      b.output(b.node("Conv", {b.input("x", {1, 4, 6, 6, 6}), b.random_normal_init("", {4, 4, 3, 3, 3})},
                      {{"pads", {1, 1, 1, 1, 1, 1}}}));
    });
  }
  const auto convs3d = conv3d_space();
  for (const Conv3dGeom& g : convs3d) add_conv3d(s, Mode::fp32, g);
  for (size_t i = 0; i < convs3d.size(); ++i) if (i % 2 == 0) add_conv3d(s, Mode::qdq, convs3d[i]);
  for (size_t i = 0; i < convs3d.size(); ++i) if (i % 3 == 0) add_conv3d(s, Mode::dynamic, convs3d[i]);

  // Transposed convolutions: FP32 and QDQ (ORT runs the QDQ unit in float; the codes must match).
  const auto deconvs = deconv_space();
  for (const DeconvGeom& g : deconvs) add_deconv(s, Mode::fp32, g);
  for (size_t i = 0; i < deconvs.size(); ++i) if (i % 2 == 0 || deconvs[i].c > 128) add_deconv(s, Mode::qdq, deconvs[i]);
  {
    DeconvGeom g;  // 3x3 s2 p1 op1: a decoder's exact 2x
    g.output_padding = {1, 1};
    DeconvGeom dw;  // depthwise k4 s2 p1: the direct gather
    dw.c = dw.m = dw.group = 16;
    dw.kh = dw.kw = 4;
    DeconvGeom odd;  // channels not a multiple of the vector width, batch 2
    odd.c = 5, odd.m = 11, odd.h = 5, odd.w = 6, odd.batch = 2;
    for (const char* act : {"Relu", "LeakyRelu", "Clip", "Sigmoid", "HardSwish", "Silu"}) {
      add_deconv_act(s, Mode::fp32, g, act);
      add_deconv_act(s, Mode::qdq, g, act);
    }
    for (const char* act : {"Sigmoid", "HardSwish", "LeakyRelu"}) add_deconv_act(s, Mode::qdq, g, act, true);
    for (const char* act : {"Relu", "Sigmoid", "Silu"}) {
      add_deconv_act(s, Mode::fp32, dw, act);
      add_deconv_act(s, Mode::fp32, odd, act);
    }
  }
  s.add(Mode::fp32, "ConvTranspose", "1d_k3_s2_op1", [](OnnxBuilder& b) {
    b.output(b.node("ConvTranspose", {b.input("x", {1, 8, 9}), b.random_normal_init("", {8, 6, 3}), b.random_normal_init("", {6})},
                    {{"pads", {1, 1}}, {"strides", {2}}, {"output_padding", {1}}}));
  });
  const auto deconvs3d = deconv3d_space();
  for (const Deconv3dGeom& g : deconvs3d) add_deconv3d(s, Mode::fp32, g);
  for (size_t i = 0; i < deconvs3d.size(); ++i)
    if (i % 2 == 0 || deconvs3d[i].group > 1 || deconvs3d[i].c > 128 || !deconvs3d[i].act.empty())
      add_deconv3d(s, Mode::qdq, deconvs3d[i]);
  s.add(Mode::fp32, "ConvTranspose", "3d_k3", [](OnnxBuilder& b) {
    b.output(b.node("ConvTranspose", {b.input("x", {1, 4, 4, 4, 4}), b.random_normal_init("", {4, 4, 3, 3, 3})}, {}));
  });

  // Pools.
  for (const char* op : {"MaxPool", "AveragePool"})
    for (const PoolGeom& g : pool_space(std::string(op) == "AveragePool")) {
      add_pool(s, Mode::fp32, op, g);
      if (g.d == 1) add_pool(s, Mode::qdq, op, g);
    }
  for (const char* op : {"MaxPool", "AveragePool"})
    for (const Pool3dGeom& g : pool3d_space(std::string(op) == "AveragePool")) {
      add_pool3d(s, Mode::fp32, op, g);
      if (g.dil == Dims{1, 1, 1}) add_pool3d(s, Mode::qdq, op, g);
    }
  for (Dims d : {Dims{1, 16, 7, 7}, Dims{2, 33, 5, 3}, Dims{1, 1000, 1, 1}, Dims{1, 24, 2, 4, 4}}) {
    add_unary(s, Mode::fp32, "GlobalAveragePool", "", {}, d);
    add_unary(s, Mode::qdq, "GlobalAveragePool", "", {}, d);
  }
  // GlobalMaxPool of every spatial rank; as a QDQ unit it runs on the codes (u8 and s8).
  for (Dims d : {Dims{1, 16, 7, 7}, Dims{2, 33, 5, 3}, Dims{1, 1000, 1, 1}, Dims{2, 5, 9}, Dims{1, 3, 4, 5, 6}}) {
    add_unary(s, Mode::fp32, "GlobalMaxPool", "", {}, d);
    if (d.size() == 4) add_unary(s, Mode::qdq, "GlobalMaxPool", "", {}, d);
  }
  s.add(Mode::qdq, "GlobalMaxPool", "s8_2x33x5x3", [](OnnxBuilder& b) {
    const QParams p{1.0f / 64, -3, ElemType::s8};
    b.output(testing::qdq(b, b.node("GlobalMaxPool", {testing::qdq(b, b.input("x", {2, 33, 5, 3}), p)}), p));
  });

  // MaxPool's Indices (storage_order 0 and 1; pads, strides, dilations, ceil_mode; 1-D, 2-D, 3-D;
  // channels with tails, batch 2: indices count across the batch) and MaxUnpool fed by them, with
  // the inferred shape or a larger output_shape.
  struct IndexPool {
    Dims x, k, s, pads, d;
    int64_t ceil;
  };
  const IndexPool index_pools[] = {
      {{1, 16, 8, 8}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, 0},
      {{2, 5, 9, 7}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 0},
      {{1, 12, 10, 10}, {3, 3}, {1, 1}, {2, 2, 2, 2}, {2, 2}, 0},
      {{1, 9, 8, 11}, {3, 3}, {2, 2}, {0, 1, 1, 0}, {1, 1}, 1},
      {{1, 17, 11, 11}, {5, 3}, {3, 2}, {2, 1, 2, 1}, {1, 1}, 0},
      {{2, 6, 11}, {3}, {2}, {1, 1}, {1}, 0},
      {{1, 4, 5, 6, 7}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0, 0, 0, 0}, {1, 1, 1}, 0},
  };
  for (const IndexPool& g : index_pools)
    for (int64_t order : {0, 1}) {
      const std::string id = "indices_so" + std::to_string(order) + "_k" + join(g.k) + "_s" + join(g.s) + "_d" +
                             join(g.d) + "_p" + join(g.pads, ".") + "_ceil" + std::to_string(g.ceil) + "_" + join(g.x);
      const Attrs a = {{"kernel_shape", g.k}, {"strides", g.s}, {"pads", g.pads}, {"dilations", g.d},
                       {"ceil_mode", g.ceil}, {"storage_order", order}};
      s.add(Mode::fp32, "MaxPool", id, [=](OnnxBuilder& b) {
        auto out = b.node_multi("MaxPool", {b.input("x", g.x)}, 2, a);
        b.output(out[0]);
        b.output(out[1], ElemType::s64);
      });
    }
  for (const IndexPool& g : index_pools) {
    if (g.d != Dims(g.d.size(), 1) || g.ceil) continue;  // MaxUnpool's pools: no dilation, no ceil_mode
    // Without output_shape the unpooled map must hold every index: at least the pool's input.
    bool covers = true;
    for (size_t a = 0; a < g.k.size(); ++a) {
      const int64_t out = (g.x[a + 2] + g.pads[a] + g.pads[a + g.k.size()] - g.k[a]) / g.s[a] + 1;
      covers = covers && (out - 1) * g.s[a] + g.k[a] - g.pads[a] - g.pads[a + g.k.size()] >= g.x[a + 2];
    }
    for (bool shape : {false, true}) {
      if (!shape && !covers) continue;
      const std::string id = "k" + join(g.k) + "_s" + join(g.s) + "_p" + join(g.pads, ".") + "_" + join(g.x) +
                             (shape ? "_output_shape" : "");
      s.add(Mode::fp32, "MaxUnpool", id, [=](OnnxBuilder& b) {
        const Attrs pool = {{"kernel_shape", g.k}, {"strides", g.s}, {"pads", g.pads}};
        auto out = b.node_multi("MaxPool", {b.input("x", g.x)}, 2, pool);
        std::vector<std::string> in = {out[0], out[1]};
        if (shape) {
          Dims bigger = g.x;
          for (size_t i = 2; i < bigger.size(); ++i) bigger[i] += 2;
          in.push_back(i64s(b, bigger));
        }
        b.output(b.node("MaxUnpool", in, pool));
      });
    }
  }

  // LRN: odd sizes 1..11 (ONNX Runtime refuses even ones, so the sweep has no reference for
  // them; tests/simd/test_lrn.cc runs them against octet's reference), alpha / beta /
  // bias of the zoo (AlexNet, GoogLeNet: 5, 1e-4, 0.75, 1) and far from it, channels around the
  // vector widths; as a QDQ unit it runs in float between DQ and Q, as in ORT.
  auto lrn = [](int64_t size, float alpha, float beta, float bias) {
    char tag[96];
    std::snprintf(tag, sizeof tag, "n%lld_a%g_b%g_k%g", static_cast<long long>(size), alpha, beta, bias);
    return std::pair<std::string, Attrs>{tag, {{"size", size}, {"alpha", alpha}, {"beta", beta}, {"bias", bias}}};
  };
  for (int64_t size = 1; size <= 11; size += 2) {
    auto [tag, attrs] = lrn(size, 0.5f, 0.75f, 1.0f);
    add_unary(s, Mode::fp32, "LRN", tag, attrs, {1, 13, 7, 5});
  }
  for (auto [alpha, beta, bias] : {std::tuple{1e-4f, 0.75f, 1.0f}, {1e-4f, 0.75f, 2.0f}, {2.0f, 0.5f, 0.25f},
                                   {1.0f, 2.5f, 1.0f}, {0.3f, 1.0f, 0.01f}})
    for (Dims d : {Dims{1, 96, 13, 13}, Dims{2, 9, 5, 6}, Dims{1, 1, 4, 4}, Dims{1, 33, 3, 3}}) {
      auto [tag, attrs] = lrn(5, alpha, beta, bias);
      add_unary(s, Mode::fp32, "LRN", tag, attrs, d);
    }
  for (int64_t size : {3, 5}) {
    auto [tag, attrs] = lrn(size, 1e-4f, 0.75f, 1.0f);
    add_unary(s, Mode::qdq, "LRN", tag, attrs, {1, 64, 9, 9});
    std::tie(tag, attrs) = lrn(size, 0.5f, 0.75f, 1.0f);
    add_unary(s, Mode::qdq, "LRN", tag, attrs, {2, 17, 5, 7});
  }

  // RoiAlign: avg and max x sampling ratio 0 (adaptive) and 2 x half_pixel and
  // output_half_pixel (opset 16; opset 10's only transform too), over rois inside, across and
  // outside the map, zero-sized and reversed, naming both images; channels with tails. As a QDQ
  // unit it runs in float between DQ and Q, as in ORT.
  const std::vector<float> rois = {0.5f, 1.0f, 9.0f, 7.5f,   2.0f, 2.0f, 2.0f, 2.0f,   -4.0f, -3.0f, 30.0f, 25.0f,
                                   6.0f, 5.0f, 1.0f, 2.0f,   20.0f, 20.0f, 28.0f, 26.0f, 3.3f, 0.2f, 4.1f, 9.9f};
  auto add_roi_align = [&](Mode mode, const std::string& pool, int64_t ratio, const std::string& transform,
                           int64_t opset, Dims x_dims, float scale) {
    char tag[128];
    std::snprintf(tag, sizeof tag, "%s_r%lld_%s_s%g_o%lld_%s", pool.c_str(), static_cast<long long>(ratio),
                  transform.c_str(), scale, static_cast<long long>(opset), join(x_dims).c_str());
    s.add(mode, "RoiAlign", tag, [=](OnnxBuilder& b) {
      std::string x = b.input("x", x_dims);
      if (mode == Mode::qdq) x = testing::qdq(b, x, kAct);
      Attrs a = {{"mode", pool}, {"output_height", int64_t(3)}, {"output_width", int64_t(2)},
                 {"sampling_ratio", ratio}, {"spatial_scale", scale}};
      if (opset >= 16) a.push_back({"coordinate_transformation_mode", transform});
      const std::string r = b.initializer("", {6, 4}, rois);
      const std::string idx = b.initializer_i64("", {6}, {0, x_dims[0] - 1, 0, x_dims[0] - 1, 0, 0});
      const std::string y = b.node("RoiAlign", {x, r, idx}, a);
      b.output(mode == Mode::qdq ? testing::qdq(b, y, kAct) : y);
    }, false, opset);
  };
  for (const char* pool : {"avg", "max"})
    for (int64_t ratio : {0, 2})
      for (const char* transform : {"half_pixel", "output_half_pixel"}) {
        add_roi_align(Mode::fp32, pool, ratio, transform, 16, {2, 13, 10, 12}, 1.0f);
        add_roi_align(Mode::fp32, pool, ratio, transform, 16, {1, 32, 9, 8}, 0.5f);
      }
  for (const char* pool : {"avg", "max"}) {
    add_roi_align(Mode::fp32, pool, 0, "output_half_pixel", 10, {2, 5, 10, 12}, 0.5f);
    add_roi_align(Mode::qdq, pool, 0, "half_pixel", 16, {2, 19, 10, 12}, 1.0f);
  }

  // GridSample: every mode x padding x align_corners (opset 16's names and 20's), the grid an
  // input over [-2, 2] (taps outside the map on every side), channels with tails, batch 2; as a
  // QDQ unit on the image, in float between DQ and Q.
  auto add_grid_sample = [&](Mode mode, const std::string& how, const std::string& pad, int64_t align, int64_t opset,
                             Dims x_dims, Dims out_hw) {
    const std::string tag = how + "_" + pad + "_ac" + std::to_string(align) + "_o" + std::to_string(opset) + "_" +
                            join(x_dims) + "_to" + join(out_hw);
    s.add(mode, "GridSample", tag, [=](OnnxBuilder& b) {
      std::string x = b.input("x", x_dims);
      if (mode == Mode::qdq) x = testing::qdq(b, x, kAct);
      const std::string grid = b.input("grid", {x_dims[0], out_hw[0], out_hw[1], 2});
      const std::string y = b.node("GridSample", {x, grid}, {{"mode", how}, {"padding_mode", pad}, {"align_corners", align}});
      b.output(mode == Mode::qdq ? testing::qdq(b, y, kAct) : y);
    }, false, opset);
  };
  for (const char* how : {"bilinear", "nearest", "bicubic"})
    for (const char* pad : {"zeros", "border", "reflection"})
      for (int64_t align : {0, 1}) add_grid_sample(Mode::fp32, how, pad, align, 16, {2, 11, 6, 7}, {5, 9});
  for (const char* how : {"linear", "nearest", "cubic"}) {
    add_grid_sample(Mode::fp32, how, "zeros", 0, 20, {1, 33, 8, 5}, {4, 37});
    add_grid_sample(Mode::fp32, how, "reflection", 1, 20, {1, 3, 1, 6}, {3, 3});
  }
  add_grid_sample(Mode::qdq, "bilinear", "zeros", 0, 16, {1, 16, 7, 7}, {6, 6});
  add_grid_sample(Mode::qdq, "bicubic", "border", 1, 16, {2, 9, 5, 6}, {4, 4});

  // Gemm and MatMul.
  for (auto [m, k, n] : {std::tuple{1, 64, 10}, {5, 100, 33}, {17, 3, 1}, {8, 256, 64}})
    for (int64_t ta : {0, 1})
      for (int64_t tb : {0, 1}) add_gemm(s, Mode::fp32, m, k, n, ta, tb, 1.0f, 1.0f, "N", true);
  add_gemm(s, Mode::fp32, 4, 32, 16, 0, 1, 0.5f, 2.0f, "MN", true);
  add_gemm(s, Mode::fp32, 5, 100, 33, 0, 1, 0.5f, 2.0f, "N", true);   // alpha folded into the packed B
  add_gemm(s, Mode::fp32, 5, 100, 33, 1, 0, 2.5f, 1.0f, "1N", true);  // and A transposed per run
  add_gemm(s, Mode::fp32, 4, 32, 16, 0, 0, 1.0f, 1.0f, "none", true);
  add_gemm(s, Mode::fp32, 4, 32, 16, 0, 0, 1.0f, 0.5f, "1N", true);
  add_gemm(s, Mode::fp32, 4, 32, 16, 0, 0, 1.0f, 1.0f, "1", true);
  add_gemm(s, Mode::fp32, 4, 32, 16, 1, 1, 1.0f, 1.0f, "N", false);
  // Every C shape (beta · C a bias row or a residual added in the tiles' epilogue), constant or
  // an input, with B a constant (packed once) or an input (packed per run), A and B transposed.
  for (const char* c_shape : {"N", "1N", "M1", "MN", "S", "1"})
    for (auto [ta, tb] : {std::pair{0, 0}, std::pair{1, 1}}) {
      add_gemm(s, Mode::fp32, 7, 19, 13, ta, tb, 0.5f, 2.0f, c_shape, true);
      add_gemm(s, Mode::fp32, 7, 19, 13, ta, tb, 2.5f, 0.5f, c_shape, false);
      add_gemm(s, Mode::fp32, 7, 19, 13, 1 - ta, tb, 1.0f, 1.0f, c_shape, ta == 0, false);
      add_gemm(s, Mode::fp32, 7, 19, 13, ta, 1 - tb, 0.5f, 2.0f, c_shape, ta == 1, false);
    }
  add_gemm(s, Mode::fp32, 7, 19, 13, 0, 1, 2.5f, 1.0f, "none", false);
  add_gemm(s, Mode::fp32, 33, 64, 40, 1, 0, 1.0f, 1.0f, "MN", false, false);  // C [M, N] as it is
  for (auto [m, k, n] : {std::tuple{1, 64, 10}, {5, 100, 33}, {8, 256, 64}})
    for (int64_t tb : {0, 1}) {
      add_gemm(s, Mode::qdq, m, k, n, 0, tb, 1.0f, 1.0f, "N", true);
      if (tb) add_gemm(s, Mode::dynamic, m, k, n, 0, tb, 1.0f, 1.0f, "N", true);
    }
  add_gemm(s, Mode::qdq, 4, 32, 16, 0, 0, 1.0f, 1.0f, "none", true);
  for (auto [a, bd] : std::vector<std::pair<Dims, Dims>>{{{4, 64}, {64, 32}}, {{1, 7}, {7, 5}}, {{2, 3, 64}, {64, 16}},
                                                          {{2, 4, 6, 8}, {8, 3}}, {{64}, {64, 8}}, {{2, 3, 64}, {64}},
                                                          {{64}, {64}}})
    add_matmul(s, Mode::fp32, a, bd, true);
  for (auto [a, bd] : std::vector<std::pair<Dims, Dims>>{{{4, 16}, {16, 8}}, {{3, 4, 16}, {3, 16, 8}}, {{2, 3, 4, 5}, {2, 3, 5, 6}},
                                                          {{2, 3, 4, 5}, {1, 3, 5, 6}}, {{3, 4, 5}, {5, 2}}, {{5}, {2, 5, 3}},
                                                          {{2, 3, 5}, {5}}})
    add_matmul(s, Mode::fp32, a, bd, false);
  for (auto [a, bd] : std::vector<std::pair<Dims, Dims>>{{{4, 64}, {64, 32}}, {{2, 3, 64}, {64, 16}}, {{1, 7}, {7, 5}}}) {
    add_matmul(s, Mode::qdq, a, bd, true);
    add_matmul(s, Mode::dynamic, a, bd, true);
  }
  add_matmul(s, Mode::qdq, {3, 4, 16}, {3, 16, 8}, false);
  // QLinearMatMul on the SIMD driver: int8 activations, weights per column, K = 1 and odd K,
  // B as an input (2-D, batched, broadcast batches).
  add_matmul(s, Mode::qdq, {4, 64}, {64, 32}, true, true);
  add_matmul(s, Mode::qdq, {4, 64}, {64, 32}, true, false, true);
  add_matmul(s, Mode::qdq, {2, 3, 64}, {64, 16}, true, true, true);
  add_matmul(s, Mode::qdq, {5, 1}, {1, 7}, true);
  add_matmul(s, Mode::qdq, {3, 33}, {33, 10}, true, false, true);
  add_matmul(s, Mode::qdq, {1, 7, 9, 96}, {96, 24}, true, false, true);  // ConvNeXt's Linear, channels-last
  add_matmul(s, Mode::qdq, {4, 16}, {16, 8}, false);
  add_matmul(s, Mode::qdq, {4, 16}, {16, 8}, false, true);
  add_matmul(s, Mode::qdq, {2, 3, 4, 5}, {1, 3, 5, 6}, false);
  add_matmul(s, Mode::qdq, {3, 4, 5}, {5, 2}, false, true);

  // Resize: both modes, every coordinate transform, enlarging and shrinking, sizes.
  for (const char* mode : {"nearest", "linear"})
    for (const char* t : {"half_pixel", "asymmetric", "pytorch_half_pixel", "align_corners", "tf_half_pixel_for_nn"}) {
      if (std::string(mode) == "linear" && std::string(t) == "tf_half_pixel_for_nn") continue;
      add_resize(s, Mode::fp32, mode, t, {1, 1, 2, 2}, {}, {1, 16, 7, 9});
      add_resize(s, Mode::fp32, mode, t, {1, 1, 0.5f, 0.75f}, {}, {2, 17, 8, 8});
      add_resize(s, Mode::fp32, mode, t, {}, {1, 8, 13, 5}, {1, 8, 6, 11});
      add_resize(s, Mode::qdq, mode, t, {1, 1, 2, 2}, {}, {1, 16, 7, 9});
    }
  // Cubic: Keys' a of -0.75 (ORT's default) and -0.5, exclude_outside, every transform, up and down.
  for (const char* t : {"half_pixel", "asymmetric", "pytorch_half_pixel", "align_corners", "half_pixel_symmetric"})
    for (float a : {-0.75f, -0.5f})
      for (int64_t ex : {0, 1}) {
        const Attrs cubic = {{"cubic_coeff_a", a}, {"exclude_outside", ex}};
        const std::string tag = std::string("_a") + (a == -0.5f ? "-0.5" : "-0.75") + "_ex" + std::to_string(ex);
        add_resize(s, Mode::fp32, "cubic", t, {1, 1, 2, 2}, {}, {1, 16, 7, 9}, cubic, tag);
        add_resize(s, Mode::fp32, "cubic", t, {1, 1, 0.5f, 0.75f}, {}, {2, 17, 8, 8}, cubic, tag);
        if (a == -0.75f) add_resize(s, Mode::qdq, "cubic", t, {1, 1, 2, 2}, {}, {1, 16, 7, 9}, cubic, tag);
      }
  add_resize(s, Mode::fp32, "cubic", "half_pixel", {}, {1, 8, 13, 5}, {1, 8, 6, 11});
  add_resize(s, Mode::fp32, "cubic", "half_pixel", {2.0f, 1.5f}, {}, {7, 9});
  // tf_crop_and_resize: a region reaching past the input on some axes, extrapolated there.
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    const std::vector<float> roi = {0, 0, 0.2f, -0.1f, 1, 1, 0.9f, 1.2f};
    const Attrs extrapolate = {{"extrapolation_value", 0.75f}};
    add_resize(s, Mode::fp32, mode, "tf_crop_and_resize", {1, 1, 2, 1.5f}, {}, {1, 16, 7, 9}, extrapolate, "", roi);
    add_resize(s, Mode::fp32, mode, "tf_crop_and_resize", {1, 1, 0.5f, 0.75f}, {}, {2, 17, 8, 8}, extrapolate, "", roi);
    add_resize(s, Mode::qdq, mode, "tf_crop_and_resize", {1, 1, 2, 1.5f}, {}, {1, 16, 7, 9}, extrapolate, "", roi);
  }

  // Element-wise and broadcasts.
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Min", "Max"})
    for (auto [a, bd] : broadcasts()) {
      add_binary(s, Mode::fp32, op, a, bd, true);
      if (a == bd || bd.size() == 3) add_binary(s, Mode::fp32, op, a, bd, false);
    }
  for (const char* op : {"Add", "Mul"})
    for (auto [a, bd] : broadcasts()) add_binary(s, Mode::qdq, op, a, bd, false);
  // Integer arithmetic, Min, Max (wrapping, Div truncating; divisors constants 1 ... 7 and -1 ...).
  for (ElemType t : {ElemType::u8, ElemType::s8, ElemType::s32, ElemType::s64})
    for (auto [ad, bdims] : std::vector<std::pair<Dims, Dims>>{{{2, 3, 5}, {2, 3, 5}}, {{2, 3, 5}, {3, 1}}, {{4, 1}, {1, 6}}}) {
      const Dims a = ad, bd = bdims;
      for (const char* op : {"Add", "Sub", "Mul", "Min", "Max"})
        s.add(Mode::fp32, op, std::string(type_name(t)) + "_" + join(a) + "_and_" + join(bd), [=](OnnxBuilder& b) {
          b.output(b.node(op, {integers(b, b.input("a", a), t), integers(b, b.input("b", bd), t)}), t);
        });
      s.add(Mode::fp32, "Div", std::string(type_name(t)) + "_" + join(a) + "_by_const_" + join(bd), [=](OnnxBuilder& b) {
        int64_t n = 1;
        for (int64_t d : bd) n *= d;
        std::vector<int64_t> v;
        for (int64_t i = 0; i < n; ++i) v.push_back(t == ElemType::u8 ? 1 + i % 7 : (i % 2 ? -1 : 1) * (1 + i % 7));
        b.output(b.node("Div", {integers(b, b.input("a", a), t), b.initializer("", TensorValue::ints(t, bd, v))}), t);
      });
    }
  s.add(Mode::fp32, "Max", "s32_three_inputs_2x3x5_3x1_scalar", [](OnnxBuilder& b) {
    b.output(b.node("Max", {integers(b, b.input("a", {2, 3, 5}), ElemType::s32), integers(b, b.input("b", {3, 1}), ElemType::s32),
                            integers(b, b.input("c", {}), ElemType::s32)}), ElemType::s32);
  });
  for (ElemType t : {ElemType::s8, ElemType::u8, ElemType::s32})
    for (auto [l, h] : {std::pair{-30, 40}, std::pair{5, 100}}) {
      const int64_t lo = l, hi = h;  // copies: clang 14 cannot capture structured bindings
      if (t == ElemType::u8 && lo < 0) continue;
      s.add(Mode::fp32, "Clip", std::string(type_name(t)) + "_" + std::to_string(lo) + "_" + std::to_string(hi) + "_2x3x5",
            [=](OnnxBuilder& b) {
              b.output(b.node("Clip", {integers(b, b.input("x", {2, 3, 5}), t), b.initializer("", TensorValue::ints(t, {}, {lo})),
                                       b.initializer("", TensorValue::ints(t, {}, {hi}))}), t);
            });
    }
  // Neg and Abs on integers; the lowest value of the type negates to itself.
  for (ElemType t : {ElemType::s8, ElemType::u8, ElemType::s32, ElemType::s64})
    for (const char* op : {"Neg", "Abs"}) {
      if (t == ElemType::u8 && std::string(op) == "Neg") continue;  // ONNX has no uint8 Neg
      const int64_t lowest = t == ElemType::s8 ? -128 : t == ElemType::u8 ? 0 : t == ElemType::s32 ? INT32_MIN : INT64_MIN;
      const int64_t highest = t == ElemType::s8 ? 127 : t == ElemType::u8 ? 255 : t == ElemType::s32 ? INT32_MAX : INT64_MAX;
      s.add(Mode::fp32, op, std::string(type_name(t)) + "_2x3x5_and_type_ends", [=](OnnxBuilder& b) {
        const std::string ends = b.initializer("", TensorValue::ints(t, {3}, {lowest, highest, 0}));
        const std::string x = b.node("Reshape", {integers(b, b.input("x", {2, 3, 5}), t), i64s(b, {30})});
        b.output(b.node(op, {b.node("Concat", {x, ends}, {{"axis", int64_t(0)}})}), t);
      });
    }
  s.add(Mode::fp32, "Clip", "s8_max_only_2x3x5", [](OnnxBuilder& b) {
    b.output(b.node("Clip", {integers(b, b.input("x", {2, 3, 5}), ElemType::s8), "",
                             b.initializer("", TensorValue::ints(ElemType::s8, {}, {17}))}), ElemType::s8);
  });

  // Where: a condition computed at run time over float inputs or constants, and int64 data.
  for (auto [cd, xd, yd] : std::vector<std::tuple<Dims, Dims, Dims>>{{{1, 16, 8, 8}, {1, 16, 8, 8}, {1, 16, 8, 8}},
                                                                      {{8}, {1, 16, 8, 8}, {1, 16, 8, 8}},
                                                                      {{1, 16, 1, 1}, {1, 16, 8, 8}, {}},
                                                                      {{2, 1, 5}, {3, 1}, {2, 3, 5}},
                                                                      {{3, 1}, {1, 4}, {}}}) {
    const Dims c = cd, x = xd, y = yd;
    s.add(Mode::fp32, "Where", join(c) + "_" + join(x) + "_" + join(y), [=](OnnxBuilder& b) {
      const std::string yv = y.empty() ? f32(b, -0.5f) : b.input("y", y);
      b.output(b.node("Where", {positive(b, "c", c), b.input("x", x), yv}));
    });
    s.add(Mode::fp32, "Where", "s64_" + join(c) + "_" + join(x) + "_" + join(y), [=](OnnxBuilder& b) {
      const std::string yv = integers(b, y.empty() ? f32(b, -0.5f) : b.input("y", y), ElemType::s64);
      b.output(b.node("Where", {positive(b, "c", c), integers(b, b.input("x", x), ElemType::s64), yv}), ElemType::s64);
    });
  }

  // Comparisons over broadcasts, NaN / +-inf / +-0 in a (in b too when both are inputs), b an
  // input or a constant; Equal also over Relu'd inputs, which are often equal (both 0).
  for (const char* op : {"Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"})
    for (auto [ad, bdims] : std::vector<std::pair<Dims, Dims>>{{{1, 16, 8, 8}, {1, 16, 8, 8}}, {{2, 16, 8, 8}, {16, 1, 1}},
                                                               {{1, 16, 8, 8}, {}}, {{2, 1, 7, 3}, {1, 5, 1, 3}},
                                                               {{6, 1}, {1, 9}}, {{1, 7, 5, 3}, {1, 7, 5, 3}}}) {
      const Dims a = ad, bd = bdims;
      for (bool b_const : {false, true}) {
        if (b_const && a == bd) continue;
        s.add(Mode::fp32, op, join(a) + "_and_" + join(bd) + (b_const ? "_const" : "_input"), [=](OnnxBuilder& b) {
          const std::string y = b_const ? b.random_normal_init("", bd) : with_specials(b, "b", bd);
          b.output(bool_bytes(b, b.node(op, {with_specials(b, "a", a), y})), ElemType::u8);
        });
      }
      if (std::string(op) == "Equal")
        s.add(Mode::fp32, op, "relu_" + join(a) + "_and_" + join(bd), [=](OnnxBuilder& b) {
          const std::string x = b.node("Relu", {b.input("a", a)}), y = b.node("Relu", {b.input("b", bd)});
          b.output(bool_bytes(b, b.node("Equal", {x, y})), ElemType::u8);
        });
    }
  for (ElemType t : {ElemType::u8, ElemType::s8, ElemType::s32, ElemType::s64})
    for (const char* op : {"Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"})
      s.add(Mode::fp32, op, std::string(type_name(t)) + "_2x3x5_and_3x1", [=](OnnxBuilder& b) {
        // Relu'd, so that equal values are common.
        const std::string x = integers(b, b.node("Relu", {b.input("a", {2, 3, 5})}), t);
        const std::string y = integers(b, b.node("Relu", {b.input("b", {3, 1})}), t);
        b.output(bool_bytes(b, b.node(op, {x, y})), ElemType::u8);
      });
  // And, Or, Xor over broadcasts of conditions computed at run time; Not.
  for (const char* op : {"And", "Or", "Xor"})
    for (auto [ad, bdims] : std::vector<std::pair<Dims, Dims>>{{{1, 16, 8, 8}, {1, 16, 8, 8}}, {{2, 1, 7, 3}, {1, 5, 1, 3}}, {{6, 1}, {1, 9}}}) {
      const Dims a = ad, bd = bdims;
      s.add(Mode::fp32, op, join(a) + "_and_" + join(bd), [=](OnnxBuilder& b) {
        b.output(bool_bytes(b, b.node(op, {positive(b, "a", a), positive(b, "b", bd)})), ElemType::u8);
      });
    }
  for (Dims d : {Dims{1, 16, 8, 8}, Dims{2, 3, 5}})
    s.add(Mode::fp32, "Not", join(d), [=](OnnxBuilder& b) {
      b.output(bool_bytes(b, b.node("Not", {positive(b, "x", d)})), ElemType::u8);
    });
  // IsNaN, IsInf (each detect_* setting), Sign and Shrink over NaN, +-inf, +-0 and random values,
  // every length's tail (1x16x8x8, 2x3x5, 37).
  for (Dims d : {Dims{1, 16, 8, 8}, Dims{2, 3, 5}, Dims{37}}) {
    s.add(Mode::fp32, "IsNaN", join(d), [=](OnnxBuilder& b) {
      b.output(bool_bytes(b, b.node("IsNaN", {with_specials(b, "x", d)})), ElemType::u8);
    });
    for (auto [neg, pos] : {std::pair{1, 1}, std::pair{1, 0}, std::pair{0, 1}}) {
      const int64_t n = neg, p = pos;
      s.add(Mode::fp32, "IsInf", "neg" + std::to_string(n) + "_pos" + std::to_string(p) + "_" + join(d), [=](OnnxBuilder& b) {
        const std::string y = b.node("IsInf", {with_specials(b, "x", d)}, {{"detect_negative", n}, {"detect_positive", p}});
        b.output(bool_bytes(b, y), ElemType::u8);
      });
    }
    s.add(Mode::fp32, "Sign", join(d), [=](OnnxBuilder& b) { b.output(b.node("Sign", {with_specials(b, "x", d)})); });
    for (auto [l, bi, t] : {std::tuple{0.5f, 0.0f, "l0.5_b0"}, std::tuple{1.0f, 0.5f, "l1_b0.5"},
                            std::tuple{0.0f, -0.25f, "l0_b-0.25"}}) {
      const float lambd = l, bias = bi;
      s.add(Mode::fp32, "Shrink", std::string(t) + "_" + join(d), [=](OnnxBuilder& b) {
        b.output(b.node("Shrink", {with_specials(b, "x", d)}, {{"lambd", lambd}, {"bias", bias}}));
      });
    }
  }
  s.add(Mode::fp32, "Sign", "s32_2x3x5", [](OnnxBuilder& b) {
    b.output(b.node("Sign", {integers(b, b.input("x", {2, 3, 5}), ElemType::s32)}), ElemType::s32);
  });
  // Mod: integers (fmod 0: the divisor's sign; 1: the dividend's) by constant divisors of both
  // signs, broadcast; float fmod = 1 by an input.
  for (ElemType t : {ElemType::u8, ElemType::s8, ElemType::s32, ElemType::s64})
    for (int64_t fmod : {0, 1})
      s.add(Mode::fp32, "Mod", std::string(type_name(t)) + "_fmod" + std::to_string(fmod) + "_2x3x5_by_3x1", [=](OnnxBuilder& b) {
        const std::vector<int64_t> v = t == ElemType::u8 ? std::vector<int64_t>{3, 7, 11} : std::vector<int64_t>{3, -7, 11};
        const std::string d = b.initializer("", TensorValue::ints(t, {3, 1}, v));
        b.output(b.node("Mod", {integers(b, b.input("a", {2, 3, 5}), t), d}, {{"fmod", fmod}}), t);
      });
  for (const auto& shapes : std::vector<std::pair<Dims, Dims>>{{{1, 16, 8, 8}, {1, 16, 8, 8}}, {{2, 1, 7, 3}, {1, 5, 1, 3}}}) {
    const Dims ad = shapes.first, bdims = shapes.second;  // copies: clang 14 cannot capture bindings
    s.add(Mode::fp32, "Mod", "fmod1_" + join(ad) + "_and_" + join(bdims), [=](OnnxBuilder& b) {
      b.output(b.node("Mod", {b.input("a", ad), b.input("b", bdims)}, {{"fmod", int64_t(1)}}));
    });
  }
  // Sum, Mean, and Max / Min of 1 to 4 operands, broadcast, with NaN / +-inf in the first.
  for (const char* op : {"Sum", "Mean", "Max", "Min"})
    for (std::vector<Dims> shapes : std::vector<std::vector<Dims>>{{{1, 16, 8, 8}},
                                                                   {{1, 16, 8, 8}, {1, 16, 8, 8}},
                                                                   {{1, 16, 8, 8}, {1, 16, 8, 8}, {1, 16, 8, 8}},
                                                                   {{2, 16, 8, 8}, {16, 1, 1}, {1, 1, 8}},
                                                                   {{2, 1, 7, 3}, {1, 5, 1, 3}, {3}, {}},
                                                                   {{37}, {37}, {37}, {37}}}) {
      std::string tag = std::to_string(shapes.size()) + "_inputs";
      for (const Dims& d : shapes) tag += "_" + join(d);
      s.add(Mode::fp32, op, tag, [=](OnnxBuilder& b) {
        std::vector<std::string> in;
        for (size_t i = 0; i < shapes.size(); ++i) {
          const std::string name = "x" + std::to_string(i);
          in.push_back(i == 0 ? with_specials(b, name, shapes[i]) : b.input(name, shapes[i]));
        }
        b.output(b.node(op, in));
      });
    }

  // Max / Min whose operands are +0, -0, NaN, +-inf and +-1 in a pattern per input (|x| times a
  // constant), the result's reciprocal's sign taken so that the zero ORT picks shows as +1 or -1
  // (not an inf, which would make the sweep's relative tolerance infinite).
  for (const char* op : {"Max", "Min"})
    for (std::vector<Dims> shapes : std::vector<std::vector<Dims>>{{{2, 37}, {2, 37}},
                                                                   {{2, 37}, {37}},
                                                                   {{1, 2, 37}, {2, 37}, {2, 1}},
                                                                   {{}, {2, 37}}}) {
      std::string tag = "signed_zeros_nan";
      for (const Dims& d : shapes) tag += "_" + join(d);
      s.add(Mode::fp32, op, tag, [=](OnnxBuilder& b) {
        std::vector<std::string> in;
        for (size_t i = 0; i < shapes.size(); ++i) {
          std::vector<float> v(size_t(ir::element_count(shapes[i])));
          const float values[] = {0.0f, -0.0f, NAN, 0.0f, -0.0f, 1.0f, -0.0f, INFINITY, 0.0f, -1.0f, -INFINITY};
          for (size_t j = 0; j < v.size(); ++j) v[j] = values[(j * (i + 3) + i) % std::size(values)];
          const std::string x = b.node("Abs", {b.input("x" + std::to_string(i), shapes[i])});
          in.push_back(b.node("Mul", {x, b.initializer("", TensorValue::f32(shapes[i], v))}));
        }
        b.output(b.node("Sign", {b.node("Reciprocal", {b.node(op, in)})}));
      });
    }

  // The same between DequantizeLinear and QuantizeLinear: no INT8 form in ONNX Runtime, which
  // runs them in float on the dequantized values, as octet does.
  for (const char* op : {"Sum", "Mean"})
    s.add(Mode::qdq, op, "3_inputs_1x16x8x8_16x1x1_1x16x8x8", [=](OnnxBuilder& b) {
      std::vector<std::string> in;
      for (const Dims& d : {Dims{1, 16, 8, 8}, Dims{16, 1, 1}, Dims{1, 16, 8, 8}})
        in.push_back(testing::qdq(b, b.input("x" + std::to_string(in.size()), d), kAct));
      b.output(testing::qdq(b, b.node(op, in), kAct));
    });
  add_unary(s, Mode::qdq, "Sign", "", {}, {1, 16, 8, 8});
  add_unary(s, Mode::qdq, "Shrink", "l0.5_b0.25", {{"lambd", 0.5f}, {"bias", 0.25f}}, {1, 16, 8, 8});

  // Pow with the exponent an input (computed at run time), or constants other than one value.
  for (auto [xd, ed] : std::vector<std::pair<Dims, Dims>>{{{2, 3, 5}, {2, 3, 5}}, {{2, 3, 5}, {5}}, {{2, 3, 5}, {}}, {{3, 1}, {1, 4}}}) {
    const Dims x = xd, e = ed;
    s.add(Mode::fp32, "Pow", "runtime_" + join(x) + "_" + join(e), [=](OnnxBuilder& b) {
      b.output(b.node("Pow", {b.input("x", x), b.input("e", e)}));
    });
  }
  for (auto [p, tag] : {std::pair{2.0f, "2"}, std::pair{3.0f, "3"}, std::pair{0.5f, "0.5"}})
    s.add(Mode::fp32, "Pow", std::string("const") + tag + "_2x3x5", [p = p](OnnxBuilder& b) {
      b.output(b.node("Pow", {b.input("x", {2, 3, 5}), f32(b, p)}));
    });
  s.add(Mode::fp32, "Pow", "const_per_row_2.3_3x4", [](OnnxBuilder& b) {
    b.output(b.node("Pow", {b.input("x", {3, 4}), b.initializer("", {3, 1}, {2.0f, 3.0f, 0.5f})}));
  });
  for (ElemType t : {ElemType::s32, ElemType::s64})
    s.add(Mode::fp32, "Pow", std::string(type_name(t)) + "_base_int_exponents_2x3x4", [=](OnnxBuilder& b) {
      b.output(b.node("Pow", {integers(b, b.input("x", {2, 3, 4}), t), b.initializer("", TensorValue::ints(t, {4}, {0, 1, 2, 3}))}), t);
    });
  // Results beyond int32 (x86's conversion gives the lowest value, in ORT and octet alike).
  s.add(Mode::fp32, "Pow", "s32_overflowing_2x3x4", [](OnnxBuilder& b) {
    b.output(b.node("Pow", {integers(b, b.input("x", {2, 3, 4}), ElemType::s32),
                            b.initializer("", TensorValue::ints(ElemType::s32, {2, 1, 1}, {40, 5}))}), ElemType::s32);
  });
  s.add(Mode::fp32, "Pow", "f32_base_s32_exponent_2x3x4", [](OnnxBuilder& b) {
    b.output(b.node("Pow", {b.input("x", {2, 3, 4}), b.initializer("", TensorValue::ints(ElemType::s32, {4}, {-1, 1, 2, 3}))}));
  });
  // PRelu's slope broadcast to x: per channel (constant along each H x W run), along W (a run
  // of 1), along H (runs of 8).
  for (Dims slope : {Dims{16, 1, 1}, Dims{8}, Dims{1, 1, 8, 1}}) add_binary(s, Mode::fp32, "PRelu", {1, 16, 8, 8}, slope, true);
  for (Dims d : {Dims{1, 16, 8, 8}, Dims{1, 7, 5, 3}, Dims{3, 1001}}) {
    add_unary(s, Mode::fp32, "Relu", "", {}, d);
    add_unary(s, Mode::fp32, "Sigmoid", "", {}, d);
    // Every activation of kernels/elementwise/activation_list.h at its defaults, so a new row is
    // swept without a line here.
    for (const kernels::ActivationRow& row : kernels::kActivationRows)
      add_unary(s, Mode::fp32, row.op, "", {}, d, {}, std::max<int64_t>(17, row.since));
    add_unary(s, Mode::fp32, "HardSigmoid", "a0.3_b0.4", {{"alpha", 0.3f}, {"beta", 0.4f}}, d);
    add_unary(s, Mode::fp32, "Clip", "0_6", {}, d, {0.0f, 6.0f});
    add_unary(s, Mode::fp32, "Clip", "min_only", {}, d, {-0.5f});
    add_unary(s, Mode::fp32, "Clip", "max_only", {}, d, {NAN, 0.5f});
    for (const char* op : {"Sigmoid", "HardSwish", "HardSigmoid"}) add_unary(s, Mode::qdq, op, "", {}, d);
  }

  // Softmax and reductions.
  for (Dims d : {Dims{4, 100}, Dims{2, 3, 4, 5}, Dims{1, 16, 7, 7}})
    for (int64_t axis = -int64_t(d.size()); axis < int64_t(d.size()); ++axis) {
      add_unary(s, Mode::fp32, "Softmax", "axis" + std::to_string(axis), {{"axis", axis}}, d);
      if (axis == -1 || axis == 1) add_unary(s, Mode::qdq, "Softmax", "axis" + std::to_string(axis), {{"axis", axis}}, d);
    }
  // Before opset 13 Softmax flattens the input to 2-D at its axis.
  for (int64_t axis : {1, 2, -1})
    s.add(Mode::fp32, "Softmax", "opset11_axis" + std::to_string(axis) + "_2x3x4x5", [=](OnnxBuilder& b) {
      b.output(b.node("Softmax", {b.input("x", {2, 3, 4, 5})}, {{"axis", axis}}));
    }, false, 11);
  for (Dims d : {Dims{1, 16, 8, 8}, Dims{2, 3, 5, 7}})
    s.add(Mode::fp32, "BatchNormalization", "standalone_" + join(d), [=](OnnxBuilder& b) {
      const int64_t c = d[1];
      b.output(b.node("BatchNormalization", {b.input("x", d), b.random_normal_init("", {c}), b.random_normal_init("", {c}),
                                             b.random_normal_init("", {c}), b.random_uniform_init("", {c}, 0.5f, 2.0f)},
                      {{"epsilon", 1e-3f}}));
    });
  s.add(Mode::fp32, "Cast", "to_int32_1x16x8x8", [](OnnxBuilder& b) {
    b.output(b.node("Cast", {b.input("x", {1, 16, 8, 8})}, {{"to", 6}}), ElemType::s32);
  });
  for (const char* op : {"Identity", "Dropout"})
    s.add(Mode::fp32, op, "1x16x8x8", [op](OnnxBuilder& b) { b.output(b.node(op, {b.input("x", {1, 16, 8, 8})})); });
  for (const char* op : {"ReduceMean", "ReduceMin", "ReduceMax"})
    for (Dims axes : {Dims{2, 3}, Dims{1}, Dims{-1}, Dims{0, 2}, Dims{-3, -1}})
      for (int64_t keep : {0, 1}) {
        add_unary(s, Mode::fp32, op, "axes" + join(axes, ".") + "_keep" + std::to_string(keep),
                  {{"axes", axes}, {"keepdims", keep}}, {2, 16, 7, 7});
        if (std::string(op) == "ReduceMean" && keep == 1)
          add_unary(s, Mode::qdq, op, "axes" + join(axes, ".") + "_keep1", {{"axes", axes}, {"keepdims", keep}}, {2, 16, 7, 7});
      }
  // ReduceSum takes its axes as an input (opset 13 on), as an attribute before.
  for (Dims axes : {Dims{2, 3}, Dims{1}, Dims{-1}, Dims{0, 2}, Dims{-3, -1}})
    for (int64_t keep : {0, 1})
      s.add(Mode::fp32, "ReduceSum", "axes" + join(axes, ".") + "_keep" + std::to_string(keep) + "_2x16x7x7",
            [=](OnnxBuilder& b) {
              b.output(b.node("ReduceSum", {b.input("x", {2, 16, 7, 7}), i64s(b, axes)}, {{"keepdims", keep}}));
            });
  for (Dims d : {Dims{2, 2, 16, 7, 7}, Dims{1, 3, 8, 5, 5}})
    s.add(Mode::fp32, "ReduceSum", "group_axis1_keep0_" + join(d), [=](OnnxBuilder& b) {
      b.output(b.node("ReduceSum", {b.input("x", d), i64s(b, {1})}, {{"keepdims", 0}}));
    });
  for (int64_t noop : {0, 1})
    s.add(Mode::fp32, "ReduceSum", "no_axes_noop" + std::to_string(noop) + "_2x3x4", [=](OnnxBuilder& b) {
      b.output(b.node("ReduceSum", {b.input("x", {2, 3, 4})}, {{"noop_with_empty_axes", noop}}));
    });
  s.add(Mode::fp32, "ReduceSum", "opset11_axes_attr1_2x2x16x7x7", [](OnnxBuilder& b) {
    b.output(b.node("ReduceSum", {b.input("x", {2, 2, 16, 7, 7})}, {{"axes", {1}}, {"keepdims", 0}}));
  }, false, 11);
  // The reductions with a map (ReduceLogSum over |x|, so its sums are positive): axes as an
  // attribute (opset 17) and as an input (18), every axis (ORT's Eigen order), none with
  // noop_with_empty_axes, and a channels-last input (a conv's output) over its channels.
  for (const char* op : {"ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp", "ReduceProd"}) {
    const bool abs_first = std::string(op) == "ReduceLogSum";
    auto reduce = [=](OnnxBuilder& b, std::string x, std::vector<std::string> more, Attrs attrs) {
      if (abs_first) x = b.node("Abs", {x});
      more.insert(more.begin(), x);
      b.output(b.node(op, more, attrs));
    };
    for (Dims axes : {Dims{2, 3}, Dims{1}, Dims{-1}, Dims{0, 2}, Dims{-3, -1}})
      for (int64_t keep : {0, 1})
        s.add(Mode::fp32, op, "axes" + join(axes, ".") + "_keep" + std::to_string(keep) + "_2x16x7x7",
              [=](OnnxBuilder& b) { reduce(b, b.input("x", {2, 16, 7, 7}), {}, {{"axes", axes}, {"keepdims", keep}}); });
    for (Dims axes : {Dims{1}, Dims{-2, -1}})
      s.add(Mode::fp32, op, "opset18_axes" + join(axes, ".") + "_keep0_2x16x7x7", [=](OnnxBuilder& b) {
        reduce(b, b.input("x", {2, 16, 7, 7}), {i64s(b, axes)}, {{"keepdims", int64_t(0)}});
      }, false, 18);
    for (Dims d : {Dims{2, 3, 4}, Dims{3, 40, 50}, Dims{1, 37}})
      s.add(Mode::fp32, op, "all_axes_" + join(d), [=](OnnxBuilder& b) { reduce(b, b.input("x", d), {}, {}); }, false, 18);
    s.add(Mode::fp32, op, "no_axes_noop1_2x3x4", [=](OnnxBuilder& b) {
      reduce(b, b.input("x", {2, 3, 4}), {}, {{"noop_with_empty_axes", int64_t(1)}});
    }, false, 18);
    // int32 and int64 (ORT's CPU kernels take both): exact, over 3 terms so products stay in range.
    for (ElemType t : {ElemType::s32, ElemType::s64})
      s.add(Mode::fp32, op, std::string(type_name(t)) + "_axes1_keep1_2x3x4", [=](OnnxBuilder& b) {
        std::string x = b.input("x", {2, 3, 4});
        if (abs_first) x = b.node("Abs", {x});
        b.output(b.node(op, {integers(b, x, t)}, {{"axes", Dims{1}}, {"keepdims", int64_t(1)}}), t);
      });
    s.add(Mode::fp32, op, "channels_last_axes1_keep1_1x16x9x9", [=](OnnxBuilder& b) {
      const std::string y = b.node("Conv", {b.input("x", {1, 8, 9, 9}), b.random_normal_init("", {16, 8, 1, 1})});
      reduce(b, y, {}, {{"axes", Dims{1}}, {"keepdims", int64_t(1)}});
    });
  }
  // MeanVarianceNormalization: the default axes (0, 2, 3), spatial, channels, all, the last.
  add_unary(s, Mode::fp32, "MeanVarianceNormalization", "default_axes", {}, {2, 16, 7, 7}, {}, 13);
  for (Dims axes : {Dims{2, 3}, Dims{1}, Dims{0, 1, 2, 3}, Dims{-1}, Dims{0, 2}})
    add_unary(s, Mode::fp32, "MeanVarianceNormalization", "axes" + join(axes, "."), {{"axes", axes}}, {2, 16, 7, 7}, {},
              13);
  // CumSum: the axis a 0-D input; exclusive and reverse; float32 and int32 / int64.
  for (int64_t axis : {0, 1, -1})
    for (int64_t excl : {0, 1})
      for (int64_t rev : {0, 1})
        s.add(Mode::fp32, "CumSum", "axis" + std::to_string(axis) + "_excl" + std::to_string(excl) + "_rev" +
                                        std::to_string(rev) + "_2x16x7x7",
              [=](OnnxBuilder& b) {
                b.output(b.node("CumSum", {b.input("x", {2, 16, 7, 7}), b.initializer_i64("", {}, {axis})},
                                {{"exclusive", excl}, {"reverse", rev}}));
              }, false, 14);
  for (ElemType t : {ElemType::s32, ElemType::s64})
    s.add(Mode::fp32, "CumSum", std::string(type_name(t)) + "_axis1_rev1_3x50", [=](OnnxBuilder& b) {
      b.output(b.node("CumSum", {integers(b, b.input("x", {3, 50}), t), b.initializer_i64("", {}, {1})},
                      {{"reverse", int64_t(1)}}), t);
    }, false, 14);
  // Hardmax: one axis from opset 13, every axis from `axis` on (flattened) before.
  for (int64_t axis : {0, 1, 2, -1}) {
    add_unary(s, Mode::fp32, "Hardmax", "axis" + std::to_string(axis), {{"axis", axis}}, {2, 3, 4, 5}, {}, 13);
    add_unary(s, Mode::fp32, "Hardmax", "opset11_axis" + std::to_string(axis), {{"axis", axis}}, {2, 3, 4, 5}, {}, 11);
  }
  add_unary(s, Mode::fp32, "Hardmax", "default_axis_1000", {}, {4, 1000}, {}, 13);
  for (int64_t p : {1, 2})
    for (auto [d, axis] : std::vector<std::pair<Dims, int64_t>>{{{4, 512}, -1}, {{2, 16, 7, 7}, 1}, {{2, 16, 7, 7}, -1},
                                                                 {{3, 5}, 0}, {{2, 3, 17}, 2}})
      add_unary(s, Mode::fp32, "LpNormalization", "p" + std::to_string(p) + "_axis" + std::to_string(axis),
                {{"p", p}, {"axis", axis}}, d);
  for (Dims d : {Dims{2, 16, 8, 8}, Dims{1, 4, 100}, Dims{2, 3, 5, 7}, Dims{1, 2, 3, 4, 5}})
    s.add(Mode::fp32, "InstanceNormalization", "eps1e-3_" + join(d), [=](OnnxBuilder& b) {
      b.output(b.node("InstanceNormalization", {b.input("x", d), b.random_normal_init("", {d[1]}),
                                                b.random_normal_init("", {d[1]})}, {{"epsilon", 1e-3f}}));
    });
  // Expand: both ways numpy broadcasting, the target of a lower or higher rank than x.
  for (auto [x, shape] : std::vector<std::pair<Dims, Dims>>{{{1, 16, 1, 1}, {2, 16, 8, 8}},
                                                             {{3, 1}, {2, 1, 6}},
                                                             {{1, 16, 8, 8}, {16, 1, 1}},
                                                             {{2, 1, 5}, {2, 4, 1}},
                                                             {{}, {2, 3}},
                                                             {{2, 3, 4}, {1}}}) {
    // Copies: clang 14 cannot capture structured bindings in a lambda.
    const Dims xd = x, target = shape;
    s.add(Mode::fp32, "Expand", join(xd) + "_to_" + join(target, "."), [=](OnnxBuilder& b) {
      b.output(b.node("Expand", {b.input("x", xd), i64s(b, target)}));
    });
  }
  s.add(Mode::fp32, "ConstantOfShape", "of_a_shape_plus_x_2x3x4", [](OnnxBuilder& b) {
    auto x = b.input("x", {2, 3, 4});
    b.output(b.node("Add", {x, b.node("ConstantOfShape", {b.node("Shape", {x})}, {{"value", TensorValue::f32({1}, {0.5f})}})}));
  });
  s.add(Mode::fp32, "ConstantOfShape", "default_zero_into_pads_1x4x5x5", [](OnnxBuilder& b) {
    // The pattern of TResNet's anti-aliasing: zeros concatenated into Pad's pads.
    auto zeros = b.node("ConstantOfShape", {i64s(b, {4})}, {{"value", TensorValue::ints(ElemType::s64, {1}, {0})}});
    auto pads = b.node("Concat", {i64s(b, {0, 0, 1, 1}), zeros}, {{"axis", 0}});
    b.output(b.node("Pad", {b.input("x", {1, 4, 5, 5}), pads}, {{"mode", "reflect"}}));
  });

  // Data movement, negative axes and 5-D.
  for (Dims d : {Dims{2, 6, 4, 5}, Dims{2, 3, 4, 5, 6}})
    for (int64_t axis = -int64_t(d.size()); axis < int64_t(d.size()); ++axis) {
      s.add(Mode::fp32, "Concat", join(d) + "_axis" + std::to_string(axis), [=](OnnxBuilder& b) {
        b.output(b.node("Concat", {b.input("a", d), b.input("b", d), b.random_normal_init("", d)}, {{"axis", axis}}));
      });
      const int64_t ax = axis < 0 ? axis + int64_t(d.size()) : axis;
      if (d[ax] % 2 == 0)
        s.add(Mode::fp32, "Split", join(d) + "_axis" + std::to_string(axis) + "_equal", [=](OnnxBuilder& b) {
        for (auto& y : b.node_multi("Split", {b.input("x", d)}, 2, {{"axis", axis}})) b.output(y);
      });
      if (d[ax] >= 3)
        s.add(Mode::fp32, "Split", join(d) + "_axis" + std::to_string(axis) + "_uneven", [=](OnnxBuilder& b) {
          for (auto& y : b.node_multi("Split", {b.input("x", d), i64s(b, {1, d[ax] - 1})}, 2, {{"axis", axis}})) b.output(y);
        });
      s.add(Mode::fp32, "Slice", join(d) + "_axis" + std::to_string(axis), [=](OnnxBuilder& b) {
        b.output(b.node("Slice", {b.input("x", d), i64s(b, {1}), i64s(b, {-1}), i64s(b, {axis})}));
      });
      s.add(Mode::fp32, "Slice", join(d) + "_axis" + std::to_string(axis) + "_step2", [=](OnnxBuilder& b) {
        b.output(b.node("Slice", {b.input("x", d), i64s(b, {0}), i64s(b, {1000}), i64s(b, {axis}), i64s(b, {2})}));
      });
      s.add(Mode::fp32, "Slice", join(d) + "_axis" + std::to_string(axis) + "_reverse", [=](OnnxBuilder& b) {
        b.output(b.node("Slice", {b.input("x", d), i64s(b, {-1}), i64s(b, {-1000}), i64s(b, {axis}), i64s(b, {-1})}));
      });
    }
  // Steps other than 2 and -1, on the last axis (the gather rows) and another; longer rows than
  // a vector, a row of one element, and two axes stepped at once.
  struct SteppedSlice {
    Dims d;
    int64_t axis, step;
    std::string id() const { return join(d) + "_axis" + std::to_string(axis) + "_step" + std::to_string(step); }
    std::string node(OnnxBuilder& b, const std::string& x) const {
      const int64_t start = step < 0 ? -1 : 0, end = step < 0 ? -1000 : 1000;
      return b.node("Slice", {x, i64s(b, {start}), i64s(b, {end}), i64s(b, {axis}), i64s(b, {step})});
    }
  };
  for (const SteppedSlice& c : std::vector<SteppedSlice>{
           {{2, 6, 4, 5}, -1, 3}, {{2, 6, 4, 5}, -1, -2}, {{2, 6, 4, 5}, 1, 3}, {{2, 6, 4, 5}, 2, -2},
           {{3, 70}, 1, 2}, {{3, 70}, 1, -1}, {{3, 70}, 1, 5}, {{3, 70}, 1, -3}, {{4, 2}, 1, 2}, {{4, 1}, 1, -1}})
    s.add(Mode::fp32, "Slice", c.id(), [=](OnnxBuilder& b) { b.output(c.node(b, b.input("x", c.d))); });
  s.add(Mode::fp32, "Slice", "2x6x4x9_axes2.3_steps-1.2", [](OnnxBuilder& b) {
    b.output(b.node("Slice", {b.input("x", {2, 6, 4, 9}), i64s(b, {-1, 1}), i64s(b, {-1000, 1000}), i64s(b, {2, 3}),
                              i64s(b, {-1, 2})}));
  });
  for (Dims perm : {Dims{0, 2, 3, 1}, Dims{0, 3, 1, 2}, Dims{3, 2, 1, 0}, Dims{0, 1, 3, 2}, Dims{1, 0, 2, 3}})
    s.add(Mode::fp32, "Transpose", "2x6x4x5_perm" + join(perm, ""), [=](OnnxBuilder& b) {
      b.output(b.node("Transpose", {b.input("x", {2, 6, 4, 5})}, {{"perm", perm}}));
    });
  for (Dims perm : {Dims{0, 2, 1, 3, 4}, Dims{4, 3, 2, 1, 0}, Dims{0, 2, 3, 4, 1}})
    s.add(Mode::fp32, "Transpose", "2x3x4x5x6_perm" + join(perm, ""), [=](OnnxBuilder& b) {
      b.output(b.node("Transpose", {b.input("x", {2, 3, 4, 5, 6})}, {{"perm", perm}}));
    });
  s.add(Mode::fp32, "Transpose", "2x3x4_default", [](OnnxBuilder& b) {
    b.output(b.node("Transpose", {b.input("x", {2, 3, 4})}));
  });
  for (Dims shape : {Dims{2, -1}, Dims{0, 6, 20}, Dims{-1, 2, 3, 4, 5}, Dims{2, 3, 2, 4, 5}, Dims{0, 0, -1}})
    s.add(Mode::fp32, "Reshape", "2x6x4x5_to_" + join(shape, "."), [=](OnnxBuilder& b) {
      b.output(b.node("Reshape", {b.input("x", {2, 6, 4, 5}), i64s(b, shape)}));
    });
  for (int64_t axis : {0, 1, 2, -1, -3})
    s.add(Mode::fp32, "Flatten", "2x6x4x5_axis" + std::to_string(axis), [=](OnnxBuilder& b) {
      b.output(b.node("Flatten", {b.input("x", {2, 6, 4, 5})}, {{"axis", axis}}));
    });
  for (Dims axes : {Dims{1}, Dims{-1}, Dims{1, 3}})
    s.add(Mode::fp32, "Squeeze", "2x1x5x1_axes" + join(axes, "."), [=](OnnxBuilder& b) {
      b.output(b.node("Squeeze", {b.input("x", {2, 1, 5, 1}), i64s(b, axes)}));
    });
  for (Dims axes : {Dims{0}, Dims{-1}, Dims{1, 4}})
    s.add(Mode::fp32, "Unsqueeze", "2x5x3_axes" + join(axes, "."), [=](OnnxBuilder& b) {
      b.output(b.node("Unsqueeze", {b.input("x", {2, 5, 3}), i64s(b, axes)}));
    });
  for (int64_t axis : {0, 1, -1})
    s.add(Mode::fp32, "Gather", "2x6x4x5_axis" + std::to_string(axis), [=](OnnxBuilder& b) {
      b.output(b.node("Gather", {b.input("x", {2, 6, 4, 5}), i64s(b, {1, 0, -1})}, {{"axis", axis}}));
    });
  for (const char* mode : {"constant", "reflect", "edge"})
    for (Dims pads : {Dims{0, 0, 1, 1, 0, 0, 1, 1}, Dims{0, 0, 2, 0, 0, 0, 0, 3}, Dims{0, 1, 0, 0, 0, 2, 0, 0}})
      s.add(Mode::fp32, "Pad", std::string(mode) + "_" + join(pads, "."), [=](OnnxBuilder& b) {
        b.output(b.node("Pad", {b.input("x", {1, 4, 6, 7}), i64s(b, pads)}, {{"mode", mode}}));
      });
  // A crop and a pad on the same axis: ORT crops first, then pads what is left (reflect up to
  // that length less one).
  for (const char* mode : {"reflect", "edge"})
    for (Dims pads : {Dims{0, 0, -1, 2, 0, 0, 4, -2}, Dims{0, 0, 4, -3, 0, 0, -1, 3}, Dims{0, 1, -2, 0, 0, -2, 3, 0}})
      s.add(Mode::fp32, "Pad", std::string(mode) + "_crop_" + join(pads, "."), [=](OnnxBuilder& b) {
        b.output(b.node("Pad", {b.input("x", {1, 4, 6, 7}), i64s(b, pads)}, {{"mode", mode}}));
      });
  // Pad of int32 data, and a constant_value computed at run time.
  for (const char* mode : {"constant", "reflect", "edge"})
    s.add(Mode::fp32, "Pad", std::string("s32_") + mode + "_2x5x6", [=](OnnxBuilder& b) {
      b.output(b.node("Pad", {integers(b, b.input("x", {2, 5, 6}), ElemType::s32), i64s(b, {0, 1, 2, 0, 3, 1})},
                      {{"mode", mode}}), ElemType::s32);
    });
  s.add(Mode::fp32, "Pad", "runtime_value_1x4x6x7", [](OnnxBuilder& b) {
    auto v = b.node("ReduceMax", {b.input("v", {3})}, {{"keepdims", int64_t(0)}});
    b.output(b.node("Pad", {b.input("x", {1, 4, 6, 7}), i64s(b, {0, 0, 1, 2, 0, 0, 2, 1}), v}));
  });
  // Pad of a channels-last conv map (a generator's ReflectionPad2d between convs, a blur pool's
  // edge pad, a pad of the channels): padded where it lies, no relayout around it. Constant by a
  // non-zero value (never folded into a window op), negative pads crop.
  for (const char* mode : {"reflect", "edge", "constant"})
    for (Dims pads : {Dims{0, 0, 1, 1, 0, 0, 1, 1}, Dims{0, 0, 3, 2, 0, 0, 1, 3}, Dims{0, 2, 1, 0, 0, 1, 0, 2},
                      Dims{0, 0, -1, 2, 0, 0, 1, -2}})
      s.add(Mode::fp32, "Conv+Pad", std::string(mode) + "_" + join(pads, ".") + "_1x6x9x8", [=](OnnxBuilder& b) {
        auto t = b.node("Conv", {b.input("x", {1, 6, 9, 8}), b.random_normal_init("", {8, 6, 1, 1}, 0, 0.3f)});
        std::vector<std::string> in = {t, i64s(b, pads)};
        if (std::string(mode) == "constant") in.push_back(f32(b, 0.75f));
        b.output(b.node("Pad", in, {{"mode", mode}}));
      });
  // 5-D: row-major, and channels-last behind a 1x1x1 Conv.
  for (const char* mode : {"reflect", "edge", "constant"}) {
    const Dims pads = {0, 1, 2, 0, 1, 0, 0, 1, 2, 2};
    s.add(Mode::fp32, "Pad", std::string(mode) + "_5d_2x3x4x5x6", [=](OnnxBuilder& b) {
      b.output(b.node("Pad", {b.input("x", {2, 3, 4, 5, 6}), i64s(b, pads)}, {{"mode", mode}}));
    });
    s.add(Mode::fp32, "Conv+Pad", std::string(mode) + "_5d_1x4x4x5x6", [=](OnnxBuilder& b) {
      auto t = b.node("Conv", {b.input("x", {1, 4, 4, 5, 6}), b.random_normal_init("", {8, 4, 1, 1, 1}, 0, 0.3f)});
      b.output(b.node("Pad", {t, i64s(b, {0, 0, 1, 2, 1, 0, 0, 2, 1, 2})}, {{"mode", mode}}));
    });
  }
  add_index_cases(s);
  add_value_shaped_cases(s);
  // Data movement between Q/DQ pairs runs on the bytes.
  s.add(Mode::qdq, "Concat", "2x6x4x5_axis1", [](OnnxBuilder& b) {
    auto y = b.node("Concat", {testing::qdq(b, b.input("a", {2, 6, 4, 5}), kAct), testing::qdq(b, b.input("b", {2, 6, 4, 5}), kAct)},
                    {{"axis", 1}});
    b.output(testing::qdq(b, y, kAct));
  });
  for (int64_t axis : {1, -1}) {
    s.add(Mode::qdq, "Split", "2x6x4x6_axis" + std::to_string(axis) + "_equal", [=](OnnxBuilder& b) {
      for (auto& y : b.node_multi("Split", {testing::qdq(b, b.input("x", {2, 6, 4, 6}), kAct)}, 3, {{"axis", axis}}))
        b.output(testing::qdq(b, y, kAct));
    });
    s.add(Mode::qdq, "Split", "2x6x4x6_axis" + std::to_string(axis) + "_uneven", [=](OnnxBuilder& b) {
      auto x = testing::qdq(b, b.input("x", {2, 6, 4, 6}), kAct);
      for (auto& y : b.node_multi("Split", {x, i64s(b, {1, 5})}, 2, {{"axis", axis}})) b.output(testing::qdq(b, y, kAct));
    });
  }
  for (const char* op : {"DepthToSpace", "SpaceToDepth"})
    s.add(Mode::qdq, op, "2x8x4x6_block2", [=](OnnxBuilder& b) {
      b.output(testing::qdq(b, b.node(op, {testing::qdq(b, b.input("x", {2, 8, 4, 6}), kAct)}, {{"blocksize", 2}}), kAct));
    });
  s.add(Mode::qdq, "Expand", "1x16x1x1_to_2.16.8.8", [](OnnxBuilder& b) {
    auto x = testing::qdq(b, b.input("x", {1, 16, 1, 1}), kAct);
    b.output(testing::qdq(b, b.node("Expand", {x, i64s(b, {2, 16, 8, 8})}), kAct));
  });
  s.add(Mode::qdq, "Gather", "2x6x4x5_axis1", [](OnnxBuilder& b) {
    auto x = testing::qdq(b, b.input("x", {2, 6, 4, 5}), kAct);
    b.output(testing::qdq(b, b.node("Gather", {x, i64s(b, {1, 0, -1})}, {{"axis", 1}}), kAct));
  });
  // Bytes stepped along the last axis (the gather rows' 1-byte elements) and an outer one.
  for (const SteppedSlice& c : std::vector<SteppedSlice>{
           {{2, 6, 4, 5}, -1, 2}, {{2, 6, 4, 5}, -1, -1}, {{2, 3, 77}, 2, 3}, {{2, 3, 77}, 2, -2}, {{2, 6, 4, 5}, 1, -2}})
    s.add(Mode::qdq, "Slice", c.id(), [=](OnnxBuilder& b) {
      b.output(testing::qdq(b, c.node(b, testing::qdq(b, b.input("x", c.d), kAct)), kAct));
    });
  add_index_qdq_cases(s);
  add_argmax_norm_layout_cases(s);
  // Pad between Q/DQ pairs (ORT runs it in float between them: the codes come back unchanged).
  for (const char* mode : {"reflect", "edge"})
    s.add(Mode::qdq, "Pad", std::string(mode) + "_1x6x9x8", [=](OnnxBuilder& b) {
      auto x = testing::qdq(b, b.input("x", {1, 6, 9, 8}), kAct);
      b.output(testing::qdq(b, b.node("Pad", {x, i64s(b, {0, 0, 3, 1, 0, 0, 1, 3})}, {{"mode", mode}}), kAct));
    });
  s.add(Mode::qdq, "Transpose", "2x6x4x5_perm0231", [](OnnxBuilder& b) {
    auto y = b.node("Transpose", {testing::qdq(b, b.input("x", {2, 6, 4, 5}), kAct)}, {{"perm", {0, 2, 3, 1}}});
    b.output(testing::qdq(b, y, kAct));
  });
  return std::move(s.cases);
}

}  // namespace sweep_gen

const std::vector<Case>& all_cases() {
  static const std::vector<Case> cases = sweep_gen::make();
  return cases;
}

std::string stratum_of(const std::string& id) {
  const size_t a = id.find('/'), b = id.find('/', a + 1);
  return id.substr(0, b);
}

std::vector<const Case*> ci_subset(size_t per_stratum) {
  std::map<std::string, std::vector<const Case*>> by;
  std::vector<std::string> order;
  for (const Case& c : all_cases()) {
    auto& v = by[stratum_of(c.id)];
    if (v.empty()) order.push_back(stratum_of(c.id));
    v.push_back(&c);
  }
  std::vector<const Case*> out;
  for (const auto& s : order) {
    const auto& v = by[s];
    if (v.size() <= per_stratum) {
      out.insert(out.end(), v.begin(), v.end());
      continue;
    }
    for (size_t i = 0; i < per_stratum; ++i) out.push_back(v[i * (v.size() - 1) / (per_stratum - 1)]);
  }
  return out;
}

}  // namespace octet::sweep
