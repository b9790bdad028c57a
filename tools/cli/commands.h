#pragma once
// The `octet` subcommands. Each registers its options on the CLI11 app and returns the
// function that runs it (returning the process exit code).
#include <CLI/CLI.hpp>
#include <functional>

namespace octet::cli {

using Command = std::function<int()>;

Command add_info_command(CLI::App& app);
Command add_run_command(CLI::App& app);
Command add_compare_command(CLI::App& app);
Command add_eval_command(CLI::App& app);
Command add_quantize_command(CLI::App& app);

}  // namespace octet::cli
