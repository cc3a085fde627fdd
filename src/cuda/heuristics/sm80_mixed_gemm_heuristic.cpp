// The sm80 mixed GEMM's tile heuristic (docs/kernels/mixed_gemm.md, "Heuristic"):
//   1. the configuration from m and n (config_for below): t8 at m <= 8 while it fits (its
//      activation stage, occupancy and one wave; on sm_90 not at m >= 4 with k >= 2 n for
//      4-bit weights, session 69), t16 up to m = 16, the wide 16-token tiles
//      (t16n128 / t16n256) for gate_up-like n from m = 3 (4-bit) / 2 (8-bit), t32 up to 32,
//      t64 up to 64,
//      t128 above (faster than 128 x 256 tiles at every m >= 256 on H200);
//   2. split-K, doubling while the grid has fewer than split_below x SMs CTAs and every
//      split keeps at least min_split_iters pipeline stages (short splits pay the prologue
//      and the reduction for little work), and for t8 while the grid still fits one wave.
//      Both constants per configuration are fitted to the Suite-1 plan sweeps of
//      `sm80_mixed_gemm_bench` (runs 3, 4; session 14 for m = 1..16). 8-bit stages carry
//      twice the bytes, so 8-bit t8 splits below half the CTA count and 8-bit t16 splits at
//      most in two (run 4: W8 o/down at m = 1 lose 30% with split 2, down at m = 16 loses
//      20% with split 4). On sm_90 (cluster splits) also only while the tiles' clusters
//      all stay resident at once (session 35).
//   3. on sm_90 with 4-bit weights at m = 9..16, t16 replaces the 8-warp tile where t16's own
//      plan (step 2) fills more than two CTAs per SM in one wave, and t16n128 replaces t16
//      where t16's plan leaves at most two per SM and t16n128's has as many CTAs (session 62);
//      with 8-bit weights there, t16 splits up to four ways (as far as its clusters stay
//      resident) and replaces t16n256 where its CTAs fill their waves clearly better (session 63);
//   4. on sm_90 with 4-bit weights at m = 17..32, t32 splits until its CTAs fill the SMs'
//      resident slots, down to 3 stages per split (session 63); with 8-bit weights there t32
//      splits down to 3 stages per split below 0.9 x SMs CTAs (session 64, from session 63's
//      sweep).
#include <algorithm>
#include <cstdlib>
#include <string>

#include "cuda/heuristics/gpu_spec.hpp"
#include "cuda/heuristics/sm80_mixed_gemm_heuristic.hpp"

namespace lowbit::cuda {

namespace {

constexpr int kT8 = 0, kT16 = 1, kT64 = 2, kT128 = 3, kT16N128 = 4, kT16N256 = 5, kT32 = 6;
static_assert(kMixedGemmConfigCount == 7, "config indices below follow kMixedGemmConfigs");

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// CTAs of config c per SM for this m: measured occupancy when the family supplied it, else
// the table's minimum.
int ctas_per_sm(const MixedGemmProblem& p, int c) {
  return p.ctas_per_sm[c] > 0 ? p.ctas_per_sm[c] : kMixedGemmConfigs[c].min_ctas;
}

// The wide token-16 tile of the width: 128 channels (8 warps, 4-bit) or 256 channels
// (8-bit, whose 128-channel stages do not fit two CTAs per SM).
int wide_config(int bits) { return bits == 8 ? kT16N256 : kT16N128; }

// Many channel tiles (gate_up-like n): enough 64-channel tiles for two per SM.
bool many_tiles(const MixedGemmProblem& p) { return p.n / 64 >= 2 * static_cast<int64_t>(p.sm_count); }

// t8 at m <= 8 while (a) its activation rows per stage (m x 1024 x 2 bytes) stay within 1.25x
// its weight bytes (8 KB 4-bit, 16 KB 8-bit): above, the activations re-read from L2 by every
// 16-channel CTA cost more than the weights; (b) at least two CTAs fit per SM; (c) every tile
// has a slot in one wave. Plan sweep of session 14 (H200, W4 g128 / W8 per-channel f16, us):
// qkv W4 t8 / t16 at m = 4 9.94 / 12.13, m = 5 15.42 / 12.16 (t8 three -> two CTAs per SM: 384
// tiles in 264 slots); down W4 m = 5 21.16 / 22.71, m = 6 23.20 / 22.82, m = 8 27.22 / 22.94;
// down W8 m = 5 23.30 / 28.26, m = 6 35.23 / 28.19 (t8 one CTA per SM).
bool t8_fits(const MixedGemmProblem& p) {
  const MixedGemmTileConfig& c = kMixedGemmConfigs[kT8];
  const int64_t w_bytes = static_cast<int64_t>(c.block_n) * c.block_k * p.bits / 8;
  const int64_t x_bytes = p.m * c.block_k * 2;
  const int per_sm = ctas_per_sm(p, kT8);
  return 4 * x_bytes <= 5 * w_bytes && per_sm >= 2 &&
         ceil_div(p.n, c.block_n) <= static_cast<int64_t>(per_sm) * p.sm_count;
}

// 4-bit weights on sm_90 at m = 4..8 with k >= 2 n (down-like layers): t16, which splits k over
// clusters, instead of t8, which fits them only unsplit there (its doubled grid would exceed a
// wave). Session 69 (H200, act-order W4 g128 f16, sm80_mixed_gemm pinned, each plan forced, two
// rounds, `bench/results/2026-11-29-h200-session69/` call 6, us, t8 s1 / t16 s4): m = 4 / 5
// 3584 x 18944 25.7 / 28.3 against 21.5 / 21.6, 4096 x 14336 20.9 / 22.9 against 20.0 / 20.0,
// 4096 x 11008 17.7 / 19.3 against 17.0 / 17.1, 5120 x 13824 (m = 4) 26.0 against 20.6; at m = 3
// t8 s1 still won two of the four (4096 x 14336 18.8 against 19.7, 4096 x 11008 16.1 against
// 16.8), so m = 3 keeps the rule above. These layers reach this family at m <= 8 where the GEMV
// refuses them or select.cpp prefers this family (act-order clusters, GPUs without clusters).
bool long_k_4bit_t16(const MixedGemmProblem& p) { return p.bits == 4 && p.cc >= 90 && p.m >= 4 && p.k >= 2 * p.n; }

// 4-bit weights at m = 9..16 on sm_90 (cluster splits, PDL for grids larger than the SM
// count): the 16-token tiles split k down to 4 stages per split (min_split_iters 4 instead of
// 8), and qkv-like n takes t16n128 (config_for). Plan sweep, session 20 (H200, us, W4 g128
// f16 / bf16, m = 9 and 16): o t16 s4 8.00 / 8.58 and 8.36 / 8.80 against the former t16 s2
// 10.17 / 10.38 and 9.86 / 10.03; qkv t16n128 s4 9.98 / 10.98 and 10.30 / 10.99 against t16 s2
// 12.86 / 13.37 and 10.96 / 11.35 (t16 s4 13.16 / 13.60); down and gate_up unchanged
// (t16 s4, t16n128 s1 were already the best). 8-bit weights lose with more splits (t16 s4 o
// 13.1-13.6 against s2 11.7-11.9), so they keep the rule above; m <= 8 was not swept.
bool small_m_4bit_split(const MixedGemmProblem& p) { return p.bits == 4 && p.m >= 9 && p.m <= 16 && p.cc >= 90; }

// 8-bit weights at m = 9..16 on sm_90: t16 splits up to four ways down to 3 stages per split,
// as far as its clusters of four stay resident (at two CTAs per SM, about 62 on a 132-SM
// H200: 48 and 56 tiles split four ways, 64 and more two ways). Session 63 (H200, W8
// per-channel f16, m = 16, every t16 / t16n128 / t16n256 plan forced, us): 3584 x 3584 t16 s4
// 7.58 against the former s1 10.61 (s2 8.44), 3072 x 3072 s4 6.46 against s1 9.51, 3584 x
// 18944 s4 20.05 against s2 24.54, 3072 x 8192 s4 10.30 against s2 13.11, 4608 x 3584 s2 8.35
// against s1 10.83, 5120 x 3072 s2 7.80 against s1 9.95; where 64 or more tiles would split
// four ways their clusters no longer fit (Suite 1's o 4096 x 4096: s4 11.41 against s2 9.14,
// down 25.89 against 19.93). The former limit (at most two splits) came from o at m = 16 on
// splits that did not fit (session 20, o s4 13.1-13.6 against s2 11.7-11.9).
bool small_m_8bit_split(const MixedGemmProblem& p) { return p.bits == 8 && p.m >= 9 && p.m <= 16 && p.cc >= 90; }

// 4-bit weights at m = 17..32 on sm_90: t32 splits while its CTAs fit the SMs at once (its
// occupancy x SMs, not 0.9 x SMs) down to 3 stages per split, as far as its clusters stay
// resident (two CTAs per SM on a 132-SM H200: 132 / 62 / 30 clusters of 2 / 4 / 8). Session 63
// (H200, W4 g128 f16, every t32 plan forced at m = 24 / 32, us): 3072 x 3072 s4 6.76 / 7.27
// against the former s1 11.40 / 11.48, 3584 x 3584 s4 7.98 / 8.51 against 12.96 / 13.06,
// 4608 x 3584 s2 9.49 / 9.77 against 13.06 / 13.17, 5120 x 3072 s2 8.54 / 8.80 against 11.59 /
// 11.70 (k too short for 8 stages per split before), 8192 x 8192 s2 19.37 / 19.85 against
// 27.02 / 27.42 and 8192 x 28672 s2 57.98 / 61.23 against 85.84 / 87.23 (128 tiles, one CTA
// per SM before); Suite 1's layers and the other swept layers keep their plans.
bool mid_m_4bit_fill(const MixedGemmProblem& p) { return p.bits == 4 && p.m >= 17 && p.m <= 32 && p.cc >= 90; }

// 8-bit weights at m = 17..32 on sm_90 (session 64): t32 (one CTA per SM at 8 bits) splits down
// to 3 stages per split (not 8), still below 0.9 x SMs CTAs and only as far as its clusters stay
// resident (66 clusters of 2 on a 132-SM H200). Session 63's sweep (H200, W8 per-channel f16, every t32 plan
// forced at m = 24 / 32, us): 3584 x 3584 (56 tiles, 14 stages) s2 9.77 / 9.93 against s1
// 13.44 / 13.52; the layers the former rule already split (3072 x 3072 s2 8.91 / 9.01, Suite 1's
// o s2 10.71 / 10.82) keep their plans, and wider layers (4608 x 3584, 72 tiles; 5120 x 3072, 80)
// stay unsplit since two splits would not keep their clusters resident (s2 15.31 / 14.29 against
// s1 13.68 / 12.53). These plans run where select.cpp sends such layers to this family
// (sm80_first_short_w8_t32) and for act-order weights.
bool mid_m_8bit_short(const MixedGemmProblem& p) { return p.bits == 8 && p.m >= 17 && p.m <= 32 && p.cc >= 90; }

// The share of its waves' slots that `ctas` CTAs fill at `per_sm` CTAs per SM.
double wave_fill(int64_t ctas, int per_sm, int sm_count) {
  const int64_t slots = static_cast<int64_t>(std::max(per_sm, 1)) * sm_count;
  return static_cast<double>(ctas) / static_cast<double>(ceil_div(ctas, slots) * slots);
}

int config_for(const MixedGemmProblem& p) {
  if (p.m <= 16) {
    // Many channel tiles: the wide tile (one per 8 warps, no split) from m = 3 (4-bit) or
    // m = 2 (8-bit); below, t8 (4-bit) / t16 (8-bit, 16 KB stages: 3.0 TB/s at m = 1, run 4).
    // Session 14, gate_up: W4 m = 2 t8 28.35 (wide 29.3+), m = 3..8 wide 29.2-29.4 against t8
    // 34.7-61.2 and t16 33.6-34.2, m = 16 29.9 against t16 35.3; W8 m = 2..16 t16n256
    // 37.0-38.5 against t16 40.1-41.5.
    if (many_tiles(p)) {
      if (p.bits == 8) return p.m >= 2 ? kT16N256 : kT16;
      return p.m >= 3 ? wide_config(p.bits) : kT8;
    }
    if (p.m <= 8 && t8_fits(p) && !long_k_4bit_t16(p)) return kT8;
    // 4-bit, m = 9..16 on sm_90 (see small_m_4bit_split): where t16 in four splits would not
    // fit two CTAs per SM (qkv: 96 tiles), the 8-warp 128-channel tile in four splits instead.
    if (small_m_4bit_split(p) && ceil_div(p.n, kMixedGemmConfigs[kT16].block_n) * 4 > 2 * int64_t(p.sm_count))
      return kT16N128;
    return kT16;
  }
  // m = 17..32: the 32-token tile (table: session-34 sweep); t64 from m = 33 (two t32 token
  // tiles ran qkv / down at m = 48 in 19.7 / 34.7 us against t64's 22.4 / 54.9, but gate_up
  // in 73.5 against 58.5).
  if (p.m <= 32) return kT32;
  if (p.m <= 64) return kT64;
  return kT128;
}

int64_t tiles_of(const MixedGemmProblem& p, int config) { return mixed_gemm_tiles(config, p.m, p.n); }

// The split-K factor of configuration `config` (rule 2 of the file comment).
int splits_for(const MixedGemmProblem& p, int config) {
  const MixedGemmTileConfig& c = kMixedGemmConfigs[config];
  const int64_t tiles = tiles_of(p, config);
  const int64_t iters = ceil_div(p.k, c.block_k);
  double split_below = c.split_below;
  int max_splits = 8;
  int min_split_iters = c.min_split_iters;
  // 4-bit m = 9..16 on sm_90: splits down to 4 stages (t16n128) or 3 (t16) each. Session 62
  // (H200, W4 g128 f16, m = 16, us): 3584 x 3584 t16 s4 (3.5 stages per split) 6.76 against
  // s2 7.56, 4608 x 3584 t16 s4 7.16 against t16n128 s2 9.26.
  if (small_m_4bit_split(p) && config == kT16N128) min_split_iters = 4;
  if (small_m_4bit_split(p) && config == kT16) min_split_iters = 3;
  if (p.bits == 8 && config == kT8) split_below *= 0.5;
  if (p.bits == 8 && config == kT16) max_splits = 2;
  if (small_m_8bit_split(p) && config == kT16) {
    max_splits = 4;
    min_split_iters = 3;
  }
  if (mid_m_4bit_fill(p) && config == kT32) {
    split_below = ctas_per_sm(p, kT32);
    min_split_iters = 3;
  }
  if (mid_m_8bit_short(p) && config == kT32) min_split_iters = 3;
  const double enough = split_below * p.sm_count;
  // t8 splits only while the doubled grid still fits one wave (session 14, down W4: t8 s2 /
  // s1 at m = 3 22.29 / 17.60 us, three CTAs per SM, 512 CTAs in 396 slots; m = 1..2 s2, one wave).
  const int64_t wave = static_cast<int64_t>(ctas_per_sm(p, config)) * p.sm_count;
  // sm_90 splits are clusters, which must each fit one GPC: a split whose clusters (one per
  // tile) outnumber those the GPU keeps resident runs in two waves. Measured (H100, W8
  // per-channel f16, t32 at one CTA per SM: 66 resident clusters of 2), qkv's 96 tiles at
  // m = 24 / 32: s2 20.5 / 20.3 us against s1 17.8 / 17.7; o and down (64 tiles) keep s2
  // (12.6 / 12.7 and 28.3 / 28.7 against s1 16.9 / 17.2 and 48.8 / 51.3).
  int splits = 1;
  while (splits < max_splits && static_cast<double>(tiles * splits) < enough &&
         iters / (2 * splits) >= min_split_iters && (config != kT8 || tiles * splits * 2 <= wave) &&
         (p.cc < 90 || split_clusters_fit(p.resident_clusters[config], tiles, 2 * splits)))
    splits *= 2;
  return splits;
}

}  // namespace

std::string MixedGemmPlan::describe() const {
  std::string s = std::string(kMixedGemmConfigs[config].tag) + " s" + std::to_string(splits);
  if (split_mode == MixedGemmSplitMode::kCluster) s += " cluster";
  if (split_mode == MixedGemmSplitMode::kWorkspace) s += " workspace";
  return s;
}

MixedGemmSplitMode mixed_gemm_split_mode(int splits, int cc) {
  return splits == 1 ? MixedGemmSplitMode::kNone : cc >= 90 ? MixedGemmSplitMode::kCluster : MixedGemmSplitMode::kWorkspace;
}

int64_t mixed_gemm_tiles(int config, int64_t m, int64_t n) {
  const MixedGemmTileConfig& c = kMixedGemmConfigs[config];
  return ceil_div(n, c.block_n) * ceil_div(m, c.block_m);
}

int mixed_gemm_config_index(const char* tag) {
  for (int c = 0; c < kMixedGemmConfigCount; ++c)
    if (std::string(kMixedGemmConfigs[c].tag) == tag) return c;
  return -1;
}

MixedGemmPlan choose_mixed_gemm_plan(const MixedGemmProblem& p) {
  MixedGemmPlan plan;
  plan.config = config_for(p);
  // 4-bit m = 9..16 on sm_90: t16 instead of the 8-warp tile where t16's plan puts more than
  // two and at most the occupancy's CTAs on every SM in one wave (its splits' clusters all
  // resident): four-warp CTAs, three to an SM, against two of eight warps. Session 62 (H200,
  // W4 g128 f16, m = 16, every t16 / t16n128 plan forced, us): 4608 x 3584 t16 s4 (288 CTAs)
  // 7.16 against t16n128 s2 9.26, 5120 x 5120 t16 s4 (320) 8.60 against t16n128 s4 9.81,
  // 5120 x 13824 16.97 / 20.98, 5120 x 27648 29.56 / 36.95, 10240 x 8192 t16 s2 (320) 17.91
  // against t16n128 s2 22.31, 19712 / 22528 / 25344 x 4096 t16 s1 (308 / 352 / 396) 17.08 /
  // 17.61 / 19.90 against t16n128 s1 21.36 / 21.37 / 21.31; at two CTAs per SM or fewer the
  // 8-warp tile stays ahead (6144 x 4096: t16n128 s4 8.74, t16 s2 (192) 9.71; 8192 x 28672:
  // t16n128 s2 46.34, t16 s2 (256) 55.02), and so where t16 needs two waves (28672 x 4096: t16 s1
  // (448) 28.60 against t16n128 s1 21.59).
  if (small_m_4bit_split(p) && plan.config == kT16N128) {
    const int64_t t16_ctas = tiles_of(p, kT16) * splits_for(p, kT16);
    if (t16_ctas > 2 * int64_t{p.sm_count} && t16_ctas <= int64_t{ctas_per_sm(p, kT16)} * p.sm_count)
      plan.config = kT16;
  } else if (small_m_4bit_split(p) && plan.config == kT16) {
    // The converse: where t16's plan puts at most two CTAs on an SM and t16n128's has as many
    // CTAs (down-like layers, n ~ 3000-3800 and k >= 8192, where t16n128 reaches eight splits
    // in one wave of clusters), the 8-warp tile. Session 62 (H200, W4 g128 f16, t16n128 s8
    // against the former t16 s4, m = 9 / 16, us): 3584 x 18944 16.23 / 16.92 against 20.37 /
    // 20.95, 3072 x 16384 13.23 / 14.15 against 17.46 / 18.05, 3840 x 16384 14.31 / 15.12
    // against 17.57 / 18.12, 3072 x 8192 8.66 / 9.54 against 9.94 / 10.55, 3584 x 8192 9.50 /
    // 10.40 against 10.03 / 10.63. Suite 1's down (32 clusters of 8 against 30 resident there)
    // keeps t16 s4.
    const int64_t t16_ctas = tiles_of(p, kT16) * splits_for(p, kT16);
    const int64_t wide_ctas = tiles_of(p, kT16N128) * splits_for(p, kT16N128);
    if (t16_ctas <= 2 * int64_t{p.sm_count} && wide_ctas >= t16_ctas) plan.config = kT16N128;
  } else if (small_m_8bit_split(p) && plan.config == kT16N256) {
    // 8-bit, many channel tiles: t16 instead of t16n256 (one CTA per SM) where t16's CTAs fill
    // their waves' slots clearly better (wave quantization). Session 63 (H200, W8 per-channel
    // f16, m = 16, us): 37888 x 3584 t16 s1 (592 CTAs, 75% of 3 waves of 264) 41.79 against
    // t16n256 s1 (148 CTAs, 56% of 2 waves of 132) 52.70; where both fill alike t16n256 stays:
    // 28672 x 4096 (85% / 85%) 33.31 against t16 32.46, 27648 x 5120 (82% / 82%) 38.95 against
    // 39.84, 57344 x 8192 (85% / 85%) 124.62 against 126.16.
    const int64_t wide_ctas = tiles_of(p, kT16N256) * splits_for(p, kT16N256);
    const int64_t t16_ctas = tiles_of(p, kT16) * splits_for(p, kT16);
    if (wave_fill(t16_ctas, ctas_per_sm(p, kT16), p.sm_count) >
        1.15 * wave_fill(wide_ctas, ctas_per_sm(p, kT16N256), p.sm_count))
      plan.config = kT16;
  }
  plan.splits = splits_for(p, plan.config);
  plan.split_mode = mixed_gemm_split_mode(plan.splits, p.cc);
  return plan;
}

// The act-order gather, by m. Session 70 (H200, W4 g128 f16 act-order Suite 1, the forms and
// PDL forced by the knobs in one binary, two rounds, bench/results/2026-11-29-h200-session70/ calls
// 3-4, us; sm80_mixed_gemm runs m = 16, sm90_mixed_gemm above):
//   * m < 64: one element per thread, with PDL: m = 16 / 32 67.7 / 94.0 against 72.4 / 96.1
//     without PDL; the rows staged in column chunks (below) 73.7 / 99.0 with PDL (down at m = 16,
//     k = 14336: 24.8 against 21.7; every block stages the whole 28 KB row for its chunk);
//   * m = 64..255: the rows staged in column chunks, with PDL: m = 64 / 128 114.7 / 150.3 against
//     118.5 / 164.6 for session 69's gather (element, no PDL) and 118.4 / 164.3 for the element
//     form with PDL;
//   * m >= 256: one block of 256 threads per row, the whole row, without PDL (session 66's form;
//     session 69's behaviour): m = 256 / 1024 234.5 / 777.7 against 238.2 / 774.7 with PDL (qkv at
//     m = 256 32.4 against 35.5) and 254.9 / 801 for chunks with PDL.
// Staging reads each row once with coalesced 16-byte loads where the element form reads a 32-byte
// sector per 2-byte value; what it costs is the staging's latency before any store, per block.
// The figures at m >= 32 (sm90_mixed_gemm) were taken with that family's act-order GEMM itself
// launched with PDL too, which it is not (the family's run(): unsafe where k' != k); without it
// (call 3, the gather with / without PDL in column chunks against session 69's element form): m =
// 32 / 64 / 128 100.0 / 119.2 / 156.7 and 102.6 / 120.4 / 155.5 against 96.1 / 118.7 / 164.4.
ActGatherPlan choose_act_gather_plan(int64_t m, int64_t k, int64_t max_k, int sm_count, bool pdl_possible) {
  ActGatherPlan g;
  const char* pdl = std::getenv("LOWBIT_MIXED_ACT_PDL");
  g.pdl = pdl_possible && (pdl != nullptr ? pdl[0] != '0' : m < 256);
  const int64_t units = (max_k + 7) / 8;  // 16-byte units of a packed row
  const char* form = std::getenv("LOWBIT_MIXED_ACT_GATHER");
  const char f = form != nullptr && (form[0] == '0' || form[0] == '1') ? form[0] : 'd';
  if (f == '0' || (f == 'd' && (m < 64 || m >= 256))) {  // session 66's two forms
    g.threads = 256;
    g.chunk8 = m >= 256 ? static_cast<int>(units) : 0;
    return g;
  }
  // Column chunks of at least 64 units, so that about two blocks per SM run; sized on k (k' = k
  // for GPTQ's g_idx; chunks that start past k' exit at once).
  const int64_t rows = std::min<int64_t>(std::max<int64_t>(m, 1), 65535);
  const int64_t k_units = (k + 7) / 8;
  const int64_t blocks = 2 * int64_t{std::max(sm_count, 1)};
  g.threads = 128;
  g.chunk8 = static_cast<int>(std::min(units, std::max<int64_t>(64, (k_units * rows + blocks - 1) / blocks)));
  return g;
}

}  // namespace lowbit::cuda
