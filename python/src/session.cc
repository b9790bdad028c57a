// octet.Session: a model loaded once and run on NumPy arrays, from any number of Python threads
// at once (Session::run is reentrant, and the GIL is released while the engine works).
#include <pybind11/stl.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "kernels/isa.h"
#include "python/src/arrays.h"
#include "python/src/bindings.h"
#include "apps/cli/stats.h"

namespace octet::python {

int capped_threads(int threads) {
  if (threads < 1) throw py::value_error("threads must be at least 1, got " + std::to_string(threads));
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  if (threads <= cores) return threads;
  const std::string warning = "threads=" + std::to_string(threads) + " is more than this machine's " +
                              std::to_string(cores) + " core(s); using " + std::to_string(cores) +
                              " (threads beyond the cores only spin against each other)";
  if (PyErr_WarnEx(PyExc_RuntimeWarning, warning.c_str(), 1) != 0) throw py::error_already_set();
  return cores;
}

namespace {

// One input or output of the model, with the fields of ONNX Runtime's NodeArg.
struct NodeArg {
  std::string name;
  ir::DType dtype;
  ir::Dims dims;  // -1: fixed at run time (the batch)

  py::list shape() const {
    py::list s;
    for (int64_t d : dims) s.append(d < 0 ? py::object(py::none()) : py::object(py::int_(d)));
    return s;
  }
};

std::string names_of(const std::vector<TensorSpec>& specs) {
  std::string s;
  for (const auto& t : specs) s += (s.empty() ? "" : ", ") + t.name;
  return s;
}

class PySession {
 public:
  PySession(const std::string& path, const std::optional<std::string>& isa, int threads) {
    threads = capped_threads(threads);
    SessionOptions options;
    options.threads = threads;
    if (isa) {
      options.isa = kernels::parse_isa(*isa);
      if (!options.isa)
        throw py::value_error("isa: unknown level '" + *isa + "' (levels: " + kernels::isa_names() + ")");
    }
    py::gil_scoped_release unlocked;
    session_ = std::make_unique<Session>(Session::load(path, options));
    isa_ = options.isa.value_or(kernels::active_isa());
    threads_ = threads;
  }

  std::vector<NodeArg> inputs() const { return node_args(session_->inputs()); }
  std::vector<NodeArg> outputs() const { return node_args(session_->outputs()); }
  std::string path() const { return session_->graph().source; }
  std::string isa() const { return kernels::isa_name(isa_); }
  int threads() const { return threads_; }
  int warm_up_runs() const { return session_->warm_up_runs(); }

  // The outputs named by `output_names` (every output when None), in that order.
  py::list run(const py::handle& feeds, const py::object& output_names) {
    const std::vector<size_t> wanted = output_indices(output_names);
    Feeds in = read_feeds(feeds);
    std::vector<ir::TensorData> out;
    {
      py::gil_scoped_release unlocked;
      out = session_->run_views(in.views);
    }
    py::list result;
    for (size_t i : wanted) result.append(to_numpy(std::move(out[i])));
    return result;
  }

  // Per step: the median of `repeat` timed runs (after `warmup` untimed ones, or the session's
  // own warm-up when that is longer: on threads, the runs that settle each step's threads), its kernel, MACs,
  // and the parts its kernel timed inside it.
  py::list profile(const py::handle& feeds, int repeat, int warmup) {
    if (repeat < 1) throw py::value_error("repeat must be at least 1, got " + std::to_string(repeat));
    if (warmup < 0) throw py::value_error("warmup must be 0 or more, got " + std::to_string(warmup));
    Feeds in = read_feeds(feeds);
    std::vector<std::vector<StepTiming>> runs(static_cast<size_t>(repeat));
    {
      py::gil_scoped_release unlocked;
      for (int i = 0, runs = std::max(warmup, session_->warm_up_runs()); i < runs; ++i) session_->run_views(in.views);
      for (auto& timings : runs) session_->run_views(in.views, &timings);
    }
    py::list steps;
    for (size_t s = 0; s < runs[0].size(); ++s) {
      const StepTiming& first = runs[0][s];
      std::vector<double> us;
      std::map<std::string, std::vector<double>> parts;
      for (const auto& timings : runs) {
        us.push_back(timings[s].microseconds);
        // A part may be reported several times in one run (once per chunk): one sum per run.
        std::map<std::string, double> sums;
        for (const StepPart& p : timings[s].parts) sums[p.name] += p.microseconds;
        for (const auto& [name, t] : sums) parts[name].push_back(t);
      }
      py::dict part_medians;
      for (const auto& [name, samples] : parts) part_medians[py::str(name)] = summarize(samples).p50;
      py::dict step;
      step["node"] = first.node;
      step["op"] = first.op;
      step["kernel"] = first.kernel.empty() ? py::object(py::none()) : py::object(py::str(first.kernel));
      step["microseconds"] = summarize(us).p50;
      step["macs"] = first.macs;
      step["parts"] = part_medians;
      steps.append(step);
    }
    return steps;
  }

 private:
  // The feeds as the engine reads them, and the arrays that hold that memory.
  struct Feeds {
    std::vector<py::array> arrays;
    std::vector<TensorView> views;
  };

  Feeds read_feeds(const py::handle& feeds) const {
    const std::string source = path();
    if (!py::isinstance<py::dict>(feeds))
      throw py::type_error(source + ": the feeds must be a dict of input name -> numpy array, got " +
                           std::string(py::str(py::type::of(feeds).attr("__name__"))));
    const auto dict = py::reinterpret_borrow<py::dict>(feeds);
    const auto& specs = session_->inputs();
    for (const auto& [key, value] : dict) {
      const std::string name = py::str(key);
      bool known = false;
      for (const auto& spec : specs) known = known || spec.name == name;
      if (!known)
        throw py::value_error(source + ": the model has no input '" + name + "' (its inputs: " + names_of(specs) + ")");
    }
    Feeds in;
    for (const auto& spec : specs) {
      if (!dict.contains(spec.name))
        throw py::value_error(source + ": no array given for input '" + spec.name + "' (its inputs: " +
                              names_of(specs) + ")");
      auto expected = [&](const std::string& got) {
        return source + ": input '" + spec.name + "' expects " + ir::dtype_name(spec.dtype) + " " +
               ir::dims_str(spec.dims) + ", got " + got;
      };
      const py::object value = dict[py::str(spec.name)];
      py::array a = input_array(value, spec.dtype, expected);
      bool fits = size_t(a.ndim()) == spec.dims.size();
      for (size_t d = 0; fits && d < spec.dims.size(); ++d) fits = spec.dims[d] < 0 || spec.dims[d] == a.shape(py::ssize_t(d));
      if (!fits) throw py::value_error(expected(describe_array(a)));
      in.views.push_back(view_of(a, spec.dtype));
      in.arrays.push_back(std::move(a));
    }
    return in;
  }

  std::vector<size_t> output_indices(const py::object& names) const {
    const auto& outs = session_->outputs();
    std::vector<size_t> wanted;
    if (names.is_none()) {
      for (size_t i = 0; i < outs.size(); ++i) wanted.push_back(i);
      return wanted;
    }
    if (py::isinstance<py::str>(names))
      throw py::type_error(path() + ": output names must be a list of names or None, got a str");
    for (const auto& n : names) {
      const std::string name = py::str(n);
      size_t i = 0;
      while (i < outs.size() && outs[i].name != name) ++i;
      if (i == outs.size())
        throw py::value_error(path() + ": the model has no output '" + name + "' (its outputs: " + names_of(outs) + ")");
      wanted.push_back(i);
    }
    return wanted;
  }

  static std::vector<NodeArg> node_args(const std::vector<TensorSpec>& specs) {
    std::vector<NodeArg> args;
    for (const auto& s : specs) args.push_back({s.name, s.dtype, s.dims});
    return args;
  }

  std::unique_ptr<Session> session_;
  kernels::Isa isa_ = kernels::Isa::scalar;
  int threads_ = 1;
};

}  // namespace

void bind_session(py::module_& m) {
  py::class_<NodeArg>(m, "NodeArg", "A model input or output: name, shape (None for the batch), dtype, type")
      .def_readonly("name", &NodeArg::name)
      .def_property_readonly("shape", &NodeArg::shape)
      .def_property_readonly("dtype", [](const NodeArg& a) { return std::string(ir::dtype_name(a.dtype)); },
                             "NumPy's name for the element type, e.g. 'float32'")
      .def_property_readonly("type", [](const NodeArg& a) { return onnx_type_name(a.dtype); },
                             "ONNX Runtime's name for it, e.g. 'tensor(float)'")
      .def("__repr__", [](const NodeArg& a) {
        return "NodeArg(name='" + a.name + "', type='" + onnx_type_name(a.dtype) + "', shape=" +
               std::string(py::repr(a.shape())) + ")";
      });

  py::class_<PySession>(m, "Session")
      .def(py::init<const std::string&, const std::optional<std::string>&, int>(), py::arg("path"),
           py::arg("isa") = py::none(), py::arg("threads") = 1)
      .def_property_readonly("inputs", &PySession::inputs)
      .def_property_readonly("outputs", &PySession::outputs)
      .def_property_readonly("path", &PySession::path)
      .def_property_readonly("isa", &PySession::isa, "The highest ISA level the kernels may use")
      .def_property_readonly("threads", &PySession::threads)
      .def_property_readonly("warm_up_runs", &PySession::warm_up_runs,
                             "Untimed runs to make before timing: 1, or 7 on threads (the runs in which the plan "
                             "settles which steps split over the threads)")
      .def("_run", &PySession::run, py::arg("feeds"), py::arg("output_names") = py::none())
      .def("profile", &PySession::profile, py::arg("feeds"), py::arg("repeat") = 20, py::arg("warmup") = 1,
           "Per step of the plan for these inputs: node, op, kernel, microseconds (median of `repeat` runs), "
           "macs, and parts (median microseconds of what the kernel timed inside the step). Untimed runs "
           "first: `warmup`, or more on threads (the runs in which the plan settles each step's threads)");
}

}  // namespace octet::python
