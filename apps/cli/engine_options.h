#pragma once
// Options every subcommand that runs a model shares: --isa (cap the kernels' instruction set,
// like OCTET_ISA), --threads, --direct-conv, --copies and --batch-slice. They may be given before or after the subcommand.
#include <CLI/CLI.hpp>

#include "engine/session.h"

namespace octet::cli {

void add_engine_options(CLI::App& app);
// SessionOptions for every Session the command builds (passes at their defaults).
SessionOptions engine_session_options();
// The threads octet's sessions use (--threads before the command); set_engine_threads changes
// it for the rest of the command, capped at the core count with a warning.
int engine_threads();
void set_engine_threads(int threads);
// "avx512vnni, 1 thread": what the kernels run with, for reports.
std::string engine_summary();
// One line on stderr naming every step of `plan` that runs a scalar reference kernel (nothing
// when none does, or when --isa scalar asked for exactly that). `context`: "batch 1", ...
void warn_scalar_steps(const Plan& plan, const std::string& context);

}  // namespace octet::cli
