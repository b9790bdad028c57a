#include "tools/ort_client.h"

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

#ifndef OCTET_SOURCE_DIR
#error "OCTET_SOURCE_DIR must be defined (tools/CMakeLists.txt does it for octet_ort_client)"
#endif

extern char** environ;

namespace octet::ort {
namespace {

namespace fs = std::filesystem;

fs::path runner_dir() {
  const char* env = std::getenv("OCTET_ORT_DIR");
  return env && *env ? fs::path(env) : fs::path(OCTET_SOURCE_DIR) / "tools" / "ort";
}

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

// Closes a file descriptor when it goes out of scope.
struct Fd {
  int fd = -1;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

struct ProcessResult {
  int spawn_error = 0;  // errno from posix_spawnp (ENOENT: program not found), 0 if it started
  int exit_code = -1;   // -1 if killed by a signal
  std::string out, err;
};

// Runs argv (searched on PATH) with stdin from /dev/null, stdout captured in a file in `dir` and
// stderr through a pipe. No shell is involved, so paths and tensor names need no quoting.
// Stderr lines that start with `tee_prefix` (when not empty) are also copied to this process's
// stderr as they arrive (progress lines); everything is kept in the result.
ProcessResult run_process(const std::vector<std::string>& argv, const fs::path& dir,
                          const std::string& tee_prefix = "") {
  const fs::path out_file = dir / "stdout.txt";
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe failed: ") + std::strerror(errno));
  Fd read_end{fds[0]}, write_end{fds[1]};

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  // dup2 clears close-on-exec on fd 2 only; both pipe ends themselves close at exec.
  posix_spawn_file_actions_adddup2(&actions, write_end.fd, 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  ProcessResult r;
  pid_t pid = 0;
  r.spawn_error = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (r.spawn_error != 0) return r;
  write_end.reset();  // so that reading sees end-of-file when the child exits

  std::string line;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(read_end.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    r.err.append(buf, static_cast<std::size_t>(n));
    if (tee_prefix.empty()) continue;
    for (ssize_t i = 0; i < n; ++i) {
      line += buf[i];
      if (buf[i] != '\n') continue;
      if (line.rfind(tee_prefix, 0) == 0) (void)!::write(2, line.data(), line.size());
      line.clear();
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error(std::string("waitpid failed: ") + std::strerror(errno));
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out_file);
  r.err = trim(r.err);
  if (!WIFEXITED(status)) r.err += " (killed by signal " + std::to_string(WTERMSIG(status)) + ")";
  return r;
}

struct Probe {
  std::string reason, version;
};

const Probe& probe() {
  static const Probe p = [] {
    Probe p;
    const fs::path runner = runner_dir() / "ort_run.mjs";
    if (!fs::exists(runner)) {
      p.reason = "the ONNX Runtime runner " + runner.string() + " is missing";
      if (const char* env = std::getenv("OCTET_ORT_DIR"); env && *env) p.reason += " (OCTET_ORT_DIR is set)";
      return p;
    }
    try {
      TempDir tmp;
      ProcessResult r = run_process({node_binary(), runner.string(), "--version"}, tmp.path());
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

void require_available(const std::string& model) {
  if (std::string why = unavailable_reason(); !why.empty()) throw std::runtime_error(why);
  if (!fs::exists(model)) throw std::runtime_error(model + ": no such model file");
}

// Runs a runner to completion; throws with its stderr unless it exits 0.
void run_runner(const std::vector<std::string>& argv, const fs::path& dir, const std::string& model,
                const std::string& tee_prefix = "") {
  ProcessResult r = run_process(argv, dir, tee_prefix);
  if (r.spawn_error != 0)
    throw std::runtime_error("cannot start " + node_binary() + ": " + std::strerror(r.spawn_error));
  if (r.exit_code != 0)
    throw std::runtime_error("ONNX Runtime failed on " + model + ": " +
                             (r.err.empty() ? "exit code " + std::to_string(r.exit_code) : r.err));
}

nlohmann::json read_json(const fs::path& file) {
  try {
    return nlohmann::json::parse(slurp(file));
  } catch (const std::exception& e) {
    throw std::runtime_error(file.string() + ": " + e.what());
  }
}

// The outputs a runner left in `out_dir`, as its outputs.json lists them.
std::map<std::string, npy::Array> read_outputs(const fs::path& out_dir) {
  const nlohmann::json index = read_json(out_dir / "outputs.json");
  std::map<std::string, npy::Array> outputs;
  try {
    for (const auto& [name, entry] : index.items()) {
      npy::Array a = npy::read((out_dir / entry.at("file").get<std::string>()).string());
      if (a.shape != entry.at("shape").get<std::vector<int64_t>>() ||
          npy::dtype_name(a.dtype) != entry.at("dtype").get<std::string>())
        throw std::runtime_error("ONNX Runtime output '" + name + "' is " + npy::describe(a) +
                                 " but outputs.json says " + entry.dump());
      outputs.emplace(name, std::move(a));
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error((out_dir / "outputs.json").string() + ": " + e.what());
  }
  return outputs;
}

void check_input_name(const std::string& name) {
  if (name.find('=') != std::string::npos)
    throw std::invalid_argument("ONNX Runtime input name '" + name + "' contains '=', which the runner cannot take");
}

std::vector<std::string> session_args(const Options& opt) {
  return {"--threads", std::to_string(opt.threads), "--graph-opt", opt.graph_opt, "--u8s8", opt.u8s8};
}

}  // namespace

std::string unavailable_reason() {
  const Probe& p = probe();
  return p.reason.empty() ? "" : "ONNX Runtime unavailable: " + p.reason;
}

std::string version() { return probe().version; }

std::map<std::string, npy::Array> run(const std::string& model, const std::map<std::string, npy::Array>& inputs,
                                      const Options& opt) {
  require_available(model);
  TempDir tmp;
  std::vector<std::string> argv = {node_binary(), (runner_dir() / "ort_run.mjs").string(), "--model",
                                   fs::absolute(model).string()};
  std::size_t i = 0;
  for (const auto& [name, array] : inputs) {
    check_input_name(name);
    const fs::path file = tmp.path() / ("input" + std::to_string(i++) + ".npy");
    npy::write(file.string(), array);
    argv.insert(argv.end(), {"--input", name + "=" + file.string()});
  }
  const fs::path out_dir = tmp.path() / "out";
  argv.insert(argv.end(), {"--output-dir", out_dir.string()});
  for (auto& a : session_args(opt)) argv.push_back(std::move(a));
  run_runner(argv, tmp.path(), model);
  return read_outputs(out_dir);
}

EvalResult eval(const std::string& model, const std::string& input_name, const npy::Array& all_inputs,
                const EvalOptions& opt) {
  check_input_name(input_name);
  if (opt.batch < 1 || opt.threads < 1 || opt.warmup < 0 || opt.repeat < 1 || opt.limit_timing < -1)
    throw std::invalid_argument("ort::eval: need batch >= 1, threads >= 1, warmup >= 0, repeat >= 1 and "
                                "limit_timing >= -1; got batch " + std::to_string(opt.batch) + ", threads " +
                                std::to_string(opt.threads) + ", warmup " + std::to_string(opt.warmup) +
                                ", repeat " + std::to_string(opt.repeat) + ", limit_timing " +
                                std::to_string(opt.limit_timing));
  if (all_inputs.shape.empty() || all_inputs.shape[0] < 1)
    throw std::invalid_argument("ort::eval: the input " + npy::describe(all_inputs) + " holds no images along dim 0");
  require_available(model);
  const fs::path runner = runner_dir() / "ort_eval.mjs";
  if (!fs::exists(runner)) throw std::runtime_error("the ONNX Runtime runner " + runner.string() + " is missing");

  TempDir tmp;
  const fs::path input_file = tmp.path() / "input.npy", out_dir = tmp.path() / "out";
  npy::write(input_file.string(), all_inputs);
  std::vector<std::string> argv = {node_binary(), runner.string(), "--model", fs::absolute(model).string(),
                                   "--input", input_name + "=" + input_file.string(),
                                   "--batch", std::to_string(opt.batch),
                                   "--output-dir", out_dir.string(),
                                   "--warmup", std::to_string(opt.warmup),
                                   "--repeat", std::to_string(opt.repeat)};
  for (auto& a : session_args(opt)) argv.push_back(std::move(a));
  if (opt.limit_timing >= 0) argv.insert(argv.end(), {"--limit-timing", std::to_string(opt.limit_timing)});
  if (opt.progress) argv.push_back("--progress");
  run_runner(argv, tmp.path(), model, opt.progress ? "ort_eval: progress " : "");

  EvalResult result;
  result.outputs = read_outputs(out_dir);
  const fs::path timings_file = out_dir / "timings.json";
  const nlohmann::json timings = read_json(timings_file);
  try {
    result.batch_ms = timings.at("batch_ms").get<std::vector<double>>();
    result.images_per_run = timings.at("images_per_timed_run").get<std::vector<int64_t>>();
    result.version = timings.at("ort_version").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(timings_file.string() + ": " + e.what());
  }
  if (result.batch_ms.size() != result.images_per_run.size())
    throw std::runtime_error(timings_file.string() + ": batch_ms has " + std::to_string(result.batch_ms.size()) +
                             " entries but images_per_timed_run " + std::to_string(result.images_per_run.size()));
  return result;
}

}  // namespace octet::ort
