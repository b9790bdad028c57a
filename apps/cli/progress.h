#pragma once
// A progress bar on stderr for long runs: redrawn in place on a terminal, a line every
// 10% otherwise (so CI logs stay short). Silent when disabled.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <unistd.h>

namespace octet {

class Progress {
 public:
  Progress(std::string label, int64_t total, bool enabled = true)
      : label_(std::move(label)), total_(total), enabled_(enabled && total > 0), tty_(isatty(2) != 0),
        start_(std::chrono::steady_clock::now()) {}

  void update(int64_t done) {
    if (!enabled_) return;
    const int percent = int(100 * done / total_);
    if (tty_) {
      const int width = 30, filled = width * percent / 100;
      std::fprintf(stderr, "\r%s [%-*s] %3d%% %lld/%lld %.1fs", label_.c_str(), width,
                   std::string(size_t(filled), '#').c_str(), percent, (long long)done, (long long)total_, seconds());
      if (done == total_) std::fputc('\n', stderr);
    } else if (percent / 10 > last_decile_ || done == total_) {
      last_decile_ = percent / 10;
      std::fprintf(stderr, "%s: %lld/%lld (%d%%) %.1fs\n", label_.c_str(), (long long)done, (long long)total_,
                   percent, seconds());
    }
    std::fflush(stderr);
  }

 private:
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  std::string label_;
  int64_t total_;
  bool enabled_, tty_;
  int last_decile_ = 0;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace octet
