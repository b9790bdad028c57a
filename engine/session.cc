#include "engine/session.h"

#include <cstring>
#include <utility>

#include "loader/onnx_loader.h"

namespace octet {

Session Session::load(const std::string& path, const SessionOptions& options) {
  return Session(loader::load_onnx(path), options);
}

void Session::ThreadpoolDeleter::operator()(pthreadpool_t p) const { pthreadpool_destroy(p); }

Session::Session(ir::Graph graph, const SessionOptions& options) : graph_(std::move(graph)) {
  if (options.threads < 1) throw std::invalid_argument("threads must be at least 1, got " + std::to_string(options.threads));
  if (options.threads > 1) {
    threadpool_.reset(pthreadpool_create(static_cast<size_t>(options.threads)));
    if (!threadpool_) throw std::runtime_error("could not start " + std::to_string(options.threads) + " threads");
  }
  plan_options_.isa = options.isa.value_or(kernels::active_isa());
  if (!kernels::isa_supported(plan_options_.isa))
    throw std::invalid_argument(std::string("this CPU cannot run ") + kernels::isa_name(plan_options_.isa) + " kernels");
  plan_options_.threadpool = threadpool_.get();
  plan_options_.winograd = options.winograd;
  pass_report_ = passes::optimize(graph_, options.passes);
  for (const auto& name : graph_.inputs) {
    const ir::Value& v = graph_.value(name);
    if (!v.dims) throw ir::Error(graph_.source + ": input '" + name + "' has no declared shape");
    inputs_.push_back({name, v.dtype, *v.dims});
  }
  // Validate the whole graph once with batch 1 so that a model octet cannot run fails at
  // load, not at the first run. Not possible when integer inputs (shapes fed at run time)
  // decide the shapes: then the declared output types stand until the first run.
  bool shapes_known = true;
  for (const auto& in : inputs_) shapes_known = shapes_known && in.dtype != ir::DType::s64 && in.dtype != ir::DType::s32;
  if (!shapes_known) {
    for (const auto& name : graph_.outputs) {
      const ir::Value& v = graph_.value(name);
      outputs_.push_back({name, v.dtype, v.dims.value_or(ir::Dims{})});
    }
    return;
  }
  std::vector<ir::Dims> dims;
  for (const auto& in : inputs_) {
    ir::Dims d = in.dims;
    for (auto& e : d) if (e < 0) e = 1;
    dims.push_back(d);
  }
  const Plan& plan = plan_for(dims);
  for (const auto& name : graph_.outputs) {
    const PlanValue& pv = plan.value(name);
    ir::Dims d = pv.info.dims;
    const ir::Value& v = graph_.value(name);
    // Output extents that follow the batch are reported as unknown.
    if (v.dims && v.dims->size() == d.size())
      for (size_t i = 0; i < d.size(); ++i) if ((*v.dims)[i] < 0) d[i] = -1;
    if (!v.dims && !d.empty() && !inputs_.empty() && !inputs_[0].dims.empty() && inputs_[0].dims[0] < 0) d[0] = -1;
    outputs_.push_back({name, pv.info.dtype, d});
  }
}

Session::Session(Session&&) noexcept = default;
Session::~Session() = default;

const Plan& Session::plan_for(const std::vector<ir::Dims>& input_dims) { return plan_for(input_dims, {}); }

const Plan& Session::plan_for(const std::vector<ir::TensorData>& inputs) {
  std::vector<ir::Dims> dims;
  std::map<std::string, ir::TensorData> known;
  for (size_t i = 0; i < inputs.size(); ++i) {
    dims.push_back(inputs[i].dims);
    if (inputs[i].dtype == ir::DType::s64 || inputs[i].dtype == ir::DType::s32) known[inputs_[i].name] = inputs[i];
  }
  return plan_for(dims, known);
}

const Plan& Session::plan_for(const std::vector<ir::Dims>& input_dims,
                              const std::map<std::string, ir::TensorData>& known) {
  PlanKey key{input_dims, {}};
  for (const auto& [name, t] : known) key.second[name] = t.bytes;
  auto it = plans_.find(key);
  if (it != plans_.end()) return *it->second;
  std::map<std::string, ir::Dims> named;
  for (size_t i = 0; i < inputs_.size(); ++i) named[inputs_[i].name] = input_dims.at(i);
  if (plans_.size() >= 8) plans_.clear();  // bound memory when callers vary shapes a lot
  auto plan = std::make_unique<Plan>(graph_, named, known, plan_options_);
  return *plans_.emplace(std::move(key), std::move(plan)).first->second;
}

std::vector<ir::TensorData> Session::run(const std::vector<ir::TensorData>& inputs,
                                         std::vector<StepTiming>* timings,
                                         const ValueObserver* observer) {
  if (inputs.size() != inputs_.size())
    throw ir::Error(graph_.source + ": the model takes " + std::to_string(inputs_.size()) + " input(s), got " +
                    std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorSpec& spec = inputs_[i];
    const ir::TensorData& t = inputs[i];
    bool ok = t.dtype == spec.dtype && t.dims.size() == spec.dims.size();
    for (size_t d = 0; ok && d < t.dims.size(); ++d) ok = spec.dims[d] < 0 || spec.dims[d] == t.dims[d];
    if (!ok)
      throw ir::Error(graph_.source + ": input '" + spec.name + "' expects " + ir::dtype_name(spec.dtype) + " " +
                      ir::dims_str(spec.dims) + ", got " + ir::dtype_name(t.dtype) + " " + ir::dims_str(t.dims));
  }
  auto* plan = const_cast<Plan*>(&plan_for(inputs));
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!plan->value(inputs_[i].name).constant)
      ir::copy_bytes(plan->data(inputs_[i].name), inputs[i].bytes.data(), inputs[i].bytes.size());
  if (timings) timings->clear();
  if (observer)
    for (const auto& name : graph_.inputs) (*observer)(name, plan->value(name).info, std::as_const(*plan).data(name));
  for (const auto& step : plan->steps()) {
    if (!timings) {
      step.run();
    } else {
      auto t0 = std::chrono::steady_clock::now();
      step.run();
      auto t1 = std::chrono::steady_clock::now();
      timings->push_back({step.node, step.op, std::chrono::duration<double, std::micro>(t1 - t0).count()});
    }
    if (observer)
      for (size_t i = 0; i < step.output_names.size(); ++i)
        (*observer)(step.output_names[i], step.outputs[i], std::as_const(*plan).data(step.output_names[i]));
  }
  std::vector<ir::TensorData> out;
  for (const auto& name : graph_.outputs) {
    const PlanValue& v = plan->value(name);
    ir::TensorData t = ir::TensorData::make(v.info.dtype, v.info.dims);
    const void* src = std::as_const(*plan).data(name);
    if (same_memory(v.info.dims, v.info.layout, Layout::row_major)) ir::copy_bytes(t.bytes.data(), src, t.bytes.size());
    else relayout(v.info, src, Layout::row_major, t.bytes.data());
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace octet
