#include "tools/ort/ort_client.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <memory>
#include <mutex>
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

// Why `node` did not start or answer, in the words the user needs.
std::string start_failure(const ProcessResult& r) {
  if (r.spawn_error == ENOENT || r.exit_code == 127)
    return "Node.js ('" + node_binary() + "') is not installed or not on PATH; run tools/setup.sh";
  if (r.spawn_error != 0) return "cannot start '" + node_binary() + "': " + std::strerror(r.spawn_error);
  return r.err.empty() ? "the runner failed with no message" : r.err;
}

// One `node ort_run.mjs --jobs` process that every run() of this process shares, so that node
// starts and loads ONNX Runtime once rather than once a run. Requests and answers are lines on
// a socket pair (a dead runner then fails a send with EPIPE instead of raising SIGPIPE); its
// stderr goes to a file, read when it dies.
class JobRunner {
 public:
  // Starts the runner and reads its version line; on failure, `reason` says why and the
  // runner is not usable.
  explicit JobRunner(const fs::path& script) : script_(script.string()), node_(node_binary()) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
      throw std::runtime_error(std::string("socketpair failed: ") + std::strerror(errno));
    Fd child_end{sv[1]};
    fd_.fd = sv[0];
    const fs::path err_file = dir_.path() / "stderr.txt";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, child_end.fd, 0);
    posix_spawn_file_actions_adddup2(&actions, child_end.fd, 1);
    posix_spawn_file_actions_addopen(&actions, 2, err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<std::string> argv = {node_, script_, "--jobs"};
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    ProcessResult failed;
    failed.spawn_error = posix_spawnp(&pid_, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (failed.spawn_error != 0) {
      pid_ = -1;
      reason = start_failure(failed);
      return;
    }
    child_end.reset();
    std::string line;
    if (!read_line(line)) {
      reason = start_failure(finish());
      return;
    }
    line = trim(line);  // "onnxruntime-node 1.30.0"
    version = line.substr(line.rfind(' ') + 1);
  }
  ~JobRunner() { finish(); }
  JobRunner(const JobRunner&) = delete;
  JobRunner& operator=(const JobRunner&) = delete;

  bool usable() const { return reason.empty() && pid_ > 0; }
  bool runs(const fs::path& script) const { return script_ == script.string() && node_ == node_binary(); }

  // Sends one job (ort_run.mjs's arguments) and returns "" when it ran, else the runner's
  // message. Throws when the runner dies, which leaves this object unusable.
  std::string run(const std::vector<std::string>& job) {
    std::string line = nlohmann::json(job).dump() + "\n";
    for (std::size_t sent = 0; sent < line.size();) {
      const ssize_t n = ::send(fd_.fd, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) died();
      sent += static_cast<std::size_t>(n);
    }
    if (!read_line(line)) died();
    try {
      const nlohmann::json answer = nlohmann::json::parse(line);
      return answer.contains("error") ? answer.at("error").get<std::string>() : "";
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error("the ONNX Runtime runner answered '" + trim(line) + "': " + e.what());
    }
  }

  std::string reason, version;

 private:
  bool read_line(std::string& line) {
    for (;;) {
      if (const auto nl = buffer_.find('\n'); nl != std::string::npos) {
        line = buffer_.substr(0, nl + 1);
        buffer_.erase(0, nl + 1);
        return true;
      }
      char buf[4096];
      const ssize_t n = ::read(fd_.fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      buffer_.append(buf, static_cast<std::size_t>(n));
    }
  }

  // Closes the runner's input (it exits at the end of its input) and waits for it.
  ProcessResult finish() {
    ProcessResult r;
    fd_.reset();
    if (pid_ <= 0) return r;
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.err = trim(slurp(dir_.path() / "stderr.txt"));
    if (!WIFEXITED(status)) r.err += " (killed by signal " + std::to_string(WTERMSIG(status)) + ")";
    return r;
  }

  [[noreturn]] void died() {
    const ProcessResult r = finish();
    reason = "the ONNX Runtime runner stopped: " + (r.err.empty() ? "exit code " + std::to_string(r.exit_code) : r.err);
    throw std::runtime_error(reason);
  }

  std::string script_, node_;
  TempDir dir_;
  Fd fd_;
  pid_t pid_ = -1;
  std::string buffer_;
};

std::mutex runner_mutex;
std::unique_ptr<JobRunner> shared_runner;  // guarded by runner_mutex

// The shared runner for the current OCTET_ORT_DIR and OCTET_NODE, started (again) when there is
// none, it died, or those changed. Call with runner_mutex held.
JobRunner& job_runner() {
  const fs::path script = runner_dir() / "ort_run.mjs";
  if (!shared_runner || !shared_runner->usable() || !shared_runner->runs(script)) {
    shared_runner.reset();
    if (!fs::exists(script)) {
      std::string why = "the ONNX Runtime runner " + script.string() + " is missing";
      if (const char* env = std::getenv("OCTET_ORT_DIR"); env && *env) why += " (OCTET_ORT_DIR is set)";
      throw std::runtime_error(why);
    }
    shared_runner = std::make_unique<JobRunner>(script);
  }
  return *shared_runner;
}

struct Probe {
  std::string reason, version;
};

const Probe& probe() {
  static const Probe p = [] {
    Probe p;
    try {
      std::lock_guard<std::mutex> lock(runner_mutex);
      JobRunner& r = job_runner();
      p.reason = r.reason;
      p.version = r.version;
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
  std::vector<std::string> job = {"--model", fs::absolute(model).string()};
  std::size_t i = 0;
  for (const auto& [name, array] : inputs) {
    check_input_name(name);
    const fs::path file = tmp.path() / ("input" + std::to_string(i++) + ".npy");
    npy::write(file.string(), array);
    job.insert(job.end(), {"--input", name + "=" + file.string()});
  }
  const fs::path out_dir = tmp.path() / "out";
  job.insert(job.end(), {"--output-dir", out_dir.string()});
  for (auto& a : session_args(opt)) job.push_back(std::move(a));
  std::string error;
  {
    std::lock_guard<std::mutex> lock(runner_mutex);
    JobRunner& runner = job_runner();
    if (!runner.usable()) throw std::runtime_error("ONNX Runtime unavailable: " + runner.reason);
    error = runner.run(job);
  }
  if (!error.empty()) throw std::runtime_error("ONNX Runtime failed on " + model + ": " + error);
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
