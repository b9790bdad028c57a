#pragma once
// Timings of the parts of one plan step (e.g. DynamicQuantizeLinear's range pass and quantize
// pass), reported by the step's kernel while Session::run profiles: `octet run --profile`
// shows where the time of a step goes without splitting it into steps. Outside a profiled
// run a PartTimer costs one thread-local read.
#include <chrono>
#include <string>
#include <vector>

namespace octet {

struct StepPart {
  const char* name;  // a string literal
  double microseconds = 0;
};

namespace step_parts {
// Where the running step's parts go on this thread; nullptr when nobody is listening.
std::vector<StepPart>*& sink();
}  // namespace step_parts

// Times its scope as part `name` of the running step.
class PartTimer {
 public:
  explicit PartTimer(const char* name) : name_(name), sink_(step_parts::sink()) {
    if (sink_) t0_ = std::chrono::steady_clock::now();
  }
  ~PartTimer() {
    if (sink_)
      sink_->push_back({name_, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0_).count()});
  }
  PartTimer(const PartTimer&) = delete;
  PartTimer& operator=(const PartTimer&) = delete;

 private:
  const char* name_;
  std::vector<StepPart>* sink_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace octet
