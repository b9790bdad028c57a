// Forwards to tools/ort/ort_client.h, where the runner is located, spawned and read back.
#include "tests/util/ort_oracle.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>
#include <vector>

extern char** environ;

namespace octet::testing {

std::string ort_unavailable_reason() { return octet::ort::unavailable_reason(); }

std::string ort_version() { return octet::ort::version(); }

std::map<std::string, npy::Array> run_ort(const std::string& model_path,
                                          const std::map<std::string, npy::Array>& inputs,
                                          const OrtOptions& opt) {
  return octet::ort::run(model_path, inputs, opt);
}

void ort_fuse(const std::string& model_path, const std::string& out_path) {
  const char* env = std::getenv("OCTET_NODE");
  const std::string node = env && *env ? env : "node";
  const char* dir = std::getenv("OCTET_ORT_DIR");
  const std::string script = (dir && *dir ? std::string(dir) : std::string(OCTET_SOURCE_DIR) + "/tools/ort") + "/ort_fuse.mjs";
  std::vector<std::string> args = {node, script, "--model", model_path, "--out", out_path, "--graph-opt", "extended"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid;
  if (posix_spawnp(&pid, node.c_str(), nullptr, nullptr, argv.data(), environ) != 0)
    throw std::runtime_error("ort_fuse: cannot start " + node);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("ort_fuse: " + script + " --model " + model_path + " exited with status " +
                             std::to_string(status));
}

}  // namespace octet::testing
