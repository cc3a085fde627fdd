// `lowbit bench`: time every GEMM variant this build has against cuBLAS / cuBLASLt on the
// ANCHORS.md suites, check each against the CPU reference, and print the tables (the harness
// is bench/; its method is bench/README.md).
#include <memory>

#include "bench/bench.hpp"
#include "tools/lowbit/commands.hpp"

namespace lowbit::cli {

void add_bench_command(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "bench",
      "Time the library's GEMM variants and the cuBLAS/cuBLASLt baselines on the ANCHORS.md "
      "suites (without a GPU: the CPU reference backend on a small suite)");
  auto o = std::make_shared<bench::Options>();
  cmd->add_option("--suite", o->suite, "suite1 (Llama-3.1-8B layers), suite2 (fp8 block) or all")
      ->check(CLI::IsMember({"suite1", "suite2", "all"}))
      ->capture_default_str();
  cmd->add_option("--m", o->m, "Override the M list of every suite, e.g. --m 1,16,4096")
      ->delimiter(',');
  cmd->add_option("--shapes", o->shapes,
                  "Replace the layers of every suite by these NxK weight shapes (out_features x in_features), "
                  "e.g. --shapes 7168x16384,4096x4096; the sums and geomeans are then over them and the "
                  "ANCHORS.md figures are not shown")
      ->delimiter(',');
  cmd->add_option("--kernels", o->kernels,
                  "Regex over variant names; the baselines they are compared to always run");
  cmd->add_option("--json", o->json_path, "Write every record and summary to this JSON file");
  cmd->add_option("--reps", o->reps, "Timed graph replays (GPU) or runs (CPU); the median counts")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--device", o->device, "CUDA device index")
      ->check(CLI::Range(0, 1023))
      ->capture_default_str();
  cmd->add_flag("--no-check", "Skip the comparison with the CPU reference");
  cmd->add_option("--min-replay-ms", o->min_replay_ms,
                  "Each timed graph replay lasts at least this long, in ms: long enough for sustained clocks")
      ->check(CLI::Range(0.0, 10000.0))
      ->capture_default_str();
  cmd->add_flag("--quick", o->quick,
                "One rotation of the operand copies per graph: a smoke test, not a figure");
  cmd->callback([o, cmd, &exit_code] {
    o->check = cmd->count("--no-check") == 0;
    exit_code = bench::run(*o);
  });
}

}  // namespace lowbit::cli
