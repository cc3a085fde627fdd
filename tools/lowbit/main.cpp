// lowbit: command-line entry point.
#include <cstdio>
#include <exception>
#include <string>

#include "lowbit/status.hpp"
#include "lowbit/version.hpp"
#include "tools/lowbit/commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"lowbit: quantized matrix-multiply kernels for LLM inference"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("lowbit ") + lowbit::kVersion);
  int exit_code = 0;
  lowbit::cli::add_info_command(app, exit_code);
  lowbit::cli::add_quantize_command(app, exit_code);
  lowbit::cli::add_inspect_command(app, exit_code);
  lowbit::cli::add_bench_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const lowbit::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lowbit: %s\n", e.what());
    return 1;
  }
  return exit_code;
}
