#pragma once
// `octet serve` started as a user starts it, on a free loopback port: --port 0, and the URL read
// from the first line it prints. The test target defines OCTET_CLI as the binary's path.
#include <sys/types.h>

#include <filesystem>
#include <string>

namespace octet::testing {

class ServerProcess {
 public:
  // Runs `octet serve ARGS --host 127.0.0.1 --port 0`, its stderr into `log`, and waits up to
  // `timeout_seconds` for the URL. started() tells whether it came; log_text() says why not.
  ServerProcess(const std::string& args, const std::filesystem::path& log, double timeout_seconds = 60);
  ~ServerProcess();  // SIGKILL if it still runs
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  bool started() const { return port_ > 0; }
  int port() const { return port_; }
  const std::string& url() const { return url_; }
  pid_t pid() const { return pid_; }
  std::string log_text() const;

  // Resident memory (VmRSS of /proc/PID/status) in KiB, and its peak so far (VmHWM); -1 when
  // unreadable.
  long rss_kib() const;
  long peak_rss_kib() const;
  // Sends `signal`, waits up to `timeout_seconds`; the exit status, 128 + the signal that ended
  // it, or -1 when it had to be killed.
  int stop(int signal, double timeout_seconds = 20);

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::string url_;
  std::filesystem::path log_;
};

}  // namespace octet::testing
