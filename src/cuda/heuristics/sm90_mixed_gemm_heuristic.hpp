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
  // > 0: a stream-K tail over this many CTAs (one token tile, splits = 1; the family then
  // launches that grid): the whole waves of channel tiles as units, the remaining tiles' (tile,
  // k block) iterations in even shares, their fp32 pieces summed by a reduce kernel
  // (Sm90MixedParams::sk_tiles; docs/kernels/mixed_gemm.md, sm90 v23). 0: none.
  int sk_grid = 0;
};

// The stream-K tail of a plan with sk_grid > 0 over `tiles_c` channel tiles of `k_blocks`
// stages: tiles as whole units (a multiple of sk_grid), tail tiles, and the most pieces (fp32
// planes) of any tail tile; valid = at least one tail tile and no empty share (tail iterations
// >= sk_grid).
struct Sm90MixedTail {
  int64_t whole_tiles = 0, tail_tiles = 0, iters = 0;
  int planes = 0;
  bool valid = false;
};
Sm90MixedTail sm90_mixed_tail(int64_t tiles_c, int64_t k_blocks, int sk_grid);

// bf16: the activations are bf16 (the 8-bit decode then differs, sm90_mixed_halves()).
Sm90MixedPlan sm90_mixed_gemm_plan(int64_t m, int64_t n, int64_t k, int bits, bool bf16, int sm_count);

// Rows of the activation TMA box for the last token tile (the other tiles take block_tokens):
// the tile's rows rounded up to 8 where that leaves at least 3/8 of the tile unfilled, else
// block_tokens (the rule and its measurements: sm90_mixed_gemm_heuristic.cpp).
// `LOWBIT_SM90_MIXED_XBOX=0` gives block_tokens always, `=1` the short box always (measurement
// knobs, read once).
int sm90_mixed_x_last_rows(int64_t m, int block_tokens);

}  // namespace lowbit::cuda
