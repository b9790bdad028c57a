#include "apps/serve/classifier.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "apps/cli/metrics.h"

namespace octet::serve {

std::vector<double> probabilities(const float* scores, size_t n, bool already_probabilities) {
  std::vector<double> p(scores, scores + n);
  if (already_probabilities || n == 0) return p;
  const double top = *std::max_element(p.begin(), p.end());
  double sum = 0;
  for (double& v : p) sum += v = std::exp(v - top);
  for (double& v : p) v /= sum;
  return p;
}

Classifier::Classifier(Session fp32, Session int8, std::vector<std::string> classes, bool probabilities,
                       const ir::TensorData& probe, int top)
    : Classifier(std::make_shared<Session>(std::move(fp32)), std::make_shared<Session>(std::move(int8)),
                 std::move(classes), probabilities, probe, top) {}

Classifier::Classifier(std::shared_ptr<Session> fp32, std::shared_ptr<Session> int8, std::vector<std::string> classes,
                       bool probabilities, const ir::TensorData& probe, int top)
    : fp32_(std::move(fp32)), int8_(std::move(int8)), classes_(std::move(classes)), probabilities_(probabilities),
      top_(top) {
  for (Session* s : {fp32_.get(), int8_.get()}) {
    const std::vector<ir::TensorData> out = s->run({probe});
    const ir::TensorData& scores = out.at(0);
    if (scores.dtype != ir::DType::f32 || scores.count() < 1)
      throw ir::Error(fmt::format("the {} model's first output '{}' is {} {}: octet serve needs class scores "
                                  "(float [1, classes])",
                                  s == fp32_.get() ? "FP32" : "INT8", s->outputs().at(0).name, ir::dtype_name(scores.dtype),
                                  ir::dims_str(scores.dims)));
    const size_t n = size_t(scores.count());
    if (classes_.empty())
      for (size_t c = 0; c < n; ++c) classes_.push_back(std::to_string(c));
    if (classes_.size() != n)
      throw ir::Error(fmt::format("the model card names {} classes but the {} model's output has {} scores: the card "
                                  "does not belong to this model",
                                  classes_.size(), s == fp32_.get() ? "FP32" : "INT8", n));
  }
}

PrecisionResult Classifier::run(Session& session, const ir::TensorData& input) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<ir::TensorData> out = session.run({input});
  PrecisionResult r;
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const float* scores = out.at(0).as<float>();
  const std::vector<double> p = probabilities(scores, classes_.size(), probabilities_);
  // Ranked by the raw scores: the first is the CLI's argmax.
  for (int c : top_classes(scores, int(p.size()), std::max(1, top_))) r.top.push_back({c, classes_[size_t(c)], p[size_t(c)]});
  return r;
}

Classification Classifier::classify(const ir::TensorData& input) {
  Classification c;
  c.fp32 = run(*fp32_, input);
  c.int8 = run(*int8_, input);
  c.agree = c.fp32.top.at(0).index == c.int8.top.at(0).index;
  return c;
}

nlohmann::json to_json(const PrecisionResult& r) {
  nlohmann::json top = nlohmann::json::array();
  for (const Ranked& t : r.top) top.push_back({{"class", t.index}, {"label", t.label}, {"probability", t.probability}});
  return {{"top", top}, {"ms", r.ms}};
}

nlohmann::json to_json(const Classification& c) {
  return {{"fp32", to_json(c.fp32)}, {"int8", to_json(c.int8)}, {"agree", c.agree}};
}

}  // namespace octet::serve
