#pragma once
// HTTP spoken by hand over a loopback socket, for the requests httplib's client will not send:
// half-sent headers, a body trickled a byte at a time, a Content-Length of -1.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace octet::testing {

// A connected socket to 127.0.0.1:port, closed when destroyed; fd() < 0 when it could not connect.
class RawConnection {
 public:
  explicit RawConnection(int port) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(uint16_t(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (fd_ >= 0 && connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      close(fd_);
      fd_ = -1;
    }
  }
  ~RawConnection() {
    if (fd_ >= 0) close(fd_);
  }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;
  RawConnection(RawConnection&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }

  int fd() const { return fd_; }
  bool send(std::string_view bytes) const {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(size_t(n));
    }
    return true;
  }
  // What the server sends until it closes the connection or `seconds` pass (what has arrived
  // already when they have).
  std::string read_all(double seconds) const {
    std::string out;
    const auto end = deadline(seconds);
    for (;;) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, ms_until(end)) <= 0) break;
      char buf[4096];
      const ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) break;
      out.append(buf, size_t(n));
    }
    return out;
  }
  // Whether the server has closed the connection (EOF or reset) within `seconds`, discarding
  // what it sent before.
  bool closed_within(double seconds) const {
    const auto end = deadline(seconds);
    for (;;) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, ms_until(end)) <= 0) return false;
      char buf[4096];
      if (recv(fd_, buf, sizeof buf, 0) <= 0) return true;
    }
  }

 private:
  static std::chrono::steady_clock::time_point deadline(double seconds) {
    return std::chrono::steady_clock::now() +
           std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
  }
  static int ms_until(std::chrono::steady_clock::time_point end) {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
    return int(std::max<int64_t>(0, ms.count()));
  }
  int fd_;
};

// The status of an HTTP answer ("HTTP/1.1 408 ..." -> 408); -1 when there is none.
inline int http_status(const std::string& answer) {
  if (answer.size() < 12 || answer.compare(0, 5, "HTTP/") != 0) return -1;
  return std::atoi(answer.c_str() + 9);
}
inline std::string http_body(const std::string& answer) {
  const size_t end = answer.find("\r\n\r\n");
  return end == std::string::npos ? std::string() : answer.substr(end + 4);
}

}  // namespace octet::testing
