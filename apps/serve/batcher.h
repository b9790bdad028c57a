#pragma once
// Request batching for one model version: requests that arrive close together and whose inputs
// differ only in their batch extent run as one Session run, their inputs concatenated along
// axis 0, and each gets its own rows of every output back.
//
// No thread of its own: the first request of a batch (its leader) waits up to max_delay for
// others of the same shapes, or until they hold max_batch rows, then runs them all on its own
// thread while the others wait for their rows. Unless Options::wait_for_delay, a leader stops
// waiting as soon as fewer than max_running batches run: batching only ever fills time the
// engine would spend busy anyway. Batches of different shapes gather and run
// side by side (Session::run is reentrant). A request of max_batch rows or more, or one whose
// inputs do not share a batch extent, runs alone at once.
//
// Only for a model whose every image is computed apart from the others (Session::slices_batches):
// dynamic quantization takes one range over the whole batch, so there a request's answer would
// depend on its neighbours; the repository gives such versions max_batch 1.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/ir.h"

namespace octet::serve {

// The batch `octet serve` gathers when --max-batch is not given. With several runs side by side
// (max_running > 1: a thread each) every core is busy without batching, and a batch only adds
// its wait and copies; when one run takes every core (max_running 1), requests queue behind it
// and a batch of 8 runs them for little more than one (bench/RESULTS.md, "Serving").
inline int default_max_batch(int max_running) { return max_running > 1 ? 1 : 8; }

class Batcher {
 public:
  using RunFn = std::function<std::vector<ir::TensorData>(const std::vector<ir::TensorData>&)>;
  struct Options {
    int max_batch = 8;  // rows (batch items) per run; 1: no batching
    std::chrono::microseconds max_delay{2000};
    // false: a gathering batch leaves as soon as fewer than max_running batches are running, so
    // requests wait for company only while the engine is busy (a lone request runs at once, and
    // a waiting batch never leaves a core idle); true: only when full or after max_delay.
    bool wait_for_delay = false;
    int max_running = 1;  // batches that run at once before others wait (the cores they use)
  };

  Batcher(RunFn run, Options options) : run_(std::move(run)), options_(options) {}
  Batcher(const Batcher&) = delete;
  Batcher& operator=(const Batcher&) = delete;

  // The outputs of `inputs` (each with its batch on axis 0), as a run of them alone would give
  // them; throws what that run would throw.
  std::vector<ir::TensorData> run(std::vector<ir::TensorData> inputs);

  const Options& options() const { return options_; }
  // Session runs made, and requests answered, so far.
  uint64_t runs() const { return runs_; }
  uint64_t requests() const { return requests_; }

 private:
  struct Item;
  struct Group;
  void execute(Group& g);
  std::vector<ir::TensorData> run_alone(const std::vector<ir::TensorData>& inputs);

  RunFn run_;
  Options options_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Group>> open_;  // by shape key, gathering
  std::atomic<uint64_t> runs_{0}, requests_{0};
  int running_ = 0;  // batches executing, under mutex_
};

}  // namespace octet::serve
