#pragma once
// A request the server refuses: the HTTP status it answers and the message the client reads
// as {"error": "..."}.
#include <stdexcept>
#include <string>

namespace octet::serve {

struct RequestError : std::runtime_error {
  RequestError(int status, const std::string& message) : std::runtime_error(message), status(status) {}
  int status;
};

}  // namespace octet::serve
