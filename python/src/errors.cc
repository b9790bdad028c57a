#include <pybind11/pybind11.h>

#include <new>
#include <stdexcept>

#include "core/ir.h"
#include "engine/out_of_memory.h"
#include "python/src/bindings.h"
#include "apps/cli/commands.h"

namespace octet::python {

namespace py = pybind11;

// What octet throws becomes, with its one-line message:
//   ir::Error and other run-time failures (a file it cannot write, ONNX Runtime failing) -> octet.Error
//   an allocation that failed (std::bad_alloc, OutOfMemoryError)                     -> MemoryError
//   a usage mistake (cli::UsageError) or an invalid argument (std::invalid_argument)   -> ValueError
// pybind11's own exceptions (TypeError, ValueError, cast errors) pass through unchanged.
void bind_errors(py::module_& m) {
  static py::exception<ir::Error> error(m, "Error", PyExc_RuntimeError);
  error.attr("__doc__") = "An error octet reports, with its one-line message naming the file, node and op";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const py::builtin_exception&) {
      throw;
    } catch (const OutOfMemoryError& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const std::bad_alloc&) {
      PyErr_SetString(PyExc_MemoryError, "octet: out of memory (the model or the data needs more than this machine can give)");
    } catch (const cli::UsageError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const std::invalid_argument& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const std::runtime_error& e) {
      error(e.what());
    }
  });
}

}  // namespace octet::python
