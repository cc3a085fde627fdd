// Small helpers shared by the CLI subcommands: a progress bar and quantization statistics.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <unistd.h>

namespace lowbit::cli {

// A one-line progress bar on stderr, drawn only when stderr is a terminal (logs stay clean).
class ProgressBar {
 public:
  ProgressBar(int64_t total, bool enabled) : total_(total), enabled_(enabled && isatty(2)) {}
  void update(int64_t done, const std::string& label) {
    if (!enabled_ || total_ <= 0) return;
    const int width = 30;
    const int filled = static_cast<int>(width * done / total_);
    std::fprintf(stderr, "\r[%s%s] %lld/%lld %-40.40s", std::string(filled, '#').c_str(),
                 std::string(width - filled, '.').c_str(), static_cast<long long>(done),
                 static_cast<long long>(total_), label.c_str());
    std::fflush(stderr);
  }
  void finish() {
    if (enabled_) std::fprintf(stderr, "\r%80s\r", "");
  }

 private:
  int64_t total_;
  bool enabled_;
};

struct ErrorStats {
  double rel_frobenius = 0;  // ||deq - x|| / ||x||
  double max_abs = 0;
  double snr_db = 0;         // 10 log10(||x||^2 / ||deq - x||^2)
};

inline ErrorStats error_stats(const float* x, const float* deq, int64_t count) {
  double num = 0, den = 0, mx = 0;
  for (int64_t i = 0; i < count; ++i) {
    const double d = static_cast<double>(deq[i]) - x[i];
    num += d * d;
    den += static_cast<double>(x[i]) * x[i];
    mx = std::fmax(mx, std::fabs(d));
  }
  ErrorStats s;
  s.rel_frobenius = den > 0 ? std::sqrt(num / den) : (num > 0 ? INFINITY : 0.0);
  s.max_abs = mx;
  s.snr_db = num > 0 ? 10.0 * std::log10(den / num) : INFINITY;
  return s;
}

}  // namespace lowbit::cli
