#pragma once
// Runs the octet command line as a user would (the test target defines OCTET_CLI as the
// binary's path), or any shell command, and captures what it prints.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace octet::testing {

struct CliResult {
  int status;          // exit status, -1 if it did not exit normally
  std::string output;  // stdout, plus stderr when asked for
};

// Runs a shell command line and returns its exit status and stdout.
inline CliResult run_shell(const std::string& cmd) {
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, "popen failed"};
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// The CLI runners need the binary's path; run_shell and ScratchDir serve any test.
#ifdef OCTET_CLI
inline CliResult run_cli(const std::string& args, bool with_stderr) {
  return run_shell(std::string(OCTET_CLI) + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null"));
}

// `shell_prefix` goes before the binary in the command line (e.g. "ulimit -v N && exec
// timeout 60 "); stderr is merged into the output.
inline CliResult run_cli_wrapped(const std::string& shell_prefix, const std::string& args) {
  return run_shell(shell_prefix + std::string(OCTET_CLI) + " " + args + " 2>&1");
}
#endif

// A fresh folder under the system's temporary directory, removed with everything in it.
struct ScratchDir {
  std::filesystem::path path;
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "octet-cli-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path = pattern;
  }
  ~ScratchDir() { std::filesystem::remove_all(path); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
};

}  // namespace octet::testing
