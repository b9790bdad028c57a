#pragma once
// A plan is a graph bound to concrete input shapes: shapes inferred, shape arithmetic and
// constants folded, layouts fixed (relayout steps inserted where an op needs another
// one), every activation given a place in one arena sized from tensor lifetimes, and one
// kernel call per step. Running a plan allocates nothing.
#include <array>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/ir.h"
#include "engine/layout.h"
#include "engine/op_registry.h"
#include "kernels/packed_cache.h"

namespace octet {

struct PlanStep {
  std::string node;   // node name, or "relayout <tensor>" for inserted steps
  std::string op;     // op type
  std::string kernel; // the kernel build() chose, "" when the op did not say
  bool kernel_scalar = false;  // a part of `kernel` is a scalar reference (kernels/kernel_id.h)
  std::string fallback;  // why build() ran a reference kernel, when it said
  std::vector<TensorInfo> outputs;
  std::vector<std::string> output_names;  // value names, parallel to outputs
  int64_t macs = 0;
  // How the step treats the images of a batch (OpImpl::batch_use; an inserted relayout keeps
  // axis 0 outermost in either layout, so it keeps them apart).
  BatchUse batch_use = BatchUse::keeps_images_apart;
  Kernel run;
  // Threads the kernel splits its work over: the pool's, or 1 when it runs on the caller's
  // thread (no pool, or Plan::run_steps found the step faster alone).
  int threads = 1;

  // The step (or a part of it, such as a fused activation) runs a scalar reference kernel:
  // its time measures octet's missing SIMD kernel, not the hardware.
  bool scalar() const { return kernel_scalar; }
};

struct PlanValue {
  TensorInfo info;
  const ir::TensorData* constant = nullptr;  // row-major contents, owned by the graph or the plan
  // A constant's contents had the batch been other_batch() of this plan's (op_registry.h):
  // `constant` itself unless folded from an activation's shape; nullptr when unknown.
  const ir::TensorData* at_other_batch = nullptr;
  size_t offset = 0;               // arena offset otherwise
  int producer = -1;               // step index; -1 for graph inputs and constants
  int last_use = -1;
  // A view (engine/plan_views.cc): the value lives inside another's memory instead of its own,
  // `view_of` naming the value that owns it (never a view itself), view_offset bytes into it;
  // `offset` is then the owner's plus view_offset. A Reshape's output is its input's bytes; a
  // Concat input its producer writes where the Concat's output holds it needs no copy.
  std::string view_of;
  size_t view_offset = 0;
  // Elements between the rows of the innermost memory dimension, when they are not contiguous
  // (a channels-last Concat input along C: its pixels sit the output's C apart); 0: dense.
  int64_t row_stride = 0;
};

// How kernels are chosen and run.
struct PlanOptions {
  kernels::Isa isa = kernels::Isa::scalar;  // highest ISA kernels may use (Session passes active_isa())
  pthreadpool_t threadpool = nullptr;       // not owned; nullptr runs every kernel on the caller's thread
  bool winograd = true;                     // false: every FP32 conv is a direct (igemm) conv
  // Where drivers find weights another plan already packed (not owned; nullptr: each plan
  // packs its own), handed to every op's build in OpContext::packed_cache. Session passes its
  // own, so every plan of a model shares one copy.
  kernels::PackedCache* packed_cache = nullptr;
  // Only the values' dtypes, dims and layouts (for a pass that needs shapes): no arena, no
  // kernels; data() and the steps are then unusable.
  bool shapes_only = false;
  // Reshapes and Concat inputs as views of the memory that holds them (engine/plan_views.cc);
  // false gives every value its own memory and copies (tests compare the two).
  bool views = true;
};

class Plan {
 public:
  // Throws ir::Error when a shape does not work out or an op rejects its inputs.
  // `known_inputs` are graph inputs whose contents decide shapes (e.g. an int64 shape fed
  // to Reshape): the plan treats them as constants, so it is only valid for those values.
  Plan(const ir::Graph& graph, const std::map<std::string, ir::Dims>& input_dims,
       const std::map<std::string, ir::TensorData>& known_inputs = {}, const PlanOptions& options = {});
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  const std::vector<PlanStep>& steps() const { return steps_; }

  // Runs every step in order through `run(step, kernel)` (the caller adds its error handling,
  // timing or observing). Threads where they pay: a plan whose kernels split over a threadpool
  // times each step on its first runs, after one warm-up, alternately split over the pool and
  // alone on the caller's thread (kThreadTuningRuns of each), then runs alone each step that was
  // clearly faster so (kAloneWins). A fork and join of the pool costs microseconds, which a small step
  // (a pool, a quantize, a relayout of a small map) does not win back; a big one does. The
  // kernels give the same bytes on any thread count (tests/engine/test_thread_counts.cc), so
  // only the time changes.
  using StepRunner = std::function<void(const PlanStep&, const Kernel&)>;
  static constexpr int kThreadTuningRuns = 3;
  // A step leaves the pool when alone it took under this share of its split time: a near tie
  // is noise, and a big step kept on the pool costs little where it does not gain.
  static constexpr float kAloneWins = 0.9f;
  void run_steps(const StepRunner& run);
  bool threads_tuned() const { return thread_tuning_ == ThreadTuning::done; }
  const PlanValue& value(const std::string& name) const;
  void* data(const std::string& name);  // arena address of an activation or input
  const void* data(const std::string& name) const;
  // The value's elements in its layout, densely (a value with a row_stride is gathered).
  void copy_dense(const std::string& name, void* dst) const;
  size_t arena_bytes() const { return arena_bytes_; }
  // Bytes of the constants the steps read (their weights): OpContext::model_weight_bytes.
  size_t constant_bytes() const { return constant_bytes_; }
  const std::map<std::string, PlanValue>& values() const { return values_; }

 private:
  struct Pending {
    const ir::Node* node;                 // nullptr for a relayout step
    std::vector<std::string> inputs;      // value names after relayout
    std::vector<TensorInfo> input_infos;  // the layouts the op sees
    std::vector<std::string> outputs;
    std::string scratch;  // a value of the arena only this step uses (OpImpl::scratch_bytes), or ""
  };
  void add_node(const ir::Node& n);
  std::string ensure_layout(const std::string& name, Layout want);
  // OpImpl::inputs_share_layout: hands the node's tensor inputs over in one layout.
  void share_layout(std::vector<std::string>& names, std::vector<TensorInfo>& infos);
  void fold(const ir::Node& n, const OpImpl& impl, OpContext& ctx, const std::vector<TensorInfo>& outs);
  std::vector<ir::TensorData> fold_at_other_batch(const OpImpl& impl, const OpContext& ctx) const;
  const ir::TensorData* own(ir::TensorData t);
  OpContext context(const ir::Node& n, const std::vector<std::string>& inputs,
                    const std::vector<TensorInfo>& infos) const;
  void choose_views();  // engine/plan_views.cc
  void place_in_arena();
  // The kernel of a pending step with `pool` (nullptr: the caller's thread), filling `step`'s
  // description (node, op, kernel name, outputs, MACs).
  Kernel build_kernel(const Pending& p, pthreadpool_t pool, PlanStep& step);
  void build_kernels();

  const ir::Graph& graph_;
  PlanOptions options_;
  std::map<std::string, PlanValue> values_;
  std::deque<ir::TensorData> owned_;  // folded constants; deque keeps addresses stable
  std::vector<Pending> pending_;
  std::vector<PlanStep> steps_;
  size_t constant_bytes_ = 0;
  enum class ThreadTuning { measuring, done };
  ThreadTuning thread_tuning_ = ThreadTuning::measuring;
  int tuning_round_ = 0;
  std::vector<Kernel> on_caller_;                      // each step built without the pool, while measuring
  std::vector<std::array<std::vector<float>, 2>> step_us_;  // per step: [split, alone] times, µs
  struct FreeBytes {
    void operator()(std::byte* p) const;
  };
  std::unique_ptr<std::byte, FreeBytes> arena_storage_;
  std::byte* arena_ = nullptr;  // arena_storage_, aligned to a cache line (2 MiB when large)
  size_t arena_bytes_ = 0;
};

}  // namespace octet
