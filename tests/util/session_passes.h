#pragma once
// What a Session's passes did, for the pass tests (tests/engine/test_*_fusion.cc and the like).
#include <string>

#include "engine/session.h"

namespace octet::testing {

// The nodes or inputs pass `pass` changed, as Session::pass_report() says; -1 when it did not run
// (switched off).
inline int pass_changed(const Session& s, const std::string& pass) {
  for (const auto& p : s.pass_report())
    if (p.pass == pass) return p.changed;
  return -1;
}

// Nodes of op type `op` in the Session's graph after its passes.
inline int count_ops(const Session& s, const std::string& op) {
  int n = 0;
  for (const auto& node : s.graph().nodes) n += node.op == op;
  return n;
}

}  // namespace octet::testing
