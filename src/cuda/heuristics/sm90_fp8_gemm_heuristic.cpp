// The sm90_fp8_gemm plan: for every compiled configuration that suits m and every split
// count, estimate the time and keep the cheapest (ties: fewer splits, then the table order).
//
// The model (H200 figures; only the ranking matters):
//   dram_us   = the bytes every plan must move (A, W once, the output) at 4.26 TB/s;
//   sm_us     = waves x (K blocks per unit x clocks per K block + 900 clocks per unit, the
//               pipeline restart and the epilogue) at 1.9 GHz, waves = ceil(units / SMs),
//               except for the two-consumer configurations from 4 waves on, where waves =
//               units / SMs: there the GPU runs at its power limit (H200: 700 W, SM clock
//               1.41-1.44 GHz in `lowbit bench` at M=4096, nvidia-smi) and a last wave that
//               leaves SMs idle costs about its share of the work, not a whole wave
//               (measured: o and down at M=4096, m128n192's 5.3 waves beat m128n128's 7.8
//               by 3-5%, which ceil() ranked the other way; at M=1024, with 1.3 / 1.9 waves,
//               the ceiling still ranks them right);
//   clocks per K block: the two-consumer configurations as measured on H200 (lowbit bench
//               2026-11-21, gate_up M=4096, one split: m128n128 950, m128n192 1324, i.e.
//               54% / 58% of the tensor-core rate); the one-consumer configurations (m <= 64,
//               bandwidth-bound) max(tensor clocks, load clocks): tensor = BM x BN x 128 x 2
//               flops at 8192 per clock, load = (BM' + BN) x 128 bytes at 48 per clock
//               (BM' = min(BM, m): rows past m are zero-filled by the TMA, not read);
//   split_us  = splits > 1: the reduce kernel (2 us launch and tail) + writing and reading
//               the fp32 partials;
//   time      = max(dram_us, sm_us) + split_us.
// Then a measured rule may replace the choice by stream-K (below).
// Checked against the same run: it predicts qkv M=4096 198 us (m128n128, measured 197) and
// 182 us (m128n192, measured 172), o M=1024 33 / 46 us (measured 33 / 38): the choices match.
#include "cuda/heuristics/sm90_fp8_gemm_heuristic.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "cuda/fp8_gemm/sm90_fp8_gemm_params.hpp"

namespace lowbit::cuda {

namespace {

// Clocks per K block of the two-consumer configurations (header comment): measured for 128 and
// 192 columns; 96, 112 and 144 on the line through those two. That line is a ranking device,
// not a measurement: with it the plan picks the widths that measured fastest (H100, lowbit
// bench, 2026-11-26, against the four configurations before them: Suite 1 at m = 128 / 256 and
// five Suite 2 shapes at m = 1024, 1-30% faster), while the times those runs imply per K block
// are closer to n128's (n96 0.90, n112 0.985, n144 / n192 0.89: narrower tiles save less than
// their width); clocks fitted to those ratios ranked o at m = 256 and 4608 x 7168 at m = 1024
// onto plans measured 20-40% slower (split-K and stream-K costs the model underrates there).
double two_consumer_kblock_clk(const Sm90Fp8Config& cfg) {
  if (cfg.block_n == 192) return 1324.0;
  if (cfg.block_n == 128) return 950.0;
  return 950.0 + (cfg.block_n - 128) * (1324.0 - 950.0) / 64.0;
}

// The same clocks as those runs imply them (above: n96 0.90 and n112 0.985 of n128's K block,
// n144 0.89 of n192's), for ranking the 256-row tiles against the plan the line chose.
double two_consumer_kblock_clk_measured(const Sm90Fp8Config& cfg) {
  switch (cfg.block_n) {
    case 96: return 0.90 * 950.0;
    case 112: return 0.985 * 950.0;
    case 144: return 0.89 * 1324.0;
    default: return two_consumer_kblock_clk(cfg);
  }
}

// The one-consumer configurations (m <= 128, bandwidth-bound): max(tensor clocks, load clocks)
// per K block (header comment); rows past m are zero-filled by the TMA, not read.
double one_consumer_kblock_clk(const Sm90Fp8Config& cfg, int64_t m) {
  constexpr double kFlopsPerClk = 8192.0, kLoadBytesPerClk = 48.0;
  const double tensor_clk = double(cfg.block_m()) * cfg.block_n * kSm90Fp8BlockK * 2 / kFlopsPerClk;
  const double load_clk = double(std::min<int64_t>(cfg.block_m(), m) + cfg.block_n) * kSm90Fp8BlockK / kLoadBytesPerClk;
  return std::max(tensor_clk, load_clk);
}

// The 256-row tiles (two waves of m128, Sm90Fp8Config::waves): clocks per K block fitted to
// H100 runs with m256n128 forced (lowbit bench, 2026-11-26, ceil waves, 900 clocks per unit):
// 1700-1900 on Suite 1 at M = 4096 and Suite 2's one-wave shapes (6144 x 576 / 512 x 7168: 1740
// / 1640); 1900 ranks every measured shape onto its faster plan (docs/kernels/fp8_gemm.md, v18).
constexpr double kTallKblockClk = 1900.0;

}  // namespace

Sm90Fp8Plan sm90_fp8_gemm_plan(int64_t m, int64_t n, int64_t k, int sm_count, bool stream_k, bool int8,
                               bool block) {
  constexpr double kClockPerUs = 1900.0, kDramBytesPerUs = 4.26e6;
  constexpr double kUnitClk = 900.0, kReduceUs = 2.0;
  const int64_t k_blocks = (k + kSm90Fp8BlockK - 1) / kSm90Fp8BlockK;
  const double dram_us = double(m * k + n * k + 2 * m * n) / kDramBytesPerUs;
  // LOWBIT_SM90_FP8_CONFIG=<index> restricts the choice to one configuration, whatever m (a
  // measurement knob for `lowbit bench`; one the other rules exclude leaves the default).
  const char* env = std::getenv("LOWBIT_SM90_FP8_CONFIG");
  const int forced = env != nullptr ? std::atoi(env) : -1;
  // LOWBIT_SM90_FP8_SPLITS=<s> restricts the split count likewise (a measurement knob).
  const char* splits_env = std::getenv("LOWBIT_SM90_FP8_SPLITS");
  const int forced_splits = splits_env != nullptr ? std::atoi(splits_env) : -1;
  // LOWBIT_SM90_FP8_SK=0: never stream-K; =1: stream-K wherever the rule's first two
  // conditions hold (measurements).
  const char* sk_env = std::getenv("LOWBIT_SM90_FP8_SK");
  const int sk_mode = sk_env != nullptr ? std::atoi(sk_env) : -1;
  // LOWBIT_SM90_FP8_WIDTHS=0: not the widths 96 / 112 / 144 (a measurement knob: the plans
  // before them).
  const char* widths_env = std::getenv("LOWBIT_SM90_FP8_WIDTHS");
  const bool new_widths = widths_env == nullptr || std::atoi(widths_env) != 0;
  // LOWBIT_SM90_FP8_TALL=0: not the 256-row tiles (a measurement knob: the plans before them).
  const char* tall_env = std::getenv("LOWBIT_SM90_FP8_TALL");
  const bool tall_on = tall_env == nullptr || std::atoi(tall_env) != 0;
  double best_dp_clk = 1e300;  // the chosen whole-tile plan's clocks per SM, for the stream-K rule
  Sm90Fp8Plan best;
  double best_us = 1e300;
  for (int c = 0; c < kSm90Fp8ConfigCount; ++c) {
    const Sm90Fp8Config& cfg = kSm90Fp8Configs[c];
    const int bm = cfg.block_m();
    if (cfg.waves > 1 && forced != c) continue;  // ranked below, against the plan this loop picks
    if (cfg.k_pair && forced != c) continue;     // K pairs: only by the rule at the end, or forced
    // Two consumer warpgroups only pay off once both have rows to compute; up to m = 128 the
    // one-consumer configurations stay candidates (twice the row tiles: H100, lowbit bench,
    // 2026-11-26, m = 128, fp8 per-tensor / block, us: qkv m64n128 13.9 / 14.3 against m128n96
    // s2 18.4 / 18.4, o m64n64 10.5 / 11.3 against m128n96 s3 15.1 / 15.2, down m64n64 28.1 /
    // 31.7 against m128n128 s4 33.4 / 33.8; gate_up keeps m128n112, 46.1 against m64n64's
    // 59.1; from m = 256 they lose on every layer; int8 W8A8 at m = 128: qkv 20.54 -> 13.57,
    // o 17.72 -> 10.85, down 35.02 -> 30.87). A forced configuration runs whatever m.
    const bool one_ok = m <= 128;
    if (forced < 0 && (cfg.consumers == 1 ? !one_ok : m <= 64)) continue;
    if (forced >= 0 && c != forced) continue;
    if (int8 && !cfg.int8) continue;
    // The widths 96 / 112 / 144 from 8 K blocks on: at 2 (7168 x 256, m = 1024) n112 measured
    // 11% slower than n192 (more, shorter units; the model's 900 clocks per unit underrate
    // them); every shape where they measured faster had k >= 1536.
    const bool narrow = cfg.block_n != 64 && cfg.block_n != 128 && cfg.block_n != 192;
    if (narrow && (!new_widths || k_blocks < 8)) continue;
    const int64_t tiles = ((m + bm - 1) / bm) * ((n + cfg.block_n - 1) / cfg.block_n);
    const double kblock_clk = cfg.consumers == 2 ? two_consumer_kblock_clk(cfg) : one_consumer_kblock_clk(cfg, m);
    const int max_splits = static_cast<int>(std::min<int64_t>(k_blocks, 32));
    for (int s = 1; s <= max_splits; ++s) {
      if (forced_splits >= 1 && s != std::min(forced_splits, max_splits)) continue;
      const int64_t units = tiles * s;
      const double exact_waves = double(units) / sm_count;
      const double waves = cfg.consumers == 2 && exact_waves >= 4.0 ? exact_waves : std::ceil(exact_waves);
      const int64_t kb_per_unit = (k_blocks + s - 1) / s;
      const double sm_us = double(waves) * (double(kb_per_unit) * kblock_clk + kUnitClk) / kClockPerUs;
      const double split_us = s > 1 ? kReduceUs + double(m) * n * 4 * s * 2 / kDramBytesPerUs : 0.0;
      const double us = std::max(dram_us, sm_us) + split_us;
      if (us < best_us * 0.999) {
        best_us = us;
        best_dp_clk = sm_us * kClockPerUs;
        best.config = c;
        best.splits = s;
        char buf[160];
        std::snprintf(buf, sizeof(buf), "%s split %d: %lld units, predicted %.1f us (dram %.1f, sm %.1f, split %.1f)",
                      cfg.tag, s, static_cast<long long>(units), us, dram_us, sm_us, split_us);
        best.why = buf;
      }
    }
  }
  // Long k at m = 9..32 (down: 4096 x 14336): m64n128 in four splits. The model takes the
  // DRAM bound for any plan, but 64 or fewer streaming CTAs do not reach it (H200, lowbit bench,
  // down at m = 12 / 16 / 32, per-tensor, us: m64n64 s1 (the model's choice) 26.1 / 26.0 /
  // 26.0, s2 26.4 / 24.6 / 23.3; m64n128 s1 36.7 / 36.7 / 36.9, s2 23.9 / 23.8 / 23.9, s4 22.1
  // / 21.5 / 21.9; block 31.2 / 31.0 / 31.0 against m64n128 s4 21.6 / 21.4 / 21.8). Not
  // measured elsewhere, so not a model term; shorter k (qkv, o) and m >= 48 keep the model's plan
  // (at m = 48 / 64 m64n64 s2: 21.4 / 21.5), and so does n above 128 x SMs / 4, where the four
  // splits would no longer give each SM one streaming CTA (not measured).
  if (forced < 0 && forced_splits < 0 && m >= 9 && m <= 32 && k >= 8192 && (n + 127) / 128 * 4 <= sm_count) {
    best.config = 0;  // m64n128
    best.splits = static_cast<int>(std::min<int64_t>(4, k_blocks));
    best.sk_tiles = 0;
    best.why = "m64n128 split 4: long k at m = 9..32 (measured rule)";
    return best;
  }
  // The 256-row tiles (m256n128: each stage's W tile serves 256 rows; DeepGEMM's BLOCK_M = 256)
  // against the plan above, both costed with whole waves (ceil) and the measured clocks per K
  // block: the exact-wave rule above ranks the 128-row widths among themselves, but ranked the
  // 256-row tiles wrongly both ways (H100, lowbit bench, 2026-11-26, m256n128 forced against the
  // default plans, us: o / down at M = 4096 115.9 / 404.2 against m128n192's 134.8 / 472.3 (3.9
  // against 5.3 waves), qkv / gate_up at M = 4096 184.0 / 895.3 against 171.2 / 849.5). With
  // this rule every measured shape runs the faster of the two (Suite 1 at M = 512 / 1024 / 4096,
  // Suite 2); at M = 256 none of Suite 1's layers measured faster on it, so it starts at 512.
  // A 256-row plan in at most one wave also replaces stream-K (below). `tall_one_wave`: that plan.
  Sm90Fp8Plan tall_one_wave;
  tall_one_wave.config = -1;
  if (forced < 0 && !int8 && tall_on && m >= 512) {
    auto ceil_us = [&](const Sm90Fp8Config& cfg, int s, double kblock_clk) {
      const int64_t units = ((m + cfg.block_m() - 1) / cfg.block_m()) * ((n + cfg.block_n - 1) / cfg.block_n) * s;
      const double waves = std::ceil(double(units) / sm_count);
      const double sm_us = waves * (double((k_blocks + s - 1) / s) * kblock_clk + kUnitClk) / kClockPerUs;
      const double split_us = s > 1 ? kReduceUs + double(m) * n * 4 * s * 2 / kDramBytesPerUs : 0.0;
      return std::max(dram_us, sm_us) + split_us;
    };
    const Sm90Fp8Config& bc = kSm90Fp8Configs[best.config];
    const double base_clk = bc.consumers == 2 ? two_consumer_kblock_clk_measured(bc) : one_consumer_kblock_clk(bc, m);
    double tall_best = ceil_us(bc, best.splits, base_clk);
    int tall_config = -1, tall_splits = 1;
    for (int c = 0; c < kSm90Fp8ConfigCount; ++c) {
      const Sm90Fp8Config& cfg = kSm90Fp8Configs[c];
      if (cfg.waves == 1 || cfg.epilogue_copies) continue;  // (the epilogue copies: below)
      const int max_splits = static_cast<int>(std::min<int64_t>(k_blocks, 32));
      for (int s = 1; s <= max_splits; ++s) {
        if (forced_splits >= 1 && s != std::min(forced_splits, max_splits)) continue;
        const double us = ceil_us(cfg, s, kTallKblockClk);
        const int64_t tiles = ((m + cfg.block_m() - 1) / cfg.block_m()) * ((n + cfg.block_n - 1) / cfg.block_n);
        if (s == 1 && tiles <= sm_count && tall_one_wave.config < 0) {
          tall_one_wave.config = c;
          tall_one_wave.why = std::string(cfg.tag) + " split 1: " + std::to_string(tiles) +
                              " tiles in one wave, in place of stream-K (measured rule)";
        }
        if (us < tall_best * 0.999) {
          tall_best = us;
          tall_config = c;
          tall_splits = s;
        }
      }
    }
    // Short k (at most 4 K blocks) at m >= 1024: the 256-row tile in one split whatever the
    // ranking above (a measured rule: faster on all four such Suite 2 shapes, H100, lowbit bench,
    // 2026-11-26, us: m = 1024 x 7168 x 256 / 4096 x 512 10.9 / 9.0 (ranked onto it anyway), m =
    // 6144 7168 x 256 / 4096 x 512 44.4 / 38.2 against m128n192's 49.2 / 39.3; k = 1536 (12 K
    // blocks) already slower on it, 64.8 against 62.1 on 6144 x 3072). With a few K blocks per
    // tile the per-unit costs (the pipeline's restart, the epilogue) weigh most, and the 256-row
    // tile has the fewest units.
    if (tall_config < 0 && k_blocks <= 4 && m >= 1024 && forced_splits < 0) {
      for (int c = 0; c < kSm90Fp8ConfigCount && tall_config < 0; ++c)
        if (kSm90Fp8Configs[c].waves > 1 && !kSm90Fp8Configs[c].epilogue_copies) tall_config = c;
      tall_splits = 1;
      tall_best = ceil_us(kSm90Fp8Configs[tall_config], 1, kTallKblockClk);
    }
    // Block mode, the same short k at m >= 1024 on the 256-row tile in one split: its copy with
    // the epilogue compiled per output dtype and bias (a measured rule: H200, lowbit bench,
    // 2026-11-26, us: 6144 x 4096 x 512 36.72 -> 35.01, 6144 x 7168 x 256 44.24 -> 39.53, 1024 x
    // 4096 x 512 8.59 -> 8.12, 1024 x 7168 x 256 10.62 -> 9.83; docs/kernels/fp8_gemm.md, v28).
    // Not measured in the tensor / row modes at short k: they keep the plain tile.
    if (block && tall_config >= 0 && tall_splits == 1 && k_blocks <= 4 && m >= 1024) {
      const Sm90Fp8Config& t = kSm90Fp8Configs[tall_config];
      for (int c = 0; c < kSm90Fp8ConfigCount; ++c) {
        const Sm90Fp8Config& e = kSm90Fp8Configs[c];
        if (e.epilogue_copies && e.consumers == t.consumers && e.block_n == t.block_n && e.waves == t.waves) {
          tall_config = c;
          break;
        }
      }
    }
    if (tall_config >= 0) {
      char buf[200];
      std::snprintf(buf, sizeof(buf), "%s split %d: predicted %.1f us against %.1f for %s split %d (whole waves)",
                    kSm90Fp8Configs[tall_config].tag, tall_splits, tall_best, ceil_us(bc, best.splits, base_clk),
                    bc.tag, best.splits);
      best.config = tall_config;
      best.splits = tall_splits;
      best.sk_tiles = 0;
      best.why = buf;
      return best;
    }
  }
  // Block mode at 128 < m <= 256, where the 256-row tiles take two waves, the second at least
  // half full (n / 128 tiles in 1.5..2 x SMs): the 256-row tile in one split. A measured rule
  // (H200, lowbit bench, 2026-11-27, m = 256, every configuration forced: gate_up 28672 x 4096,
  // 224 tiles, on m256n128 65.2-65.3 us against the model's m128n112 70.2 and m128n128 71.5;
  // docs/kernels/fp8_gemm.md, v33). The cost model above does not rank it there (its clocks are
  // fitted to the per-tensor mode). Not per-tensor / row (there m256n128 measured 62.2 against
  // m128n112's 60.2-60.5), and not with less than a wave of tiles (qkv / o / down at m = 256,
  // 48 / 32 / 32 tiles: 1.6-2.2x slower on it); other tile counts are not measured. Measured at
  // m = 256 only; for m in 129..255 the two plans keep the same tiles (two of 128 rows against
  // one of 256, the rows past m zero-filled by the TMA in both), so the rule covers them.
  const int64_t tiles256 = (n + 127) / 128;
  if (forced < 0 && forced_splits < 0 && !int8 && block && tall_on && m > 128 && m <= 256 &&
      2 * tiles256 >= 3 * static_cast<int64_t>(sm_count) && tiles256 <= 2 * static_cast<int64_t>(sm_count)) {
    for (int c = 0; c < kSm90Fp8ConfigCount; ++c) {
      const Sm90Fp8Config& cfg = kSm90Fp8Configs[c];
      if (cfg.waves == 1 || cfg.epilogue_copies || cfg.block_n != 128) continue;
      best.config = c;
      best.splits = 1;
      best.sk_tiles = 0;
      best.why = std::string(cfg.tag) + " split 1: block mode, m = 129..256, " + std::to_string(tiles256) +
                 " tiles of 256 rows in two waves (measured rule)";
      return best;
    }
  }
  // Stream-K over every tile (sm90_fp8_gemm.cuh) for a two-consumer configuration, at
  // m >= 1024 (where it was measured; below, the layers are closer to the DRAM bound), when
  // (1) it has between one and two waves of tiles, the last at most half full, (2) k has at
  // least 32 blocks (its fixed costs, ~2.5 us for the counters' memset and the parts, are then
  // small), and (3) its even share of K iterations per SM costs at most 0.85 of the plan
  // above (the model's clocks). Measured (H200, lowbit bench Suite 2, 2026-11-21): it wins
  // 9-13% on n=576 / 512, k=7168, m=6144 and is about even on 4608 x 7168 at m=1024; it lost
  // everywhere else it was tried (short k, less than a wave of tiles, last waves nearly full),
  // so it is not a model candidate. Of the configurations that qualify, the fewest clocks.
  if (stream_k && sk_mode != 0 && m >= 1024) {
    for (int c = 0; c < kSm90Fp8ConfigCount; ++c) {
      const Sm90Fp8Config& cfg = kSm90Fp8Configs[c];
      // Measured with 128 and 192 columns only.
      if (cfg.consumers != 2 || cfg.waves != 1 || (forced >= 0 && c != forced) ||
          (cfg.block_n != 128 && cfg.block_n != 192))
        continue;
      const int64_t tiles = ((m + 127) / 128) * ((n + cfg.block_n - 1) / cfg.block_n);
      const bool waves_ok = tiles > sm_count && tiles <= 2 * sm_count && tiles - sm_count <= sm_count / 2;
      if (!waves_ok || k_blocks < 32) continue;
      const double sk_clk = std::ceil(double(tiles) * k_blocks / sm_count) * two_consumer_kblock_clk(cfg);
      if (sk_mode != 1 && sk_clk > 0.85 * best_dp_clk) continue;
      best_dp_clk = sk_clk;
      best.config = c;
      best.splits = 1;
      best.sk_tiles = static_cast<int>(tiles);
      char buf[200];
      std::snprintf(buf, sizeof(buf), "%s stream-K over all %lld tiles: %.0f clocks per SM", cfg.tag,
                    static_cast<long long>(tiles), sk_clk);
      best.why = buf;
    }
    // A 256-row plan in one wave instead (fp8, m >= 512): on the two Suite 2 shapes where stream-K
    // was chosen, m256n128 measured faster (H100, lowbit bench, 2026-11-26, block mode, us: 6144
    // x 512 x 7168 49.2-52.9 against stream-K's 58.1-63.8 and m128n112's 65.0-69.9; 6144 x 576 x
    // 7168 51.5-53.3 against 58.5-59.7).
    if (best.sk_tiles > 0 && tall_one_wave.config >= 0) return tall_one_wave;
  }
  // K pairs (fp8): a one-consumer plan in one split and at most one wave of tiles runs on its
  // K-pair twin (the same tile, a second consumer warpgroup on every other K block). A measured
  // rule (H200, lowbit bench, 2026-11-27, us, default / twin forced in one split, per-tensor and
  // block: qkv m = 16 11.06 / 11.13, 11.91 / 10.85; m = 64 10.27 / 9.52, 11.35 / 9.58; m = 128
  // on m64n128 13.66 / 12.06, 14.40 / 12.44; o m = 16 / 64 / 128 9.32 / 8.41, 9.68 / 8.47, 10.12
  // / 8.86, block 10.45 / 8.61, 10.68 / 8.88, 11.31 / 9.32). Where the tiles take more than one
  // wave (gate_up: 224 or 448) the twins measured slower: those keep the plan (docs/kernels/
  // fp8_gemm.md, v30). Split K (down, 4096 x 14336): the twin in the plan's split count, its
  // units within one wave, measured slower in four splits at m = 16 / 32 (block 18.98 / 19.54
  // against 18.80 / 19.26), faster in two at m = 64 and 128 and slower in two at m = 96 (H200,
  // 2026-11-27, fp8_gemm.md v31; second run, this rule on / off, two rounds, block: m = 64
  // 19.63 / 20.04, m = 96 26.11-26.17 / 25.45-25.59, m = 128 25.04 / 26.44-26.53; per-tensor
  // 19.50 / 19.51, 25.75 / 25.05, 24.70 / 25.08). So two splits take the twin only where the
  // rows fill whole 64-row tiles (m = 64, 128: what was measured; why m = 96 loses is not
  // known). Not int8 (no twins). LOWBIT_SM90_FP8_KPAIR=0: never (a measurement knob).
  const char* kpair_env = std::getenv("LOWBIT_SM90_FP8_KPAIR");
  const bool kpair_on = kpair_env == nullptr || std::atoi(kpair_env) != 0;
  const Sm90Fp8Config& bc = kSm90Fp8Configs[best.config];
  const bool kpair_splits = best.splits == 1 || (best.splits == 2 && m % 64 == 0);
  if (kpair_on && forced < 0 && !int8 && best.sk_tiles == 0 && kpair_splits && bc.consumers == 1) {
    const int64_t tiles = ((m + bc.block_m() - 1) / bc.block_m()) * ((n + bc.block_n - 1) / bc.block_n);
    const int64_t units = tiles * best.splits;
    for (int c = 0; c < kSm90Fp8ConfigCount && units <= sm_count; ++c) {
      const Sm90Fp8Config& t = kSm90Fp8Configs[c];
      if (t.k_pair && t.block_n == bc.block_n) {
        best.config = c;
        best.why = std::string(t.tag) + " split " + std::to_string(best.splits) + ": " + std::to_string(units) +
                   " units in one wave, " + bc.tag + "'s K-pair twin (measured rule)";
        break;
      }
    }
  }
  return best;
}

}  // namespace lowbit::cuda
