#pragma once
// NumPy arrays and the engine's tensors: the dtypes they share, inputs read in place, outputs
// handed over without a copy.
#include <pybind11/numpy.h>

#include <string>

#include "core/ir.h"
#include "engine/session.h"

namespace octet::python {

namespace py = pybind11;

// NumPy's dtype for an engine dtype (the names agree: ir::dtype_name).
py::dtype numpy_dtype(ir::DType t);
// ONNX Runtime's NodeArg.type for it: "tensor(float)", "tensor(int64)", ...
std::string onnx_type_name(ir::DType t);

// `value` as an array the engine can read in place: itself when it is a C-contiguous array of
// dtype `t`, a C-order copy when it has that dtype in another order. `describe(got)` words the
// one-line message of the TypeError thrown when it is not a NumPy array of that dtype.
template <class Describe>
py::array input_array(const py::handle& value, ir::DType t, const Describe& describe);

// The array's memory as the engine reads it (valid while the array lives, unchanged).
TensorView view_of(const py::array& a, ir::DType t);

// The tensor moved into a NumPy array that owns it: no copy.
py::array to_numpy(ir::TensorData&& t);

// "float64 [1,1,28,28]": an array's dtype and shape as octet's messages write tensors.
std::string describe_array(const py::array& a);

// --- implementation of the template

template <class Describe>
py::array input_array(const py::handle& value, ir::DType t, const Describe& describe) {
  if (!py::isinstance<py::array>(value))
    throw py::type_error(describe(std::string(py::str(py::type::of(value).attr("__name__")))));
  auto a = py::reinterpret_borrow<py::array>(value);
  if (!a.dtype().equal(numpy_dtype(t))) throw py::type_error(describe(describe_array(a)));
  if (a.flags() & py::array::c_style) return a;
  // The one case that copies. ensure() answers a null handle (and clears NumPy's error) when
  // the copy cannot be made: a broadcast view of 10^8 images has no memory behind it to copy.
  py::array copy = py::array::ensure(a, py::array::c_style);
  if (!copy) {
    const std::string what = "cannot make a C-order copy of the " + describe_array(a) + " input (" +
                             std::to_string(a.size()) + " values): out of memory";
    PyErr_SetString(PyExc_MemoryError, what.c_str());
    throw py::error_already_set();
  }
  return copy;
}

}  // namespace octet::python
