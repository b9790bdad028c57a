#pragma once
// The parts of the extension module octet._octet, each defined in its own file.
#include <pybind11/pybind11.h>

namespace octet::python {

void bind_errors(pybind11::module_& m);   // errors.cc: octet.Error and how C++ exceptions reach Python
void bind_session(pybind11::module_& m);  // session.cc: Session and NodeArg
void bind_tools(pybind11::module_& m);    // tools.cc: quantize, explain, cpu, ort_run

}  // namespace octet::python
