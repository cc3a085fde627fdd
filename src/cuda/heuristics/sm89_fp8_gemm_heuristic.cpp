// The sm89 fp8 GEMM's tile heuristic (docs/kernels/fp8_gemm.md, "sm89_fp8_gemm", "Heuristic"):
//   1. the configuration from m: the smallest token tile that holds m (t8 for m <= 8, t16 for
//      m <= 16, t64 for m <= 64), t128 above. Small m is weight streaming (bytes, not
//      FLOPs): the token tile only has to hold m, and the channel tile sets how often each CTA
//      re-reads the activations from L2 (m / block_n of the weight bytes). Except where t8's
//      16-channel tiles are more than the GPU holds at once (gate_up at any m <= 8, qkv once
//      t8 falls to two CTAs per SM at m >= 3 on an H200): t64 then, whose 128-channel tiles
//      fit one resident wave, since a streaming grid of several waves pays each wave's start
//      and tail (fp8 only; plan sweep, H200, docs/kernels/fp8_gemm.md "Heuristic", session 58;
//      not measured on Ada, where every row holds one CTA per SM);
//   2. split-K, doubling while the doubled grid still fits the CTAs the GPU holds at once
//      (SMs x CTAs per SM, from the occupancy of the configuration at this m) and every split
//      keeps at least min_split_iters pipeline stages (a short split pays the prologue's
//      latency and the reduction for little work), at most 8 (the portable cluster size).
//      Small m streams weights: every CTA requests its first STAGES - 1 stages at once, so one
//      resident wave keeps the DRAM busy from the first microsecond; a split that overflows
//      the resident CTAs only adds a partial second wave, i.e. a tail (m = 1, o: 256 tiles of
//      t8 fit the 396 CTAs of an H200 at once, 512 would not). Grids that are already several
//      waves (gate_up) are not split. With cluster splits (sm_90) also only while every
//      tile's cluster stays resident at once (a cluster must fit one GPC). To be refitted
//      to the plan sweep of `sm89_fp8_gemm_bench` on the device.
//   3. the split mode: a thread-block cluster reduction on sm_90 (one launch, no workspace),
//      else fp32 partials in the workspace and a reduction kernel.
#include "cuda/heuristics/sm89_fp8_gemm_heuristic.hpp"

#include <cstdlib>
#include <string>

#include "cuda/heuristics/gpu_spec.hpp"

namespace lowbit::cuda {

namespace {

int config_for(int64_t m) {
  if (m <= 8) return 0;
  if (m <= 16) return 1;
  if (m <= 64) return 2;
  return 3;
}

}  // namespace

std::string Sm89Fp8Plan::describe() const {
  std::string s = std::string(kSm89Fp8Configs[config].tag) + " s" + std::to_string(splits);
  if (split_mode == Sm89Fp8SplitMode::kCluster) s += " cluster";
  if (split_mode == Sm89Fp8SplitMode::kWorkspace) s += " workspace";
  if (ctas_per_sm_cap > 0) s += " c" + std::to_string(ctas_per_sm_cap);
  return s;
}

int sm89_fp8_config_index(const char* tag) {
  for (int c = 0; c < kSm89Fp8ConfigCount; ++c)
    if (std::string(kSm89Fp8Configs[c].tag) == tag) return c;
  return -1;
}

Sm89Fp8Plan choose_sm89_fp8_plan(const Sm89Fp8Problem& p) {
  auto tiles_of = [&](int cfg) {
    const Sm89Fp8TileConfig& t = kSm89Fp8Configs[cfg];
    return (p.n + t.block_n - 1) / t.block_n * ((p.m + t.block_m - 1) / t.block_m);
  };
  auto resident_of = [&](int cfg) {
    const int per_sm = p.ctas_per_sm[cfg] > 0 ? p.ctas_per_sm[cfg] : kSm89Fp8Configs[cfg].min_ctas;
    return static_cast<int64_t>(per_sm) * p.sm_count;
  };
  Sm89Fp8Plan plan;
  plan.config = config_for(p.m);
  // t8's grid more than one resident wave: t64 where its grid is one. Plan sweep (H200, Suite 1,
  // us, tensor mode; `sm89_fp8_gemm_bench` with LOWBIT_FP8_GEMM_BENCH_PLANS): gate_up (1792 t8
  // tiles) at m = 1 / 2 / 4 / 8 t8 s1 31.6 / 33.1 / 38.6 / 38.2 against t64 s1 29.4 / 29.6 /
  // 29.9 / 30.2; qkv (384 tiles; 396 resident at m <= 2, 264 from m = 3) at m = 4 / 8 t8 11.8 /
  // 11.7 against t64 s4 8.8 / 9.2, while at m = 1 / 2 t8 stays best (8.1 / 8.4 against t64 s4
  // 8.4 / 8.6); o and down (256 tiles) fit and stay on t8. fp8 only (wide_tile_for_waves).
  // LOWBIT_SM89_FP8_ONE_WAVE=0 turns the rule off (a measurement knob).
  static const bool one_wave = [] {
    const char* env = std::getenv("LOWBIT_SM89_FP8_ONE_WAVE");
    return env == nullptr || env[0] != '0';
  }();
  constexpr int kT8 = 0, kT64 = 2;
  if (one_wave && p.wide_tile_for_waves && plan.config == kT8 && tiles_of(kT8) > resident_of(kT8) &&
      tiles_of(kT64) <= resident_of(kT64))
    plan.config = kT64;
  const Sm89Fp8TileConfig& c = kSm89Fp8Configs[plan.config];
  const int64_t tiles = tiles_of(plan.config);
  const int64_t iters = (p.k + c.block_k - 1) / c.block_k;
  const int64_t resident = resident_of(plan.config);
  // Cluster splits (sm_90): a cluster must fit one GPC, so the tiles' clusters must also all be
  // resident at once, which SMs x CTAs per SM does not promise. Measured (session 35, H100,
  // t16 at m = 12 / 16, two CTAs per SM): o and down in four splits 12.9 / 31.5 us against two
  // splits' 10.4-10.5 / 25.0-25.1 (64 tiles; session 20 had seen the same jump between m = 10
  // and 12, where t16 falls from three CTAs per SM to two).
  while (plan.splits < kSm89Fp8MaxSplits && tiles * plan.splits * 2 <= resident &&
         iters / (2 * plan.splits) >= c.min_split_iters &&
         (!p.cluster_ok || split_clusters_fit(p.resident_clusters[plan.config], tiles, 2 * plan.splits)))
    plan.splits *= 2;
  // t8 held to two CTAs per SM (the launch pads its shared memory so that a third does not
  // fit) where three fit (m <= 2 on H100/H200), its grid (in up to four splits) fits two per SM,
  // and k is at least kSm89Fp8T8CapMinIters stages. Measured (session 60, H200, same call, two
  // alternating rounds, us at m = 1, tensor / block / int8, uncapped -> capped): n = 4096 with
  // k = 6144 8.14 / 9.71 / 8.32 -> 7.85 / 8.56 / 8.12, k = 8192 10.45 / 11.89 / 10.74 -> 10.07 /
  // 10.65 / 10.35, k = 14336 (Suite 1's down) 18.01 / 20.62 / 18.04 -> 15.29 / 16.05 / 15.53; in
  // two splits 2048 x 14336 10.02 / 10.02 / 9.87 -> 9.43 / 9.58 / 9.31 and 1536 x 7168 6.10 /
  // 6.77 / 5.88 -> 5.95 / 6.17 / 5.56; but k = 4096 (Suite 1's o, 4 stages) 5.63 / 6.34 / 6.10
  // -> 6.45 / 6.77 / 6.29, and a grid beyond two per SM (3072 x 14336 in two splits, 384 CTAs)
  // 12.03 -> 16.64. In four splits (session 61, same method, m = 1, tensor / int8): 576 x 7168
  // 4.01 / 3.88 -> 3.97 / 3.79, 512 x 7168 3.90 / 3.77 -> 3.85 / 3.68. Eight splits were not
  // measured and are left uncapped. Why three CTAs
  // per SM slow a long stream down is not established (docs/kernels/fp8_gemm.md, "Heuristic").
  // LOWBIT_SM89_FP8_T8_CAP: 0 turns the rule off, n > 0 holds every t8 plan to n CTAs per SM
  // wherever more fit (measurement knobs).
  static const int t8_cap = [] {
    const char* env = std::getenv("LOWBIT_SM89_FP8_T8_CAP");
    return env == nullptr ? -1 : std::atoi(env);
  }();
  const int t8_per_sm = p.ctas_per_sm[kT8];
  if (plan.config == kT8 && t8_cap > 0 && t8_per_sm > t8_cap) {
    plan.ctas_per_sm_cap = t8_cap;
  } else if (plan.config == kT8 && t8_cap < 0 && t8_per_sm > 2 && plan.splits <= 4 &&
             tiles * plan.splits <= 2 * int64_t{p.sm_count} && iters >= kSm89Fp8T8CapMinIters) {
    plan.ctas_per_sm_cap = 2;
  }
  plan.split_mode = plan.splits == 1 ? Sm89Fp8SplitMode::kNone
                    : p.cluster_ok   ? Sm89Fp8SplitMode::kCluster
                                     : Sm89Fp8SplitMode::kWorkspace;
  return plan;
}

}  // namespace lowbit::cuda
