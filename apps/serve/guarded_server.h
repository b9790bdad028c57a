#pragma once
// `octet serve`'s HTTP server: cpp-httplib parses, routes and answers requests, but serves each
// connection its own way, so that slow or hostile clients cannot stop it (issue 32):
//  - Every connection has a thread of its own, at most max_connections in all and
//    max_per_client from one address; one more is answered 503 at once (or closed), never queued
//    behind slow ones. So a slow client holds one connection thread, not one of the threads that
//    classify: the routes bound those separately (routes.h).
//  - Reading a request has total deadlines: its headers must all arrive within header_seconds
//    of its first byte, its body within body_seconds of the headers' end. httplib's read timeout
//    restarts at every recv, so a client sending a byte every 3 s held a thread for as long as
//    it went on; here each read waits only until the deadline (ConnectionStream), and a request
//    that misses it is answered 408 and its connection closed.
//  - One request's headers are at most max_header_bytes (httplib reads a header line of any
//    length into memory, and any number of lines) and its body at most the server's payload
//    limit plus chunk framing as it arrives (httplib checks a Content-Length, not a chunked
//    body's size).
//  - Between requests, and before a connection's first byte, it waits the keep-alive timeout
//    with one poll (httplib polls every 10 ms).
// This is httplib::Server with its one per-connection function, process_and_close_socket
// (virtual in httplib 0.11), replaced by a keep-alive loop over a stream of our own, and its
// task queue replaced by one that never queues: a watchdog thread shutting sockets down would
// do the same with more moving parts, and could not say 408.
#include <httplib.h>

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace octet::serve {

struct ConnectionLimits {
  double header_seconds = 5;          // --header-timeout: a request's headers, from its first byte
  double body_seconds = 10;           // --body-timeout: its body, from the end of its headers
  int max_connections = 256;          // --max-connections: open at once, in all
  int max_per_client = 128;           // --max-connections-per-client: open at once from one address
  size_t max_header_bytes = 64 << 10; // request line and headers of one request
};

// Why reading a request stopped short of its end.
enum class Stall {
  none,
  header_time,   // headers not all there by the deadline: 408
  body_time,     // body not all there by the deadline: 408
  header_bytes,  // more than max_header_bytes of headers: 431
  body_bytes,    // a chunked body past the payload limit: 413
  stopping,      // the server is stopping: 503
};
int stall_status(Stall s);
std::string stall_message(Stall s, const ConnectionLimits& limits);

// The connection whose request a handler is answering, on that handler's thread.
struct ConnectionContext {
  std::string client;            // the peer's address
  Stall stall = Stall::none;     // set while reading the current request
  bool close_after = false;      // close the connection once this answer is written
  std::shared_ptr<void> hold;    // released once this answer is written (e.g. a memory lease)
};
// Null outside a GuardedServer's connection thread (e.g. in a plain httplib::Server).
ConnectionContext* current_connection();

class GuardedServer : public httplib::Server {
 public:
  explicit GuardedServer(const ConnectionLimits& limits);
  ~GuardedServer() override;

  const ConnectionLimits& limits() const { return limits_; }

 private:
  bool process_and_close_socket(socket_t sock) override;
  void wake_connections();  // stop waiting for requests: the server is stopping
  bool enter(const std::string& client);
  void leave(const std::string& client);

  const ConnectionLimits limits_;
  int stop_fd_ = -1;  // an eventfd, readable once the server stops
  std::mutex clients_mutex_;
  std::map<std::string, int> clients_;  // open connections by peer address
};

}  // namespace octet::serve
