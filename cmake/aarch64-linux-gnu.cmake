# Cross-compiles octet for AArch64 Linux from an x86-64 Debian machine with the Debian cross
# toolchain (g++-aarch64-linux-gnu), and runs the built programs under qemu-user, so that ctest
# runs the tests directly:
#
#   tools/arm/sysroot.sh build-arm/sysroot
#   cmake -S . -B build-arm -G Ninja --toolchain cmake/aarch64-linux-gnu.cmake -DOCTET_QEMU_CPU=cortex-a72
#
# (tools/arm/test.sh does all of it.) The cross toolchain brings libc and libstdc++ under
# /usr/aarch64-linux-gnu; the other arm64 libraries come from OCTET_ARM_SYSROOT, a folder of
# unpacked Debian packages that tools/arm/sysroot.sh prepares. protoc runs from the host.

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

# OCTET_ARM_CLANG=clang++-14 builds with clang for the same target instead (the compiler of macOS
# and Android), against the same cross libc and libstdc++: tools/arm/test.sh --clang compiles the
# kernel library that way, so GCC-only intrinsics or vector syntax in kernels/arm fail here.
set(OCTET_ARM_CLANG "" CACHE STRING "clang++ to build with instead of aarch64-linux-gnu-g++ (e.g. clang++-14)")
if(OCTET_ARM_CLANG)
  set(CMAKE_CXX_COMPILER "${OCTET_ARM_CLANG}")
  string(REPLACE "clang++" "clang" octet_arm_clang_c "${OCTET_ARM_CLANG}")
  set(CMAKE_C_COMPILER "${octet_arm_clang_c}")
  set(CMAKE_C_COMPILER_TARGET aarch64-linux-gnu)
  set(CMAKE_CXX_COMPILER_TARGET aarch64-linux-gnu)
else()
  set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
  set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
endif()

# The cross toolchain's own root (libc, libstdc++, the dynamic loader).
set(OCTET_ARM_TOOLCHAIN_ROOT /usr/aarch64-linux-gnu)

set(OCTET_ARM_SYSROOT "${CMAKE_BINARY_DIR}/sysroot" CACHE PATH
    "Unpacked arm64 Debian packages the cross build links against (tools/arm/sysroot.sh)")
set(OCTET_QEMU_CPU max CACHE STRING
    "qemu-aarch64 -cpu model the tests run on (e.g. cortex-a72: NEON only; cortex-a76: + dotprod; max: + i8mm)")
# try_compile projects load this file again in their own folder: hand them the same values.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES OCTET_ARM_SYSROOT OCTET_QEMU_CPU OCTET_ARM_CLANG)

if(NOT EXISTS "${OCTET_ARM_SYSROOT}/usr/include")
  message(FATAL_ERROR "octet: no arm64 sysroot at ${OCTET_ARM_SYSROOT}: run tools/arm/sysroot.sh "
                      "${OCTET_ARM_SYSROOT} first, or set -DOCTET_ARM_SYSROOT=<folder>")
endif()

# Packages, libraries and headers only from the arm64 trees; programs (protoc) from the host.
set(CMAKE_FIND_ROOT_PATH "${OCTET_ARM_SYSROOT}" "${OCTET_ARM_TOOLCHAIN_ROOT}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Headers found only by the compiler's search (pthreadpool.h has no CMake package) and the
# transitive shared libraries the linker must see (libonnx.so needs libprotobuf.so.32, which
# needs libz.so.1).
set(octet_arm_lib_dirs "${OCTET_ARM_SYSROOT}/usr/lib/aarch64-linux-gnu" "${OCTET_ARM_SYSROOT}/lib/aarch64-linux-gnu")
set(CMAKE_C_STANDARD_INCLUDE_DIRECTORIES "${OCTET_ARM_SYSROOT}/usr/include")
set(CMAKE_CXX_STANDARD_INCLUDE_DIRECTORIES "${OCTET_ARM_SYSROOT}/usr/include")
string(REPLACE ";" ":" octet_arm_lib_path "${octet_arm_lib_dirs}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,-rpath-link,${octet_arm_lib_path}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-Wl,-rpath-link,${octet_arm_lib_path}")

# The emulator as a small script in the build folder rather than a command line: gtest's
# discovered tests record the emulator when they are discovered, so a script whose -cpu follows
# OCTET_QEMU_CPU lets a reconfigure switch the CPU model without relinking anything (or QEMU_CPU
# for one run: tools/arm/model_check.sh). -L serves
# the dynamic loader and libc; LD_LIBRARY_PATH the sysroot's libraries, transitive ones included.
find_program(OCTET_QEMU_AARCH64 qemu-aarch64)
if(NOT OCTET_QEMU_AARCH64)
  message(WARNING "octet: qemu-aarch64 not found (Debian: qemu-user); the cross-built tests cannot run here")
else()
  set(octet_qemu_runner "${CMAKE_BINARY_DIR}/qemu-aarch64-run")
  file(CONFIGURE OUTPUT "${octet_qemu_runner}" @ONLY CONTENT
"#!/bin/sh
# Written by cmake/aarch64-linux-gnu.cmake: runs an AArch64 program of this build under qemu-user.
# QEMU_CPU (qemu-user's own variable) overrides the configured CPU model for one run.
exec \"@OCTET_QEMU_AARCH64@\" -L \"@OCTET_ARM_TOOLCHAIN_ROOT@\" -cpu \"\${QEMU_CPU:-@OCTET_QEMU_CPU@}\" \\
  -E \"LD_LIBRARY_PATH=@octet_arm_lib_path@\" \"$@\"
")
  file(CHMOD "${octet_qemu_runner}" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
       GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${octet_qemu_runner}")
endif()
