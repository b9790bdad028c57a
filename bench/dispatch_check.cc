// Does the dispatcher pick the fastest kernel for the layers models actually have? For every
// distinct convolution of the given models (FP32 Conv, QLinearConv, and both convs of a fused
// PointwiseDepthwise step), as the plan runs it at
// each batch (a batch the session slices is planned per slice), times every candidate the
// dispatcher could have chosen on this CPU and sets the plan's pick against the fastest:
//   a fused pair's 1x1 or depthwise part: the whole pair as it runs (the 1x1 writing rows into
//     a ring in the L2, the depthwise reading them), with each candidate of that part and the
//     other part's pick;
//   FP32 dense or grouped: the IGEMM driver with each GEMM microkernel this CPU runs, and
//     Winograd F(2x2, 3x3) where it applies (whether or not its cost rule chose it);
//   FP32 depthwise: each depthwise row, and the IGEMM rows (the grouped fallback);
//   INT8 dense: the IGEMM driver with each INT8 row of the activation type;
//   INT8 grouped: one IGEMM per group (Q8GroupedConv) and, for groups of 4, 8 or a multiple of 16
//   channels, each narrow-group row (Q8NarrowGroupConv);
//   INT8 depthwise: each INT8 depthwise row that fits the shape.
// One thread, random data of the layer's types, the weights before each run where the model
// leaves them (ColdWeights: the L3 or memory). A timing check: bench/check_dispatch.py runs
// it over a zoo and prints the table; never a pass/fail test (timings here are noisy).
//
//   dispatch_check [--batch N,...] [--min-time S] [--repetitions R] [--cpu-time] [--json FILE] [--quiet] MODEL...
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include "bench/kernel_bench_util.h"
#include "engine/ops/fused_activation.h"
#include "engine/ops/pwdw_shape.h"
#include "engine/ops/spatial.h"
#include "engine/session.h"
#include "kernels/conv/dwconv_list.h"
#include "kernels/conv/f32_conv.h"
#include "kernels/conv/f32_dwconv.h"
#include "kernels/conv/f32_narrow_group_conv.h"
#include "kernels/conv/f32_pwdw_conv.h"
#include "kernels/conv/q8_grouped_conv.h"
#include "kernels/conv/q8_narrow_group_conv.h"
#include "kernels/conv/f32_winograd.h"
#include "kernels/conv/q8_conv.h"
#include "kernels/conv/q8_dwconv.h"
#include "kernels/gemm/f32_gemm_list.h"
#include "kernels/gemm/q8_gemm_list.h"
#include "kernels/cache_budgets.h"
#include "kernels/isa.h"

namespace octet::bench {
namespace {

using json = nlohmann::json;
using kernels::Activation;
using kernels::Conv2dShape;
using kernels::Q8;

struct Layer {
  std::string family;  // "f32 dense", "f32 grouped", "f32 depthwise", "q8 dense", "f32 pair 1x1", ...
  Conv2dShape shape;
  // A fused pair's part ("f32 pair 1x1", "f32 pair depthwise"): the pair's depthwise shape, the
  // 1x1's input channels and activation, the other part's pick.
  Conv2dShape pair_dw;
  int pair_in_c = 0;
  Activation pair_pw_act;
  std::string other_pick;
  Activation act;      // FP32: the fused activation (it changes the epilogue)
  Q8 x_type = Q8::u8, y_type = Q8::u8;
  std::string pick;    // the kernel the plan chose, without what follows the tile ("+residual", "+f32_silu__avx2", " (...)")
  std::vector<std::string> models, nodes;
  size_t model_weight_bytes = 0;  // the largest of its models' constants, in bytes
};

std::string shape_label(const Conv2dShape& s) {
  std::string label = fmt::format("{}x{} {}->{} @{}x{}", s.kernel_h, s.kernel_w, s.in_c, s.out_c, s.in_h, s.in_w);
  if (s.stride_h != 1 || s.stride_w != 1) label += fmt::format(" s{}x{}", s.stride_h, s.stride_w);
  if (s.dilation_h != 1 || s.dilation_w != 1) label += fmt::format(" d{}x{}", s.dilation_h, s.dilation_w);
  if (s.groups != 1) label += fmt::format(" g{}", s.groups);
  return label + fmt::format(" n{}", s.batch);
}

// The key two layers share when every candidate runs them the same way.
std::string layer_key(const Layer& l) {
  const Conv2dShape& s = l.shape;
  std::string key = fmt::format("{}|{}|p{},{}|{}|{}{}", l.family, shape_label(s), s.pad_top, s.pad_left,
                                static_cast<int>(l.act.kind), static_cast<int>(l.x_type), static_cast<int>(l.y_type));
  if (l.pair_in_c > 0)
    key += fmt::format("|pair {} {} {} {}", shape_label(l.pair_dw), l.pair_in_c, static_cast<int>(l.pair_pw_act.kind),
                       l.other_pick);
  return key;
}

std::string base_kernel_name(const std::string& reported) {
  const size_t cut = reported.find_first_of("+ ");
  return cut == std::string::npos ? reported : reported.substr(0, cut);
}

Q8 q8_of(ir::DType t) { return t == ir::DType::s8 ? Q8::s8 : Q8::u8; }

// What the op saw of `node` when the plan was built: its inputs' infos (kept in `infos`, which
// must outlive the context).
OpContext planned_context(const Session& session, const Plan& plan, const ir::Node& node, std::vector<TensorInfo>& infos) {
  OpContext c{node, session.graph().opset};
  infos.clear();
  for (const std::string& name : node.inputs) infos.push_back(name.empty() ? TensorInfo{} : plan.value(name).info);
  for (size_t i = 0; i < node.inputs.size(); ++i) c.in.push_back(node.inputs[i].empty() ? nullptr : &infos[i]);
  return c;
}

void keep_layer(const Layer& l, const std::string& model_path, const std::string& node, const Plan& plan,
                std::map<std::string, Layer>& layers) {
  Layer& kept = layers.emplace(layer_key(l), l).first->second;
  kept.models.push_back(model_path);
  kept.nodes.push_back(node);
  kept.model_weight_bytes = std::max(kept.model_weight_bytes, plan.constant_bytes());  // as its kernels were chosen
}

// A fused 1x1 + depthwise step (PointwiseDepthwise, "pwdw(GEMM, DW)") as its two parts, each
// timed inside the pair: the 1x1 (the GEMM its driver picks by the unfused conv's rule) and the
// depthwise.
void collect_pwdw_parts(const std::string& model_path, const Session& session, const Plan& plan, const ir::Node& node,
                        const PlanStep& step, std::map<std::string, Layer>& layers) {
  const std::string& k = step.kernel;
  const size_t open = k.find("pwdw("), comma = k.find(", "), close = k.find(')');
  if (open != 0 || comma == std::string::npos || close == std::string::npos) return;  // a reference pair
  std::vector<TensorInfo> infos;
  const ops::PwDwShape shapes = ops::pwdw_shape(planned_context(session, plan, node, infos));
  Layer pair;
  pair.pair_dw = shapes.dw;
  pair.pair_in_c = shapes.pw.in_c;
  pair.pair_pw_act = ops::fused_activation(node, "pw_act", "pw_act_params");
  pair.act = ops::fused_activation(node);
  const std::string pw_pick = base_kernel_name(k.substr(5, comma - 5));
  const std::string dw_pick = base_kernel_name(k.substr(comma + 2, close - comma - 2));
  Layer pw = pair;
  pw.family = "f32 pair 1x1";
  pw.shape = shapes.pw;
  pw.pick = pw_pick;
  pw.other_pick = dw_pick;
  keep_layer(pw, model_path, node.name + " (1x1)", plan, layers);
  Layer dw = pair;
  dw.family = "f32 pair depthwise";
  dw.shape = shapes.dw;
  dw.pick = dw_pick;
  dw.other_pick = pw_pick;
  keep_layer(dw, model_path, node.name + " (depthwise)", plan, layers);
}

// The convolutions of one plan with the geometry its op computed, through the op's own
// window rules (ops::conv_geometry on the plan's input infos).
void collect_layers(const std::string& model_path, int batch, std::map<std::string, Layer>& layers) {
  Session session = Session::load(model_path);
  const TensorSpec& input = session.inputs().at(0);
  ir::Dims dims = input.dims;
  for (auto& d : dims) d = d < 0 ? 1 : d;
  const int planned = session.slices_batches() && batch > session.batch_slice() ? session.batch_slice() : batch;
  dims[0] = planned;
  const Plan& plan = session.plan_for(std::vector<ir::Dims>{dims});
  std::map<std::string, const ir::Node*> nodes;
  for (const ir::Node& n : session.graph().nodes) nodes[n.name] = &n;
  for (const PlanStep& step : plan.steps()) {
    const auto it = nodes.find(step.node);
    if (it == nodes.end() || step.scalar()) continue;
    const ir::Node& node = *it->second;
    if (node.op == "PointwiseDepthwise") {
      collect_pwdw_parts(model_path, session, plan, node, step, layers);
      continue;
    }
    const bool f32 = node.op == "Conv", q8 = node.op == "QLinearConv";
    if (!f32 && !q8) continue;
    const size_t w_input = f32 ? 1 : 3;
    std::vector<TensorInfo> infos;
    const OpContext c = planned_context(session, plan, node, infos);
    Layer l;
    l.shape = ops::conv2d_shape(ops::conv_geometry(c, 0, w_input));
    const Conv2dShape& s = l.shape;
    const bool depthwise = s.groups > 1 && s.groups == s.in_c && s.out_c == s.in_c;
    l.family = std::string(f32 ? "f32 " : "q8 ") + (depthwise ? "depthwise" : s.groups > 1 ? "grouped" : "dense");
    if (f32) l.act = ops::fused_activation(node);
    if (q8) {
      l.x_type = q8_of(infos[0].dtype);
      l.y_type = q8_of(plan.value(node.outputs[0]).info.dtype);
    }
    l.pick = base_kernel_name(step.kernel);
    keep_layer(l, model_path, node.name, plan, layers);
  }
}

// One candidate: its name and a run of the layer (data bound).
struct Candidate {
  std::string name;
  std::function<void()> run;
};

// Buffers of one layer, shared by its candidates.
struct LayerData {
  std::vector<float> xf, wf, bf, yf;
  std::vector<uint8_t> xq, yq;
  std::vector<int8_t> wq;
  std::vector<int32_t> bq;
  std::vector<float> multiplier;
};

// The portable scalar rows are chosen only where no vector row runs (docs/kernels.md):
// candidates only then.
template <class Row>
bool candidate_row(const Row& row) {
  if (!kernels::isa_supported(row.isa)) return false;
  return kernels::active_isa() == kernels::Isa::scalar || row.isa != kernels::Isa::scalar;
}

// A fused pair with each candidate of one part (l.family says which) and the other part's pick.
std::vector<Candidate> pair_candidates(const Layer& l, LayerData& d) {
  const Conv2dShape& dw = l.pair_dw;
  const size_t mid = size_t(dw.in_c);
  d.xf = random_floats(size_t(dw.batch) * dw.in_h * dw.in_w * l.pair_in_c, 1);
  d.wf = random_floats(mid * l.pair_in_c + mid * dw.kernel_h * dw.kernel_w, 2);
  d.bf = random_floats(2 * mid, 3);
  d.yf.assign(size_t(dw.batch) * dw.out_h * dw.out_w * mid, 0.0f);
  const float* pw_w = d.wf.data();
  const float* dw_w = d.wf.data() + mid * l.pair_in_c;
  const bool vary_pw = l.family == "f32 pair 1x1";
  kernels::PwDwKernels fixed;
  if (vary_pw) {
    for (const auto& k : kernels::kF32DwConvKernels)
      if (l.other_pick == k.name) fixed.dw = &k;
  } else {
    for (const auto& k : kernels::f32_gemm_kernels())
      if (l.other_pick == k.gemm_name) fixed.pw = &k;
  }
  if (fixed.pw == nullptr && fixed.dw == nullptr) return {};  // the other part's pick is not a listed row
  std::vector<Candidate> out;
  auto add = [&](const kernels::PwDwKernels& forced, const std::string& name) {
    auto conv = std::make_shared<kernels::F32PointwiseDwConv>(dw, l.pair_in_c, pw_w, d.bf.data(), l.pair_pw_act, dw_w,
                                                              d.bf.data() + mid, l.act, kernels::active_isa(), 1,
                                                              kernels::PwDwRingLimits{}, nullptr, nullptr, forced);
    out.push_back({name, [conv, &d] { conv->run(d.xf.data(), d.yf.data(), nullptr); }});
  };
  if (vary_pw) {
    for (const auto& k : kernels::f32_gemm_kernels())
      if (candidate_row(k)) add({&k, fixed.dw}, k.gemm_name);
  } else {
    for (const auto& k : kernels::kF32DwConvKernels)
      if (candidate_row(k)) add({fixed.pw, &k}, k.name);
  }
  return out;
}

std::vector<Candidate> candidates(const Layer& l, LayerData& d) {
  if (l.pair_in_c > 0) return pair_candidates(l, d);
  const Conv2dShape& s = l.shape;
  const size_t x_count = size_t(s.batch) * s.in_h * s.in_w * s.in_c;
  const size_t y_count = size_t(s.batch) * s.out_h * s.out_w * s.out_c;
  const size_t w_count = size_t(s.out_c) * (s.in_c / s.groups) * s.kernel_h * s.kernel_w;
  std::vector<Candidate> out;
  const bool depthwise = l.family.ends_with("depthwise");
  if (l.family.starts_with("f32")) {
    d.xf = random_floats(x_count, 1);
    d.wf = random_floats(w_count, 2);
    d.bf = random_floats(s.out_c, 3);
    d.yf.assign(y_count, 0.0f);
    for (const auto& k : kernels::f32_gemm_kernels()) {
      if (!candidate_row(k)) continue;
      try {
        auto conv = std::make_shared<kernels::F32Conv>(s, d.wf.data(), d.bf.data(), l.act, k);
        conv->bind(d.xf.data());
        out.push_back({base_kernel_name(conv->kernel_name()), [conv, &d] { conv->run(d.xf.data(), d.yf.data(), nullptr); }});
      } catch (const std::exception&) {
      }
    }
    if (kernels::F32WinogradConv::supports(s, l.act)) {
      auto conv = std::make_shared<kernels::F32WinogradConv>(s, d.wf.data(), d.bf.data(), l.act,
                                                             kernels::active_isa());
      conv->bind(d.xf.data());
      out.push_back({base_kernel_name(conv->kernel_name()), [conv, &d] { conv->run(d.xf.data(), d.yf.data(), nullptr); }});
    }
    if (kernels::F32NarrowGroupConv::supports(s, l.act))
      for (const auto& k : kernels::kF32GconvKernels) {
        if (!candidate_row(k) || k.group_width != s.in_c / s.groups) continue;
        auto conv = std::make_shared<kernels::F32NarrowGroupConv>(s, d.wf.data(), d.bf.data(), l.act, k);
        conv->bind(d.xf.data());
        out.push_back({base_kernel_name(conv->kernel_name()), [conv, &d] { conv->run(d.xf.data(), d.yf.data(), nullptr); }});
      }
    if (depthwise && kernels::F32DwConv::supports(s, l.act))
      for (const auto& k : kernels::kF32DwConvKernels) {
        if (!candidate_row(k)) continue;
        auto conv = std::make_shared<kernels::F32DwConv>(s, d.wf.data(), d.bf.data(), l.act, k);
        conv->bind(d.xf.data());
        out.push_back({base_kernel_name(conv->kernel_name()), [conv, &d] { conv->run(d.xf.data(), d.yf.data(), nullptr); }});
      }
    return out;
  }
  const int32_t x_zp = l.x_type == Q8::u8 ? 128 : 0;
  d.xq = random_ints<uint8_t>(x_count, 0, 255, 1);  // every byte: u8 or s8 alike
  d.wq = random_ints<int8_t>(w_count, -127, 127, 2);
  d.bq.assign(s.out_c, 1000);
  d.yq.assign(y_count, 0);
  d.multiplier = {0.0005f};
  const int32_t y_lo = l.y_type == Q8::u8 ? 0 : -128, y_hi = l.y_type == Q8::u8 ? 255 : 127;
  const kernels::Requantization rq{d.multiplier, l.y_type == Q8::u8 ? 128 : 0, y_lo, y_hi};
  if (depthwise && kernels::Q8DwConv::supports(s, l.x_type, l.y_type))
    for (const auto& k : kernels::kQ8DwConvKernels) {
      if (!candidate_row(k) || !k.fits(s)) continue;
      auto conv = std::make_shared<kernels::Q8DwConv>(s, l.x_type, x_zp, d.wq.data(), d.bq.data(), rq, l.y_type, k);
      conv->bind(d.xq.data());
      out.push_back({base_kernel_name(conv->kernel_name()), [conv, &d] { conv->run(d.xq.data(), d.yq.data(), nullptr); }});
    }
  if (!depthwise && kernels::Q8GroupedConv::supports(s, l.x_type, l.y_type)) {
    // One dense IGEMM per group (its own tile choice, named by it), and each narrow-group row.
    auto grouped = std::make_shared<kernels::Q8GroupedConv>(s, l.x_type, x_zp, d.wq.data(), d.bq.data(), rq, l.y_type,
                                                            kernels::active_isa());
    out.push_back({base_kernel_name(grouped->kernel_name()), [grouped, &d] { grouped->run(d.xq.data(), d.yq.data(), nullptr); }});
    if (kernels::Q8NarrowGroupConv::supports(s, l.x_type, l.y_type))
      for (const auto& k : kernels::kQ8GconvKernels) {
        if (!candidate_row(k) || k.x_type != l.x_type || !kernels::q8_gconv_row_fits(k, s.in_c / s.groups)) continue;
        auto conv = std::make_shared<kernels::Q8NarrowGroupConv>(s, l.x_type, x_zp, d.wq.data(), d.bq.data(), &rq,
                                                                 nullptr, l.y_type, k);
        conv->bind(d.xq.data());
        out.push_back({base_kernel_name(conv->kernel_name()), [conv, &d] { conv->run(d.xq.data(), d.yq.data(), nullptr); }});
      }
  }
  if (kernels::Q8Conv::supports(s, l.x_type, l.y_type))
    for (const auto& k : kernels::kQ8GemmKernels) {
      if (!candidate_row(k) || k.x_type != l.x_type) continue;
      try {
        auto conv = std::make_shared<kernels::Q8Conv>(s, l.x_type, x_zp, d.wq.data(), d.bq.data(), rq, l.y_type, k);
        conv->bind(d.xq.data());
        out.push_back({base_kernel_name(conv->kernel_name()), [conv, &d] { conv->run(d.xq.data(), d.yq.data(), nullptr); }});
      } catch (const std::exception&) {
      }
    }
  return out;
}

// What a layer sees inside a model: its weights were last read a whole model ago, so they come
// from the L3 when the model's weights fit this core's share of it and from memory otherwise;
// its input was just written by the previous step. A kernel benchmark that reruns one layer
// keeps its weights in L1/L2 and favours the kernel that reads more of them (Winograd reads
// 16/9 of the direct conv's). So before each timed run a buffer is written, four L2s of it
// (evicting L1 and L2, keeping the L3) or all of it (past every level), and the input is read
// back in (warm, as the step before left it).
class ColdWeights {
 public:
  explicit ColdWeights(size_t bytes) : buffer_(bytes / sizeof(uint64_t), 1) {}
  size_t bytes() const { return buffer_.size() * sizeof(uint64_t); }
  void prepare(const void* input, size_t input_bytes, size_t evict_bytes) {
    const size_t words = std::min(buffer_.size(), evict_bytes / sizeof(uint64_t));
    for (size_t i = 0; i < words; ++i) buffer_[i] += 1;
    const auto* p = static_cast<const volatile unsigned char*>(input);
    unsigned sink = 0;
    for (size_t i = 0; i < input_bytes; i += 64) sink += p[i];
    sink_ += sink;
  }

 private:
  std::vector<uint64_t> buffer_;
  unsigned sink_ = 0;
};

// The median time of one run (µs) of each candidate over `repetitions` rounds; a round runs
// each candidate in turn (so drift hits them alike) for at least `min_time` seconds, the mean
// run time of the round its sample. With `cold` every run starts as ColdWeights leaves it, and
// is timed alone. With `cpu_time` a run counts the CPU time of this thread, not the wall clock:
// on a machine other work shares, the time it was not running is left out.
double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

std::vector<double> time_candidates(const std::vector<Candidate>& cs, double min_time, int repetitions,
                                    ColdWeights* cold, size_t evict_bytes, const void* input, size_t input_bytes,
                                    bool cpu_time) {
  using clock = std::chrono::steady_clock;
  std::vector<std::vector<double>> samples(cs.size());
  for (const Candidate& c : cs) c.run();  // warm-up: pages, packed weights, lazy buffers
  for (int r = 0; r < repetitions; ++r)
    for (size_t i = 0; i < cs.size(); ++i) {
      int runs = 0;
      double timed = 0;
      const auto round_start = clock::now();
      do {
        if (cold) cold->prepare(input, input_bytes, evict_bytes);
        const auto start = clock::now();
        const double cpu_start = cpu_time ? thread_cpu_seconds() : 0.0;
        cs[i].run();
        timed += cpu_time ? thread_cpu_seconds() - cpu_start : std::chrono::duration<double>(clock::now() - start).count();
        ++runs;
      } while ((cold ? std::chrono::duration<double>(clock::now() - round_start).count() : timed) < min_time);
      samples[i].push_back(timed / runs * 1e6);
    }
  std::vector<double> medians;
  for (auto& s : samples) {
    std::sort(s.begin(), s.end());
    medians.push_back(s[s.size() / 2]);
  }
  return medians;
}

int run(int argc, char** argv) {
  CLI::App app{"Times every candidate kernel of each distinct conv layer of the models against the plan's pick"};
  std::vector<std::string> models;
  std::vector<int> batches;
  double min_time = 0.02;
  int repetitions = 5;
  std::string json_path;
  bool quiet = false, warm = false, cpu_time = false;
  int cold_mib = 128;
  app.add_option("models", models, "ONNX models (FP32 and QDQ / QOperator INT8)")->required()->check(CLI::ExistingFile);
  app.add_option("--batch", batches, "batch sizes to plan at, comma-separated (default 1)")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->check(CLI::PositiveNumber);
  app.add_option("--min-time", min_time, "seconds per candidate per round (default 0.02)")->check(CLI::PositiveNumber);
  app.add_option("--repetitions", repetitions, "rounds; the median is reported (default 5)")
      ->check(CLI::PositiveNumber);
  app.add_option("--json", json_path, "write the rows as JSON here (default: standard output)");
  app.add_flag("--quiet", quiet, "no progress on standard error");
  app.add_flag("--cpu-time", cpu_time, "time each run by this thread's CPU time instead of the wall clock (a loaded machine)");
  app.add_flag("--warm", warm, "rerun each layer back to back (weights stay cached) instead of evicting them first");
  app.add_option("--cold-mib", cold_mib, "MiB written between runs to evict the weights (default 128, above any "
                                         "last-level cache of one core's share)")
      ->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  if (batches.empty()) batches = {1};

  std::map<std::string, Layer> layers;
  for (const std::string& m : models)
    for (int b : batches) {
      try {
        collect_layers(m, b, layers);
      } catch (const std::exception& e) {
        std::cerr << "dispatch_check: " << m << ": skipped: " << e.what() << "\n";
      }
    }
  std::unique_ptr<ColdWeights> cold;
  if (!warm) cold = std::make_unique<ColdWeights>(size_t(cold_mib) << 20);
  json rows = json::array();
  size_t done = 0;
  for (const auto& [key, l] : layers) {
    ++done;
    LayerData data;
    const std::vector<Candidate> cs = candidates(l, data);
    if (!quiet)
      std::cerr << fmt::format("dispatch_check: layer {}/{} {} {} ({} candidates)\n", done, layers.size(), l.family,
                               shape_label(l.shape), cs.size());
    if (cs.empty()) continue;
    const bool f32 = l.family.starts_with("f32");
    const void* input = f32 ? static_cast<const void*>(data.xf.data()) : data.xq.data();
    const size_t input_bytes = f32 ? data.xf.size() * sizeof(float) : data.xq.size();
    const kernels::CacheSizes& caches = kernels::cache_sizes();
    const bool in_l3 = l.model_weight_bytes <= kernels::cache_budgets(caches).model_weights_in_l3;
    const size_t evict = cold ? (in_l3 ? 4 * caches.l2 : cold->bytes()) : 0;
    const std::vector<double> us = time_candidates(cs, min_time, repetitions, cold.get(), evict, input, input_bytes, cpu_time);
    const size_t best = size_t(std::min_element(us.begin(), us.end()) - us.begin());
    json candidates_json = json::array();
    std::optional<double> pick_us;
    for (size_t i = 0; i < cs.size(); ++i) {
      candidates_json.push_back({{"kernel", cs[i].name}, {"us", us[i]}});
      if (cs[i].name == l.pick) pick_us = us[i];
    }
    json row = {{"family", l.family}, {"weights_from", cold ? (in_l3 ? "L3" : "memory") : "cache"}, {"layer", shape_label(l.shape)}, {"batch", l.shape.batch},
                {"models", l.models}, {"nodes", l.nodes}, {"pick", l.pick}, {"best", cs[best].name},
                {"best_us", us[best]}, {"candidates", candidates_json}};
    row["pick_us"] = pick_us ? json(*pick_us) : json(nullptr);
    row["ratio"] = pick_us ? json(*pick_us / us[best]) : json(nullptr);
    rows.push_back(std::move(row));
  }
  const json report = {{"isa", kernels::isa_name(kernels::active_isa())}, {"min_time", min_time},
                       {"weights", warm ? "warm" : "as in the model"},
                       {"repetitions", repetitions}, {"cpu_time", cpu_time}, {"rows", rows}};
  if (json_path.empty()) {
    std::cout << report.dump(1) << "\n";
  } else {
    std::ofstream f(json_path);
    f << report.dump(1) << "\n";
    if (!f) throw std::runtime_error("cannot write " + json_path);
  }
  return 0;
}

}  // namespace
}  // namespace octet::bench

int main(int argc, char** argv) {
  try {
    return octet::bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "dispatch_check: " << e.what() << "\n";
    return 1;
  }
}
