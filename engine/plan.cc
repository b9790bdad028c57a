#include "engine/plan.h"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <set>
#include <utility>

#include "engine/out_of_memory.h"

namespace octet {
namespace {

constexpr size_t kAlign = 64;

size_t align_up_to(size_t n, size_t a) { return (n + a - 1) / a * a; }
size_t align_up(size_t n) { return align_up_to(n, kAlign); }
constexpr size_t kHugePage = size_t{2} << 20;  // x86-64's transparent huge page

// No tensor of a plan may reach this (1 TiB): far beyond any machine octet runs on, and small
// enough that sizes, offsets and the arena's sum cannot overflow.
constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 40;

// A value's size in bytes, checked: its element count and byte size fit, and stay below
// kMaxTensorBytes; otherwise an error naming `what`.
void check_tensor_size(const std::string& what, const TensorInfo& info) {
  int64_t count = 0;
  try {
    count = info.count();
  } catch (const ir::Error& e) {
    throw ir::Error(what + ": " + e.what());
  }
  uint64_t bytes = 0;
  const bool overflow = __builtin_mul_overflow(uint64_t(count), uint64_t(ir::dtype_size(info.dtype)), &bytes);
  if (overflow || bytes >= kMaxTensorBytes)
    throw ir::Error(what + " " + ir::dims_str(info.dims) + " would take 1 TiB or more: more than octet allows for "
                    "one tensor");
}

}  // namespace

Plan::Plan(const ir::Graph& graph, const std::map<std::string, ir::Dims>& input_dims,
           const std::map<std::string, ir::TensorData>& known_inputs, const PlanOptions& options)
    : graph_(graph), options_(options) {
  for (const auto& [name, v] : graph.values) {
    if (!v.constant) continue;
    PlanValue pv;
    pv.info = {v.constant->dtype, v.constant->dims, Layout::row_major};
    pv.constant = pv.at_other_batch = &*v.constant;
    values_[name] = pv;
  }
  for (const auto& name : graph.inputs) {
    auto it = input_dims.find(name);
    if (it == input_dims.end()) throw ir::Error(graph.source + ": no shape given for input '" + name + "'");
    PlanValue pv;
    pv.info = {graph.value(name).dtype, it->second, Layout::row_major};
    check_tensor_size(graph.source + ": input '" + name + "'", pv.info);
    if (auto known = known_inputs.find(name); known != known_inputs.end())
      pv.constant = pv.at_other_batch = own(known->second);
    values_[name] = pv;
  }
  for (const auto& n : graph.nodes) add_node(n);
  for (const auto& out : graph.outputs) {
    auto it = values_.find(out);
    if (it == values_.end()) throw ir::Error(graph.source + ": output '" + out + "' is not computed");
    it->second.last_use = std::numeric_limits<int>::max();
  }
  if (options.shapes_only) return;
  choose_views();
  place_in_arena();
  build_kernels();
}

const ir::TensorData* Plan::own(ir::TensorData t) {
  owned_.push_back(std::move(t));
  return &owned_.back();
}

OpContext Plan::context(const ir::Node& n, const std::vector<std::string>& inputs,
                        const std::vector<TensorInfo>& infos) const {
  OpContext ctx{n, graph_.opset, {}, {}};
  for (size_t i = 0; i < inputs.size(); ++i) {
    ctx.in.push_back(inputs[i].empty() ? nullptr : &infos[i]);
    ctx.in_const.push_back(inputs[i].empty() ? nullptr : values_.at(inputs[i]).constant);
    ctx.in_const_at_other_batch.push_back(inputs[i].empty() ? nullptr : values_.at(inputs[i]).at_other_batch);
  }
  return ctx;
}

// Returns the name of a value holding `name` in layout `want`, adding a relayout step
// (or, for a constant, a relayouted copy) when the memory order differs.
std::string Plan::ensure_layout(const std::string& name, Layout want) {
  PlanValue& v = values_.at(name);
  if (same_memory(v.info.dims, v.info.layout, want)) return name;
  std::string alias = name + "@" + layout_name(want);
  if (values_.count(alias)) return alias;
  PlanValue out;
  out.info = v.info;
  out.info.layout = want;
  if (v.constant) {
    ir::TensorData t = ir::TensorData::make(v.info.dtype, v.info.dims);
    relayout(v.info, v.constant->bytes.data(), want, t.bytes.data());
    out.constant = own(std::move(t));
    // Relayouted at this batch only: unknown at the other one unless it does not follow the batch.
    if (v.at_other_batch == v.constant) out.at_other_batch = out.constant;
  } else {
    out.producer = int(pending_.size());
    v.last_use = int(pending_.size());
    pending_.push_back({nullptr, {name}, {v.info}, {alias}, ""});
  }
  values_[alias] = out;
  return alias;
}

void Plan::share_layout(std::vector<std::string>& names, std::vector<TensorInfo>& infos) {
  size_t rank = 0;
  for (size_t i = 0; i < names.size(); ++i)
    if (!names[i].empty() && !values_.at(names[i]).constant) rank = std::max(rank, infos[i].dims.size());
  if (rank < 3) return;
  std::vector<size_t> tensors;
  for (size_t i = 0; i < names.size(); ++i)
    if (!names[i].empty() && !values_.at(names[i]).constant && infos[i].dims.size() == rank) tensors.push_back(i);
  if (tensors.size() < 2) return;
  size_t largest = tensors[0];
  for (size_t i : tensors) {
    const int64_t a = infos[i].count(), b = infos[largest].count();
    if (a > b || (a == b && infos[i].layout == Layout::channels_last)) largest = i;
  }
  const Layout target = infos[largest].layout;
  for (size_t i : tensors) {
    if (same_memory(infos[i].dims, infos[i].layout, target)) continue;
    names[i] = ensure_layout(names[i], target);
    infos[i] = values_.at(names[i]).info;
    infos[i].layout = target;
  }
}

void Plan::add_node(const ir::Node& n) {
  const OpImpl* impl = find_op(n.op);
  if (!impl) throw ir::Error(graph_.source + ": " + ir::Graph::describe(n) + ": no implementation");
  const OpContext probe{n, graph_.opset, {}, {}};
  bool all_const = true;
  for (const auto& in : n.inputs)
    if (!in.empty() && !values_.at(in).constant) all_const = false;
  all_const = all_const || impl->shape_only;

  std::vector<std::string> names;
  std::vector<TensorInfo> infos;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    std::string name = n.inputs[i];
    if (!name.empty() && !all_const) {
      if (auto want = impl->want_layout(probe, i)) {
        name = ensure_layout(name, *want);
        infos.push_back(values_.at(name).info);
        infos.back().layout = *want;  // same memory, possibly a different name for it
        names.push_back(name);
        continue;
      }
    }
    names.push_back(name);
    infos.push_back(name.empty() ? TensorInfo{} : values_.at(name).info);
  }
  if (impl->inputs_share_layout && !all_const) share_layout(names, infos);
  OpContext ctx = context(n, names, infos);
  std::vector<TensorInfo> outs = impl->infer(ctx);
  for (size_t i = 0; i < n.outputs.size() && i < outs.size(); ++i)
    if (!n.outputs[i].empty())
      check_tensor_size(graph_.source + ": " + ir::Graph::describe(n) + ", output '" + n.outputs[i] + "'", outs[i]);
  if (outs.size() < n.outputs.size()) {
    size_t used = 0;
    for (const auto& o : n.outputs) used += !o.empty();
    if (used > outs.size()) ctx.fail("produces fewer outputs than the graph uses");
  }
  if (all_const) {
    fold(n, *impl, ctx, outs);
    return;
  }
  const int step = int(pending_.size());
  for (const auto& name : names)
    if (!name.empty() && !values_.at(name).constant) values_.at(name).last_use = step;
  std::vector<std::string> out_names;
  for (size_t i = 0; i < n.outputs.size() && i < outs.size(); ++i) {
    out_names.push_back(n.outputs[i]);
    if (n.outputs[i].empty()) continue;
    PlanValue pv;
    pv.info = outs[i];
    pv.producer = pv.last_use = step;
    values_[n.outputs[i]] = pv;
  }
  std::string scratch;
  if (impl->scratch_bytes) {
    ctx.isa = options_.isa;
    ctx.threadpool = options_.threadpool;
    if (const size_t bytes = impl->scratch_bytes(ctx, outs)) {
      scratch = n.name + "@scratch";
      while (values_.count(scratch)) scratch += "'";
      PlanValue pv;
      pv.info = {ir::DType::u8, {int64_t(bytes)}, Layout::row_major};
      check_tensor_size(graph_.source + ": " + ir::Graph::describe(n) + ", its scratch", pv.info);
      pv.producer = pv.last_use = step;
      values_[scratch] = pv;
    }
  }
  pending_.push_back({&n, names, infos, out_names, scratch});
}

// Runs a node whose inputs are all known now and keeps its outputs as constants.
void Plan::fold(const ir::Node& n, const OpImpl& impl, OpContext& ctx, const std::vector<TensorInfo>& outs) {
  std::vector<const void*> in_ptrs;
  for (const auto& in : n.inputs) {
    const ir::TensorData* c = in.empty() ? nullptr : values_.at(in).constant;
    in_ptrs.push_back(c ? c->bytes.data() : nullptr);  // Shape reads no data
  }
  std::vector<ir::TensorData> results = evaluate_now(impl, ctx, outs, in_ptrs);
  // Shape arithmetic is also done at the other batch extent (op_registry.h, other_batch), so
  // that ops can tell which constants follow the batch.
  bool follows_batch = false;
  for (size_t i = 0; i < ctx.in.size(); ++i)
    follows_batch = follows_batch || (ctx.in[i] && !ctx.in_const[i]) || ctx.follows_batch(i);
  std::vector<ir::TensorData> there;
  if (follows_batch) there = fold_at_other_batch(impl, ctx);
  for (size_t i = 0; i < n.outputs.size() && i < outs.size(); ++i) {
    if (n.outputs[i].empty()) continue;
    PlanValue pv;
    const bool same_there = !follows_batch || (i < there.size() && there[i].dtype == results[i].dtype &&
                                               there[i].dims == results[i].dims && there[i].bytes == results[i].bytes);
    pv.constant = own(std::move(results[i]));
    pv.info = {pv.constant->dtype, pv.constant->dims, Layout::row_major};
    if (same_there) pv.at_other_batch = pv.constant;
    else if (i < there.size()) pv.at_other_batch = own(std::move(there[i]));
    values_[n.outputs[i]] = pv;
  }
}

// The outputs of a folded step had the batch been other_batch(); empty when they cannot be
// computed there (a shape that only works at the planned batch).
std::vector<ir::TensorData> Plan::fold_at_other_batch(const OpImpl& impl, const OpContext& ctx) const {
  const AtOtherBatch other(ctx);
  if (!other.known()) return {};
  std::vector<const void*> in;
  for (const ir::TensorData* t : other.context().in_const) in.push_back(t ? t->bytes.data() : nullptr);
  try {
    return evaluate_now(impl, other.context(), impl.infer(other.context()), in);
  } catch (const std::exception&) {
    return {};
  }
}

// First-fit placement, largest tensors first: two tensors may share memory when their
// lifetimes [producer, last_use] do not overlap.
void Plan::place_in_arena() {
  // What is placed is a value with memory of its own, live from the first producer to the last
  // reader of it and of every view into it.
  struct Block {
    PlanValue* owner;
    int first, last;
    size_t size;
  };
  std::map<std::string, Block> blocks;
  for (auto& [name, v] : values_)
    if (!v.constant && v.view_of.empty())
      blocks.emplace(name, Block{&v, v.producer, v.last_use, align_up(std::max<size_t>(v.info.bytes(), 1))});
  for (auto& [name, v] : values_)
    if (!v.constant && !v.view_of.empty()) {
      Block& b = blocks.at(v.view_of);
      b.first = std::min(b.first, v.producer);
      b.last = std::max(b.last, v.last_use);
    }
  std::vector<Block*> live;
  for (auto& [name, b] : blocks) live.push_back(&b);
  std::stable_sort(live.begin(), live.end(), [](const Block* a, const Block* b) { return a->size > b->size; });
  std::vector<Block*> placed;
  for (Block* v : live) {
    std::vector<std::pair<size_t, size_t>> busy;
    for (const Block* p : placed)
      if (!(p->last < v->first || v->last < p->first)) busy.emplace_back(p->owner->offset, p->owner->offset + p->size);
    std::sort(busy.begin(), busy.end());
    size_t offset = 0;
    for (const auto& [b, e] : busy) {
      if (offset + v->size <= b) break;
      offset = std::max(offset, e);
    }
    v->owner->offset = offset;
    arena_bytes_ = std::max(arena_bytes_, offset + v->size);
    placed.push_back(v);
  }
  for (auto& [name, v] : values_)
    if (!v.constant && !v.view_of.empty()) v.offset = values_.at(v.view_of).offset + v.view_offset;
  // A large arena (a big batch) is aligned to 2 MiB and asks for transparent huge pages before
  // it is first touched: its tensors are megabytes, read back from L3 or DRAM step after step,
  // and 4 KiB pages would cost a TLB miss every 4 KiB and a page fault each on first use.
  const bool huge = arena_bytes_ >= kHugePage;
  const size_t alignment = huge ? kHugePage : kAlign;
  const size_t bytes = std::max<size_t>(align_up_to(arena_bytes_, alignment), alignment);
  try {
    if (arena_bytes_ >= kMaxTensorBytes) throw std::bad_alloc();
    ir::reserve_or_throw(bytes);
    arena_storage_.reset(static_cast<std::byte*>(std::aligned_alloc(alignment, bytes)));
    if (!arena_storage_) throw std::bad_alloc();
  } catch (const std::bad_alloc&) {
    throw OutOfMemoryError(graph_.source + ": the activations of this plan need " + std::to_string(arena_bytes_ >> 20) +
                    " MiB, which this machine cannot allocate (a smaller --batch, or smaller inputs, may fit)");
  }
  if (huge) madvise(arena_storage_.get(), bytes, MADV_HUGEPAGE);  // advice only: no huge pages is fine
  std::memset(arena_storage_.get(), 0, bytes);
  arena_ = arena_storage_.get();
}

void Plan::FreeBytes::operator()(std::byte* p) const { std::free(p); }

Kernel Plan::build_kernel(const Pending& p, pthreadpool_t pool, PlanStep& step) {
  std::vector<const void*> in;
  for (const auto& name : p.inputs) in.push_back(name.empty() ? nullptr : std::as_const(*this).data(name));
  std::vector<void*> out;
  for (const auto& name : p.outputs) out.push_back(name.empty() ? nullptr : data(name));
  if (!p.node) {
    const TensorInfo src = p.input_infos[0];
    const Layout want = values_.at(p.outputs[0]).info.layout;
    step.node = "relayout " + p.inputs[0];
    step.op = std::string("Relayout to ") + layout_name(want);
    step.outputs = {values_.at(p.outputs[0]).info};
    step.output_names = {p.outputs[0]};
    const void* s = in[0];
    void* d = out[0];
    auto copy = std::make_shared<const kernels::StridedCopy>(relayout_copy(src, want));
    const kernels::KernelId kernel = "relayout_" + copy->kernel_id();
    step.kernel = kernel.name;
    step.kernel_scalar = kernel.scalar;
    return [copy, s, d, pool] { copy->run(s, d, pool); };
  }
  const OpImpl* impl = find_op(p.node->op);
  OpContext ctx = context(*p.node, p.inputs, p.input_infos);
  ctx.isa = options_.isa;
  ctx.threadpool = pool;
  ctx.winograd = options_.winograd;
  ctx.model_weight_bytes = constant_bytes_;
  ctx.packed_cache = options_.packed_cache;
  ctx.kernel_name = &step.kernel;
  ctx.kernel_scalar = &step.kernel_scalar;
  ctx.fallback = &step.fallback;
  if (!p.outputs.empty() && !p.outputs[0].empty()) ctx.out_row_stride = values_.at(p.outputs[0]).row_stride;
  for (const auto& name : p.inputs) ctx.in_row_stride.push_back(name.empty() ? 0 : values_.at(name).row_stride);
  if (!p.scratch.empty()) {
    ctx.scratch = data(p.scratch);
    ctx.scratch_size = values_.at(p.scratch).info.bytes();
  }
  step.node = p.node->name;
  step.op = p.node->op;
  step.outputs.clear();
  step.output_names.clear();
  for (const auto& o : p.outputs) {
    if (o.empty()) continue;
    step.outputs.push_back(values_.at(o).info);
    step.output_names.push_back(o);
  }
  step.macs = impl->macs ? impl->macs(ctx, step.outputs) : 0;
  step.batch_use = batch_use_of(*impl, ctx, step.outputs);
  return impl->build(ctx, in, out);
}

void Plan::build_kernels() {
  std::set<std::string> weights;
  for (const Pending& p : pending_)
    for (const auto& name : p.inputs)
      if (!name.empty() && values_.at(name).constant && weights.insert(name).second)
        constant_bytes_ += values_.at(name).constant->bytes.size();
  for (const Pending& p : pending_) {
    PlanStep step;
    step.run = build_kernel(p, options_.threadpool, step);
    step.threads = options_.threadpool ? int(pthreadpool_get_threads_count(options_.threadpool)) : 1;
    steps_.push_back(std::move(step));
  }
}

void Plan::run_steps(const StepRunner& run) {
  if (thread_tuning_ == ThreadTuning::done || !options_.threadpool || steps_.empty()) {
    for (const PlanStep& step : steps_) run(step, step.run);
    return;
  }
  const int round = tuning_round_++;
  if (round == 0) {  // a first run warms the caches and the weights' pages; not timed
    for (const PlanStep& step : steps_) run(step, step.run);
    return;
  }
  if (on_caller_.empty()) {
    for (size_t i = 0; i < steps_.size(); ++i) {
      PlanStep scratch_step;  // the step's fields are the same; only the kernel differs
      on_caller_.push_back(build_kernel(pending_[i], nullptr, scratch_step));
    }
    step_us_.assign(steps_.size(), {});
  }
  const bool alone = round % 2 == 0;
  for (size_t i = 0; i < steps_.size(); ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    run(steps_[i], alone ? on_caller_[i] : steps_[i].run);
    const auto t1 = std::chrono::steady_clock::now();
    step_us_[i][alone].push_back(std::chrono::duration<float, std::micro>(t1 - t0).count());
  }
  if (round < 2 * kThreadTuningRuns) return;
  auto median = [](std::vector<float> v) {  // a run that threw left some steps fewer samples
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };
  for (size_t i = 0; i < steps_.size(); ++i)
    if (!step_us_[i][0].empty() && !step_us_[i][1].empty() &&
        median(step_us_[i][1]) < kAloneWins * median(step_us_[i][0])) {
      steps_[i].run = std::move(on_caller_[i]);
      steps_[i].threads = 1;
    }
  on_caller_.clear();
  on_caller_.shrink_to_fit();
  step_us_.clear();
  step_us_.shrink_to_fit();
  thread_tuning_ = ThreadTuning::done;
}

const PlanValue& Plan::value(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw ir::Error("plan has no tensor '" + name + "'");
  return it->second;
}

void* Plan::data(const std::string& name) {
  const PlanValue& v = value(name);
  if (v.constant) throw std::logic_error("data() on constant " + name);
  return arena_ + v.offset;
}

const void* Plan::data(const std::string& name) const {
  const PlanValue& v = value(name);
  return v.constant ? static_cast<const void*>(v.constant->bytes.data()) : arena_ + v.offset;
}

void Plan::copy_dense(const std::string& name, void* dst) const {
  const PlanValue& v = value(name);
  if (v.row_stride == 0) {
    ir::copy_bytes(dst, data(name), v.info.bytes());
    return;
  }
  const int64_t row = v.info.dims.empty() ? 1 : v.info.dims[size_t(memory_order(int(v.info.dims.size()), v.info.layout).back())];
  const int64_t dims[2] = {row == 0 ? 0 : v.info.count() / row, row};
  const int64_t src[2] = {v.row_stride, 1}, dense[2] = {row, 1};
  kernels::StridedCopy(2, dims, src, dense, int(ir::dtype_size(v.info.dtype))).run(data(name), dst);
}

}  // namespace octet
