// lowbit bench: random operands made on the host, and the checks against references.
//
// Weights are random CANONICAL quantized weights (random codes, random positive scales, random
// zero points), so every format is exercised on valid data; Gemm::pack() then produces the
// kernel layout. Values come from a counter-based hash (splitmix64 of seed and index), so a
// buffer is the same for any thread count. Magnitudes keep every product and output well
// inside f16 range: weights and activations are about uniform in [-1, 1].
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "lowbit/formats.hpp"
#include "lowbit/gemm.hpp"

namespace lowbit::bench {

// A 64-bit hash of (seed, index): the one random source of the host side.
uint64_t hash64(uint64_t seed, uint64_t index);
// Derives a seed from text and numbers (variant name, shape), so every case draws fresh data.
uint64_t make_seed(const std::string& text, int64_t a = 0, int64_t b = 0, int64_t c = 0);

// Canonical weights of one of the four kinds (the member that format.kind names is filled).
struct HostWeight {
  WeightFormat format;
  int64_t n = 0;
  int64_t k = 0;
  IntWeight int_w;             // WeightKind::kInt
  Fp8Tensor fp8_w;             // WeightKind::kFp8
  Int8Tensor int8_w;           // WeightKind::kInt8
  std::vector<uint16_t> dense; // WeightKind::kDense: (n, k) f16 or bf16 bits
};
HostWeight random_weight(const WeightFormat& format, int64_t n, int64_t k, uint64_t seed);
PackedWeight pack_weight(const Gemm& gemm, const HostWeight& w);
// The weights as fp32 (n, k) through lowbit's reference dequantizer (exact).
std::vector<float> reference_weight(const HostWeight& w);

// Activations on the host (CPU small suite): data (m, k) of a.dtype, scales fp32 as GemmArgs.
struct HostAct {
  std::vector<uint8_t> data;
  std::vector<float> scales;  // empty for f16 / bf16 / f32
};
HostAct random_act(const ActFormat& a, int64_t m, int64_t k, uint64_t seed);
// Number of fp32 A scales GemmArgs::a_scales holds for (m, k): gemm_a_scales_count().
int64_t act_scale_count(const ActFormat& a, int64_t m, int64_t k);

// Activation rows as fp32. `rows_data` holds rows.size() rows of k elements of a.dtype (the
// rows of A listed in `rows`), `scales` all act_scale_count() scales of A.
std::vector<float> act_rows_to_f32(const ActFormat& a, int64_t m, int64_t k,
                                   const std::vector<int64_t>& rows,
                                   const uint8_t* rows_data, const float* scales);

// The output rows to compare: all rows when m <= 8, else 8 rows spread over m, first and last
// included.
std::vector<int64_t> sample_rows(int64_t m);

// ref(rows, n) = a_rows(rows, k) * W^T with lowbit's reference GEMM (fp64 accumulation,
// multithreaded) on already dequantized weights `w` (n, k).
std::vector<float> reference_rows(const std::vector<float>& a_rows, const std::vector<float>& w,
                                  int64_t rows, int64_t n, int64_t k);

// The same with a plain fp64 loop that dequantizes each weight element itself from the
// canonical form (for the CPU backend, which IS lowbit's reference).
std::vector<float> plain_rows(const std::vector<float>& a_rows, const HostWeight& w, int64_t rows);

struct CheckResult {
  double rel_err = 0;  // ||out - ref|| / ||ref||; +inf when out has NaN / inf
  bool finite = true;
  bool all_zero = false;
};
CheckResult compare(const std::vector<float>& out, const std::vector<float>& ref);

// Runs fn(begin, end) over [0, count) split across the host's cores.
void parallel_for(int64_t count, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace lowbit::bench
