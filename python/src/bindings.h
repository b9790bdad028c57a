#pragma once
// The parts of the extension module octet._octet, each defined in its own file.
#include <pybind11/pybind11.h>

namespace octet::python {

void bind_errors(pybind11::module_& m);   // errors.cc: octet.Error and how C++ exceptions reach Python
void bind_session(pybind11::module_& m);  // session.cc: Session and NodeArg
void bind_tools(pybind11::module_& m);    // tools.cc: quantize, explain, cpu, ort_run
void bind_eval(pybind11::module_& m);     // eval.cc: `octet eval`'s data, accuracy and report, for octet.ray

// `threads` as the engine should get it: at least 1 (else ValueError), at most the machine's
// cores, with a RuntimeWarning when capped (pthreadpool's workers spin while they wait, so
// more threads than cores take turns spinning: 256 made one run 20,000x slower).
int capped_threads(int threads);

}  // namespace octet::python
