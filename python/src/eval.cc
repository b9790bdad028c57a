// The pieces of `octet eval` that octet.ray spreads over a cluster: the evaluation set as the CLI
// reads and preprocesses it, the accuracy of a score matrix, the latency of timed runs, and the
// report's text. The driver reads the data and writes the report with the CLI's own code; the
// workers only run sessions.
#include <pybind11/stl.h>

#include <cstring>
#include <filesystem>

#include "calib/calibrate.h"
#include "loader/onnx_loader.h"
#include "python/src/arrays.h"
#include "python/src/bindings.h"
#include "apps/cli/eval_report.h"
#include "apps/cli/model_inputs.h"
#include "apps/cli/metrics.h"
#include "io/model_card.h"

namespace octet::python {
namespace {

using json = nlohmann::json;

py::object json_to_python(const json& j) { return py::module_::import("json").attr("loads")(j.dump()); }
json python_to_json(const py::handle& o) {
  return json::parse(std::string(py::str(py::module_::import("json").attr("dumps")(o))));
}

// What `octet eval MODEL --data DATA --limit LIMIT` evaluates on: the model's facts for the
// report's head, and every image as the model's input (the card's preprocessing applied).
py::dict eval_data(const std::string& model, const std::string& data_spec, int64_t limit) {
  if (limit == 0 || limit < -1) throw py::value_error("limit must be positive (or -1: every image), got " +
                                                      std::to_string(limit));
  ir::Graph graph;
  std::string quantized_node, spec = data_spec;
  data::Dataset dataset;
  ir::TensorData inputs;
  ModelCard card;
  TensorSpec input;
  bool quantized = false;
  {
    py::gil_scoped_release unlocked;
    graph = loader::load_onnx(model);
    quantized = calib::is_quantized(graph, &quantized_node);
    input = cli::image_input(graph, model);
    card = find_model_card(model).value_or(ModelCard{});
    if (spec.empty()) spec = card.data;
    if (spec.empty())
      throw ir::Error(model + " has no model card with a default dataset: give data= (e.g. fashion-mnist:test, "
                              "cifar10:FILE.bin, images:DIR)");
    dataset = cli::load_dataset_for(spec, input, limit, card.classes);
    if (dataset.count() == 0) throw ir::Error("the dataset '" + spec + "' has no images");
    inputs = cli::make_inputs(dataset, card, input);
  }
  py::array_t<int32_t> labels(py::ssize_t(dataset.labels.size()));
  std::memcpy(labels.mutable_data(), dataset.labels.data(), dataset.labels.size() * sizeof(int32_t));
  py::dict d;
  d["model"] = model;
  d["file_bytes"] = std::filesystem::file_size(model);
  d["parameters"] = graph.parameter_count();
  d["quantized"] = quantized ? py::object(py::str(quantized_node)) : py::object(py::none());
  d["data"] = dataset.description;
  d["spec"] = spec;
  d["classes"] = card.classes.empty() ? dataset.class_names : card.classes;
  d["classes_from_card"] = !card.classes.empty();
  d["input"] = input.name;
  d["inputs"] = to_numpy(std::move(inputs));
  d["labels"] = labels;
  return d;
}

py::object eval_accuracy(const py::array_t<float, py::array::c_style | py::array::forcecast>& scores,
                         const py::array_t<int32_t, py::array::c_style | py::array::forcecast>& labels,
                         const std::vector<std::string>& classes) {
  if (scores.ndim() != 2) throw py::value_error("scores must be [images, classes], got " + describe_array(scores));
  if (labels.ndim() != 1 || labels.shape(0) != scores.shape(0))
    throw py::value_error("labels must be one per image (" + std::to_string(scores.shape(0)) + "), got " +
                          describe_array(labels));
  const std::vector<int> label_vector(labels.data(), labels.data() + labels.shape(0));
  ClassificationMetrics m;
  {
    py::gil_scoped_release unlocked;
    m = classify(scores.data(), scores.shape(0), int(scores.shape(1)), label_vector);
  }
  return json_to_python(cli::metrics_json(m, classes));
}

py::object eval_timing(const std::string& engine, int batch, int threads, const std::vector<double>& run_ms,
                       int64_t images) {
  if (batch < 1) throw py::value_error("batch must be at least 1, got " + std::to_string(batch));
  if (run_ms.empty()) throw py::value_error("no timed runs");
  return json_to_python(cli::timing_json(engine, batch, threads, run_ms, images));
}

// FP32 beside INT8 when the report has both, else one precision's report.
std::string eval_report_text(const py::dict& report) {
  const json r = python_to_json(report);
  if (r.contains("fp32") && (r.contains("int8") || r.contains("dynamic"))) return cli::side_by_side_report_text(r);
  return cli::single_report_text(r);
}

}  // namespace

void bind_eval(py::module_& m) {
  using namespace pybind11::literals;
  m.def("_eval_data", &eval_data, "model"_a, "data"_a = "", "limit"_a = -1,
        "The images `octet eval MODEL --data DATA --limit LIMIT` evaluates, as model inputs, with their labels, the "
        "class names and the model's facts for the report");
  m.def("_eval_accuracy", &eval_accuracy, "scores"_a, "labels"_a, "classes"_a,
        "top-1, top-5, per-class accuracy and confusion of [images, classes] scores, as `octet eval --json` writes "
        "them");
  m.def("_eval_timing", &eval_timing, "engine"_a, "batch"_a, "threads"_a, "run_ms"_a, "images"_a,
        "A latency row's entry of `octet eval --json` from per-run milliseconds");
  m.def("_eval_report_text", &eval_report_text, "report"_a, "The text `octet eval` prints for this --json report");
}

}  // namespace octet::python
