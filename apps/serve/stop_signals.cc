#include "apps/serve/stop_signals.h"

#include <httplib.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace octet::serve {
namespace {

sigset_t stop_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

StopSignals::StopSignals() {
  const sigset_t set = stop_set();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  // Detached: it waits in sigwait for the life of the process (serve is the whole command).
  std::thread([this] { watch(); }).detach();
}

void StopSignals::attach(httplib::Server* server) {
  std::lock_guard<std::mutex> lock(mutex_);
  server_ = server;
}

void StopSignals::detach() {
  std::lock_guard<std::mutex> lock(mutex_);
  server_ = nullptr;
}

void StopSignals::watch() {
  const sigset_t set = stop_set();
  auto exit_now = [](int sig) {
    std::fprintf(stderr, "octet serve: %s, exiting\n", sig == SIGINT ? "interrupted" : "terminated");
    std::_Exit(128 + sig);
  };
  int sig = 0;
  while (sigwait(&set, &sig) != 0) {
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!server_) exit_now(sig);
  }
  std::fprintf(stderr, "octet serve: stopping (%s; again to exit at once)\n", sig == SIGINT ? "Ctrl-C" : "SIGTERM");
  // stop() does nothing before listen has started, so it waits for that; then it waits for the
  // server to be detached (listen returned), taking a second signal as "exit now".
  const timespec tick{0, 20'000'000};
  bool stopped = false;
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!server_) break;
      if (!stopped && server_->is_running()) {
        server_->stop();
        stopped = true;
      }
    }
    if (const int again = sigtimedwait(&set, nullptr, &tick); again > 0) exit_now(again);
  }
  for (;;)
    if (sigwait(&set, &sig) == 0) exit_now(sig);
}

}  // namespace octet::serve
