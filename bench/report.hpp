// lowbit bench: one record per (variant, shape), the tables, the summaries and the JSON file.
#pragma once

#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "bench/suites.hpp"

namespace lowbit::bench {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Record {
  enum class State : uint8_t {
    kOk,            // timed (and checked unless --no-check)
    kNotAvailable,  // can_implement() or the runner's kernel rule said no; `note` says why
    kError,         // accepted but failed to run; `note` has the error
  };
  Suite suite = Suite::kSuite1;
  std::string variant;
  std::string kernel;  // Gemm::kernel_name(), or "cublasGemmEx"
  std::string layer;
  int64_t m = 0, n = 0, k = 0;
  State state = State::kOk;
  std::string note;          // the full reason or error
  std::string note_general;  // the same with the problem's describe() text replaced by
                             // "<shape>", so that one reason for many shapes prints once

  double us = kNaN;                // per call: median replay / calls (GPU), median run (CPU)
  std::vector<double> samples_us;  // every timed replay or run
  int copies = 0;                  // operand copies rotated through (GPU)
  int calls = 0;                   // launches per replay (GPU), 1 (CPU)
  uint64_t rotation_bytes = 0;
  uint64_t bytes_a = 0, bytes_w = 0, bytes_out = 0;  // from the actual buffer sizes

  bool checked = false;
  int64_t check_rows = 0;
  double rel_err = kNaN;
  double tolerance = kNaN;
  std::string tolerance_format;  // "f16", "bf16", "fp8", "int8"
  bool passed = true;            // false: over tolerance, not finite, or all zero
  std::string check_note;        // why it failed

  double flops() const { return 2.0 * double(m) * double(n) * double(k); }
  uint64_t bytes() const { return bytes_a + bytes_w + bytes_out; }
  bool ok() const { return state == State::kOk; }
  bool failed() const { return state == State::kError || (checked && !passed); }
};

// What the run measured once, for the header and the JSON file.
struct RunInfo {
  std::string backend;  // "cuda" or "cpu"
  std::string no_gpu_reason;
  // GPU (backend == "cuda")
  int device = 0;
  std::string gpu_name;
  std::string arch;  // "sm_90"
  int sm_count = 0;
  uint64_t memory_bytes = 0;
  uint64_t l2_bytes = 0;
  std::string driver_version, runtime_version;
  // Copy bandwidth: device to device (cuda) or host memcpy (cpu), bytes read + written.
  std::string copy_what;
  double copy_gbps = kNaN;
  uint64_t copy_bytes = 0;
  std::vector<double> copy_us;
  // Options
  std::vector<std::string> suites;
  std::string kernels;
  int reps = 0;
  bool quick = false;
  double min_replay_ms = 50.0;
  bool check = true;
  std::vector<std::string> shapes;  // --shapes: the layers of every suite replaced (ANCHORS.md does not apply)
};

class Report {
 public:
  explicit Report(RunInfo info) : info_(std::move(info)) {}
  RunInfo& info() { return info_; }
  void add(Record r) { records_.push_back(std::move(r)); }
  const std::vector<Record>& records() const { return records_; }

  void print_header(std::FILE* f) const;
  // The per-shape table of one suite, then its variants that are not available.
  void print_suite(std::FILE* f, Suite s) const;
  // Suite 1 / CPU small suite: sum of the four layers per (variant, M), with ANCHORS.md's
  // figures for Suite 1; Suite 2: geometric mean per variant, with ANCHORS.md's.
  void print_summary(std::FILE* f, Suite s) const;
  // Checks that failed and cases that errored, one line each (at most `max_lines`, the JSON
  // file has them all); returns how many.
  int print_failures(std::FILE* f, int max_lines) const;
  void write_json(const std::string& path) const;

  // us of `variant` on the same shape of the same suite, NaN when it did not run.
  double time_of(Suite s, const std::string& variant, const std::string& layer, int64_t m) const;

 private:
  RunInfo info_;
  std::vector<Record> records_;
};

}  // namespace lowbit::bench
