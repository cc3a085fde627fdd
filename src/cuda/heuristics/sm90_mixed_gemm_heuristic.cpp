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
//   clocks per k block = 530 + 3.3 x block_tokens, fitted to the Suite-1 plan sweep on H200
//              (W4 g128 f16, m = 64 / 128 / 256, one wave: 750 / 950 / 1370 clocks for token
//              tiles of 64 / 128 / 256, against 256 / 512 / 1024 of tensor work: below 256
//              tokens the decode-and-issue latency of each block dominates);
//   split_us = splits > 1: the reduce kernel (2 us) + the fp32 partials written and read.
// Cluster plans (the 64-token tile, clusters of S = 2 / 4 / 8 CTAs, C of them resident): each
// cluster a balanced range of whole tiles, its CTAs an even share of their k blocks (session
// 28): sm_us = (k blocks of the busiest CTA x clocks per k block + 2000 clocks per segment) at
// 1.98 GHz (1.4 from 4 tiles per CTA), + 0.5 us for the cluster's reduction of split tiles
// through distributed shared memory; no workspace, no second kernel. A cluster plan is taken
// only when it is cheaper than every plain plan.
// `LOWBIT_SM90_MIXED_PLAN=<config>[,<splits>[,<cluster>]]` forces a plan (no cluster field: a
// plain one; splits 0: any), and
// `LOWBIT_SM90_MIXED_CLUSTER=0` leaves the cluster plans out (measurement knobs).
#include "cuda/heuristics/sm90_mixed_gemm_heuristic.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cuda/mixed_gemm/sm90_mixed_gemm_params.hpp"

namespace lowbit::cuda {

Sm90MixedPlan sm90_mixed_gemm_plan(int64_t m, int64_t n, int64_t k, int bits, int sm_count,
                                   const Sm90MixedResidentClusters& resident) {
  constexpr double kClockPerUs = 1980.0, kPowerCappedClockPerUs = 1400.0, kDramBytesPerUs = 4.0e6;
  constexpr double kUnitClk = 2000.0, kBlockClk = 530.0, kClkPerToken = 3.3, kReduceUs = 2.0;
  const int64_t k_blocks = k / kSm90MixedBlockK;
  const double dram_us = (double(n) * k * bits / 8 + double(m) * k * 2 + double(m) * n * 2) / kDramBytesPerUs;
  int forced_config = -1, forced_splits = -1, forced_cluster = -1;
  if (const char* env = std::getenv("LOWBIT_SM90_MIXED_PLAN")) {
    forced_config = std::atoi(env);
    forced_cluster = 1;  // a forced plan without a cluster field is a plain one
    if (const char* comma = std::strchr(env, ',')) {
      forced_splits = std::atoi(comma + 1);
      if (const char* comma2 = std::strchr(comma + 1, ',')) forced_cluster = std::atoi(comma2 + 1);
    }
  }
  const char* cluster_env = std::getenv("LOWBIT_SM90_MIXED_CLUSTER");
  const bool clusters_on = cluster_env == nullptr || cluster_env[0] != '0';
  Sm90MixedPlan best;
  double best_us = 1e300;
  for (int c = 0; c < kSm90MixedConfigCount; ++c) {
    if (forced_config >= 0 && forced_config < kSm90MixedConfigCount && c != forced_config) continue;
    const Sm90MixedConfig& cfg = kSm90MixedConfigs[c];
    const int64_t tiles = ((m + cfg.block_tokens - 1) / cfg.block_tokens) * ((n + kSm90MixedBlockCh - 1) / kSm90MixedBlockCh);
    const double kblock_clk = kBlockClk + kClkPerToken * cfg.block_tokens;
    const int max_splits = static_cast<int>(std::min<int64_t>(k_blocks, 16));
    for (int s = 1; s <= max_splits; ++s) {
      if (forced_cluster > 1) break;
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
  // Cluster plans (after the plain ones: taken only when strictly cheaper, or forced).
  const Sm90MixedConfig& cc = kSm90MixedConfigs[kSm90MixedClusterConfig];
  const int64_t ctiles = ((m + cc.block_tokens - 1) / cc.block_tokens) * ((n + kSm90MixedBlockCh - 1) / kSm90MixedBlockCh);
  const double ckblock_clk = kBlockClk + kClkPerToken * cc.block_tokens;
  for (int li = 1; li < 4; ++li) {
    const int S = 1 << li;
    if (!clusters_on && forced_cluster < 0) break;
    if (forced_cluster >= 0 && S != forced_cluster) continue;
    if (forced_config >= 0 && forced_config != kSm90MixedClusterConfig) continue;
    const int64_t C = std::min<int64_t>(resident[li], ctiles);
    if (C < 1) continue;
    const int64_t tpc = (ctiles + C - 1) / C;  // tiles of the busiest cluster
    const int64_t kb = (tpc * k_blocks + S - 1) / S;
    const int64_t segs = (tpc + S - 1) / S + 1;
    const bool capped = double(ctiles) / double(C * S) >= 4.0;
    const double sm_us = (double(kb) * ckblock_clk + kUnitClk * double(segs)) /
                         (capped ? kPowerCappedClockPerUs : kClockPerUs);
    const double us = std::max(dram_us, sm_us) + 0.5;
    if (us < best_us * 0.999 || forced_cluster == S) {
      best_us = us;
      best.config = kSm90MixedClusterConfig;
      best.splits = 1;
      best.cluster = S;
      char buf[200];
      std::snprintf(buf, sizeof(buf),
                    "%s clusters of %d (%lld resident): %lld tiles, busiest CTA %lld k blocks, predicted %.1f us "
                    "(dram %.1f, sm %.1f)",
                    cc.tag, S, static_cast<long long>(C), static_cast<long long>(ctiles), static_cast<long long>(kb), us,
                    dram_us, sm_us);
      best.why = buf;
    }
  }
  return best;
}

}  // namespace lowbit::cuda
