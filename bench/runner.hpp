// lowbit bench: the loops over variants and shapes (runner.cpp: GPU, cpu_runner.cpp: CPU).
#pragma once

#include <regex>
#include <vector>

#include "bench/bench.hpp"
#include "bench/gpu_backend.hpp"
#include "bench/report.hpp"
#include "bench/variants.hpp"

namespace lowbit::bench {

// The variants of suite `s` that match `filter`, plus the speedup references they need
// (always timed on the same run), in table order.
std::vector<const Variant*> select_variants(Suite s, const std::regex& filter);

// Progress on stderr when it is a terminal (never between timing events).
void progress(const char* fmt, ...);

// `message` with every occurrence of d.describe() replaced by "<shape>" (Record::note_general).
std::string generalize(std::string message, const GemmDesc& d);

// Fills the check fields of `rec`: sampled output rows `out` against `ref` (rows, n), with the
// tolerance of the case's format; fails on non-finite or all-zero output.
void judge(Record& rec, const GemmDesc& d, const std::vector<float>& out,
           const std::vector<float>& ref, int64_t rows);

void run_gpu_suite(GpuBackend& gpu, Suite s, const Options& o, const std::regex& filter,
                   Report& report, bool* stop);
void run_cpu_suite(const Options& o, const std::regex& filter, Report& report);
// Host memcpy bandwidth (bytes read + written), for the CPU tables' %copy column.
void measure_host_copy(int reps, RunInfo& info);

}  // namespace lowbit::bench
