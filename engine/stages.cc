// A graph whose nodes include ops with an output shape decided by input values (NonZero,
// NonMaxSuppression, Compress, Unique: OpImpl::outputs_from_values) runs in stages: the graph is
// cut after each such node; the nodes before a cut are planned and run as a graph of their own
// (a Session on this one's threads, caching a plan per set of shapes crossing into it); then the
// cut's node runs on its inputs' contents, and what it computed crosses into the next stage.
// docs/kernels.md, Execution core, "Stages".
#include <algorithm>
#include <cctype>
#include <chrono>
#include <deque>
#include <set>

#include "engine/op_registry.h"
#include "engine/session.h"

namespace octet {
namespace {

bool cuts_here(const ir::Node& n) {
  const OpImpl* impl = n.domain.empty() ? find_op(n.op) : nullptr;
  return impl && impl->outputs_from_values;
}

// NonMaxSuppression -> non_max_suppression: the portable loop a cut runs, named for profiles.
std::string kernel_name_of(const std::string& op) {
  std::string name;
  for (char ch : op) {
    if (std::isupper(static_cast<unsigned char>(ch)) && !name.empty()) name += '_';
    name += char(std::tolower(static_cast<unsigned char>(ch)));
  }
  return name;
}

}  // namespace

std::vector<const ir::Node*> Session::stage_cuts() const {
  std::vector<const ir::Node*> cuts;
  for (const Stage& s : stages_)
    if (s.cut) cuts.push_back(s.cut);
  return cuts;
}

// Splits graph_ at its data-dependent nodes, in the file's (topological) order; false, with
// nothing changed, when it has none.
bool Session::split_into_stages() {
  if (std::none_of(graph_.nodes.begin(), graph_.nodes.end(), cuts_here)) return false;
  std::vector<std::vector<size_t>> segments(1);
  std::vector<const ir::Node*> cuts;
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    if (!cuts_here(graph_.nodes[i])) {
      segments.back().push_back(i);
      continue;
    }
    cuts.push_back(&graph_.nodes[i]);
    segments.emplace_back();
  }
  // What each point of the graph still needs: the inputs of every later node, and the outputs.
  std::vector<std::set<std::string>> needed_after(segments.size());
  std::set<std::string> needed(graph_.outputs.begin(), graph_.outputs.end());
  for (size_t s = segments.size(); s-- > 0;) {
    needed_after[s] = needed;
    for (size_t i : segments[s])
      for (const auto& in : graph_.nodes[i].inputs) needed.insert(in);
    if (s > 0)
      for (const auto& in : cuts[s - 1]->inputs) needed.insert(in);
  }
  std::set<std::string> graph_inputs(graph_.inputs.begin(), graph_.inputs.end());
  for (size_t s = 0; s < segments.size(); ++s) {
    Stage stage;
    stage.cut = s < cuts.size() ? cuts[s] : nullptr;
    // needed_after[s] counts what the cut of this stage reads, which comes after its nodes.
    if (stage.cut) needed_after[s].insert(stage.cut->inputs.begin(), stage.cut->inputs.end());
    ir::Graph& g = stage.graph;
    g.source = graph_.source;
    g.opset = graph_.opset;
    std::set<std::string> produced, inputs;
    for (size_t i : segments[s]) {
      const ir::Node& n = graph_.nodes[i];
      for (const auto& in : n.inputs) {
        if (in.empty() || produced.count(in)) continue;
        if (graph_.is_constant(in)) {
          g.values[in] = graph_.value(in);
        } else if (inputs.insert(in).second) {
          g.inputs.push_back(in);
          if (graph_inputs.count(in)) g.values[in] = graph_.value(in);
        }
      }
      for (const auto& out : n.outputs) {
        if (out.empty()) continue;
        produced.insert(out);
        if (graph_.values.count(out)) g.values[out] = graph_.value(out);
        else g.values[out].name = out;
        if (needed_after[s].count(out)) g.outputs.push_back(out);
      }
      g.nodes.push_back(n);
    }
    stages_.push_back(std::move(stage));
  }
  batch_slice_ = 0;  // the cuts' ops mix the images of a batch
  for (const auto& name : graph_.inputs) {
    const ir::Value& v = graph_.value(name);
    if (!v.dims) throw ir::Error(graph_.source + ": input '" + name + "' has no declared shape");
    inputs_.push_back({name, v.dtype, *v.dims});
    value_keyed_.push_back(false);
  }
  for (const auto& name : graph_.outputs) {
    const ir::Value& v = graph_.value(name);
    outputs_.push_back({name, v.dtype, v.dims.value_or(ir::Dims{})});
  }
  // The first stage reads only the model's inputs: planned (and checked) now, as a whole graph is.
  // Without a node (the first cut reads the inputs), it has a plan of no step for plan_for.
  Stage& first = stages_.front();
  if (first.graph.nodes.empty()) {
    first.graph.inputs = graph_.inputs;
    for (const auto& name : graph_.inputs) first.graph.values[name] = graph_.value(name);
  }
  SessionOptions options = options_;
  options.batch_slice = 0;
  first.session.reset(new Session(first.graph, options, {this, {}, true}));
  pass_report_ = first.session->pass_report();
  first.built = true;
  return true;
}

// The stage's session, built the first time its inputs are known (their dtypes and ranks come
// from the values). A value crossing a cut is planned on as an activation, keyed by its shape
// only; where the stage cannot be planned so (an op needs it as a constant: a shape, axes), the
// integer inputs, then all inputs, are keyed by their contents too, as a model's integer inputs.
Session& Session::stage_session(Stage& stage, const std::map<std::string, TensorView>& values) {
  std::lock_guard<std::mutex> lock(*mutex_);
  if (stage.built) return *stage.session;
  ir::Graph& g = stage.graph;
  std::vector<bool> integer, all(g.inputs.size(), true);
  for (const auto& name : g.inputs) {
    const TensorView& t = values.at(name);
    ir::Value& v = g.values[name];
    v.name = name;
    v.dtype = t.dtype;
    if (std::find(graph_.inputs.begin(), graph_.inputs.end(), name) == graph_.inputs.end())
      v.dims = ir::Dims(t.dims.size(), -1);
    integer.push_back(t.dtype == ir::DType::s64 || t.dtype == ir::DType::s32);
  }
  SessionOptions options = options_;
  options.batch_slice = 0;
  const std::vector<bool> none(g.inputs.size(), false);
  std::vector<ir::TensorData> inputs;
  for (const auto& name : g.inputs) {
    const TensorView& t = values.at(name);
    inputs.push_back({t.dtype, t.dims, {t.bytes.begin(), t.bytes.end()}});
  }
  const std::vector<bool>* const tries[] = {&none, &integer, &all};
  for (const std::vector<bool>* keyed : tries) {
    auto session = std::unique_ptr<Session>(new Session(g, options, {this, *keyed, false}));
    try {
      session->plan_for(inputs);
    } catch (const ir::Error&) {
      if (keyed != &all) continue;
      throw;
    }
    stage.session = std::move(session);
    break;
  }
  stage.built = true;
  return *stage.session;
}

std::string Session::cut_kernel(const ir::Node& cut) { return kernel_name_of(cut.op); }

size_t Session::plans_held() const {
  std::lock_guard<std::mutex> lock(*mutex_);
  size_t n = 0;
  for (const auto& [key, slots] : plans_) n += slots.size();
  for (const Stage& s : stages_)
    if (s.session) n += s.session->plans_held();
  return n;
}

const Plan& Session::first_stage_plan(const std::vector<ir::Dims>& input_dims, const std::vector<ir::TensorData>* values) {
  const Stage& first = stages_.front();
  std::vector<ir::Dims> dims;
  std::vector<ir::TensorData> known;
  for (const auto& name : first.graph.inputs)
    for (size_t i = 0; i < inputs_.size(); ++i)
      if (inputs_[i].name == name) {
        dims.push_back(input_dims.at(i));
        if (values) known.push_back(values->at(i));
      }
  return values ? first.session->plan_for(known) : first.session->plan_for(dims);
}

std::vector<ir::TensorData> Session::run_stages(std::span<const TensorView> inputs, std::vector<StepTiming>* timings,
                                                const ValueObserver* observer) {
  // Every value a later stage, cut or output reads: the model's inputs where the caller holds
  // them, what stages and cuts computed in `owned`.
  std::map<std::string, TensorView> values;
  std::deque<ir::TensorData> owned;
  std::map<std::string, const ir::TensorData*> computed;
  auto keep = [&](const std::string& name, ir::TensorData t) {
    const ir::TensorData& held = owned.emplace_back(std::move(t));
    values[name] = {held.dtype, held.dims, held.bytes};
    computed[name] = &held;
  };
  for (size_t i = 0; i < inputs.size(); ++i) values[inputs_[i].name] = inputs[i];
  if (timings) timings->clear();
  for (Stage& stage : stages_) {
    if (!stage.graph.nodes.empty()) {  // a first stage without nodes has a session only for plan_for
      Session& session = stage_session(stage, values);
      std::vector<TensorView> in;
      for (const auto& name : stage.graph.inputs) in.push_back(values.at(name));
      std::vector<StepTiming> stage_timings;
      std::vector<ir::TensorData> out = session.run_views(in, timings ? &stage_timings : nullptr, observer);
      for (size_t i = 0; i < out.size(); ++i) keep(stage.graph.outputs[i], std::move(out[i]));
      if (timings) timings->insert(timings->end(), stage_timings.begin(), stage_timings.end());
    }
    if (!stage.cut) continue;
    const ir::Node& n = *stage.cut;
    const OpImpl& impl = *find_op(n.op);
    std::vector<TensorInfo> infos(n.inputs.size());
    std::vector<ir::TensorData> read(n.inputs.size());  // the cut's inputs, as the op reads them
    OpContext ctx{n, graph_.opset, {}, {}};
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const ir::TensorData* t = nullptr;
      if (!n.inputs[i].empty()) {
        auto it = values.find(n.inputs[i]);
        if (auto c = computed.find(n.inputs[i]); c != computed.end()) {
          t = c->second;
        } else if (it == values.end()) {
          t = &*graph_.value(n.inputs[i]).constant;
        } else {  // a model input, read where the caller holds it: copied
          read[i] = {it->second.dtype, it->second.dims, {it->second.bytes.begin(), it->second.bytes.end()}};
          t = &read[i];
        }
        infos[i] = {t->dtype, t->dims, Layout::row_major};
      }
      ctx.in.push_back(t ? &infos[i] : nullptr);
      ctx.in_const.push_back(t);
    }
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<ir::TensorData> out;
    try {
      out = impl.outputs_from_values(ctx);
    } catch (const ir::Error& e) {
      const std::string what = e.what();
      throw ir::Error(what.rfind(graph_.source, 0) == 0 ? what : graph_.source + ": " + what);
    }
    const auto t1 = std::chrono::steady_clock::now();
    if (timings)
      timings->push_back({n.name, n.op, std::chrono::duration<double, std::micro>(t1 - t0).count(), {},
                          cut_kernel(n), 0});
    for (size_t i = 0; i < n.outputs.size() && i < out.size(); ++i) {
      if (n.outputs[i].empty()) continue;
      if (observer) (*observer)(n.outputs[i], {out[i].dtype, out[i].dims, Layout::row_major}, out[i].bytes.data());
      keep(n.outputs[i], std::move(out[i]));
    }
  }
  std::vector<ir::TensorData> result;
  for (const auto& name : graph_.outputs) {
    auto it = values.find(name);
    if (it != values.end()) result.push_back({it->second.dtype, it->second.dims, {it->second.bytes.begin(), it->second.bytes.end()}});
    else if (graph_.is_constant(name)) result.push_back(*graph_.value(name).constant);
    else throw ir::Error(graph_.source + ": output '" + name + "' is not computed");
  }
  return result;
}

}  // namespace octet
