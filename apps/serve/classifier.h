#pragma once
// The two models the page compares: the FP32 model and its INT8 form, each run on the same
// input, their top classes with probabilities, their times and whether they agree.
//
// Requests arrive on several server threads at once. Session::run is reentrant (each overlapping
// run leases a plan of its own, the packed weights are shared: engine/session.h), so both
// sessions serve every thread; the routes let --http-threads classifications run at once, which
// bounds how many plans exist.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/session.h"

namespace octet::serve {

struct Ranked {
  int index = 0;
  std::string label;
  double probability = 0;
};

struct PrecisionResult {
  std::vector<Ranked> top;  // best first
  double ms = 0;            // Session::run on this request
};

struct Classification {
  PrecisionResult fp32, int8;
  bool agree = false;  // same top class
};

class Classifier {
 public:
  // `classes`: the card's class names (empty: "0", "1", ...). `probabilities`: the output is
  // probabilities already (the card's output kind), else logits that go through a softmax.
  // Runs each model once on `probe` (a [1, C, H, W] input) and throws ir::Error when an output
  // does not have one score per class.
  Classifier(Session fp32, Session int8, std::vector<std::string> classes, bool probabilities,
             const ir::TensorData& probe, int top = 3);
  // The same over sessions the /v2 models share (Session::run is reentrant).
  Classifier(std::shared_ptr<Session> fp32, std::shared_ptr<Session> int8, std::vector<std::string> classes,
             bool probabilities, const ir::TensorData& probe, int top = 3);

  Classification classify(const ir::TensorData& input);

  const std::vector<std::string>& classes() const { return classes_; }
  const TensorSpec& input() const { return fp32_->inputs().at(0); }

 private:
  PrecisionResult run(Session& session, const ir::TensorData& input);

  std::shared_ptr<Session> fp32_, int8_;
  std::vector<std::string> classes_;
  bool probabilities_;
  int top_;
};

// {"top": [{"class": 9, "label": "Ankle boot", "probability": 0.98}, ...], "ms": 0.21}
nlohmann::json to_json(const PrecisionResult& r);
// {"fp32": {...}, "int8": {...}, "agree": true}
nlohmann::json to_json(const Classification& c);

// Probabilities from scores: a softmax of logits (max subtracted), or the scores as they are.
std::vector<double> probabilities(const float* scores, size_t n, bool already_probabilities);

}  // namespace octet::serve
