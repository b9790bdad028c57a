// The `octet` command line.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "core/ir.h"
#include "io/output_file.h"
#include "apps/cli/commands.h"
#include "apps/cli/engine_options.h"
#include "core/version.h"

// Exit status: 0 success, 1 bad input or a failure while running (one line "octet: error: ..."),
// 2 bad usage (an unknown option, a missing or invalid value: "octet: usage: ..." and a hint).
constexpr const char* kVersion = "octet " OCTET_VERSION " (" __DATE__ ")";

// The first argument that is neither an option nor the value of a global option: what a user
// meant as the command when none was recognised.
std::string first_word(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--isa" || a == "--threads") ++i;
    else if (!a.starts_with("-")) return a;
  }
  return "";
}

std::string command_names(const CLI::App& app) {
  std::string names;
  for (const CLI::App* c : app.get_subcommands({})) names += (names.empty() ? "" : ", ") + c->get_name();
  return names;
}

#if OCTET_CLI_MINIMAL
constexpr const char* kMinimalNote = "; this octet was built with -DOCTET_CLI_MINIMAL=ON, without eval, quantize, "
                                     "explain, atlas, diff and serve";
#else
constexpr const char* kMinimalNote = "";
#endif

int main(int argc, char** argv) {
  CLI::App app{"octet: run ONNX CNNs in FP32 and INT8 on hand-written kernels and see where the time goes"};
  app.require_subcommand(1);
  app.set_version_flag("--version", kVersion);
  octet::cli::add_engine_options(app);
#if OCTET_CLI_MINIMAL
  std::vector<octet::cli::Command> commands = {octet::cli::add_info_command(app), octet::cli::add_run_command(app),
                                               octet::cli::add_compare_command(app)};
#else
  std::vector<octet::cli::Command> commands = {octet::cli::add_info_command(app),
                                               octet::cli::add_run_command(app),
                                               octet::cli::add_eval_command(app),
                                               octet::cli::add_quantize_command(app),
                                               octet::cli::add_compare_command(app),
                                               octet::cli::add_explain_command(app),
                                               octet::cli::add_atlas_command(app),
                                               octet::cli::add_diff_command(app),
                                               octet::cli::add_serve_command(app)};
#endif
  auto help_hint = [&app] {
    return app.get_subcommands().empty() ? std::string() : " " + app.get_subcommands()[0]->get_name();
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    if (app.get_subcommands().empty())
      if (auto word = first_word(argc, argv); !word.empty())
        what = "unknown command '" + word + "' (commands: " + command_names(app) + ")" + kMinimalNote;
    fmt::print(stderr, "octet: usage: {} (see octet{} --help)\n", what, help_hint());
    return 2;
  }
  try {
    for (const auto& c : commands) {
      int rc = c();
      if (rc < 0) continue;
      // Results that never reached their destination (`octet run M > /dev/full`) are a failure.
      if (const std::string why = octet::standard_output_error(); !why.empty()) {
        fmt::print(stderr, "octet: error: {}\n", why);
        return 1;
      }
      return rc;
    }
  } catch (const octet::cli::UsageError& e) {
    fmt::print(stderr, "octet: usage: {} (see octet{} --help)\n", e.what(), help_hint());
    return 2;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "octet: error: out of memory (the model or the data needs more than this machine can give)\n");
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "octet: error: {}\n", e.what());
    return 1;
  }
  return 1;
}
