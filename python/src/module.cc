// octet._octet: the C++ half of the Python module `octet` (python/octet/__init__.py is the other).
#include "python/src/bindings.h"
#include "core/version.h"

PYBIND11_MODULE(_octet, m) {
  m.doc() = "octet's engine, quantizer and explain report, bound to Python (use the package octet)";
  m.attr("__version__") = OCTET_VERSION;
  octet::python::bind_errors(m);
  octet::python::bind_session(m);
  octet::python::bind_tools(m);
  octet::python::bind_eval(m);
}
