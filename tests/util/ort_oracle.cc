#include "tests/util/ort_oracle.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <vector>

#ifndef OCTET_SOURCE_DIR
#error "OCTET_SOURCE_DIR must be defined (tests/CMakeLists.txt does it)"
#endif

extern char** environ;

namespace octet::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kRunner = fs::path(OCTET_SOURCE_DIR) / "tools" / "ort" / "ort_run.mjs";

std::string node_binary() {
  const char* env = std::getenv("OCTET_NODE");
  return env && *env ? env : "node";
}

// A private directory under $TMPDIR, removed with everything in it when it goes out of scope.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "octet-ort-XXXXXX").string();
    if (!::mkdtemp(pattern.data()))
      throw std::runtime_error("cannot create a temporary directory " + pattern + ": " + std::strerror(errno));
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::size_t b = 0;
  while (b < s.size() && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  return s.substr(b);
}

struct ProcessResult {
  int spawn_error = 0;  // errno from posix_spawnp (ENOENT: program not found), 0 if it started
  int exit_code = -1;   // -1 if killed by a signal
  std::string out, err;
};

// Runs argv (searched on PATH) with stdin from /dev/null and stdout/stderr captured in `dir`.
// No shell is involved, so paths and tensor names need no quoting.
ProcessResult run_process(const std::vector<std::string>& argv, const fs::path& dir) {
  const fs::path out_file = dir / "stdout.txt", err_file = dir / "stderr.txt";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  ProcessResult r;
  pid_t pid = 0;
  r.spawn_error = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (r.spawn_error != 0) return r;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error(std::string("waitpid failed: ") + std::strerror(errno));
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out_file);
  r.err = trim(slurp(err_file));
  if (!WIFEXITED(status)) r.err += " (killed by signal " + std::to_string(WTERMSIG(status)) + ")";
  return r;
}

struct Probe {
  std::string reason, version;
};

const Probe& probe() {
  static const Probe p = [] {
    Probe p;
    if (!fs::exists(kRunner)) {
      p.reason = "the ONNX Runtime runner " + kRunner.string() + " is missing";
      return p;
    }
    try {
      TempDir tmp;
      ProcessResult r = run_process({node_binary(), kRunner.string(), "--version"}, tmp.path());
      if (r.spawn_error == ENOENT || r.exit_code == 127) {
        p.reason = "Node.js ('" + node_binary() + "') is not installed or not on PATH; run tools/setup.sh";
      } else if (r.spawn_error != 0) {
        p.reason = "cannot start '" + node_binary() + "': " + std::strerror(r.spawn_error);
      } else if (r.exit_code != 0) {
        p.reason = r.err.empty() ? "the runner failed with no message" : r.err;
      } else {
        // "onnxruntime-node 1.30.0"
        std::string out = trim(r.out);
        p.version = out.substr(out.rfind(' ') + 1);
      }
    } catch (const std::exception& e) {
      p.reason = e.what();
    }
    return p;
  }();
  return p;
}

std::string file_name_for_input(std::size_t i) { return "input" + std::to_string(i) + ".npy"; }

}  // namespace

std::string ort_unavailable_reason() {
  const Probe& p = probe();
  return p.reason.empty() ? "" : "ONNX Runtime unavailable: " + p.reason;
}

std::string ort_version() { return probe().version; }

std::map<std::string, npy::Array> run_ort(const std::string& model_path,
                                          const std::map<std::string, npy::Array>& inputs,
                                          const OrtOptions& opt) {
  if (std::string why = ort_unavailable_reason(); !why.empty()) throw std::runtime_error(why);
  if (!fs::exists(model_path)) throw std::runtime_error(model_path + ": no such model file");

  TempDir tmp;
  std::vector<std::string> argv = {node_binary(), kRunner.string(), "--model", fs::absolute(model_path).string()};
  std::size_t i = 0;
  for (const auto& [name, array] : inputs) {
    if (name.find('=') != std::string::npos)
      throw std::invalid_argument("run_ort: input name '" + name + "' contains '=', which the runner cannot take");
    const fs::path file = tmp.path() / file_name_for_input(i++);
    npy::write(file.string(), array);
    argv.insert(argv.end(), {"--input", name + "=" + file.string()});
  }
  const fs::path out_dir = tmp.path() / "out";
  argv.insert(argv.end(), {"--output-dir", out_dir.string(), "--threads", std::to_string(opt.threads),
                           "--graph-opt", opt.graph_opt});

  ProcessResult r = run_process(argv, tmp.path());
  if (r.spawn_error != 0)
    throw std::runtime_error("cannot start " + node_binary() + ": " + std::strerror(r.spawn_error));
  if (r.exit_code != 0)
    throw std::runtime_error("ONNX Runtime failed on " + model_path + ": " +
                             (r.err.empty() ? "exit code " + std::to_string(r.exit_code) : r.err));

  const fs::path index_file = out_dir / "outputs.json";
  nlohmann::json index;
  try {
    index = nlohmann::json::parse(slurp(index_file));
  } catch (const std::exception& e) {
    throw std::runtime_error(index_file.string() + ": " + e.what());
  }
  std::map<std::string, npy::Array> outputs;
  for (const auto& [name, entry] : index.items()) {
    npy::Array a = npy::read((out_dir / entry.at("file").get<std::string>()).string());
    if (a.shape != entry.at("shape").get<std::vector<int64_t>>() ||
        npy::dtype_name(a.dtype) != entry.at("dtype").get<std::string>())
      throw std::runtime_error("ONNX Runtime output '" + name + "' is " + npy::describe(a) +
                               " but outputs.json says " + entry.dump());
    outputs.emplace(name, std::move(a));
  }
  return outputs;
}

}  // namespace octet::testing
