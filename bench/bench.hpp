// lowbit bench: the benchmark harness behind `lowbit bench` (method and output: bench/README.md).
//
// Layout of the harness:
//   bench.hpp        this entry point and its options
//   suites.hpp       the problem shapes (ANCHORS.md Suite 1 / Suite 2, the CPU small suite)
//   variants.hpp     the table of what is timed, one row per variant, and the tolerances
//   anchors.hpp      the peer figures of ANCHORS.md, in one place
//   operands.hpp     host-side random operands, reference and plain checks
//   gpu_backend.hpp  the interface to the CUDA timing code of bench/cuda/ (stub without CUDA)
//   report.hpp       the records, the tables, the summaries and the JSON file
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lowbit::bench {

struct Options {
  std::string suite = "all";  // "suite1", "suite2" or "all"
  std::vector<int64_t> m;     // replaces the M list of every suite when not empty
  // "NxK" each (out_features x in_features): replaces the layers of every suite when not
  // empty (the sums and geomeans are then over these shapes, and ANCHORS.md does not apply).
  std::vector<std::string> shapes;
  std::string kernels;        // ECMAScript regex searched in variant names; "" = every variant
  std::string json_path;      // write every record and summary here when not empty
  int reps = 5;               // timed graph replays (GPU) or timed runs (CPU)
  int device = 0;             // CUDA device index
  bool check = true;          // compare sampled output rows with the CPU reference
  bool quick = false;         // one rotation of the operand copies per graph (smoke tests)
  // Each timed graph replay lasts at least this long (GPU). Long enough for sustained,
  // power-limited clocks: 3 ms replays measured boost-clock bursts, 13-18% faster than
  // ANCHORS.md at m >= 1024 (H200, 2026-11-21; 30 and 150 ms agreed with it).
  double min_replay_ms = 50.0;
};

// Runs the benchmark and prints its tables on stdout. Returns the exit code: 0 when every
// case that ran passed its check, 1 when a check failed, an output was not finite, or a case
// that can_implement() accepted failed to run. Throws lowbit::Error for bad options.
int run(const Options& options);

}  // namespace lowbit::bench
