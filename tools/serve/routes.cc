#include "tools/serve/routes.h"

#include <fmt/format.h>
#include <httplib.h>

#include <sys/socket.h>

#include <cstdio>
#include <exception>
#include <memory>
#include <string>

#include "tools/serve/page.h"
#include "tools/serve/request_error.h"

namespace octet::serve {
namespace {

using json = nlohmann::json;

void send_json(httplib::Response& res, const json& j, int status = 200) {
  res.status = status;
  res.set_header("Cache-Control", "no-store");
  res.set_content(j.dump(), "application/json");
}

void send_error(httplib::Response& res, int status, const std::string& message) {
  send_json(res, {{"error", message}}, status);
}

// What a status means when httplib answers it before any handler ran.
std::string default_message(const httplib::Request& req, int status, size_t max_upload) {
  switch (status) {
    case 400: return "malformed request (HTTP headers, chunked body or multipart envelope)";
    case 404: return "no such page: " + req.path + " (the page is /, the API /api/model, /api/samples, /api/classify)";
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
std::string_view upload_bytes(const httplib::Request& req, std::string& holder) {
  if (!req.is_multipart_form_data()) return req.body;
  if (!req.has_file("image")) {
    std::string fields;
    for (const auto& [name, part] : req.files) fields += (fields.empty() ? "" : ", ") + ("'" + name + "'");
    throw RequestError(400, "the multipart upload has no field 'image'" +
                                (fields.empty() ? std::string() : " (it has " + fields + ")") +
                                "; send the image as the field 'image' or as the raw request body");
  }
  holder = req.get_file_value("image").content;
  return holder;
}

void classify(const ServerState& state, const httplib::Request& req, httplib::Response& res) {
  try {
    std::string holder;
    const PreparedImage image =
        prepare_image(upload_bytes(req, holder), state.classifier->input(), state.card, state.limits);
    json j = to_json(state.classifier->classify(image.input));
    j["image"] = {{"width", image.width}, {"height", image.height}, {"channels", image.channels},
                  {"resized", image.resized}};
    send_json(res, j);
  } catch (const RequestError& e) {
    send_error(res, e.status, e.what());
  }
}

}  // namespace

void setup_server(httplib::Server& server, const ServerState& state, int threads) {
  server.set_payload_max_length(state.limits.max_bytes + kMultipartRoom);
  server.new_task_queue = [threads] { return new httplib::ThreadPool(size_t(threads)); };
  // A client that stops sending (or never reads) frees its thread after this long.
  server.set_read_timeout(10);
  server.set_write_timeout(10);
  server.set_keep_alive_timeout(5);
  server.set_tcp_nodelay(true);  // an answer's headers and body leave at once, not after a delayed ACK

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
  server.Post("/api/classify",
              [&state](const httplib::Request& req, httplib::Response& res) { classify(state, req, res); });
  server.Get("/api/classify", [](const httplib::Request&, httplib::Response& res) {
    res.set_header("Allow", "POST");
    send_error(res, 405, "POST an image to /api/classify (multipart field 'image', or the raw body)");
  });

  // Statuses httplib sets itself (no route, a body over the limit, a malformed request) get a
  // JSON message too; answers a handler already wrote are left alone.
  server.set_error_handler([max_upload = state.limits.max_bytes](const httplib::Request& req, httplib::Response& res) {
    if (res.body.empty()) send_error(res, res.status, default_message(req, res.status, max_upload));
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
