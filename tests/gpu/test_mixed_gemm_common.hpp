// What the tests of both mixed GEMM families (sm80_mixed_gemm, sm90_mixed_gemm) share: the
// tolerance, the weight formats they sweep, and random quantized weights (act-order g_idx
// included) built the same way.
#pragma once

#include <algorithm>
#include <random>
#include <vector>

#include "lowbit/quantize.hpp"
#include "test_gpu_common.hpp"

namespace lowbit::test::mixed {

// Tolerance per activation dtype (one table): relative Frobenius error vs the reference.
inline double tolerance(DType t) { return t == DType::kF16 ? 1e-3 : 8e-3; }

inline IntWeightFormat fmt(int bits, int group, ZeroPoint zero, DType sdt, bool act = false) {
  IntWeightFormat f;
  f.bits = bits;
  f.group_size = group;
  f.zero = zero;
  f.scale_dtype = sdt;
  f.act_order = act;
  return f;
}

// Every width x zero mode x group class the tiled layout holds (three in small mode).
inline std::vector<IntWeightFormat> formats_for(DType t) {
  std::vector<IntWeightFormat> v = {
      fmt(4, 128, ZeroPoint::kSymmetric, t), fmt(4, 128, ZeroPoint::kInteger, t), fmt(8, 0, ZeroPoint::kSymmetric, t),
      fmt(4, 32, ZeroPoint::kInteger, t),    fmt(4, 0, ZeroPoint::kSymmetric, t),  fmt(8, 128, ZeroPoint::kInteger, t),
      fmt(8, 32, ZeroPoint::kSymmetric, t),  fmt(4, 64, ZeroPoint::kSymmetric, t), fmt(8, 0, ZeroPoint::kInteger, t),
  };
  if (small_mode()) v.resize(3);
  return v;
}

// A g_idx for act-order weights: a shuffled uniform assignment (what GPTQ writes) or any
// group per column.
inline std::vector<int32_t> random_g_idx(int64_t k, int group, bool uniform, std::mt19937& rng) {
  std::vector<int32_t> g(static_cast<size_t>(k));
  const int64_t groups = k / group;
  if (uniform) {
    for (int64_t c = 0; c < k; ++c) g[static_cast<size_t>(c)] = static_cast<int32_t>(c / group);
    std::shuffle(g.begin(), g.end(), rng);
  } else {
    std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(groups - 1));
    for (auto& x : g) x = pick(rng);
  }
  return g;
}

// Random weights quantized to f; with integer zero points each row gets an offset so that the
// zero points differ.
inline IntWeight random_weight(const IntWeightFormat& f, int64_t n, int64_t k, std::mt19937& rng,
                               bool uniform_act = true) {
  std::vector<float> x = random_normal(rng, n * k, 0.05f);
  if (f.zero == ZeroPoint::kInteger) {
    std::uniform_real_distribution<float> shift(-0.05f, 0.05f);
    for (int64_t r = 0; r < n; ++r) {
      const float s = shift(rng);
      for (int64_t c = 0; c < k; ++c) x[static_cast<size_t>(r * k + c)] += s;
    }
  }
  std::vector<int32_t> g_idx;
  if (f.act_order) g_idx = random_g_idx(k, f.group_size, uniform_act, rng);
  return quantize_int(x.data(), n, k, f, f.act_order ? g_idx.data() : nullptr);
}

}  // namespace lowbit::test::mixed
