#pragma once
// The Open Inference Protocol (KServe v2, REST) over `octet serve`'s server:
//   GET  /v2                                        server metadata (name, version, extensions)
//   GET  /v2/health/live, /v2/health/ready          200 while the server runs
//   GET  /v2/models/<m>[/versions/<v>]              model metadata
//   GET  /v2/models/<m>[/versions/<v>]/ready        200 when the model (version) is served
//   POST /v2/models/<m>[/versions/<v>]/infer        inference, JSON or binary tensors
// Errors are {"error": "..."}: 400 a request that does not fit the protocol or the model, 404 an
// unknown model or version, 413 a body over --max-upload-bytes or the memory budget, 503 busy.
#include <httplib.h>

#include <regex>
#include <string>
#include <vector>

#include "apps/serve/model_repository.h"

namespace octet::serve {

struct ServerState;

// The paths above as regular expressions, for the route table that checks a request before its
// body is read (routes.cc); methods: GET and HEAD, or POST for infer.
const std::vector<std::string>& v2_get_paths();
const std::string& v2_infer_path();

// Registers the handlers. At most `infer_slots` inference requests are handled at once (the
// rest wait up to kClassifyWaitSeconds, then answer 503).
void add_v2_routes(httplib::Server& server, const ServerState& state, int infer_slots);

}  // namespace octet::serve
