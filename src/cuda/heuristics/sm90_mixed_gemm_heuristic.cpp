// The sm90_mixed_gemm plan: for every token tile and split count, estimate the time and keep
// the cheapest (ties: fewer splits, then the table order).
//
// The model (H200 figures; only the ranking matters):
//   dram_us  = the bytes every plan moves (packed weights once, activations once, output) at
//              4.0 TB/s;
//   sm_us    = waves x (k blocks per unit x clocks per k block + 2000 clocks per unit: the
//              pipeline restart and the epilogue); waves = ceil(units / SMs) at 1.98 GHz below
//              4 waves, units / SMs at 1.4 GHz from 4 on (the GPU then runs at its 700 W limit:
//              clocks drop and a partial last wave costs its share, as for sm90_fp8_gemm);
//   clocks per k block = 650 / 800 / 1300 for token tiles of 64 / 128 / 256 (against 256 /
//              512 / 1024 of tensor work: below 256 tokens a fixed cost per block dominates,
//              ~275 clocks of it the pipeline's synchronization with no load and no math,
//              the loads ~13%; docs/kernels/mixed_gemm.md, sm90 v16), refitted after
//              sm90 v14 to the Suite-1 plan sweep on H200 (W4 g128 f16, m = 33..256, every
//              tile x splits 1-6 and 8: the model picks the measured best on all 24 layer x m
//              points; docs/kernels/mixed_gemm.md, sm90 v15); 1200 per 128-column stage
//              of c128t64k128 (sm90 v17: measured 1105-1260 on gate_up / down and ~1440 on
//              qkv in 2 splits, one wave, H200; the model then takes it for every Suite-1
//              layer at m <= 64: measured faster on 18 of 24 layer x m points, W4 g128 /
//              W4 g128 asym / W8 per-channel at m = 33 / 64, slower on 5 by <= 0.6 us);
//              1500 per 128-column stage of c128t128k128 (sm90 v18: ~1480-1510 from the
//              ratios to c128t128 on the four layers at m = 128, W4 g128 f16; the model then
//              takes it at m = 65..128 and for qkv / o up to m = 256, where it was the
//              measured best, and keeps the 256-token tile for gate_up / down from m = 160);
//   split_us = splits > 1: the reduce kernel (2 us) + the fp32 partials written and read.
// `LOWBIT_SM90_MIXED_PLAN=<config>[,<splits>]` forces a plan (a measurement knob).
// The stages requested before griddepcontrol.wait are a constant of the plan
// (kSm90MixedPreWaitStages); `LOWBIT_SM90_MIXED_PREWAIT=<stages>` overrides it (0: every stage,
// the behaviour before session 30; a measurement knob).
#include "cuda/heuristics/sm90_mixed_gemm_heuristic.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cuda/mixed_gemm/sm90_mixed_gemm_params.hpp"

namespace lowbit::cuda {

Sm90MixedTail sm90_mixed_tail(int64_t tiles_c, int64_t k_blocks, int sk_grid) {
  Sm90MixedTail t;
  if (sk_grid < 1 || tiles_c < 1 || k_blocks < 1) return t;
  t.whole_tiles = tiles_c / sk_grid * sk_grid;
  t.tail_tiles = tiles_c - t.whole_tiles;
  t.iters = t.tail_tiles * k_blocks;
  t.valid = t.tail_tiles >= 1 && t.iters >= sk_grid;
  if (!t.valid) return t;
  for (int64_t j = 0; j < t.tail_tiles; ++j) t.planes = std::max(t.planes, sm90_mixed_sk_pieces(j, k_blocks, t.iters, sk_grid));
  return t;
}

Sm90MixedPlan sm90_mixed_gemm_plan(int64_t m, int64_t n, int64_t k, int bits, bool bf16, int sm_count) {
  constexpr double kClockPerUs = 1980.0, kPowerCappedClockPerUs = 1400.0, kDramBytesPerUs = 4.0e6;
  constexpr double kUnitClk = 2000.0, kReduceUs = 2.0;
  // Clocks per stage of each configuration (kSm90MixedConfigs order): 64 columns for the
  // first three, 128 for c128t64k128 / c128t128k128 (1200 < 2 x 650, 1500 < 2 x 800: one
  // synchronization per 128 columns).
  constexpr double kBlockClk[] = {650.0, 800.0, 1300.0, 1200.0, 1500.0};
  static_assert(sizeof(kBlockClk) / sizeof(kBlockClk[0]) == kSm90MixedConfigCount, "one figure per configuration");
  const double dram_us = (double(n) * k * bits / 8 + double(m) * k * 2 + double(m) * n * 2) / kDramBytesPerUs;
  int forced_config = -1, forced_splits = -1;
  if (const char* env = std::getenv("LOWBIT_SM90_MIXED_PLAN")) {
    forced_config = std::atoi(env);
    if (const char* comma = std::strchr(env, ',')) forced_splits = std::atoi(comma + 1);
    // A configuration without a kernel for this problem is not forced: the model chooses.
    if (forced_config >= 0 && forced_config < kSm90MixedConfigCount &&
        !sm90_mixed_has_kernel(kSm90MixedConfigs[forced_config], bf16, bits))
      forced_config = -1;
  }
  // LOWBIT_SM90_MIXED_SK=0: no stream-K tail; =1: the tail plans only, where one is valid (measurement knobs).
  int sk_knob = -1;
  if (const char* env = std::getenv("LOWBIT_SM90_MIXED_SK")) sk_knob = std::atoi(env);
  Sm90MixedPlan best;
  if (const char* env = std::getenv("LOWBIT_SM90_MIXED_PREWAIT")) best.pre_stages = std::max(0, std::atoi(env));
  double best_us = 1e300;
  for (int c = 0; c < kSm90MixedConfigCount; ++c) {
    if (forced_config >= 0 && forced_config < kSm90MixedConfigCount && c != forced_config) continue;
    const Sm90MixedConfig& cfg = kSm90MixedConfigs[c];
    // 128-column stages decoded by halves (bf16 x 8-bit on the 128-token tile) ran 4-6% slower
    // than the same tile's 64-column stages on every Suite-1 layer at m = 96..256 (sm90 v18):
    // that kernel is not built.
    if (!sm90_mixed_has_kernel(cfg, bf16, bits)) continue;
    const int64_t k_blocks = sm90_mixed_k_blocks(cfg, k);
    const int64_t tiles = ((m + cfg.block_tokens - 1) / cfg.block_tokens) * ((n + kSm90MixedBlockCh - 1) / kSm90MixedBlockCh);
    const double kblock_clk = kBlockClk[c];
    const int max_splits = static_cast<int>(std::min<int64_t>(k_blocks, 16));
    for (int s = 1; s <= max_splits; ++s) {
      if (forced_splits >= 1 && s != std::min(forced_splits, max_splits)) continue;
      const int64_t units = tiles * s;
      const double exact_waves = double(units) / sm_count;
      const bool capped = exact_waves >= 4.0;
      const double waves = capped ? exact_waves : std::ceil(exact_waves);
      const int64_t kb_per_unit = (k_blocks + s - 1) / s;
      const double sm_us =
          waves * (double(kb_per_unit) * kblock_clk + kUnitClk) / (capped ? kPowerCappedClockPerUs : kClockPerUs);
      const double split_us = s > 1 ? kReduceUs + double(m) * n * 4 * s * 2 / kDramBytesPerUs : 0.0;
      const double us = std::max(dram_us, sm_us) + split_us;
      if (us < best_us * 0.999) {
        best_us = us;
        best.config = c;
        best.splits = s;
        char buf[160];
        std::snprintf(buf, sizeof(buf), "%s split %d: %lld units, predicted %.1f us (dram %.1f, sm %.1f, split %.1f)",
                      cfg.tag, s, static_cast<long long>(units), us, dram_us, sm_us, split_us);
        best.why = buf;
      }
    }
  }
  // Stream-K tail (sm90 v23, v24: a measured rule, not the model): one token tile of at most 128
  // in one split where the channel tiles fill at least one whole wave and leave a last wave of at
  // most a third of the SMs. H200, W4 g128 f16 / W8 per-channel f16, n x 4096, the tail forced
  // against the model's plans. 64-token tile at m = 64 (bench/results/2026-11-29-h200-session65/,
  // call 6): n = 19712 (132 + 22 tiles) -14% (W4 33.0 against 38.5 us on c128t64k128 s2), 22528
  // (+44) -8%, 25344 (+66) 0 / -5%, 28672 (+92, Suite 1's gate_up) +2 / +6%, 31232 (+112) +4 /
  // +8%; with fewer tiles than SMs (every tile in the tail: Suite 1's qkv, o, down) +0..+10%
  // against their splits; the rule's build against the kernels before it (call 7): 19712 -13%,
  // 22528 -6..-8%, Suite 1 the same plans. 128-token tile at m = 96 / 128
  // (bench/results/2026-11-29-h200-session66/, call 1): 19712 -8..-21% (k = 8192 -11..-23%), 22528
  // -3..-16%, 36864 (2 x 132 + 24) -4..-8%, 25344 -2..+4%, 28672 +10..+18%, fewer tiles than SMs
  // +15..+37%. LOWBIT_SM90_MIXED_SK=0 never takes it, =1 wherever it is valid (measurement knobs).
  if (sk_knob != 0) {
    const Sm90MixedConfig& cfg = kSm90MixedConfigs[best.config];
    const bool one_token_tile = m <= cfg.block_tokens;
    const Sm90MixedTail tail = one_token_tile && sm90_mixed_tail_config(cfg) && forced_splits <= 1
                                   ? sm90_mixed_tail((n + kSm90MixedBlockCh - 1) / kSm90MixedBlockCh, sm90_mixed_k_blocks(cfg, k), sm_count)
                                   : Sm90MixedTail{};
    const bool rule = tail.whole_tiles >= sm_count && 3 * tail.tail_tiles <= sm_count;
    if (tail.valid && (sk_knob == 1 || rule)) {
      best.splits = 1;
      best.sk_grid = sm_count;
      char buf[160];
      std::snprintf(buf, sizeof(buf), "%s stream-K tail: %lld whole tiles, %lld tail tiles in %d planes", cfg.tag,
                    static_cast<long long>(tail.whole_tiles), static_cast<long long>(tail.tail_tiles), tail.planes);
      best.why = buf;
    }
  }
  return best;
}

// The TMA fills the box rows past the tensor's end (tokens >= m) with zeros, and that fill
// costs far more than rows read (sm90 v20: full boxes at m = 65 ran 15-23% slower). A box of
// the tile's own rows leaves the shared-memory rows past it stale, which is harmless (an output
// token depends on its own activation row only; tokens >= m are never stored), but a box of
// fewer rows was itself slower where few rows were left unfilled. Measured (sm90 v21, H200,
// Suite 1, four integer variants, two rounds, full boxes -> short boxes, per layer): 96 to 208
// of 128 / 256 rows unfilled (m = 160, 300): -10..-34%, bar W4 o / down at m = 300 (80 of 128:
// +0.8..1.7%); 56 of 128 (m = 65: -3..-26%; m = 200, two tiles: -7..+2.2%); 56 of 256 (m =
// 200): +3.3..+4.9% on W4 gate_up / down and W8 down; 24 of 128 or 256 (m = 100, 1000): -3..+6.6%,
// +2..4% on gate_up / down at m = 100; 8 rows: +0..+2.8%. Hence the threshold: at least 3/8 of
// the tile unfilled (48 of 128, 96 of 256, 24 of 64).
int sm90_mixed_x_last_rows(int64_t m, int block_tokens) {
  static const int knob = [] {
    const char* env = std::getenv("LOWBIT_SM90_MIXED_XBOX");
    return env == nullptr ? -1 : std::atoi(env);
  }();
  if (m <= 0 || block_tokens <= 0) return block_tokens;
  const int64_t last = m - (m - 1) / block_tokens * block_tokens;  // 1..block_tokens
  const int rows = static_cast<int>((last + 7) / 8 * 8);
  if (knob == 0) return block_tokens;
  if (knob == 1) return rows;
  return 8 * (block_tokens - rows) >= 3 * block_tokens ? rows : block_tokens;
}

}  // namespace lowbit::cuda
