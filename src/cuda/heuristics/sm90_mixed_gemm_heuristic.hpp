// Internal: the plan (token tile, split-K factor) of sm90_mixed_gemm for a problem, chosen
// from m, n, k, the weight width, the activation dtype and the SM count by a small cost model
// (sm90_mixed_gemm_heuristic.cpp).
#pragma once

#include <cstdint>
#include <string>

namespace lowbit::cuda {

// The default cap on the stages requested before griddepcontrol.wait (see Sm90MixedPlan).
inline constexpr int kSm90MixedPreWaitStages = 2;

struct Sm90MixedPlan {
  int config = 0;   // index into kSm90MixedConfigs
  int splits = 1;   // K splits (>= 1, <= k / 64)
  std::string why;  // the model's figures for the choice
  // Stages whose weight tile, scales and zero points the producer requests before
  // griddepcontrol.wait (0: every stage). 2: measured on H100 and H200, Suite 1 at m = 64..4096
  // against 0, 1 and 4 on H100, against 0 on H200 (docs/kernels/mixed_gemm.md, sm90 v11).
  int pre_stages = kSm90MixedPreWaitStages;
};

// bf16: the activations are bf16 (the 8-bit decode then differs, sm90_mixed_halves()).
Sm90MixedPlan sm90_mixed_gemm_plan(int64_t m, int64_t n, int64_t k, int bits, bool bf16, int sm_count);

// Rows of the activation TMA box for the last token tile (the other tiles take block_tokens):
// the tile's rows rounded up to 8 where that leaves at least 3/8 of the tile unfilled, else
// block_tokens (the rule and its measurements: sm90_mixed_gemm_heuristic.cpp).
// `LOWBIT_SM90_MIXED_XBOX=0` gives block_tokens always, `=1` the short box always (measurement
// knobs, read once).
int sm90_mixed_x_last_rows(int64_t m, int block_tokens);

}  // namespace lowbit::cuda
