#include "apps/serve/guarded_server.h"

#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <system_error>
#include <limits>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

namespace octet::serve {
namespace {

using Clock = std::chrono::steady_clock;

thread_local ConnectionContext* t_connection = nullptr;
// Set while the accept thread runs a connection itself because every connection thread is
// taken: that connection is refused at once.
thread_local bool t_no_thread = false;

// Room for a chunked body's framing (chunk sizes and CRLFs) beyond the payload limit.
constexpr size_t kChunkFraming = size_t{64} << 10;

int poll_ms(Clock::duration d) {
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(d).count();
  return int(std::clamp<int64_t>(ms, 0, std::numeric_limits<int>::max()));
}

Clock::time_point after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

void socket_address(int sock, bool peer, std::string& ip, int& port) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  ip.clear();
  port = 0;
  if ((peer ? getpeername(sock, reinterpret_cast<sockaddr*>(&a), &len)
            : getsockname(sock, reinterpret_cast<sockaddr*>(&a), &len)) != 0)
    return;
  char host[NI_MAXHOST], serv[NI_MAXSERV];
  if (getnameinfo(reinterpret_cast<sockaddr*>(&a), len, host, sizeof host, serv, sizeof serv,
                  NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return;
  ip = host;
  if (ip.starts_with("::ffff:") && ip.find('.') != std::string::npos) ip = ip.substr(7);  // IPv4-mapped
  port = std::atoi(serv);
}

const char* reason(int status) {
  switch (status) {
    case 408: return "Request Timeout";
    case 413: return "Payload Too Large";
    case 431: return "Request Header Fields Too Large";
    case 503: return "Service Unavailable";
    default: return "Error";
  }
}

// An answer written straight to the socket, when there is no httplib request to answer through.
// Never blocks: a client that does not read it loses it.
void write_raw_error(int sock, int status, const std::string& message) {
  const std::string body = nlohmann::json{{"error", message}}.dump();
  const std::string answer = fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nCache-Control: no-store\r\n"
      "{}Connection: close\r\n\r\n{}",
      status, reason(status), body.size(), status == 503 ? "Retry-After: 1\r\n" : "", body);
  send(sock, answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

// Closes a connection after its last answer. The client may still be sending (a body the server
// refused to read): closing a socket with unread bytes sends a reset, which can reach the client
// before it has read the answer and discard it. So the sending side is shut first and what
// arrives is read and dropped until the client closes too, for at most `linger` (0: only what
// has arrived already).
void close_connection(int sock, int stop_fd, Clock::duration linger) {
  shutdown(sock, SHUT_WR);
  const auto deadline = Clock::now() + linger;
  char scratch[16384];
  size_t dropped = 0;
  for (;;) {
    const ssize_t n = recv(sock, scratch, sizeof scratch, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) break;
    if (n > 0) {
      dropped += size_t(n);
      if (dropped > (size_t{8} << 20)) break;
      continue;
    }
    const auto left = deadline - Clock::now();
    if (left <= Clock::duration::zero()) break;
    pollfd p[2] = {{sock, POLLIN, 0}, {stop_fd, POLLIN, 0}};
    if (poll(p, 2, poll_ms(left)) <= 0 || (p[1].revents & POLLIN)) break;
  }
  close(sock);
}

// One connection's bytes for httplib, with the deadlines and byte limits of the request being
// read. httplib reads a request line and headers a byte at a time, so reads are buffered.
class ConnectionStream final : public httplib::Stream {
 public:
  ConnectionStream(int sock, int stop_fd, ConnectionContext& ctx, time_t write_timeout_sec)
      : sock_(sock), stop_fd_(stop_fd), ctx_(ctx), write_timeout_ms_(int(write_timeout_sec * 1000)) {}

  // Waits up to `seconds` for the first byte of a request; false when none came or the server
  // is stopping.
  bool await_request(double seconds) {
    if (pos_ < len_) return true;
    pollfd p[2] = {{sock_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    const int r = poll(p, 2, poll_ms(after(seconds) - Clock::now()));
    return r > 0 && !(p[1].revents & POLLIN) && (p[0].revents & (POLLIN | POLLHUP | POLLERR));
  }

  void start_request(double header_seconds, size_t max_header_bytes) {
    deadline_ = after(header_seconds);
    cap_ = max_header_bytes;
    phase_bytes_ = request_bytes_ = 0;
    wrote_ = false;
    over_time_ = Stall::header_time;
    over_bytes_ = Stall::header_bytes;
  }
  void start_body(double body_seconds, size_t max_body_bytes) {
    deadline_ = after(body_seconds);
    cap_ = max_body_bytes;
    phase_bytes_ = 0;
    over_time_ = Stall::body_time;
    over_bytes_ = Stall::body_bytes;
  }
  size_t request_bytes() const { return request_bytes_; }
  bool wrote() const { return wrote_; }

  bool is_readable() const override {
    if (pos_ < len_) return true;
    pollfd p{sock_, POLLIN, 0};
    return poll(&p, 1, 0) > 0;
  }
  bool is_writable() const override {
    pollfd p{sock_, POLLOUT, 0};
    return poll(&p, 1, write_timeout_ms_) > 0 && !(p.revents & (POLLERR | POLLHUP));
  }

  ssize_t read(char* ptr, size_t size) override {
    if (ctx_.stall != Stall::none) return -1;
    if (phase_bytes_ >= cap_) {
      ctx_.stall = over_bytes_;
      return -1;
    }
    if (pos_ == len_) {
      const ssize_t n = fill();
      if (n <= 0) return n;
    }
    const size_t n = std::min({size, len_ - pos_, cap_ - phase_bytes_});
    std::memcpy(ptr, buf_ + pos_, n);
    pos_ += n;
    phase_bytes_ += n;
    request_bytes_ += n;
    return ssize_t(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!is_writable()) return -1;
    const ssize_t n = send(sock_, ptr, size, MSG_NOSIGNAL);
    if (n > 0) wrote_ = true;
    return n;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { socket_address(sock_, true, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { socket_address(sock_, false, ip, port); }
  socket_t socket() const override { return sock_; }

 private:
  // Waits for bytes until the deadline: > 0 bytes buffered, 0 the client closed, -1 otherwise
  // (ctx_.stall says why when it was the deadline or a stop).
  ssize_t fill() {
    pos_ = len_ = 0;
    for (;;) {
      const auto left = deadline_ - Clock::now();
      if (left <= Clock::duration::zero()) {
        ctx_.stall = over_time_;
        return -1;
      }
      pollfd p[2] = {{sock_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
      const int r = poll(p, 2, poll_ms(left));
      if (r < 0 && errno != EINTR) return -1;
      if (r <= 0) continue;
      if (p[1].revents & POLLIN) {
        ctx_.stall = Stall::stopping;
        return -1;
      }
      const ssize_t n = recv(sock_, buf_, sizeof buf_, MSG_DONTWAIT);
      if (n > 0) {
        len_ = size_t(n);
        return n;
      }
      if (n == 0) return 0;
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return -1;
    }
  }

  const int sock_, stop_fd_;
  ConnectionContext& ctx_;
  const int write_timeout_ms_;
  char buf_[4096];
  size_t pos_ = 0, len_ = 0;
  Clock::time_point deadline_ = Clock::now();
  size_t cap_ = 0, phase_bytes_ = 0, request_bytes_ = 0;
  Stall over_time_ = Stall::header_time, over_bytes_ = Stall::header_bytes;
  bool wrote_ = false;
};

// httplib's task queue: each connection runs on a thread of its own, started when no idle one
// is left, at most `max` at once. It never queues: with all `max` busy, the connection runs on
// the accept thread itself with t_no_thread set, which refuses it at once.
class ConnectionThreads final : public httplib::TaskQueue {
 public:
  ConnectionThreads(size_t max, std::function<void()> wake) : max_(max), wake_(std::move(wake)) {}

  void enqueue(std::function<void()> fn) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (idle_ > jobs_.size()) {
        jobs_.push_back(std::move(fn));
        ready_.notify_one();
        return;
      }
      if (threads_.size() < max_) {
        try {
          threads_.emplace_back([this] { work(); });
          jobs_.push_back(std::move(fn));
          return;
        } catch (const std::system_error&) {
          // No thread to be had (a process or memory limit): refused like one over the cap.
        }
      }
    }
    t_no_thread = true;
    fn();
    t_no_thread = false;
  }

  void shutdown() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    ready_.notify_all();
    wake_();
    for (std::thread& t : threads_) t.join();
  }

 private:
  void work() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      ++idle_;
      ready_.wait(lock, [this] { return !jobs_.empty() || stopping_; });
      --idle_;
      if (jobs_.empty()) return;
      std::function<void()> fn = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      fn();
      lock.lock();
    }
  }

  const size_t max_;
  const std::function<void()> wake_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  size_t idle_ = 0;
  bool stopping_ = false;
};

}  // namespace

int stall_status(Stall s) {
  switch (s) {
    case Stall::header_time:
    case Stall::body_time: return 408;
    case Stall::header_bytes: return 431;
    case Stall::body_bytes: return 413;
    case Stall::stopping: return 503;
    case Stall::none: break;
  }
  return 400;
}

std::string stall_message(Stall s, const ConnectionLimits& limits) {
  switch (s) {
    case Stall::header_time:
      return fmt::format("the request's headers did not all arrive within {:g} s of its first byte (--header-timeout)",
                         limits.header_seconds);
    case Stall::body_time:
      return fmt::format("the request's body did not all arrive within {:g} s of its headers (--body-timeout)",
                         limits.body_seconds);
    case Stall::header_bytes:
      return fmt::format("the request line and headers are longer than {} bytes", limits.max_header_bytes);
    case Stall::body_bytes: return "the request body is larger than this server takes (--max-upload-bytes)";
    case Stall::stopping: return "the server is stopping";
    case Stall::none: break;
  }
  return "malformed request";
}

ConnectionContext* current_connection() { return t_connection; }

GuardedServer::GuardedServer(const ConnectionLimits& limits)
    : limits_(limits), stop_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (stop_fd_ < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
  new_task_queue = [this] {
    uint64_t v;
    while (::read(stop_fd_, &v, sizeof v) > 0) {
    }  // a previous stop's wake-up
    return new ConnectionThreads(size_t(std::max(1, limits_.max_connections)), [this] { wake_connections(); });
  };
}

GuardedServer::~GuardedServer() { close(stop_fd_); }

void GuardedServer::wake_connections() {
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(stop_fd_, &one, sizeof one);
}

bool GuardedServer::enter(const std::string& client) {
  std::lock_guard<std::mutex> lock(clients_mutex_);
  int& n = clients_[client];
  if (n >= limits_.max_per_client) {
    if (n == 0) clients_.erase(client);
    return false;
  }
  ++n;
  return true;
}

void GuardedServer::leave(const std::string& client) {
  std::lock_guard<std::mutex> lock(clients_mutex_);
  if (auto it = clients_.find(client); it != clients_.end() && --it->second <= 0) clients_.erase(it);
}

bool GuardedServer::process_and_close_socket(socket_t sock) {
  if (t_no_thread) {
    write_raw_error(sock, 503,
                    fmt::format("the server has {} connections open, as many as it takes (--max-connections); "
                                "try again shortly",
                                limits_.max_connections));
    close_connection(sock, stop_fd_, Clock::duration::zero());
    return false;
  }
  // Without it, Nagle holds a response's body until the client ACKs its headers, and a
  // keep-alive client delays that ACK by up to 40 ms: every reused connection's answer waits.
  const int one = 1;
  setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  ConnectionContext ctx;
  int port = 0;
  socket_address(sock, true, ctx.client, port);
  if (!enter(ctx.client)) {
    write_raw_error(sock, 503,
                    fmt::format("{} connections from {} are open, as many as this server takes from one address "
                                "(--max-connections-per-client); try again shortly",
                                limits_.max_per_client, ctx.client));
    close_connection(sock, stop_fd_, Clock::duration::zero());
    return false;
  }
  ConnectionStream strm(sock, stop_fd_, ctx, write_timeout_sec_);
  struct Leave {
    GuardedServer& server;
    const std::string& client;
    ~Leave() {
      t_connection = nullptr;
      server.leave(client);
    }
  } leave_on_exit{*this, ctx.client};
  t_connection = &ctx;
  bool ret = false;
  for (size_t left = keep_alive_max_count_; left > 0 && svr_sock_ != INVALID_SOCKET; --left) {
    if (!strm.await_request(double(keep_alive_timeout_sec_))) break;
    strm.start_request(limits_.header_seconds, limits_.max_header_bytes);
    bool client_closes = false;
    try {
      ret = process_request(strm, left == 1, client_closes, [&](httplib::Request&) {
        strm.start_body(limits_.body_seconds, payload_max_length_ + kChunkFraming);
      });
    } catch (const std::exception&) {  // httplib's own (e.g. out of memory parsing): this connection only
      ret = false;
    }
    // A request line cut short gets no answer from httplib: it gets one here, unless the
    // connection was merely idle (no byte of a request came).
    if (!ret && ctx.stall != Stall::none && strm.request_bytes() > 0 && !strm.wrote())
      write_raw_error(sock, stall_status(ctx.stall), stall_message(ctx.stall, limits_));
    ctx.hold.reset();
    if (!ret || client_closes || ctx.close_after || ctx.stall != Stall::none) break;
  }
  close_connection(sock, stop_fd_, std::chrono::seconds(1));
  return ret;
}

}  // namespace octet::serve
