#pragma once
// Runs the octet command line as a user would (the test target defines OCTET_CLI as the
// binary's path) and captures what it prints.
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace octet::testing {

struct CliResult {
  int status;          // exit status, -1 if it did not exit normally
  std::string output;  // stdout, plus stderr when asked for
};

inline CliResult run_cli(const std::string& args, bool with_stderr) {
  std::string cmd = std::string(OCTET_CLI) + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null");
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, "popen failed"};
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace octet::testing
