// Internal: the plan (token tile, split-K factor) of sm90_mixed_gemm for a problem, chosen
// from m, n, k, the weight width and the SM count by a small cost model
// (sm90_mixed_gemm_heuristic.cpp).
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace lowbit::cuda {

struct Sm90MixedPlan {
  int config = 0;   // index into kSm90MixedConfigs
  int splits = 1;   // K splits (>= 1, <= k / 64); 1 with clusters
  std::string why;  // the model's figures for the choice
  int cluster = 1;  // > 1: the cluster kernel, clusters of this many CTAs sharing their tiles' k
                    // blocks (kSm90MixedClusterConfig only; docs/kernels/mixed_gemm.md v8)
};

// Clusters of 2, 4, 8 CTAs of the cluster kernel the GPU keeps resident at once, at index
// log2(size) (index 0 unused); zeros: no cluster plans.
using Sm90MixedResidentClusters = std::array<int, 4>;

Sm90MixedPlan sm90_mixed_gemm_plan(int64_t m, int64_t n, int64_t k, int bits, int sm_count,
                                   const Sm90MixedResidentClusters& resident = {});

}  // namespace lowbit::cuda
