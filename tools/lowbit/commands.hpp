// The `lowbit` command-line tool: one file per subcommand, each adding itself to the app.
//
// A subcommand's callback returns its exit code through `exit_code`; it throws
// lowbit::Error for user-facing failures, which main() prints as one line on stderr with
// exit code 1. Nothing here prints a stack trace or aborts on bad input.
#pragma once

#include <CLI/CLI.hpp>

namespace lowbit::cli {

void add_info_command(CLI::App& app, int& exit_code);      // cmd_info.cpp
void add_quantize_command(CLI::App& app, int& exit_code);  // cmd_quantize.cpp
void add_inspect_command(CLI::App& app, int& exit_code);   // cmd_inspect.cpp
void add_bench_command(CLI::App& app, int& exit_code);     // cmd_bench.cpp

}  // namespace lowbit::cli
