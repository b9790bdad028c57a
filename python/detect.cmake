# Whether the Python module can be built here (included by the top-level CMakeLists.txt before
# its OCTET_BUILD_PYTHON option): sets octet_python_default, and finds the interpreter
# (Python3_*) and pybind11 that python/CMakeLists.txt builds with.
set(octet_python_default OFF)
if(DEFINED OCTET_BUILD_PYTHON AND NOT OCTET_BUILD_PYTHON)
  return()
endif()
# Under pip (SKBUILD, pyproject.toml) the wheel is the module: what is missing is an error.
macro(octet_python_off reason)
  if(SKBUILD)
    message(FATAL_ERROR "octet's Python module cannot be built: ${reason}")
  endif()
  message(STATUS "Python module: off (${reason})")
  return()
endmacro()
if(CMAKE_CROSSCOMPILING OR OCTET_SANITIZE OR OCTET_FUZZ)
  # A plain python3 cannot load a module that needs the sanitizers' runtime, nor a foreign one.
  octet_python_off("a cross, sanitizer or fuzzing build")
endif()

# The module needs NumPy at run time, and the first python3 on PATH may be another interpreter
# without it (pyenv, a virtual environment): take the first python3 that imports numpy.
# -DPython3_EXECUTABLE=... chooses another; scikit-build-core passes the interpreter pip runs, to
# which pip installs NumPy with the wheel.
function(octet_python_has_numpy result candidate)
  execute_process(COMMAND ${candidate} -c "import numpy" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(NOT rc EQUAL 0)
    set(${result} FALSE PARENT_SCOPE)
  endif()
endfunction()
if(NOT Python3_EXECUTABLE)
  find_program(OCTET_PYTHON3_WITH_NUMPY NAMES python3 VALIDATOR octet_python_has_numpy)
  if(NOT OCTET_PYTHON3_WITH_NUMPY)
    octet_python_off("no python3 with NumPy; Debian: python3-numpy")
  endif()
  set(Python3_EXECUTABLE "${OCTET_PYTHON3_WITH_NUMPY}" CACHE FILEPATH "The python3 the octet module is built for")
endif()
# Found before pybind11, which then builds for this interpreter (pybind11's FindPython mode).
find_package(Python3 COMPONENTS Interpreter Development.Module QUIET)
if(NOT Python3_FOUND)
  octet_python_off("no development files for ${Python3_EXECUTABLE}; Debian: python3-dev")
endif()
find_package(pybind11 CONFIG QUIET)
if(NOT pybind11_FOUND)
  octet_python_off("pybind11 not found; Debian: pybind11-dev")
endif()
set(octet_python_default ON)
