#pragma once
// The `octet` subcommands. Each registers its options on the CLI11 app and returns the
// function that runs it (returning the process exit code).
#include <CLI/CLI.hpp>
#include <cmath>
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

inline CLI::Validator finite() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        try {
          size_t used = 0;
          if (std::isfinite(std::stod(v, &used)) && used == v.size()) return "";
        } catch (const std::exception&) {
        }
        return "must be a finite number, got '" + v + "'";
      },
      "NUMBER");
}

// "--random-range LO HI": two finite numbers with LO < HI, or a usage error that says so.
inline CLI::Option* add_range_option(CLI::App* cmd, const std::string& name, float& lo, float& hi,
                                     const std::string& help) {
  auto parse = [name](const std::string& text) {
    try {
      size_t used = 0;
      const float v = std::stof(text, &used);
      if (used == text.size() && std::isfinite(v)) return v;
    } catch (const std::exception&) {
    }
    throw CLI::ValidationError(name, "'" + text + "' is not a finite number");
  };
  return cmd
      ->add_option(
          name,
          [&lo, &hi, name, parse](const CLI::results_t& r) {
            if (r.size() != 2) throw CLI::ValidationError(name, "give two numbers, LO HI");
            const float a = parse(r[0]), b = parse(r[1]);
            if (!(a < b)) throw CLI::ValidationError(name, "LO must be below HI, got " + r[0] + " " + r[1]);
            lo = a;
            hi = b;
            return true;
          },
          help)
      ->expected(2);
}

Command add_info_command(CLI::App& app);
Command add_run_command(CLI::App& app);
Command add_compare_command(CLI::App& app);
Command add_eval_command(CLI::App& app);
Command add_quantize_command(CLI::App& app);
Command add_explain_command(CLI::App& app);
Command add_atlas_command(CLI::App& app);
Command add_diff_command(CLI::App& app);
Command add_serve_command(CLI::App& app);  // apps/serve/

}  // namespace octet::cli
