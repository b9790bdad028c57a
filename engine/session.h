#pragma once
// The public API: load a model, inspect its inputs and outputs, run it with any batch size.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/ir.h"
#include "engine/passes.h"
#include "engine/plan.h"
#include "engine/step_parts.h"

namespace octet {

struct TensorSpec {
  std::string name;
  ir::DType dtype;
  ir::Dims dims;  // -1 for the batch (or any other run-time) dimension
};

// An input the caller owns (e.g. a NumPy array's buffer), read in place by Session::run_views:
// row-major, bytes.size() == element_count(dims) * dtype_size(dtype).
struct TensorView {
  ir::DType dtype = ir::DType::f32;
  ir::Dims dims;
  std::span<const std::byte> bytes;
};

struct SessionOptions {
  passes::Options passes;
  int threads = 1;  // kernels split their work over this many threads (the caller's included)
  std::optional<kernels::Isa> isa;  // cap on the kernels' ISA; default kernels::active_isa()
  bool winograd = true;  // FP32 3x3 stride-1 convs may run as Winograd F(2x2, 3x3); false: direct only
  bool views = true;     // PlanOptions::views: Reshapes and Concat inputs in place; false: copied
  // A batch larger than this runs as consecutive slices of this many images through one
  // plan, when every image is computed independently of the others (checked per model).
  // With threads > 1 such a batch (of two images or more) is shared out instead: each thread
  // runs its own share of the images, in slices, through a plan of its own on one thread, so
  // the threads meet once per run rather than after every step.
  // 0: never slice. -1 (auto): the most images, up to 16, whose activations fit half the cache
  // one core can count on (kernels::per_core_cache_bytes), more when the weights dwarf them
  // (Session::automatic_batch_slice): a slice stays cache-resident where a whole batch would
  // not, and its images share each pass over the weights and each step's fixed cost.
  int batch_slice = -1;
};

// Called after each step with every value the step wrote, in the plan's physical layout
// (info.layout says which); `data` is only valid during the call (the arena is reused).
using ValueObserver = std::function<void(const std::string& name, const TensorInfo& info, const void* data)>;

struct StepTiming {
  std::string node, op;
  double microseconds = 0;
  std::vector<StepPart> parts;  // what the step's kernel timed inside it (engine/step_parts.h)
  std::string kernel;           // the plan step's kernel ("" when its op did not say)
  int64_t macs = 0;             // its multiply-accumulates (0 for steps that do none)
};

class Session {
 public:
  // Loads and optimizes; throws ir::Error with a message naming the file, node and op.
  static Session load(const std::string& path, const SessionOptions& options = {});
  explicit Session(ir::Graph graph, const SessionOptions& options = {});
  Session(Session&&) noexcept;
  ~Session();

  const std::vector<TensorSpec>& inputs() const { return inputs_; }
  // The input shapes with every unknown extent (the batch axis) set to `batch`.
  std::vector<ir::Dims> input_dims_at(int64_t batch) const;
  const std::vector<TensorSpec>& outputs() const { return outputs_; }
  const ir::Graph& graph() const { return graph_; }
  const std::vector<passes::PassCount>& pass_report() const { return pass_report_; }
  // Images per slice of a batch the model computes image by image (0: never sliced), and the
  // activation memory of one image it was chosen from (0 when shapes wait for the first run).
  int batch_slice() const { return batch_slice_; }
  // Whether a batch larger than batch_slice() runs in slices (the model computes every image
  // independently and has a batch axis); decided once, from the plan of one slice, by what
  // each of its steps' ops declares (OpImpl::batch_use).
  bool slices_batches() { return batch_slice_ > 0 && images_independent(); }
  // Whether a batch shared out over threads runs in lockstep: the images are computed apart but
  // for the ranges of DynamicQuantizeLinear, which span the batch (BatchUse::apart_but_batch_range),
  // so each thread runs its share whole (no slices) and the threads combine each range.
  bool shares_batches_in_lockstep();
  // How a batch may be split into images: not at all, in lockstep shares, or freely.
  enum class ImageSplit { none, lockstep, independent };
  // Threads a batch of two images or more is shared out over (each runs its own images, in
  // slices or in lockstep, on a plan of its own): the session's threads when it slices batches
  // or shares them in lockstep, else 1 (each step then splits its own work over the threads).
  int image_threads();
  size_t activation_bytes_per_image() const { return activation_bytes_per_image_; }
  // The packed weights of every plan built so far, each packing held once.
  const kernels::PackedCache& packed_weights() const { return *packed_cache_; }

  // Inputs in the order of inputs(); outputs in the order of outputs(), row-major (NCHW).
  // Input dtype, rank and every fixed dimension are checked; a plan is built (and cached)
  // for each new set of input shapes. `timings`, when given, receives one entry per step.
  // Reentrant: callers on several threads at once each run on a plan of their own (a plan
  // holds the activations and scratch of one run; the packed weights are shared), built the
  // first time two runs of the same shapes overlap.
  std::vector<ir::TensorData> run(const std::vector<ir::TensorData>& inputs,
                                  std::vector<StepTiming>* timings = nullptr,
                                  const ValueObserver* observer = nullptr);
  // The same on inputs the caller owns: each is read where it is, straight into the plan's
  // arena (the one copy every run makes), with no TensorData made of it first.
  std::vector<ir::TensorData> run_views(std::span<const TensorView> inputs, std::vector<StepTiming>* timings = nullptr,
                                        const ValueObserver* observer = nullptr);

  // Untimed runs to make before timing runs of these inputs: one warms the caches and the
  // weights' pages; on threads, a plan then times each step split and alone over its next
  // 2 * Plan::kThreadTuningRuns runs before it settles, and a timing loop started earlier
  // measures those mixed runs (half of them on one thread) instead of the settled plan.
  int warm_up_runs() const;
  void warm_up(const std::vector<ir::TensorData>& inputs);

  // The plan for these input shapes (built if needed), e.g. to list kernels and MACs. Valid
  // until the next plan is built (which may evict it). A graph run in stages (stage_cuts()) has
  // one plan per stage and set of shapes crossing into it: this is its first stage's plan.
  const Plan& plan_for(const std::vector<ir::Dims>& input_dims);
  // Integer inputs (shapes, axes, pads fed at run time) are part of a plan's key: their
  // contents are folded into the plan as constants.
  const Plan& plan_for(const std::vector<ir::TensorData>& inputs);

  // The nodes whose output shape depends on their input values (OpImpl::outputs_from_values),
  // after each of which the graph is cut into stages (docs/kernels.md, Execution core, "Stages"); empty
  // for a graph planned whole, i.e. every graph without such a node.
  std::vector<const ir::Node*> stage_cuts() const;
  // Plans cached now, every stage's included.
  size_t plans_held() const;
  // The kernel a cut's node runs (its portable loop: "non_max_suppression"), as timings name it.
  static std::string cut_kernel(const ir::Node& cut);

 private:
  // The graph up to a cut, planned like a graph of its own (a Session of its own, on this one's
  // threads) when the values crossing into it are first known; then the cut's node runs on its
  // inputs' contents. engine/stages.cc.
  struct Stage {
    ir::Graph graph;                 // its nodes; inputs: the values it reads from earlier stages or the model
    const ir::Node* cut = nullptr;   // the node ending it (in graph_), nullptr for the last stage
    std::unique_ptr<Session> session;  // built on the first run; none when the stage has no node
    bool built = false;
  };
  std::vector<Stage> stages_;
  SessionOptions options_;
  // How a stage's session differs: it runs on its parent's threads, never slices a batch (its
  // options say 0), and keys the inputs `keyed` marks (empty: the rule for a model's inputs).
  struct StageSetup {
    const Session* parent = nullptr;
    std::vector<bool> keyed;
    bool shapes_declared = false;  // every input's shape is the model's declared one: validate at load
  };
  Session(ir::Graph graph, const SessionOptions& options, const StageSetup& stage);
  bool split_into_stages();
  Session& stage_session(Stage& stage, const std::map<std::string, TensorView>& values);
  std::vector<ir::TensorData> run_stages(std::span<const TensorView> inputs, std::vector<StepTiming>* timings,
                                         const ValueObserver* observer);
  const Plan& first_stage_plan(const std::vector<ir::Dims>& input_dims,
                               const std::vector<ir::TensorData>* values = nullptr);
  ir::Graph graph_;
  std::vector<passes::PassCount> pass_report_;
  std::vector<TensorSpec> inputs_, outputs_;
  // Per input: its values are part of a plan's key, folded in as constants: integer inputs
  // (shapes, axes, pads fed at run time) and inputs read only where an op plans on the values
  // (OpImpl::value_inputs, e.g. Resize's scales).
  std::vector<bool> value_keyed_;
  bool keyed(size_t input) const { return value_keyed_[input]; }
  // The input shapes, the keyed inputs' contents, and whether the plan runs on one thread (a
  // share of an image-parallel run: its kernels must not call the session's pool).
  using PlanKey = std::tuple<std::vector<ir::Dims>, std::map<std::string, std::vector<std::byte>>, bool>;
  struct PlanSlot {
    std::unique_ptr<Plan> plan;
    bool busy = false;   // a run is using it
    uint64_t last_use = 0;
  };
  // A plan reserved for one run; returned to the cache when the lease ends.
  class PlanLease {
   public:
    PlanLease(Session& session, PlanSlot& slot) : session_(&session), slot_(&slot) {}
    PlanLease(PlanLease&& other) noexcept : session_(other.session_), slot_(std::exchange(other.slot_, nullptr)) {}
    PlanLease(const PlanLease&) = delete;
    PlanLease& operator=(const PlanLease&) = delete;
    PlanLease& operator=(PlanLease&&) = delete;
    ~PlanLease();
    Plan* operator->() const { return slot_->plan.get(); }
    Plan& operator*() const { return *slot_->plan; }

   private:
    Session* session_;
    PlanSlot* slot_;
  };
  // Idle plans are evicted, least recently used first, while all plans together hold more
  // than this many bytes of activations (plans in use are never evicted).
  static constexpr size_t kPlanCacheBytes = size_t{512} << 20;
  // What decides a plan: the input shapes, and the contents of integer inputs (shapes fed at
  // run time), which the plan folds in as constants.
  struct PlanInputs {
    std::vector<ir::Dims> dims;
    std::map<std::string, ir::TensorData> known;
  };
  PlanInputs plan_inputs(std::span<const TensorView> inputs) const;
  const Plan& plan_for(const std::vector<ir::Dims>& input_dims, const std::map<std::string, ir::TensorData>& known);
  PlanLease lease_plan(const std::vector<ir::Dims>& input_dims, const std::map<std::string, ir::TensorData>& known,
                       bool one_thread = false);
  // With mutex_ held: a slot for these shapes, idle when `idle` (built when there is none);
  // `one_thread`: a plan whose kernels run on the caller's thread only.
  PlanSlot& slot_for(const std::vector<ir::Dims>& input_dims, const std::map<std::string, ir::TensorData>& known,
                     bool idle, bool one_thread = false);
  void evict_idle_plans(const PlanSlot& keep);
  std::map<PlanKey, std::vector<std::unique_ptr<PlanSlot>>> plans_;
  std::unique_ptr<std::mutex> mutex_ = std::make_unique<std::mutex>();  // plans_, image_split_
  uint64_t clock_ = 0;
  std::unique_ptr<kernels::PackedCache> packed_cache_;  // every plan's packed weights, once
  struct ThreadpoolDeleter {
    void operator()(pthreadpool_t p) const;
  };
  std::unique_ptr<std::remove_pointer_t<pthreadpool_t>, ThreadpoolDeleter> threadpool_;
  PlanOptions plan_options_;
  int batch_slice_ = 0;
  size_t activation_bytes_per_image_ = 0;  // the batch-1 plan's arena
  std::optional<ImageSplit> image_split_;  // decided on the first batched run
  ImageSplit image_split();
  ImageSplit image_split_locked();
  bool images_independent() { return image_split() == ImageSplit::independent; }
  int automatic_batch_slice() const;
  // Shapes-only plans at batch 1 and 2 for the passes that need shapes, built on the first
  // question; empty when the graph cannot be planned.
  struct ShapePlans {
    bool planned = false;
    std::vector<std::unique_ptr<Plan>> plans;
  };
  const std::vector<std::unique_ptr<Plan>>& shape_plans(ShapePlans& shapes) const;
  // passes::fuse_residual_adds with the shapes of those plans; how many it fused.
  int fuse_residual_adds(ShapePlans& shapes);
  // passes::prune_dead_taps with the dims those plans agree on; how many convs it cropped.
  int prune_dead_taps(ShapePlans& shapes);
  // A value's dims in each of those plans, for the passes below.
  passes::DimsAtBatches dims_at_batches(ShapePlans& shapes) const;
  // passes::drop_broadcast_expands with the dims of those plans; how many inputs it rewired.
  int drop_broadcast_expands(ShapePlans& shapes);
  // passes::fuse_group_norm with the dims of those plans; how many chains it fused.
  int fuse_group_norm(ShapePlans& shapes);
  std::vector<ir::TensorData> run_in_slices(std::span<const TensorView> inputs, int64_t batch);
  // lockstep: each thread's share in one piece, its DynamicQuantizeLinears' ranges combined with
  // the other threads' (engine/batch_ranges.h); else in slices, each thread on its own.
  std::vector<ir::TensorData> run_images_in_parallel(std::span<const TensorView> inputs, int64_t batch, bool lockstep);
  // Images [first, first + n) of the inputs through `plan` (planned for n images), into `out`
  // (every output at the whole batch).
  void run_slice(Plan& plan, std::span<const TensorView> inputs, int64_t batch, int64_t first, int64_t n,
                 std::vector<ir::TensorData>& out) const;
  // The outputs of a batch of `batch` images, allocated after the plan of one slice.
  std::vector<ir::TensorData> batch_outputs(const Plan& slice_plan, int64_t batch) const;
};

}  // namespace octet
