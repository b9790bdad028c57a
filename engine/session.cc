#include "engine/session.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <utility>

#include "engine/batch_ranges.h"
#include "engine/op_registry.h"
#include "kernels/cache_budgets.h"
#include "loader/onnx_loader.h"

namespace octet {
namespace {

std::vector<TensorView> views_of(const std::vector<ir::TensorData>& tensors) {
  std::vector<TensorView> views;
  views.reserve(tensors.size());
  for (const auto& t : tensors) views.push_back({t.dtype, t.dims, t.bytes});
  return views;
}

// Shape, planning and run-time errors (an index out of range, a NaN range) name the node; the
// user also needs the file.
ir::Error in_file(const std::string& source, const ir::Error& e) {
  const std::string what = e.what();
  if (source.empty() || what.rfind(source, 0) == 0) return e;
  return ir::Error(source + ": " + what);
}

void run_step(const Kernel& kernel, const std::string& source) {
  try {
    kernel();
  } catch (const ir::Error& e) {
    throw in_file(source, e);
  }
}

// The inputs' shapes with `images` on axis 0 (a slice of a batch).
std::vector<ir::Dims> dims_of_images(std::span<const TensorView> inputs, int64_t images) {
  std::vector<ir::Dims> dims;
  for (const auto& in : inputs) {
    dims.push_back(in.dims);
    dims.back()[0] = images;
  }
  return dims;
}

// A float input that only ops planning on its values read (OpImpl::value_inputs: Resize's roi
// and scales), so that the plan can take it as a constant of the run's values.
bool read_as_value(const ir::Graph& g, const std::string& name) {
  if (g.value(name).dtype != ir::DType::f32) return false;
  bool read = false;
  for (const auto& n : g.nodes)
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (n.inputs[i] != name) continue;
      const OpImpl* impl = n.domain.empty() ? find_op(n.op) : nullptr;
      if (!impl || std::find(impl->value_inputs.begin(), impl->value_inputs.end(), i) == impl->value_inputs.end())
        return false;
      read = true;
    }
  for (const auto& out : g.outputs)
    if (out == name) return false;
  return read;
}

}  // namespace

Session Session::load(const std::string& path, const SessionOptions& options) {
  return Session(loader::load_onnx(path), options);
}

void Session::ThreadpoolDeleter::operator()(pthreadpool_t p) const { pthreadpool_destroy(p); }

Session::Session(ir::Graph graph, const SessionOptions& options) : Session(std::move(graph), options, {}) {}

Session::Session(ir::Graph graph, const SessionOptions& options, const StageSetup& stage) : graph_(std::move(graph)) {
  if (options.threads < 1) throw std::invalid_argument("threads must be at least 1, got " + std::to_string(options.threads));
  if (options.threads > 1 && !stage.parent) {
    threadpool_.reset(pthreadpool_create(static_cast<size_t>(options.threads)));
    if (!threadpool_) throw std::runtime_error("could not start " + std::to_string(options.threads) + " threads");
  }
  plan_options_.isa = options.isa.value_or(kernels::active_isa());
  if (!kernels::isa_supported(plan_options_.isa))
    throw std::invalid_argument(std::string("this CPU cannot run ") + kernels::isa_name(plan_options_.isa) + " kernels");
  plan_options_.threadpool = stage.parent ? stage.parent->plan_options_.threadpool : threadpool_.get();
  packed_cache_ = std::make_unique<kernels::PackedCache>();
  plan_options_.packed_cache = packed_cache_.get();
  plan_options_.winograd = options.winograd;
  plan_options_.views = options.views;
  if (options.batch_slice < -1) throw std::invalid_argument("batch_slice must be >= 0, or -1 for automatic");
  batch_slice_ = options.batch_slice < 0 ? 1 : options.batch_slice;
  options_ = options;
  if (!stage.parent && split_into_stages()) return;
  pass_report_ = passes::optimize(graph_, options.passes);
  for (const auto& name : graph_.inputs) {
    const ir::Value& v = graph_.value(name);
    if (!v.dims) throw ir::Error(graph_.source + ": input '" + name + "' has no declared shape");
    inputs_.push_back({name, v.dtype, *v.dims});
    const bool keyed = v.dtype == ir::DType::s64 || v.dtype == ir::DType::s32 || read_as_value(graph_, name);
    value_keyed_.push_back(stage.keyed.empty() ? keyed : bool(stage.keyed[inputs_.size() - 1]));
  }
  // Validate the whole graph once with batch 1 so that a model octet cannot run fails at
  // load, not at the first run. Not possible when input values (integer inputs: shapes fed at
  // run time; a Resize's scales) decide the shapes: then the declared output types stand until
  // the first run.
  bool shapes_known = !stage.parent || stage.shapes_declared;
  for (size_t i = 0; i < inputs_.size(); ++i) shapes_known = shapes_known && !keyed(i);
  if (!shapes_known) {
    for (const auto& name : graph_.outputs) {
      const ir::Value& v = graph_.value(name);
      outputs_.push_back({name, v.dtype, v.dims.value_or(ir::Dims{})});
    }
    return;
  }
  // Plans fix every extent; one unknown axis per input is the batch the caller fills. More
  // (a symbolic height and width) would be planned as the batch size and fail far away with a
  // confusing shape error.
  for (const auto& in : inputs_) {
    std::string unknown;
    int count = 0;
    for (size_t axis = 0; axis < in.dims.size(); ++axis)
      if (in.dims[axis] < 0) unknown += (count++ ? ", " : "") + std::to_string(axis);
    if (count > 1)
      throw ir::Error(graph_.source + ": input '" + in.name + "' has unknown extents at axes " + unknown +
                      "; octet fills one unknown axis (the batch) and needs the others fixed: export with a fixed "
                      "input size");
  }
  ShapePlans shapes;
  if (options.passes.fuse_decompositions && options.passes.fuse_group_norm)
    pass_report_.push_back({"fuse GroupNorm chains (float graphs)", fuse_group_norm(shapes)});
  if (options.passes.fuse_qdq && options.passes.fuse_decompositions && options.passes.fuse_group_norm)
    pass_report_.push_back({"fuse GroupNorm chains between DequantizeLinear and QuantizeLinear",
                            passes::fuse_qdq_group_norm(graph_, dims_at_batches(shapes))});
  if (options.passes.fuse_qdq)
    pass_report_.push_back({"fuse a bias Add between DequantizeLinear and QuantizeLinear",
                            passes::fuse_qdq_bias_add(graph_, dims_at_batches(shapes))});
  if (options.passes.drop_broadcast_expands)
    pass_report_.push_back({"read an Expand's input where its reader broadcasts it anyway", drop_broadcast_expands(shapes)});
  if (options.passes.prune_dead_taps)
    pass_report_.push_back({"crop conv taps that read only padding", prune_dead_taps(shapes)});
  if (options.passes.fuse_activations && options.passes.fuse_residual_adds)
    pass_report_.push_back({"fuse residual Add (+activation) into Conv", fuse_residual_adds(shapes)});
  if (options.passes.fuse_activations && options.passes.fuse_scalar_affine)
    pass_report_.push_back({"fuse a Mul / Add by scalars after a conv into its epilogue", passes::fuse_scalar_affine(graph_)});
  // Last: the QDQ passes above match a DequantizeLinear still fed by its QuantizeLinear.
  if (options.passes.fuse_qdq)
    pass_report_.push_back({"fuse QuantizeLinear + DequantizeLinear pairs into one pass", passes::fuse_quantize_dequantize(graph_)});
  const Plan& plan = plan_for(input_dims_at(1));
  activation_bytes_per_image_ = plan.arena_bytes();
  if (options.batch_slice < 0) batch_slice_ = automatic_batch_slice();
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

// As many images as fit their activations in half the cache one core can count on (the other
// half is the weights'), so a slice stays cache-resident. When the weights the kernels read
// (packed: Winograd's transformed 3x3 weights are 16/9 the graph's) overflow that cache, as
// many images as make a slice's activations half the weights, so the images share each pass
// over the weights: one image at a time re-reads every weight from memory per image (ResNet-18
// at 32 px: 50 MB packed, 0.75 MB of activations), while a model whose activations are the
// larger traffic (ShuffleNetV2 at 224 px) is fastest one image at a time. At most 16: beyond
// ~8 no model measured gained more. (Batch 64, 1 thread, ms per image, slice 1 -> this choice:
// MobileNetV2-0.35 at 32 px 0.057 -> 0.030 (8 images), ResNet-18 at 32 px 6.53 -> 4.63 (7);
// ResNet-18 at 224 px, 75 MB packed, 3.9 MB of activations, on Zen 5: 17.5-22.6 -> 14.4-15.1
// at 4. Batch 16 on an Intel Xeon guest, 18 MB counted: ResNet-18 18.5, 16.8, 15.6, 15.5 ms per
// image at 2, 4, 8, 16 images (a quarter of the weights chose 3, half chooses 6); ResNet-50
// best at 4-8.)
int Session::automatic_batch_slice() const {
  constexpr size_t kMaxAutoSlice = 16;
  const size_t cache = kernels::per_core_cache_bytes();
  const size_t activations = std::max<size_t>(activation_bytes_per_image_, 1);
  size_t weights = 0;
  for (const auto& [name, v] : graph_.values)
    if (v.constant) weights += v.constant->bytes.size();
  weights = std::max(weights, packed_cache_->bytes());
  size_t slice = cache / (2 * activations);
  if (weights > cache) slice = std::max(slice, weights / (2 * activations));
  return int(std::clamp<size_t>(slice, 1, kMaxAutoSlice));
}

Session::Session(Session&&) noexcept = default;
Session::~Session() = default;

const std::vector<std::unique_ptr<Plan>>& Session::shape_plans(ShapePlans& shapes) const {
  // Shapes at two batch extents, so that a shape equal at batch 1 only (an operand that does
  // not follow the batch, broadcast over it) is not taken for the same. Planned on the first
  // question only: a model without a Conv -> Add pair or a conv of several taps plans nothing.
  if (shapes.planned) return shapes.plans;
  shapes.planned = true;
  PlanOptions options = plan_options_;
  options.shapes_only = true;
  for (int64_t batch : {1, 2}) {
    const std::vector<ir::Dims> dims = input_dims_at(batch);
    std::map<std::string, ir::Dims> named;
    for (size_t i = 0; i < inputs_.size(); ++i) named[inputs_[i].name] = dims[i];
    try {
      shapes.plans.push_back(std::make_unique<Plan>(graph_, named, std::map<std::string, ir::TensorData>{}, options));
    } catch (const ir::Error&) {
      shapes.plans.clear();  // no pass changes anything; the plan at batch 1 that follows reports it, naming the file
      break;
    }
  }
  return shapes.plans;
}

int Session::fuse_residual_adds(ShapePlans& shapes) {
  return passes::fuse_residual_adds(graph_, [&](const std::string& a, const std::string& b) {
    const auto& plans = shape_plans(shapes);
    if (plans.empty()) return false;
    for (const auto& plan : plans) {
      const TensorInfo &x = plan->value(a).info, &y = plan->value(b).info;
      if (x.dtype != y.dtype || x.dims != y.dims) return false;
    }
    return true;
  });
}

int Session::prune_dead_taps(ShapePlans& shapes) {
  const passes::DimsAtBatches at_batches = dims_at_batches(shapes);
  return passes::prune_dead_taps(graph_, [&](const std::string& name) -> std::optional<ir::Dims> {
    const auto all = at_batches(name);
    if (!all) return std::nullopt;
    const ir::Dims& dims = all->front();
    for (const ir::Dims& other : *all)
      if (other.size() != dims.size() || other.empty() || !std::equal(dims.begin() + 1, dims.end(), other.begin() + 1))
        return std::nullopt;
    return dims;
  });
}

passes::DimsAtBatches Session::dims_at_batches(ShapePlans& shapes) const {
  return [this, &shapes](const std::string& name) -> std::optional<std::vector<ir::Dims>> {
    const auto& plans = shape_plans(shapes);
    if (plans.empty()) return std::nullopt;
    std::vector<ir::Dims> dims;
    for (const auto& plan : plans) {
      if (!plan->values().count(name)) return std::nullopt;
      dims.push_back(plan->value(name).info.dims);
    }
    return dims;
  };
}

int Session::drop_broadcast_expands(ShapePlans& shapes) {
  return passes::drop_broadcast_expands(graph_, dims_at_batches(shapes));
}

int Session::fuse_group_norm(ShapePlans& shapes) { return passes::fuse_group_norm(graph_, dims_at_batches(shapes)); }

std::vector<ir::Dims> Session::input_dims_at(int64_t batch) const {
  std::vector<ir::Dims> dims;
  for (const auto& in : inputs_) {
    ir::Dims d = in.dims;
    for (auto& e : d) if (e < 0) e = batch;
    dims.push_back(d);
  }
  return dims;
}

const Plan& Session::plan_for(const std::vector<ir::Dims>& input_dims) {
  if (!stages_.empty()) return first_stage_plan(input_dims);
  return plan_for(input_dims, {});
}

Session::PlanInputs Session::plan_inputs(std::span<const TensorView> inputs) const {
  PlanInputs p;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorView& in = inputs[i];
    p.dims.push_back(in.dims);
    if (keyed(i))
      p.known[inputs_[i].name] = ir::TensorData{in.dtype, in.dims, {in.bytes.begin(), in.bytes.end()}};
  }
  return p;
}

const Plan& Session::plan_for(const std::vector<ir::TensorData>& inputs) {
  if (!stages_.empty()) {
    std::vector<ir::Dims> dims;
    for (const auto& t : inputs) dims.push_back(t.dims);
    return first_stage_plan(dims, &inputs);
  }
  const PlanInputs p = plan_inputs(views_of(inputs));
  return plan_for(p.dims, p.known);
}

Session::PlanSlot& Session::slot_for(const std::vector<ir::Dims>& input_dims,
                                    const std::map<std::string, ir::TensorData>& known, bool idle, bool one_thread) {
  PlanKey key{input_dims, {}, one_thread};
  for (const auto& [name, t] : known) std::get<1>(key)[name] = t.bytes;
  auto& slots = plans_[key];
  for (auto& slot : slots)
    if (!idle || !slot->busy) {
      slot->last_use = ++clock_;
      return *slot;
    }
  std::map<std::string, ir::Dims> named;
  for (size_t i = 0; i < inputs_.size(); ++i) named[inputs_[i].name] = input_dims.at(i);
  auto slot = std::make_unique<PlanSlot>();
  try {
    PlanOptions options = plan_options_;
    if (one_thread) options.threadpool = nullptr;
    slot->plan = std::make_unique<Plan>(graph_, named, known, options);
  } catch (const ir::Error& e) {
    if (slots.empty()) plans_.erase(key);
    throw in_file(graph_.source, e);
  }
  slot->last_use = ++clock_;
  PlanSlot& added = *slots.emplace_back(std::move(slot));
  evict_idle_plans(added);
  return added;
}

void Session::evict_idle_plans(const PlanSlot& keep) {
  size_t total = 0;
  for (const auto& [key, slots] : plans_)
    for (const auto& slot : slots) total += slot->plan->arena_bytes();
  while (total > kPlanCacheBytes) {
    std::vector<std::unique_ptr<PlanSlot>>* oldest_list = nullptr;
    size_t oldest = 0;
    for (auto& [key, slots] : plans_)
      for (size_t i = 0; i < slots.size(); ++i)
        if (!slots[i]->busy && slots[i].get() != &keep &&
            (!oldest_list || slots[i]->last_use < (*oldest_list)[oldest]->last_use)) {
          oldest_list = &slots;
          oldest = i;
        }
    if (!oldest_list) return;  // every other plan is in use
    total -= (*oldest_list)[oldest]->plan->arena_bytes();
    oldest_list->erase(oldest_list->begin() + std::ptrdiff_t(oldest));
  }
  std::erase_if(plans_, [](const auto& entry) { return entry.second.empty(); });
}

const Plan& Session::plan_for(const std::vector<ir::Dims>& input_dims,
                              const std::map<std::string, ir::TensorData>& known) {
  std::lock_guard<std::mutex> lock(*mutex_);
  return *slot_for(input_dims, known, false).plan;
}

Session::PlanLease Session::lease_plan(const std::vector<ir::Dims>& input_dims,
                                       const std::map<std::string, ir::TensorData>& known, bool one_thread) {
  std::lock_guard<std::mutex> lock(*mutex_);
  PlanSlot& slot = slot_for(input_dims, known, true, one_thread);
  slot.busy = true;
  return PlanLease(*this, slot);
}

Session::PlanLease::~PlanLease() {
  if (!slot_) return;
  std::lock_guard<std::mutex> lock(*session_->mutex_);
  slot_->busy = false;
}

std::vector<StepPart>*& step_parts::sink() {
  thread_local std::vector<StepPart>* parts = nullptr;
  return parts;
}

std::vector<ir::TensorData> Session::run(const std::vector<ir::TensorData>& inputs,
                                         std::vector<StepTiming>* timings,
                                         const ValueObserver* observer) {
  return run_views(views_of(inputs), timings, observer);
}

int Session::warm_up_runs() const { return threadpool_ ? 1 + 2 * Plan::kThreadTuningRuns : 1; }

void Session::warm_up(const std::vector<ir::TensorData>& inputs) {
  for (int r = 0, runs = warm_up_runs(); r < runs; ++r) run(inputs);
}

std::vector<ir::TensorData> Session::run_views(std::span<const TensorView> inputs, std::vector<StepTiming>* timings,
                                               const ValueObserver* observer) {
  if (inputs.size() != inputs_.size())
    throw ir::Error(graph_.source + ": the model takes " + std::to_string(inputs_.size()) + " input(s), got " +
                    std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorSpec& spec = inputs_[i];
    const TensorView& t = inputs[i];
    bool ok = t.dtype == spec.dtype && t.dims.size() == spec.dims.size();
    for (size_t d = 0; ok && d < t.dims.size(); ++d) ok = spec.dims[d] < 0 || spec.dims[d] == t.dims[d];
    if (!ok)
      throw ir::Error(graph_.source + ": input '" + spec.name + "' expects " + ir::dtype_name(spec.dtype) + " " +
                      ir::dims_str(spec.dims) + ", got " + ir::dtype_name(t.dtype) + " " + ir::dims_str(t.dims));
    if (t.bytes.size() != size_t(ir::element_count(t.dims)) * ir::dtype_size(t.dtype))
      throw ir::Error(graph_.source + ": input '" + spec.name + "' holds " + std::to_string(t.bytes.size()) +
                      " bytes, " + ir::dtype_name(t.dtype) + " " + ir::dims_str(t.dims) + " needs " +
                      std::to_string(size_t(ir::element_count(t.dims)) * ir::dtype_size(t.dtype)));
  }
  if (!stages_.empty()) return run_stages(inputs, timings, observer);
  if (!timings && !observer && batch_slice_ > 0 && !inputs.empty() && !inputs[0].dims.empty()) {
    const int64_t batch = inputs[0].dims[0];
    const bool shared_out = batch >= 2 && image_threads() > 1;
    bool batched = batch > batch_slice_ || shared_out;
    for (size_t i = 0; batched && i < inputs.size(); ++i)
      batched = !inputs_[i].dims.empty() && inputs_[i].dims[0] < 0 && !inputs[i].dims.empty() &&
                inputs[i].dims[0] == batch && !keyed(i);
    const ImageSplit split = batched ? image_split() : ImageSplit::none;
    if (split != ImageSplit::none && shared_out)
      return run_images_in_parallel(inputs, batch, split == ImageSplit::lockstep);
    if (split == ImageSplit::independent) return run_in_slices(inputs, batch);
  }
  const PlanInputs key = plan_inputs(inputs);
  const PlanLease plan = lease_plan(key.dims, key.known);
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!plan->value(inputs_[i].name).constant)
      ir::copy_bytes(plan->data(inputs_[i].name), inputs[i].bytes.data(), inputs[i].bytes.size());
  if (timings) timings->clear();
  if (observer)
    for (const auto& name : graph_.inputs) (*observer)(name, plan->value(name).info, std::as_const(*plan).data(name));
  plan->run_steps([&](const PlanStep& step, const Kernel& kernel) {
    if (!timings) {
      run_step(kernel, graph_.source);
    } else {
      std::vector<StepPart> parts;
      step_parts::sink() = &parts;
      auto t0 = std::chrono::steady_clock::now();
      try {
        run_step(kernel, graph_.source);
      } catch (...) {
        step_parts::sink() = nullptr;
        throw;
      }
      auto t1 = std::chrono::steady_clock::now();
      step_parts::sink() = nullptr;
      timings->push_back({step.node, step.op, std::chrono::duration<double, std::micro>(t1 - t0).count(), std::move(parts),
                          step.kernel, step.macs});
    }
    if (observer)
      for (size_t i = 0; i < step.output_names.size(); ++i) {
        const std::string& name = step.output_names[i];
        if (plan->value(name).row_stride == 0) {
          (*observer)(name, step.outputs[i], std::as_const(*plan).data(name));
          continue;
        }
        std::vector<std::byte> dense(step.outputs[i].bytes());  // a Concat input in its place: gathered
        plan->copy_dense(name, dense.data());
        (*observer)(name, step.outputs[i], dense.data());
      }
  });
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

int Session::image_threads() {
  const int threads = threadpool_ ? int(pthreadpool_get_threads_count(threadpool_.get())) : 1;
  return threads > 1 && batch_slice_ > 0 && image_split() != ImageSplit::none ? threads : 1;
}

bool Session::shares_batches_in_lockstep() { return image_threads() > 1 && image_split() == ImageSplit::lockstep; }

Session::ImageSplit Session::image_split() {
  std::lock_guard<std::mutex> lock(*mutex_);
  return image_split_locked();
}

namespace {

// Whether image i of each output depends only on image i of the inputs, at any batch, judged
// from a plan for `images` images whose inputs all carry them on axis 0: every step keeps them
// apart (its op says so, OpImpl::batch_use) and on axis 0, and every output is computed from
// them. Each op judges the batch at any extent, not only this plan's: a Reshape to a literal
// [1, -1] keeps axis 0 at 1 when planned for one image, but mixes the images of any larger
// batch, so it answers from the other extent too (AtOtherBatch).
// Lockstep: so they are, but for steps whose outputs without images are ranges over the batch
// ([min, max]) or scalars computed from one (DynamicQuantizeLinear's scale and zero point);
// a step reading such a scalar says so too (BatchUse::apart_but_batch_range).
Session::ImageSplit image_split_of(const Plan& plan, const std::vector<std::string>& outputs, int64_t images) {
  bool lockstep = false;
  for (const auto& step : plan.steps()) {
    if (step.batch_use == BatchUse::mixes_images) return Session::ImageSplit::none;
    const bool ranges = step.batch_use == BatchUse::apart_but_batch_range;
    lockstep = lockstep || ranges;
    for (const auto& out : step.outputs) {
      if (!out.dims.empty() && out.dims[0] == images) continue;
      const bool range_or_scalar = out.dims.empty() || out.dims == ir::Dims{2};
      if (!ranges || !range_or_scalar) return Session::ImageSplit::none;
    }
  }
  for (const auto& name : outputs) {
    const PlanValue& v = plan.value(name);
    if (v.constant || v.info.dims.empty() || v.info.dims[0] != images) return Session::ImageSplit::none;
  }
  return lockstep ? Session::ImageSplit::lockstep : Session::ImageSplit::independent;
}

}  // namespace

// Decided once per session, from the plan the slices run on.
Session::ImageSplit Session::image_split_locked() {
  if (image_split_) return *image_split_;
  bool batched = batch_slice_ > 0 && !inputs_.empty();
  for (size_t i = 0; i < inputs_.size(); ++i)
    batched = batched && !inputs_[i].dims.empty() && inputs_[i].dims[0] < 0 && !keyed(i);
  ImageSplit split = ImageSplit::none;
  if (batched) {
    try {
      const Plan& slice = *slot_for(input_dims_at(batch_slice_), {}, false).plan;
      split = image_split_of(slice, graph_.outputs, batch_slice_);
    } catch (const ir::Error&) {
      // No plan at the slice's size (e.g. a literal shape that fits only the whole batch).
    }
  }
  image_split_ = split;
  return split;
}

std::vector<ir::TensorData> Session::batch_outputs(const Plan& slice_plan, int64_t batch) const {
  std::vector<ir::TensorData> out;
  for (const auto& name : graph_.outputs) {
    ir::Dims d = slice_plan.value(name).info.dims;
    d[0] = batch;
    out.push_back(ir::TensorData::make(slice_plan.value(name).info.dtype, d));
  }
  return out;
}

void Session::run_slice(Plan& plan, std::span<const TensorView> inputs, int64_t batch, int64_t first, int64_t n,
                        std::vector<ir::TensorData>& out) const {
  for (size_t i = 0; i < inputs.size(); ++i) {
    const size_t row = inputs[i].bytes.size() / size_t(batch);
    ir::copy_bytes(plan.data(inputs_[i].name), inputs[i].bytes.data() + size_t(first) * row, size_t(n) * row);
  }
  plan.run_steps([&](const PlanStep&, const Kernel& kernel) { run_step(kernel, graph_.source); });
  for (size_t o = 0; o < graph_.outputs.size(); ++o) {
    const PlanValue& v = plan.value(graph_.outputs[o]);
    const size_t bytes = v.info.bytes();
    std::byte* dst = out[o].bytes.data() + size_t(first) * (bytes / size_t(n));
    const void* src = std::as_const(plan).data(graph_.outputs[o]);
    if (same_memory(v.info.dims, v.info.layout, Layout::row_major)) ir::copy_bytes(dst, src, bytes);
    else relayout(v.info, src, Layout::row_major, dst);
  }
}

std::vector<ir::TensorData> Session::run_in_slices(std::span<const TensorView> inputs, int64_t batch) {
  // One plan for the full slices, looked up once; another for a shorter last slice.
  auto plan_of = [&](int64_t images) { return lease_plan(dims_of_images(inputs, images), {}); };
  const PlanLease full = plan_of(std::min<int64_t>(batch_slice_, batch));
  std::optional<PlanLease> last;
  std::vector<ir::TensorData> out = batch_outputs(*full, batch);
  for (int64_t first = 0; first < batch; first += batch_slice_) {
    const int64_t n = std::min<int64_t>(batch_slice_, batch - first);
    if (n != batch_slice_) last.emplace(plan_of(n));
    run_slice(n == batch_slice_ ? *full : **last, inputs, batch, first, n, out);
  }
  return out;
}

namespace {

// One thread's share of an image-parallel run: images [first, first + count) in slices of
// `slice`, through `full` and, for a shorter last slice, `last`.
struct ImageShare {
  int64_t first = 0, count = 0, slice = 0;
  Plan* full = nullptr;
  Plan* last = nullptr;
  std::exception_ptr error;
};

}  // namespace

// The batch shared out over the pool's threads, each running its images through a plan of its
// own whose kernels stay on that thread: no step waits for the other threads, where splitting
// each step does after every one (a fork-join of the pool and, for the next step, half its
// input in the other core's cache), which small steps cannot repay. The threads' plans share
// the packed weights; each holds its own activations.
// In lockstep each share's plan waits at each DynamicQuantizeLinear for the others' (every
// plan has the same steps): it cannot deadlock, since pthreadpool hands each thread its own
// share first and a thread takes another's share only once its own has finished, which needs
// every share to have started.
std::vector<ir::TensorData> Session::run_images_in_parallel(std::span<const TensorView> inputs, int64_t batch,
                                                            bool lockstep) {
  const int64_t threads = int64_t(pthreadpool_get_threads_count(threadpool_.get()));
  const int64_t parts = std::min(threads, batch);
  // Every plan is leased here, before the threads start: planning takes the session's lock,
  // and the outputs are allocated after the first.
  std::vector<ImageShare> shares(static_cast<size_t>(parts));
  std::vector<PlanLease> leases;
  leases.reserve(2 * shares.size());
  int64_t first = 0;
  for (int64_t p = 0; p < parts; ++p) {
    ImageShare& share = shares[size_t(p)];
    share.first = first;
    share.count = batch / parts + (p < batch % parts ? 1 : 0);
    share.slice = lockstep ? share.count : std::min<int64_t>(batch_slice_, share.count);
    first += share.count;
    share.full = &*leases.emplace_back(lease_plan(dims_of_images(inputs, share.slice), {}, true));
    if (share.count % share.slice != 0)
      share.last = &*leases.emplace_back(lease_plan(dims_of_images(inputs, share.count % share.slice), {}, true));
  }
  std::vector<ir::TensorData> out = batch_outputs(*shares[0].full, batch);
  std::optional<BatchRangeExchange> exchange;
  if (lockstep) exchange.emplace(int(parts));
  struct Context {
    const Session* session;
    std::span<const TensorView> inputs;
    int64_t batch;
    std::vector<ImageShare>* shares;
    std::vector<ir::TensorData>* out;
    BatchRangeExchange* exchange;
  } context{this, inputs, batch, &shares, &out, exchange ? &*exchange : nullptr};
  auto run_share = [](void* raw, size_t p) {
    auto& c = *static_cast<Context*>(raw);
    ImageShare& share = (*c.shares)[p];
    batch_ranges::current() = c.exchange;
    try {
      for (int64_t done = 0; done < share.count; done += share.slice) {
        const int64_t n = std::min(share.slice, share.count - done);
        c.session->run_slice(n == share.slice ? *share.full : *share.last, c.inputs, c.batch, share.first + done, n,
                             *c.out);
      }
    } catch (const BatchRangeExchange::Abandoned&) {
      // Another share failed: its error is the one rethrown.
    } catch (...) {
      share.error = std::current_exception();
      if (c.exchange) c.exchange->abandon();
    }
    batch_ranges::current() = nullptr;
  };
  pthreadpool_parallelize_1d(threadpool_.get(), run_share, &context, size_t(parts), 0);
  for (const ImageShare& share : shares)
    if (share.error) std::rethrow_exception(share.error);
  return out;
}

}  // namespace octet
