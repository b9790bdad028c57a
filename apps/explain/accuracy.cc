#include "apps/explain/accuracy.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <cstring>
#include <span>

#include "calib/calibrate.h"
#include "calib/observers.h"
#include "engine/layout.h"
#include "loader/onnx_writer.h"
#include "apps/cli/int8_parity.h"
#include "apps/cli/model_inputs.h"
#include "tools/ort/ort_client.h"
#include "io/tensor_io.h"

namespace octet::explain {
namespace {

// The model as the quantizer saw it: no QDQ or activation fusion, so every tensor it named is
// written by some step.
SessionOptions unfused_options(const AccuracyOptions& o) {
  SessionOptions so;
  so.passes.fuse_qdq = false;
  so.passes.fuse_activations = false;
  so.isa = o.isa;
  so.threads = o.threads;
  return so;
}

SessionOptions fused_options(const AccuracyOptions& o) {
  SessionOptions so;
  so.isa = o.isa;
  so.threads = o.threads;
  return so;
}

float scalar_float(const ir::Graph& g, const std::string& name) {
  const ir::Value& v = g.value(name);
  if (!v.constant || v.constant->count() != 1 || v.constant->dtype != ir::DType::f32) return 0;
  return v.constant->as<float>()[0];
}

// Every QuantizeLinear of an activation with one scale: FP32 tensor -> its record. The FP32 name
// is the one the FP32 graph uses: octet's quantizer renames a producer's output to T_float,
// quantizes that and dequantizes back into T (a graph input keeps its name and is dequantized
// into a new one), so the candidate found in `fp32` (when given) wins, else the DequantizeLinear's
// output.
std::vector<TensorAccuracy> quantized_activations(const ir::Graph& qdq, const ir::Graph* fp32 = nullptr) {
  std::vector<TensorAccuracy> out;
  for (const ir::Node& n : qdq.nodes) {
    if (n.op != "QuantizeLinear" || qdq.is_constant(n.input(0))) continue;
    TensorAccuracy t;
    std::vector<std::string> names;
    for (size_t c : qdq.consumers(n.outputs.at(0)))
      if (qdq.nodes[c].op == "DequantizeLinear") names.push_back(qdq.nodes[c].outputs.at(0));
    names.push_back(n.input(0));
    t.name = names.front();
    if (fp32)
      for (const auto& candidate : names)
        if (fp32->values.count(candidate) && !fp32->is_constant(candidate)) {
          t.name = candidate;
          break;
        }
    t.quantized = n.outputs.at(0);
    t.scale = scalar_float(qdq, n.input(1));
    if (t.scale <= 0) continue;  // per-channel or run-time scale: not an activation we can follow
    bool s8 = false;
    if (n.has_input(2)) {
      const ir::Value& zp = qdq.value(n.input(2));
      if (!zp.constant || zp.constant->count() != 1) continue;
      s8 = zp.constant->dtype == ir::DType::s8;
      t.zero_point = s8 ? int32_t(zp.constant->as<int8_t>()[0]) : int32_t(zp.constant->as<uint8_t>()[0]);
    }
    t.qmin = s8 ? -128 : 0;
    t.qmax = s8 ? 127 : 255;
    out.push_back(std::move(t));
  }
  return out;
}

// Row-major copy of a value the plan wrote in its own layout.
template <class T>
std::vector<T> row_major(const TensorInfo& info, const void* data) {
  std::vector<T> v(size_t(info.count()));
  if (info.layout == Layout::row_major) {
    std::memcpy(v.data(), data, v.size() * sizeof(T));
  } else {
    relayout(info, data, Layout::row_major, v.data());
  }
  return v;
}

ModelScores append_scores(ModelScores s, const ir::TensorData& out) {
  s.classes = out.dims.empty() ? 1 : out.count() / std::max<int64_t>(1, out.dims[0]);
  const float* p = out.as<float>();
  s.scores.insert(s.scores.end(), p, p + out.count());
  return s;
}

std::vector<size_t> argmax_rows(const ModelScores& s) {
  std::vector<size_t> top;
  if (s.classes <= 0) return top;
  for (size_t i = 0; i + size_t(s.classes) <= s.scores.size(); i += size_t(s.classes))
    top.push_back(size_t(std::max_element(s.scores.begin() + long(i), s.scores.begin() + long(i) + s.classes) -
                         (s.scores.begin() + long(i))));
  return top;
}

// For each quantized tensor, the nearest quantized tensors upstream in the FP32 graph: the
// error it inherits. Walks back through the nodes that are not quantized boundaries.
void link_inputs(const ir::Graph& prepared, std::vector<TensorAccuracy>& tensors) {
  std::map<std::string, const ir::Node*> producer;
  for (const ir::Node& n : prepared.nodes)
    for (const auto& o : n.outputs) producer[o] = &n;
  std::set<std::string> quantized;
  for (const auto& t : tensors) quantized.insert(t.name);
  for (TensorAccuracy& t : tensors) {
    auto it = producer.find(t.name);
    if (it == producer.end()) continue;
    t.producer = it->second->name;
    t.op = it->second->op;
    std::set<std::string> seen, found;
    std::vector<std::string> todo(it->second->inputs.begin(), it->second->inputs.end());
    while (!todo.empty()) {
      const std::string v = todo.back();
      todo.pop_back();
      if (v.empty() || prepared.is_constant(v) || !seen.insert(v).second) continue;
      if (quantized.count(v)) {
        found.insert(v);
        continue;
      }
      auto p = producer.find(v);
      if (p != producer.end()) todo.insert(todo.end(), p->second->inputs.begin(), p->second->inputs.end());
    }
    t.quantized_inputs.assign(found.begin(), found.end());
  }
}

}  // namespace

std::optional<double> TensorAccuracy::sqnr_db() const {
  if (noise <= 0 || values == 0) return std::nullopt;
  return 10.0 * std::log10(std::max(signal, 1e-300) / noise);
}

AccuracyResult measure_accuracy(const ir::Graph& fp32, const ir::Graph& qdq, const ir::TensorData& images,
                                const AccuracyOptions& options) {
  AccuracyResult r;
  r.images = images.dims.at(0);
  const ir::Graph prepared = calib::prepare_for_quantization(fp32);
  r.tensors = quantized_activations(qdq, &prepared);
  link_inputs(prepared, r.tensors);

  std::map<std::string, size_t> by_fp32, by_int8;
  for (size_t i = 0; i < r.tensors.size(); ++i) {
    by_fp32[r.tensors[i].name] = i;
    by_int8[r.tensors[i].quantized] = i;
  }
  const calib::Method kMethods[] = {calib::Method::minmax, calib::Method::percentile, calib::Method::entropy,
                                    calib::Method::mse};
  std::vector<std::vector<std::unique_ptr<calib::Observer>>> observers(r.tensors.size());
  for (auto& per_tensor : observers)
    for (calib::Method m : kMethods) per_tensor.push_back(calib::make_observer(m));

  Session float_session(prepared, unfused_options(options));
  Session int8_session(qdq, fused_options(options));
  const auto batches = cli::split_batches(images, options.batch);
  const int passes = options.methods ? 2 : 1;
  // The calibration methods see the first method_images images (whole batches), in both passes.
  const size_t method_batches =
      options.methods ? std::min(batches.size(), size_t((options.method_images + options.batch - 1) / options.batch)) : 0;
  const int64_t total = int64_t(batches.size() + method_batches);
  int64_t done = 0;

  for (int pass = 0; pass < passes; ++pass) {
    for (size_t b = 0; b < (pass == 0 ? batches.size() : method_batches); ++b) {
      const ir::TensorData& batch = batches[b];
      const bool feed_methods = b < method_batches;
      std::map<size_t, std::vector<float>> fp32_values;
      ValueObserver watch_fp32 = [&](const std::string& name, const TensorInfo& info, const void* data) {
        auto it = by_fp32.find(name);
        if (it == by_fp32.end() || info.dtype != ir::DType::f32) return;
        std::vector<float> v = row_major<float>(info, data);
        if (feed_methods) {
          for (auto& o : observers[it->second]) {
            if (pass == 0) o->observe_range(v);
            else o->observe_histogram(v);
          }
        }
        if (pass == 0) fp32_values[it->second] = std::move(v);
      };
      // A graph input is written by no step: its values are the batch itself.
      for (const std::string& in : prepared.inputs) {
        auto it = by_fp32.find(in);
        if (it == by_fp32.end() || batch.dtype != ir::DType::f32) continue;
        TensorInfo info;
        info.dims = batch.dims;
        watch_fp32(in, info, batch.bytes.data());
      }
      auto fp32_out = float_session.run({batch}, nullptr, &watch_fp32);
      if (pass == 0) {
        ValueObserver watch_int8 = [&](const std::string& name, const TensorInfo& info, const void* data) {
          auto it = by_int8.find(name);
          if (it == by_int8.end() || (info.dtype != ir::DType::u8 && info.dtype != ir::DType::s8)) return;
          TensorAccuracy& t = r.tensors[it->second];
          auto f = fp32_values.find(it->second);
          if (f == fp32_values.end() || int64_t(f->second.size()) != info.count()) return;
          // Plain variables: clang 14 cannot capture structured bindings in the lambda below.
          const float lo = t.range().first, hi = t.range().second;
          auto accumulate = [&](auto codes) {
            for (size_t i = 0; i < codes.size(); ++i) {
              const double x = f->second[i];
              const double q = double(t.scale) * double(int32_t(codes[i]) - t.zero_point);
              t.signal += x * x;
              t.noise += (q - x) * (q - x);
              t.clipped += x < lo || x > hi;
            }
            t.values += int64_t(codes.size());
          };
          if (info.dtype == ir::DType::u8) accumulate(row_major<uint8_t>(info, data));
          else accumulate(row_major<int8_t>(info, data));
        };
        auto int8_out = int8_session.run({batch}, nullptr, &watch_int8);
        r.fp32 = append_scores(std::move(r.fp32), fp32_out.at(0));
        r.int8 = append_scores(std::move(r.int8), int8_out.at(0));
      }
      if (options.progress) options.progress(++done, total, pass == 0 ? "accuracy" : "calibration ranges");
    }
  }

  for (size_t i = 0; i < r.tensors.size(); ++i) {
    TensorAccuracy& t = r.tensors[i];
    calib::QuantTarget target;
    target.type = t.qmin < 0 ? calib::QType::s8 : calib::QType::u8;
    for (size_t m = 0; m < observers[i].size(); ++m) {
      if (observers[i][m]->count() == 0) continue;
      if (!options.methods && kMethods[m] != calib::Method::minmax) continue;
      const calib::Range range = observers[i][m]->range(target);
      t.methods[calib::method_name(kMethods[m])] = {range.min, range.max};
    }
  }
  flag_culprits(r.tensors);
  return r;
}

ModelScores run_scores(const ir::Graph& graph, const ir::TensorData& images, const AccuracyOptions& options) {
  Session session(graph, fused_options(options));
  ModelScores s;
  for (const ir::TensorData& batch : cli::split_batches(images, options.batch))
    s = append_scores(std::move(s), session.run({batch}).at(0));
  return s;
}

double top1_agreement(const ModelScores& a, const ModelScores& b) {
  const auto ta = argmax_rows(a), tb = argmax_rows(b);
  const size_t n = std::min(ta.size(), tb.size());
  if (n == 0) return 0;
  size_t same = 0;
  for (size_t i = 0; i < n; ++i) same += ta[i] == tb[i];
  return double(same) / double(n);
}

double top1_accuracy(const ModelScores& s, const std::vector<int>& labels) {
  const auto top = argmax_rows(s);
  const size_t n = std::min(top.size(), labels.size());
  if (n == 0) return 0;
  size_t right = 0;
  for (size_t i = 0; i < n; ++i) right += labels[i] >= 0 && top[i] == size_t(labels[i]);
  return double(right) / double(n);
}

std::optional<double> scores_sqnr_db(const ModelScores& reference, const ModelScores& other) {
  double signal = 0, noise = 0;
  const size_t n = std::min(reference.scores.size(), other.scores.size());
  for (size_t i = 0; i < n; ++i) {
    const double x = reference.scores[i], d = double(other.scores[i]) - x;
    signal += x * x;
    noise += d * d;
  }
  if (noise <= 0 || n == 0) return std::nullopt;
  return 10.0 * std::log10(std::max(signal, 1e-300) / noise);
}

std::vector<double> row_major_values(const TensorInfo& info, const void* data) {
  auto widen = [](const auto& v) { return std::vector<double>(v.begin(), v.end()); };
  switch (info.dtype) {
    case ir::DType::f32: return widen(row_major<float>(info, data));
    case ir::DType::f64: return row_major<double>(info, data);
    case ir::DType::u8: return widen(row_major<uint8_t>(info, data));
    case ir::DType::s8: return widen(row_major<int8_t>(info, data));
    case ir::DType::s32: return widen(row_major<int32_t>(info, data));
    case ir::DType::s64: return widen(row_major<int64_t>(info, data));
    case ir::DType::b8: return {};
  }
  return {};
}

std::vector<OrtTensorComparison> compare_with_ort(const ir::Graph& qdq, const ir::TensorData& images,
                                                  const AccuracyOptions& options) {
  std::vector<OrtTensorComparison> out;
  ir::Graph tapped = qdq;
  for (const TensorAccuracy& t : quantized_activations(qdq)) {
    out.push_back({t.name, t.quantized});
    // A graph output is written with its value's type, which the loader leaves at float for
    // an intermediate tensor.
    tapped.value(t.quantized).dtype = t.qmin < 0 ? ir::DType::s8 : ir::DType::u8;
    if (!tapped.is_graph_output(t.quantized)) tapped.outputs.push_back(t.quantized);
  }
  cli::TempDir temp;
  const std::string file = (temp.path() / "tapped.onnx").string();
  loader::save_onnx(tapped, file);
  if (tapped.inputs.size() != 1) throw ir::Error("--compare-ort per tensor needs a model with one input");
  const auto ort_out = ort::run(file, {{tapped.inputs[0], to_npy(images)}});

  std::map<std::string, size_t> index;
  for (size_t i = 0; i < out.size(); ++i) index[out[i].quantized] = i;
  ValueObserver watch = [&](const std::string& name, const TensorInfo& info, const void* data) {
    auto it = index.find(name);
    if (it == index.end() || (info.dtype != ir::DType::u8 && info.dtype != ir::DType::s8)) return;
    auto o = ort_out.find(name);
    if (o == ort_out.end() || o->second.count() != info.count()) return;
    OrtTensorComparison& c = out[it->second];
    const std::vector<uint8_t> mine = row_major<uint8_t>(info, data);
    const auto* theirs = reinterpret_cast<const uint8_t*>(o->second.data.data());
    const bool s8 = info.dtype == ir::DType::s8;
    for (size_t i = 0; i < mine.size(); ++i) {
      const int a = s8 ? int(int8_t(mine[i])) : int(mine[i]), b = s8 ? int(int8_t(theirs[i])) : int(theirs[i]);
      c.identical += a == b;
      c.max_lsb = std::max<int64_t>(c.max_lsb, std::abs(a - b));
    }
    c.values += int64_t(mine.size());
  };
  SessionOptions so = fused_options(options);
  Session(ir::Graph(qdq), so).run({images}, nullptr, &watch);
  return out;
}

void flag_culprits(std::vector<TensorAccuracy>& tensors, double min_drop_db, size_t max_culprits) {
  std::map<std::string, const TensorAccuracy*> by_name;
  for (const auto& t : tensors) by_name[t.name] = &t;
  std::vector<TensorAccuracy*> candidates;
  for (TensorAccuracy& t : tensors) {
    t.culprit = false;
    t.sqnr_drop_db.reset();
    const auto own = t.sqnr_db();
    if (!own) continue;
    // The inherited quality: the worst quantized input (an exact input counts as very high).
    std::optional<double> inherited;
    for (const auto& in : t.quantized_inputs) {
      auto it = by_name.find(in);
      if (it == by_name.end() || it->second->values == 0) continue;  // never compared
      const double s = it->second->sqnr_db().value_or(200.0);  // exact: as good as it gets
      inherited = inherited ? std::min(*inherited, s) : s;
    }
    if (!inherited) continue;  // a model input: nothing upstream to compare with
    t.sqnr_drop_db = *inherited - *own;
    if (*t.sqnr_drop_db >= min_drop_db) candidates.push_back(&t);
  }
  // Every layer loses a little (a few dB through a conv and its Relu); a culprit loses several
  // times what the typical layer does.
  std::vector<double> drops;
  for (const TensorAccuracy& t : tensors)
    if (t.sqnr_drop_db) drops.push_back(*t.sqnr_drop_db);
  if (!drops.empty()) {
    std::nth_element(drops.begin(), drops.begin() + long(drops.size() / 2), drops.end());
    const double typical = std::max(0.0, drops[drops.size() / 2]);
    std::erase_if(candidates, [&](const TensorAccuracy* t) { return *t->sqnr_drop_db < 3.0 * typical; });
  }
  // ... and ends up among the worse half of the tensors: a layer that loses a few dB from an
  // excellent input (the first layer after the input's quantization, typically) is no culprit.
  std::vector<double> sqnrs;
  for (const TensorAccuracy& t : tensors)
    if (auto s = t.sqnr_db()) sqnrs.push_back(*s);
  if (!sqnrs.empty()) {
    const size_t lower_median = (sqnrs.size() - 1) / 2;
    std::nth_element(sqnrs.begin(), sqnrs.begin() + long(lower_median), sqnrs.end());
    const double median = sqnrs[lower_median];
    std::erase_if(candidates, [&](const TensorAccuracy* t) { return *t->sqnr_db() > median; });
  }
  std::sort(candidates.begin(), candidates.end(),
            [](const TensorAccuracy* a, const TensorAccuracy* b) { return *a->sqnr_drop_db > *b->sqnr_drop_db; });
  for (size_t i = 0; i < candidates.size() && i < max_culprits; ++i) candidates[i]->culprit = true;
}

}  // namespace octet::explain
