// Bytes -> ONNX loader -> graph passes -> a plan at batch 1 (the work `octet info` does).
// Any input must end in ir::Error (or another std::exception with a message), never in a
// crash, a sanitizer report, a hang or runaway memory (tools/fuzz.sh runs it with
// -rss_limit_mb and -timeout).
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

#include "engine/session.h"
#include "loader/onnx_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    octet::ir::Graph g = octet::loader::load_onnx_bytes(std::string(reinterpret_cast<const char*>(data), size), "fuzz.onnx");
    octet::Session session(std::move(g));
    session.plan_for(session.input_dims_at(1));
  } catch (const std::exception&) {
    // A clean refusal.
  }
  return 0;
}
