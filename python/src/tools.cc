// octet.quantize, octet.explain, octet.cpu and octet.ort_run: the CLI's own code (apps/cli/,
// apps/explain/, tools/ort/ort_client.h) called with Python arguments.
#include <pybind11/stl.h>

#include <cstring>
#include <map>
#include <thread>

#include "core/ir.h"
#include "kernels/cache_budgets.h"
#include "kernels/isa.h"
#include "loader/onnx_loader.h"
#include "loader/onnx_writer.h"
#include "python/src/arrays.h"
#include "python/src/bindings.h"
#include "apps/cli/calibration.h"
#include "apps/cli/explain_report.h"
#include "apps/cli/quantize_file.h"
#include "tools/ort/ort_client.h"
#ifdef OCTET_PYTHON_PEAKS
#include "bench/peak_values.h"
#endif

namespace octet::python {
namespace {

// A report from the C++ side as the dicts, lists and numbers json.loads makes of it.
py::object to_python(const nlohmann::json& j) { return py::module_::import("json").attr("loads")(j.dump()); }

// A path given as str or os.PathLike.
std::string path_arg(const py::handle& p) { return py::str(py::module_::import("os").attr("fspath")(p)); }
std::string optional_path(const py::object& p) { return p.is_none() ? std::string() : path_arg(p); }

// A list of names given as one comma-separated str or a sequence of str.
std::string comma_list(const py::object& v) {
  if (v.is_none()) return "";
  if (py::isinstance<py::str>(v)) return py::str(v);
  std::string s;
  for (const auto& item : v) s += (s.empty() ? "" : ",") + std::string(py::str(item));
  return s;
}

// The calibration options the CLI takes (--calib, --method, ...), from Python's keywords. Python
// has one per_channel for both modes: None keeps the mode's default (static: per channel,
// dynamic: per tensor, as the CLI's).
cli::CalibrationArgs calibration_args(const py::object& calib, int64_t calib_count, int per_class,
                                      const std::string& method, double percentile, std::optional<bool> per_channel,
                                      const std::string& activations, const py::object& keep_float,
                                      const std::string& mode, bool allow_test_calibration, bool progress) {
  if (calib_count < 0) throw py::value_error("calib_count must be 0 or more, got " + std::to_string(calib_count));
  if (per_class < 0) throw py::value_error("per_class must be 0 or more, got " + std::to_string(per_class));
  if (per_channel && mode == "both")
    throw py::value_error("per_channel is for mode 'static' or 'dynamic'; with 'both' each mode keeps its default");
  cli::CalibrationArgs a;
  a.spec = calib.is_none() ? "" : py::isinstance<py::str>(calib) ? std::string(py::str(calib)) : path_arg(calib);
  a.count = calib_count;
  a.per_class = per_class;
  a.method = method;
  a.percentile = percentile;
  a.per_tensor = per_channel == false && mode == "static";
  a.per_channel = per_channel == true && mode == "dynamic";
  a.act = activations;
  a.keep_float = comma_list(keep_float);
  a.mode = mode;
  a.allow_test = allow_test_calibration;
  a.progress = progress;
  return a;
}

// The settings octet would quantize with in `mode`: a bad method, activation type, percentile or
// mode is a ValueError before anything is read.
void check_settings(cli::CalibrationArgs a, const std::string& mode) {
  a.mode = mode;
  try {
    cli::parse_settings(a);
  } catch (const ir::Error& e) {
    throw py::value_error(e.what());
  }
}

py::object quantize(const py::object& model, const py::object& output, const py::object& calib, int64_t calib_count,
                    int per_class, const std::string& method, double percentile, std::optional<bool> per_channel,
                    const std::string& activations, const py::object& keep_float, const std::string& mode,
                    bool allow_test_calibration, int batch, bool progress) {
  if (batch < 1) throw py::value_error("batch must be at least 1, got " + std::to_string(batch));
  cli::CalibrationArgs a = calibration_args(calib, calib_count, per_class, method, percentile, per_channel, activations,
                                            keep_float, mode, allow_test_calibration, progress);
  a.batch = batch;
  check_settings(a, mode);
  const std::string in = path_arg(model), out = path_arg(output);
  nlohmann::json report;
  {
    py::gil_scoped_release unlocked;
    report = cli::quantize_file_json(in, out, cli::quantize_file(in, out, a));
  }
  return to_python(report);
}

// The INT8 model `octet eval --precision int8` quantizes in memory, serialized as it evaluates it
// (no file, no doc string, no card): its bytes and the calibration report of `octet eval --json`.
py::tuple quantize_in_memory(const py::object& model, const py::object& calib, int64_t calib_count, int per_class,
                             const std::string& method, double percentile, std::optional<bool> per_channel,
                             const std::string& activations, const py::object& keep_float, const std::string& mode,
                             bool allow_test_calibration, int batch) {
  if (batch < 1) throw py::value_error("batch must be at least 1, got " + std::to_string(batch));
  cli::CalibrationArgs a = calibration_args(calib, calib_count, per_class, method, percentile, per_channel, activations,
                                            keep_float, mode, allow_test_calibration, false);
  a.batch = batch;
  check_settings(a, mode);
  const std::string in = path_arg(model);
  std::string bytes;
  nlohmann::json report;
  {
    py::gil_scoped_release unlocked;
    const cli::QuantizeResult q = cli::quantize_for_cli(loader::load_onnx(in), in, a);
    bytes = loader::save_onnx_bytes(q.graph);
    report = cli::quantize_report_json(q);
  }
  return py::make_tuple(py::bytes(bytes), to_python(report));
}

py::object explain(const py::object& model, const py::object& html, const py::object& json, const py::object& fp32,
                   const py::object& data, int64_t images, const py::object& isa_levels, int batch, int threads,
                   bool compare_ort, bool progress, const py::object& calib, int64_t calib_count, int per_class,
                   const std::string& method, double percentile, std::optional<bool> per_channel,
                   const std::string& activations, const py::object& keep_float, const std::string& mode,
                   bool allow_test_calibration) {
  if (images < 1) throw py::value_error("images must be at least 1, got " + std::to_string(images));
  if (batch < 1) throw py::value_error("batch must be at least 1, got " + std::to_string(batch));
  threads = capped_threads(threads);
  if (mode != "static" && mode != "dynamic" && mode != "both")
    throw py::value_error("mode must be static, dynamic or both, got '" + mode + "'");
  cli::ExplainArgs a;
  a.calib = calibration_args(calib, calib_count, per_class, method, percentile, per_channel, activations, keep_float,
                             mode, allow_test_calibration, progress);
  for (const char* m : {"static", "dynamic"})
    if (mode == m || mode == "both") check_settings(a.calib, m);
  a.model = path_arg(model);
  a.output = optional_path(html);
  a.json_out = optional_path(json);
  a.fp32 = optional_path(fp32);
  a.data = data.is_none() ? "" : py::isinstance<py::str>(data) ? std::string(py::str(data)) : path_arg(data);
  a.images = images;
  a.levels = isa_levels.is_none() ? "all" : comma_list(isa_levels);
  cli::parse_isa_levels(a.levels);  // an unknown level is a ValueError before the model is read
  a.batch = batch;
  a.compare_ort = compare_ort;
  a.progress = progress;
  nlohmann::json report;
  {
    py::gil_scoped_release unlocked;
    report = cli::measure_explain(a, threads);
    cli::write_explain_files(report, a.output, a.json_out);
  }
  return to_python(report);
}

py::dict cpu(bool peaks) {
  py::list levels, all_levels;
  for (kernels::Isa isa : kernels::kAllIsas) {
    all_levels.append(kernels::isa_name(isa));
    if (kernels::isa_supported(isa)) levels.append(kernels::isa_name(isa));
  }
  py::dict d;
  d["levels"] = levels;
  d["all_levels"] = all_levels;
  d["detected"] = kernels::isa_name(kernels::detected_isa());
  d["active"] = kernels::isa_name(kernels::active_isa());
  d["cores"] = std::thread::hardware_concurrency();
  d["cache_per_core_bytes"] = kernels::per_core_cache_bytes();
  d["peaks"] = py::none();
#ifdef OCTET_PYTHON_PEAKS
  if (peaks) {
    py::dict by_level;
    for (kernels::Isa isa : kernels::kAllIsas) {
      if (!kernels::isa_supported(isa)) continue;
      double gflops = 0, gops = 0;
      {
        py::gil_scoped_release unlocked;  // ~0.1 s of measuring per level
        gflops = bench::peak_gflops(isa);
        gops = bench::peak_gops(isa);
      }
      py::dict p;
      p["fp32_gflops"] = gflops;
      p["int8_gops"] = gops;
      by_level[kernels::isa_name(isa)] = p;
    }
    d["peaks"] = by_level;
  }
#else
  (void)peaks;
#endif
  return d;
}

npy::Array to_npy_array(const std::string& name, const py::handle& value) {
  if (!py::isinstance<py::array>(value))
    throw py::type_error("input '" + name + "' must be a numpy array, got " +
                         std::string(py::str(py::type::of(value).attr("__name__"))));
  const auto a = py::reinterpret_borrow<py::array>(value);
  for (npy::DType t : {npy::DType::f32, npy::DType::f64, npy::DType::u8, npy::DType::s8, npy::DType::s32,
                       npy::DType::s64, npy::DType::b8}) {
    if (!a.dtype().equal(py::dtype(npy::dtype_name(t)))) continue;
    const auto c = py::array::ensure(a, py::array::c_style);
    npy::Array out = npy::make(t, std::vector<int64_t>(c.shape(), c.shape() + c.ndim()));
    std::memcpy(out.data.data(), c.data(), out.data.size());
    return out;
  }
  throw py::type_error("input '" + name + "': ONNX Runtime's runner takes no " + describe_array(a));
}

py::dict ort_run(const py::object& model, const py::dict& feeds, int threads) {
  threads = capped_threads(threads);
  std::map<std::string, npy::Array> inputs;
  for (const auto& [key, value] : feeds) inputs[py::str(key)] = to_npy_array(py::str(key), value);
  ort::Options options;
  options.threads = threads;
  const std::string path = path_arg(model);
  std::map<std::string, npy::Array> outputs;
  {
    py::gil_scoped_release unlocked;
    outputs = ort::run(path, inputs, options);
  }
  py::dict result;
  for (const auto& [name, a] : outputs) {
    std::vector<py::ssize_t> shape(a.shape.begin(), a.shape.end());
    py::array copy(py::dtype(npy::dtype_name(a.dtype)), shape);
    std::memcpy(copy.mutable_data(), a.data.data(), a.data.size());
    result[py::str(name)] = copy;
  }
  return result;
}

}  // namespace

void bind_tools(py::module_& m) {
  using namespace pybind11::literals;
  m.def("quantize", &quantize, "model"_a, "output"_a, py::kw_only(), "calib"_a = py::none(), "calib_count"_a = 1000,
        "per_class"_a = 0, "method"_a = "minmax", "percentile"_a = 99.999, "per_channel"_a = py::none(),
        "activations"_a = "uint8", "keep_float"_a = py::none(), "mode"_a = "static",
        "allow_test_calibration"_a = false, "batch"_a = 32, "progress"_a = false,
        "Quantize an FP32 ONNX model to an INT8 one as `octet quantize` does (same defaults, same file); returns the "
        "report `octet quantize --json` prints");
  m.def("_quantize_in_memory", &quantize_in_memory, "model"_a, py::kw_only(), "calib"_a = py::none(),
        "calib_count"_a = 1000, "per_class"_a = 0, "method"_a = "minmax", "percentile"_a = 99.999,
        "per_channel"_a = py::none(), "activations"_a = "uint8", "keep_float"_a = py::none(), "mode"_a = "static",
        "allow_test_calibration"_a = false, "batch"_a = 32,
        "The model quantized as `octet eval --precision int8` does in memory: (its ONNX bytes, the calibration "
        "report of `octet eval --json`)");
  m.def("explain", &explain, "model"_a, py::kw_only(), "html"_a = py::none(), "json"_a = py::none(),
        "fp32"_a = py::none(), "data"_a = py::none(), "images"_a = 1000, "isa_levels"_a = "all", "batch"_a = 16,
        "threads"_a = 1, "compare_ort"_a = false, "progress"_a = false, "calib"_a = py::none(),
        "calib_count"_a = 1000, "per_class"_a = 0, "method"_a = "minmax", "percentile"_a = 99.999,
        "per_channel"_a = py::none(), "activations"_a = "uint8", "keep_float"_a = py::none(), "mode"_a = "static",
        "allow_test_calibration"_a = false,
        "Measure why the model's INT8 is faster or slower than its FP32 here, as `octet explain` does; returns the "
        "report (docs/explain.md), also written as a page (html=) and as JSON (json=) when asked");
  m.def("cpu", &cpu, "peaks"_a = true,
        "This CPU's ISA levels (supported, detected, active) and, when the build has the peak loops, each level's "
        "measured FP32 GFLOP/s and INT8 GOP/s on one core");
  m.def("ort_run", &ort_run, "model"_a, "feeds"_a, py::kw_only(), "threads"_a = 1,
        "Run the model once in ONNX Runtime (through Node, tools/ort/) on these arrays; every output by name");
  m.def("ort_unavailable_reason", &ort::unavailable_reason,
        "Why ONNX Runtime cannot be used here, with what fixes it; '' when it can");
}

}  // namespace octet::python
