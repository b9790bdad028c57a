#include "tests/serve/server_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <regex>
#include <thread>

namespace octet::testing {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

ServerProcess::ServerProcess(const std::string& args, const std::filesystem::path& log, double timeout_seconds)
    : log_(log) {
  int out[2];
  if (pipe(out) != 0) return;
  const std::string command = "exec " + std::string(OCTET_CLI) + " serve " + args + " --host 127.0.0.1 --port 0";
  pid_ = fork();
  if (pid_ == 0) {
    dup2(out[1], STDOUT_FILENO);
    const int err = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (err >= 0) dup2(err, STDERR_FILENO);
    close(out[0]);
    close(out[1]);
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  if (pid_ < 0) {
    close(out[0]);
    return;
  }
  // The first line of stdout is the URL; anything else (or nothing before the deadline) fails.
  std::string line;
  const auto t0 = Clock::now();
  while (line.find('\n') == std::string::npos && seconds_since(t0) < timeout_seconds) {
    pollfd p{out[0], POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char buf[256];
    const ssize_t n = read(out[0], buf, sizeof buf);
    if (n <= 0) break;  // the server exited
    line.append(buf, size_t(n));
  }
  close(out[0]);  // nothing else comes on stdout: the server then writes to a closed pipe, ignored
  std::smatch m;
  static const std::regex url(R"((http://127\.0\.0\.1:(\d+)/)\n)");
  if (std::regex_search(line, m, url)) {
    url_ = m[1];
    port_ = std::stoi(m[2]);
  }
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

std::string ServerProcess::log_text() const {
  std::ifstream in(log_);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

namespace {

long status_kib(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.starts_with(field)) return std::stol(line.substr(field.size()));
  return -1;
}

}  // namespace

long ServerProcess::rss_kib() const { return status_kib(pid_, "VmRSS:"); }
long ServerProcess::peak_rss_kib() const { return status_kib(pid_, "VmHWM:"); }

int ServerProcess::stop(int signal, double timeout_seconds) {
  if (pid_ <= 0) return -1;
  kill(pid_, signal);
  const auto t0 = Clock::now();
  int status = 0;
  while (seconds_since(t0) < timeout_seconds) {
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
  return -1;
}

}  // namespace octet::testing
