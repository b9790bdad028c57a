// `octet serve` in a build without cpp-httplib (apps/serve/CMakeLists.txt): the command is
// listed, and says what it needs.
#include <stdexcept>

#include "apps/cli/commands.h"

namespace octet::cli {

Command add_serve_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("serve", "A web page and a JSON API comparing FP32 and INT8 (not in this build)");
  cmd->allow_extras();
  return [cmd]() -> int {
    if (!cmd->parsed()) return -1;
    throw std::runtime_error("this octet was built without cpp-httplib, so it cannot serve (Debian: apt install "
                             "libcpp-httplib-dev, then rebuild)");
  };
}

}  // namespace octet::cli
