#include "apps/serve/routes.h"

#include <fmt/format.h>
#include <httplib.h>

#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <exception>
#include <memory>
#include <regex>
#include <semaphore>
#include <string>
#include <vector>

#include "apps/serve/json_reply.h"
#include "apps/serve/page.h"
#include "apps/serve/request_error.h"
#include "apps/serve/v2_routes.h"

namespace octet::serve {
namespace {

using json = nlohmann::json;

// What a status means when httplib answers it before any handler ran.
std::string default_message(const httplib::Request& req, int status, size_t max_upload) {
  switch (status) {
    case 400: return "malformed request (HTTP headers, chunked body or multipart envelope)";
    case 404:
      return "no such page: " + req.path +
             " (the page is /, the API /api/model, /api/samples, /api/classify, the Open Inference Protocol /v2/...)";
    case 405: return req.method + " is not allowed on " + req.path;
    case 413:
      return fmt::format("the request is larger than this server takes (images of at most {} bytes; "
                         "--max-upload-bytes)",
                         max_upload);
    case 414: return "the URL is too long";
    default: return fmt::format("HTTP {}", status);
  }
}

// The bytes to classify: the multipart field "image", else the whole body.
std::string_view upload_bytes(const httplib::Request& req) {
  if (!req.is_multipart_form_data()) return req.body;
  const auto image = req.files.find("image");
  if (image == req.files.end()) {
    std::string fields;
    for (const auto& [name, part] : req.files) fields += (fields.empty() ? "" : ", ") + ("'" + name + "'");
    throw RequestError(400, "the multipart upload has no field 'image'" +
                                (fields.empty() ? std::string() : " (it has " + fields + ")") +
                                "; send the image as the field 'image' or as the raw request body");
  }
  return image->second.content;
}

// Classifications at once, whatever the number of connections.
struct ClassifySlots {
  explicit ClassifySlots(int n) : free(n) {}
  std::counting_semaphore<> free;
};

void classify(const ServerState& state, ClassifySlots& slots, const httplib::Request& req, httplib::Response& res) {
  const auto wait = std::chrono::duration<double>(kClassifyWaitSeconds);
  if (!slots.free.try_acquire_for(wait))
    return send_error(res, 503,
                      fmt::format("every classification thread stayed busy for {:g} s (--http-threads); try again",
                                  kClassifyWaitSeconds));
  struct Release {
    std::counting_semaphore<>& s;
    ~Release() { s.release(); }
  } release{slots.free};
  try {
    const PreparedImage image = prepare_image(upload_bytes(req), state.classifier->input(), state.card, state.limits);
    json j = to_json(state.classifier->classify(image.input));
    j["image"] = {{"width", image.width}, {"height", image.height}, {"channels", image.channels},
                  {"resized", image.resized}};
    send_json(res, j);
  } catch (const RequestError& e) {
    send_error(res, e.status, e.what());
  }
}

// The paths this server answers and the methods each takes.
struct Route {
  std::regex path;
  std::vector<std::string> methods;
  std::string allow;  // the Allow header
};

const std::vector<Route>& route_table() {
  static const std::vector<Route> routes = [] {
    std::vector<Route> r;
    for (const char* p : {"/", "/api/model", "/api/samples", R"(/api/samples/\d{1,6}\.png)"})
      r.push_back({std::regex(p), {"GET", "HEAD"}, "GET, HEAD"});
    r.push_back({std::regex("/api/classify"), {"POST"}, "POST"});
    for (const std::string& p : v2_get_paths()) r.push_back({std::regex(p), {"GET", "HEAD"}, "GET, HEAD"});
    r.push_back({std::regex(v2_infer_path()), {"POST"}, "POST"});
    return r;
  }();
  return routes;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// Answers `status` before httplib reads the body, if any: the connection then closes after the
// answer, since the unread body would otherwise be taken for the next request.
httplib::Server::HandlerResponse refuse(httplib::Response& res, int status, const std::string& message,
                                        bool body_unread) {
  send_error(res, status, message);
  if (body_unread) {
    res.set_header("Connection", "close");
    if (ConnectionContext* c = current_connection()) c->close_after = true;
  }
  return httplib::Server::HandlerResponse::Handled;
}

// Runs after a request's headers, before its body is read: the path and method, then the body's
// framing. httplib itself would read a body without a Content-Length until the client closes,
// take "Content-Length: -1" for 2^64 - 1 and skip that many bytes before answering, inflate a
// gzip- or brotli-encoded body without limit, and read a chunked body of any size.
httplib::Server::HandlerResponse before_body(const ServerState& state, size_t max_request, const httplib::Request& req,
                                             httplib::Response& res) {
  using Handled = httplib::Server::HandlerResponse;
  const bool chunked = req.has_header("Transfer-Encoding");
  const size_t lengths = req.get_header_value_count("Content-Length");
  const std::string length = req.get_header_value("Content-Length");
  const bool body = chunked || (lengths > 0 && length != "0");

  const auto route = std::find_if(route_table().begin(), route_table().end(),
                                  [&](const Route& r) { return std::regex_match(req.path, r.path); });
  if (route == route_table().end()) return refuse(res, 404, default_message(req, 404, state.limits.max_bytes), body);
  if (std::find(route->methods.begin(), route->methods.end(), req.method) == route->methods.end()) {
    res.set_header("Allow", route->allow);
    if (req.method == "OPTIONS") {
      res.status = 204;
      if (body) {
        res.set_header("Connection", "close");
        if (ConnectionContext* c = current_connection()) c->close_after = true;
      }
      return Handled::Handled;
    }
    return refuse(res, 405,
                  req.path == "/api/classify"
                      ? req.method + " is not allowed on /api/classify: POST an image to it (multipart field 'image', "
                                     "or the raw body)"
                      : req.method + " is not allowed on " + req.path + " (it takes " + route->allow + ")",
                  body);
  }
  if (req.method != "POST") {
    ConnectionContext* c = current_connection();
    if (body && c) c->close_after = true;  // a GET's body is not read: it would be taken for the next request
    return Handled::Unhandled;
  }

  if (chunked && !iequals(req.get_header_value("Transfer-Encoding"), "chunked"))
    return refuse(res, 501,
                  "Transfer-Encoding '" + req.get_header_value("Transfer-Encoding") +
                      "' is not supported: send a Content-Length, or chunked",
                  true);
  if (chunked && lengths > 0) return refuse(res, 400, "a request with both Content-Length and Transfer-Encoding", true);
  uint64_t declared = max_request;
  if (!chunked) {
    if (lengths == 0) return refuse(res, 411, "POST needs a Content-Length header (or a chunked body)", true);
    for (size_t i = 0; i < lengths; ++i)
      if (req.get_header_value("Content-Length", i) != length)
        return refuse(res, 400, "the request has several different Content-Length headers", true);
    const bool digits = !length.empty() && length.size() <= 19 &&
                        std::all_of(length.begin(), length.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits)
      return refuse(res, 400, "Content-Length '" + length + "' is not a number of bytes", true);
    declared = std::stoull(length);
    if (declared > max_request) return refuse(res, 413, default_message(req, 413, state.limits.max_bytes), body);
  }
  if (const std::string coding = req.get_header_value("Content-Encoding"); !coding.empty() && !iequals(coding, "identity"))
    return refuse(res, 415,
                  "Content-Encoding '" + coding + "' is not accepted: send the image's bytes as they are (PNG and "
                  "JPEG are compressed already)",
                  body);

  // Twice the body's size (httplib appends it to a string, which grows by doubling), held until
  // the answer is written; a chunked body counts as the largest one.
  MemoryBudget* memory = state.limits.memory;
  ConnectionContext* c = current_connection();
  if (memory && c && declared > 0) {
    if (declared * 2 > memory->capacity())
      return refuse(res, 413,
                    fmt::format("a body of {} bytes is more than this server's --memory-budget of {} MiB lets it hold",
                                declared, memory->capacity() >> 20),
                    body);
    std::optional<MemoryBudget::Lease> lease = memory->reserve(size_t(declared) * 2, state.limits.memory_wait);
    if (!lease)
      return refuse(res, 503,
                    fmt::format("other requests hold this server's memory (--memory-budget {} MiB); try again shortly",
                                memory->capacity() >> 20),
                    body);
    c->hold = std::make_shared<MemoryBudget::Lease>(std::move(*lease));
  }
  return Handled::Unhandled;
}

}  // namespace

void setup_server(GuardedServer& server, const ServerState& state, int classify_threads) {
  const size_t max_request = state.limits.max_bytes + kMultipartRoom;
  server.set_payload_max_length(max_request);
  // Answers are small and leave at once (a client that never reads frees its thread after this
  // long); reads have their own deadlines (GuardedServer).
  server.set_write_timeout(10);
  server.set_keep_alive_timeout(5);
  server.set_tcp_nodelay(true);  // an answer's headers and body leave at once, not after a delayed ACK
  auto slots = std::make_shared<ClassifySlots>(classify_threads);
  server.set_pre_routing_handler([&state, max_request](const httplib::Request& req, httplib::Response& res) {
    return before_body(state, max_request, req, res);
  });

  if (state.models) add_v2_routes(server, state, state.infer_slots > 0 ? state.infer_slots : classify_threads);
  if (!state.classifier) {
    // Only /v2: the page and /api/* have no image classifier to show.
    server.Get(R"(/|/api/.*)", [](const httplib::Request& req, httplib::Response& res) {
      send_error(res, 404, req.path + " needs an image classifier, and this server's first model is none: it "
                                      "serves its models over /v2 (GET /v2/models/<name> describes one)");
    });
    server.Post("/api/classify", [](const httplib::Request&, httplib::Response& res) {
      send_error(res, 404, "/api/classify needs an image classifier, and this server's first model is none: POST "
                           "/v2/models/<name>/infer runs any model");
    });
  }
  server.Get("/", [](const httplib::Request&, httplib::Response& res) {
    // The page needs nothing from elsewhere; the policy makes the browser hold it to that.
    res.set_header("Content-Security-Policy",
                   "default-src 'self'; img-src 'self' blob: data:; style-src 'unsafe-inline'; "
                   "script-src 'unsafe-inline'; connect-src 'self'");
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_content(kPageHtml, "text/html; charset=utf-8");
  });
  server.Get("/api/model", [&state](const httplib::Request&, httplib::Response& res) { send_json(res, state.model); });
  server.Get("/api/samples", [&state](const httplib::Request&, httplib::Response& res) {
    send_json(res, to_json(state.gallery, state.classifier->classes()));
  });
  server.Get(R"(/api/samples/(\d{1,6})\.png)", [&state](const httplib::Request& req, httplib::Response& res) {
    const size_t i = std::stoul(req.matches[1].str());
    if (i >= state.gallery.samples.size())
      return send_error(res, 404,
                        fmt::format("no test image {}: the gallery has {}", i, state.gallery.samples.size()));
    res.set_header("Cache-Control", "max-age=3600");
    res.set_content(state.gallery.samples[i].png, "image/png");
  });
  server.Post("/api/classify", [&state, slots](const httplib::Request& req, httplib::Response& res) {
    classify(state, *slots, req, res);
  });

  // Statuses httplib sets itself (a malformed request, a body cut short) get a JSON message too,
  // which says so when the connection's deadline or byte limit cut the request short; answers a
  // handler already wrote are left alone.
  server.set_error_handler([&server, max_upload = state.limits.max_bytes](const httplib::Request& req,
                                                                          httplib::Response& res) {
    if (const ConnectionContext* c = current_connection(); c && c->stall != Stall::none) {
      send_error(res, stall_status(c->stall), stall_message(c->stall, server.limits()));
      res.set_header("Connection", "close");
    } else if (res.body.empty()) {
      send_error(res, res.status, default_message(req, res.status, max_upload));
    }
  });
  server.set_exception_handler([](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown exception";
    try {
      std::rethrow_exception(ep);
    } catch (const std::bad_alloc&) {
      what = "out of memory";
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    std::fprintf(stderr, "octet serve: %s %s failed: %s\n", req.method.c_str(), req.path.c_str(), what.c_str());
    send_error(res, 500, "the server failed on this request: " + what);
  });
}

int bind_server(httplib::Server& server, const std::string& host, int port) {
  auto listening = std::make_shared<int>(-1);
  server.set_socket_options([listening](socket_t s) {
    const int yes = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    *listening = s;  // the last socket tried is the one bound, when binding succeeds
  });
  const int bound = port == 0 ? server.bind_to_any_port(host) : server.bind_to_port(host, port) ? port : -1;
  if (bound > 0 && *listening >= 0) listen(*listening, SOMAXCONN);  // Linux takes a second listen as a new backlog
  return bound;
}

}  // namespace octet::serve
