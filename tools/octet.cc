// The `octet` command line.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "engine/ir.h"
#include "tools/cli/commands.h"
#include "tools/cli/engine_options.h"

// Exit status: 0 success, 1 bad input or a failure while running (one line "octet: error: ..."),
// 2 bad usage (an unknown option, a missing or invalid value: "octet: usage: ..." and a hint).
constexpr const char* kVersion = "octet 0.11 (" __DATE__ ")";

int main(int argc, char** argv) {
  CLI::App app{"octet: run ONNX CNNs in FP32 and INT8 on hand-written kernels and see where the time goes"};
  app.require_subcommand(1);
  app.set_version_flag("--version", kVersion);
  octet::cli::add_engine_options(app);
  std::vector<octet::cli::Command> commands = {octet::cli::add_info_command(app),
                                               octet::cli::add_run_command(app),
                                               octet::cli::add_eval_command(app),
                                               octet::cli::add_quantize_command(app),
                                               octet::cli::add_compare_command(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "octet: usage: {} (see octet{} --help)\n", e.what(),
               app.get_subcommands().empty() ? "" : " " + app.get_subcommands()[0]->get_name());
    return 2;
  }
  try {
    for (const auto& c : commands) {
      int rc = c();
      if (rc >= 0) return rc;
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "octet: error: {}\n", e.what());
    return 1;
  }
  return 1;
}
