#pragma once
// The `octet` subcommands. Each registers its options on the CLI11 app and returns the
// function that runs it (returning the process exit code).
#include <CLI/CLI.hpp>
#include <string>
#include <functional>
#include <stdexcept>

namespace octet::cli {

using Command = std::function<int()>;

// A usage mistake found after parsing (options that exclude or need each other): the CLI prints
// it as "octet: usage: ..." and exits 2, like CLI11's own parse errors.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Option checks with messages a user reads ("must be a positive integer, got 0"), in place of
// CLI11's PositiveNumber / NonNegativeNumber ("not in range 0 to 1.79e308").
inline CLI::Validator positive() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        try {
          size_t used = 0;
          if (std::stod(v, &used) > 0 && used == v.size()) return "";
        } catch (const std::exception&) {
        }
        return "must be a positive number, got '" + v + "'";
      },
      "POSITIVE");
}
inline CLI::Validator non_negative() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        try {
          size_t used = 0;
          if (std::stod(v, &used) >= 0 && used == v.size()) return "";
        } catch (const std::exception&) {
        }
        return "must be zero or a positive number, got '" + v + "'";
      },
      "NON-NEGATIVE");
}

Command add_info_command(CLI::App& app);
Command add_run_command(CLI::App& app);
Command add_compare_command(CLI::App& app);
Command add_eval_command(CLI::App& app);
Command add_quantize_command(CLI::App& app);
Command add_explain_command(CLI::App& app);
Command add_diff_command(CLI::App& app);
Command add_serve_command(CLI::App& app);  // tools/serve/

}  // namespace octet::cli
