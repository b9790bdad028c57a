#pragma once
// SIGINT / SIGTERM for a server: a watcher thread takes them (sigwait) instead of a handler, so
// stopping the server runs as ordinary code. The first signal stops the attached server (it
// finishes the requests it is answering, then listen returns); one arriving before a server is
// attached (during calibration) ends the process at once, as does a second one.
#include <mutex>

namespace httplib {
class Server;
}

namespace octet::serve {

class StopSignals {
 public:
  // Blocks SIGINT and SIGTERM in this thread and every thread started after it (construct it
  // before any other thread), and starts the watcher.
  StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  void attach(httplib::Server* server);
  void detach();  // call once listen has returned, before the server is destroyed

 private:
  void watch();

  std::mutex mutex_;
  httplib::Server* server_ = nullptr;
};

}  // namespace octet::serve
