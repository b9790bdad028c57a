# The Debian package: `cpack -G DEB` in a Release tree (or `cmake --build build --target package`)
# writes octet_<version>_<arch>.deb holding the octet command (/usr/bin), liboctet.so with its
# header and CMake package (find_package(octet)), and the Python module where Debian's python3
# finds it (/usr/lib/python3/dist-packages/octet). The runtime libraries it needs (protobuf, ONNX,
# fmt, cpuinfo, ...) become its Depends through dpkg-shlibdeps (Debian: dpkg-dev).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME octet)
set(CPACK_PACKAGE_VENDOR "octet")
if(NOT CPACK_PACKAGE_CONTACT)
  # -DCPACK_PACKAGE_CONTACT="Name <address>" names whoever builds and ships the package.
  set(CPACK_PACKAGE_CONTACT "octet maintainers")
endif()
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "ONNX inference engine with its own FP32 and INT8 CPU kernels")
set(CPACK_PACKAGE_DESCRIPTION
    "octet runs ONNX models in FP32 and INT8 on hand-written kernels for x86 (AVX2, AVX-512, VNNI) \
and AArch64 (NEON, dot product, I8MM), quantizes them (octet quantize), compares them with ONNX \
Runtime and explains, kernel by kernel, why INT8 is faster or slower than FP32 on this CPU. This \
package holds the octet command, the C++ library liboctet.so with its header and CMake package \
(find_package(octet)), and the Python module (import octet).")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# liboctet.so.MAJOR gets a shlibs entry and the ldconfig trigger.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)

# One package from the install components: the library, the command and, when the module is
# built, its copy for Debian's python3 (python/CMakeLists.txt), instead of the "python"
# component, which follows this tree's install prefix.
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ALL_COMPONENTS_IN_ONE)
set(CPACK_COMPONENTS_ALL library cli)
if(TARGET _octet)
  list(APPEND CPACK_COMPONENTS_ALL deb_python)
  # The extension is built for this python3 (its file name carries the version's ABI tag).
  math(EXPR octet_python_next "${Python3_VERSION_MINOR} + 1")
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
      "python3 (>= ${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}), python3 (<< ${Python3_VERSION_MAJOR}.${octet_python_next}), python3-numpy")
endif()

include(CPack)
