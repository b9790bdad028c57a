#pragma once
// The JSON answers of every route: a body that is never cached, and errors as {"error": "..."}
// (the form the page's script and the Open Inference Protocol's clients both read).
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <string>

namespace octet::serve {

inline void send_json(httplib::Response& res, const nlohmann::json& j, int status = 200) {
  res.status = status;
  res.set_header("Cache-Control", "no-store");
  res.set_content(j.dump(), "application/json");
}

inline void send_error(httplib::Response& res, int status, const std::string& message) {
  send_json(res, {{"error", message}}, status);
}

}  // namespace octet::serve
