// The sm80 mixed GEMM's tile heuristic (docs/kernels/mixed_gemm.md, "Heuristic"):
//   1. the configuration from m: the smallest token tile that holds m (t8, t16, t64), t128
//      above (faster than 128 x 256 tiles at every m >= 256 on H200). 8-bit decode with
//      enough 64-channel tiles (n / 64 >= 2 x SMs) takes t16: 16 KB stages stream 3.0 TB/s
//      where t8 reaches 2.5 (run 4, gate_up);
//   2. split-K, doubling while the grid has fewer than split_below x SMs CTAs and every
//      split keeps at least min_split_iters pipeline stages (short splits pay the prologue
//      and the reduction for little work). Both constants per configuration are fitted to
//      the Suite-1 plan sweeps of `sm80_mixed_gemm_bench` (runs 3, 4). 8-bit stages carry
//      twice the bytes, so 8-bit t8 splits below half the CTA count and 8-bit t16 splits at
//      most in two (run 4: W8 o/down at m = 1 lose 30% with split 2, down at m = 16 loses
//      20% with split 4).
#include <string>

#include "cuda/heuristics/sm80_mixed_gemm_heuristic.hpp"

namespace lowbit::cuda {

namespace {

int config_for(const MixedGemmProblem& p) {
  if (p.m <= 8) {
    if (p.bits == 8 && p.n / kMixedGemmConfigs[1].block_n >= 2 * p.sm_count) return 1;
    return 0;
  }
  if (p.m <= 16) return 1;
  if (p.m <= 64) return 2;
  return 3;
}

}  // namespace

std::string MixedGemmPlan::describe() const {
  std::string s = std::string(kMixedGemmConfigs[config].tag) + " s" + std::to_string(splits);
  if (split_mode == MixedGemmSplitMode::kCluster) s += " cluster";
  if (split_mode == MixedGemmSplitMode::kWorkspace) s += " workspace";
  return s;
}

int mixed_gemm_config_index(const char* tag) {
  for (int c = 0; c < kMixedGemmConfigCount; ++c)
    if (std::string(kMixedGemmConfigs[c].tag) == tag) return c;
  return -1;
}

MixedGemmPlan choose_mixed_gemm_plan(const MixedGemmProblem& p) {
  MixedGemmPlan plan;
  plan.config = config_for(p);
  const MixedGemmTileConfig& c = kMixedGemmConfigs[plan.config];
  const int64_t tiles = (p.n + c.block_n - 1) / c.block_n * ((p.m + c.block_m - 1) / c.block_m);
  const int64_t iters = (p.k + c.block_k - 1) / c.block_k;
  double split_below = c.split_below;
  int max_splits = 8;
  if (p.bits == 8 && plan.config == 0) split_below *= 0.5;
  if (p.bits == 8 && plan.config == 1) max_splits = 2;
  const double enough = split_below * p.sm_count;
  while (plan.splits < max_splits && static_cast<double>(tiles * plan.splits) < enough &&
         iters / (2 * plan.splits) >= c.min_split_iters)
    plan.splits *= 2;
  plan.split_mode = plan.splits == 1 ? MixedGemmSplitMode::kNone
                    : p.cc >= 90     ? MixedGemmSplitMode::kCluster
                                     : MixedGemmSplitMode::kWorkspace;
  return plan;
}

}  // namespace lowbit::cuda
