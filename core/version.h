#pragma once
// octet's version, for `octet --version` and the reports that name it.
#define OCTET_VERSION "0.11"  // keep in step with project(VERSION) in CMakeLists.txt
