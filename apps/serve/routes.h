#pragma once
// What `octet serve` answers:
//   GET  /                      the page (apps/serve/page.html)
//   GET  /api/model             model, input, classes, INT8 origin, the speed table, limits
//   GET  /api/samples           the gallery: index, class, label and URL of each test image
//   GET  /api/samples/<i>.png   one test image
//   POST /api/classify          an image (multipart field "image", or the raw body) -> FP32 and
//                               INT8 top classes, times, agreement
//   /v2/...                     the Open Inference Protocol for every served model (v2_routes.h)
// The page and /api/* need an image classifier (ServerState::classifier); without one they
// answer 404 and only /v2 serves.
// Every error is JSON {"error": "..."} with a 4xx status (5xx only for a fault of the server, or
// 503 when it is too busy for this request now). A wrong method on one of these paths answers 405
// with an Allow header (OPTIONS: 204 with Allow).
#include <nlohmann/json.hpp>
#include <string>

#include "io/model_card.h"
#include "apps/serve/classifier.h"
#include "apps/serve/gallery.h"
#include "apps/serve/guarded_server.h"
#include "apps/serve/image_input.h"
#include "apps/serve/model_repository.h"

namespace octet::serve {

struct ServerState {
  Classifier* classifier = nullptr;  // null: no page nor /api/classify (the first model is no image classifier)
  const ModelRepository* models = nullptr;  // the /v2 models; null: no /v2 routes
  int infer_slots = 0;     // /v2 inference requests at once (0: classify_threads)
  ModelCard card;          // the normalization uploads get
  Gallery gallery;
  nlohmann::json model;    // GET /api/model
  UploadLimits limits;     // with limits.memory, request bodies reserve their bytes there too
};

// Registers the routes and the JSON error answers on `server` and its request-size limit (the
// upload limit plus room for a multipart envelope). At most `classify_threads` classifications
// (decoding and both models) run at once, whatever the number of connections; one more waits
// up to kClassifyWaitSeconds for its turn, then answers 503. Before a request body is read its
// framing is checked (a Content-Length of digits within the limit, or chunked; no
// Content-Encoding) and, with state.limits.memory, twice its size reserved there until the
// answer is written. `state` must outlive the server.
void setup_server(GuardedServer& server, const ServerState& state, int classify_threads);

constexpr double kClassifyWaitSeconds = 10;

// Binds `server` to host:port (port 0: any free port) and returns the port, or -1 with errno
// set. Unlike httplib's own binding: SO_REUSEADDR only (its SO_REUSEPORT would let a second
// server share a port in use), and a listen backlog of SOMAXCONN (its 5 drops the connections
// of a burst, whose clients then wait a second for TCP to try again).
int bind_server(httplib::Server& server, const std::string& host, int port);

// Upload limit plus this much: the multipart boundaries and part headers around the image.
constexpr size_t kMultipartRoom = size_t{64} << 10;

}  // namespace octet::serve
