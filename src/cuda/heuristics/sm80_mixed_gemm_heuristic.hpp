// Internal: tile configurations of the sm80 mixed GEMM (f16/bf16 activations x 4/8-bit
// weights) and the heuristic that picks one, with a split-K factor, from (m, n, k) and the GPU.
//
// Host-only and nvcc-free: the kernel translation units include this header to instantiate
// exactly the rows of kMixedGemmConfigs, and the family's host side includes it to choose.
// Kernels never choose themselves.
//
// Orientation (docs/kernels/mixed_gemm.md, "Design"): the kernel computes out^T, with the
// dequantized weights as the mma A operand (16 output channels per m16 row block) and the
// activations as the B operand (8 tokens per n8 column block). BLOCK_N counts output
// channels (lowbit's n), BLOCK_M tokens (lowbit's m).
#pragma once

#include <cstdint>
#include <string>

namespace lowbit::cuda {

struct MixedGemmTileConfig {
  int block_n;  // output channels per CTA (multiple of 16: one 16-row strip per mma A tile)
  int block_m;  // tokens per CTA (multiple of 8: one n8 block per mma B tile)
  int block_k;  // k per pipeline stage (multiple of 64)
  int warps_n;  // warps along n; each owns block_n / warps_n channels
  int warps_m;  // warps along m; each owns block_m / warps_m tokens
  int warps_k;  // warps along k inside a stage (reduced through shared memory at the end)
  int stages;   // cp.async pipeline depth
  int min_ctas;  // __launch_bounds__ minimum CTAs per SM (caps registers at 64K / (threads x this))
  // Split-K rule (heuristic .cpp): split while CTAs < split_below * SMs and each split keeps
  // at least min_split_iters stages.
  float split_below;
  int min_split_iters;
  const char* tag;     // short name used in kernel names: "t8"
  const char* reason;  // why the row exists
  constexpr int threads() const { return 32 * warps_n * warps_m * warps_k; }
};

// THE table of instantiated configurations. Every row costs four kernels per architecture
// (f16/bf16 x 4/8-bit), so a row is added only with a measurement that needs it.
inline constexpr int kMixedGemmConfigCount = 7;
inline constexpr MixedGemmTileConfig kMixedGemmConfigs[kMixedGemmConfigCount] = {
    // m <= 8 (decode). Weight streaming: one 16-channel strip per CTA gives n/16 CTAs
    // (256 for n = 4096); the four warps split each 1024-column stage along k, 4 chunks
    // each (4 independent mma chains); 8 KB of weights per stage, 4 stages, 4 CTAs per SM
    // (~96 KB in flight per SM). Group scales go to the fp32 mma results. Run 5: 12% faster
    // than 512-column stages (W4 g128 Suite 1 m=1: 56.2 vs 63.5 us), which were issue-bound
    // on the per-stage loader (ncu run 4).
    {16, 8, 1024, 1, 1, 4, 4, 4, 2.5f, 2, "t8", "m<=8: weight streaming, n/16 CTAs, 8 KB stages"},
    // m <= 16. Activations are re-read by every CTA from L2 (4 m / block_n times the
    // weight bytes), so block_n = 64 (1x); split-K restores the CTA count. Also 8-bit
    // decode with large n (16 KB stages: 3.0 TB/s on gate_up, run 4).
    {64, 16, 256, 2, 1, 2, 4, 3, 1.4f, 8, "t16", "m<=16: block_n 64 halves activation re-reads"},
    // m <= 64: 32x64 warp tiles, each dequantized fragment feeds 8 mma; 2 CTAs per SM.
    {128, 64, 128, 4, 1, 2, 4, 2, 0.7f, 16, "t64", "m<=64: 32x64 warp tiles, dequant reused 8x"},
    // m > 64: 4 warps of 32 channels x 128 tokens, every weight dequantized once per CTA
    // (no warp shares channels), 32 mma per k16 step per warp, 2 CTAs per SM. Faster than a
    // 128 x 256 tile with 8 warps at every m >= 256 (runs 1, 3, 4, 5: 6-16%), which was
    // removed.
    {128, 128, 64, 4, 1, 1, 4, 2, 0.9f, 16, "t128", "m>64: 32x128 warp tiles, no redundant dequant"},
    // 4-bit, m = 3..16 with many channel tiles (n / 64 >= 2 x SMs: gate_up): 128
    // channels x 16 tokens, 8 warps (4 along n x 2 along k): the activations are re-read half
    // as often as with t16 and twice the warps hide the decode latency. Session 14 (H200,
    // W4 g128 f16 gate_up, us): m = 8 29.6 against t16 34.4 and t8 61.5; m = 16 29.9
    // against 35.2.
    {128, 16, 256, 4, 1, 2, 4, 2, 1.4f, 8, "t16n128", "m<=16, many tiles, 4-bit: 8 warps, half t16's activation reads"},
    // The same for 8-bit weights at m = 2..16, 256 channels (8 warps along n): 128-channel 8-bit stages
    // leave one CTA per SM. No split (112 CTAs for gate_up). Session 14, W8 per-channel f16
    // gate_up: m = 8 37.5 against t16 40.9; m = 16 38.5 against 41.5.
    {256, 16, 128, 8, 1, 1, 4, 2, 0.8f, 8, "t16n256", "m<=16, many tiles, 8-bit: 8 warps x 32 channels"},
    // m = 17..32: t16 with 32 tokens (4 token blocks per warp, scales still applied to the
    // fp32 mma results: 219 registers, 2 CTAs per SM). Session 34 (H200, W4 g128 f16, us,
    // plan sweep): m = 32 qkv / o / gate_up / down 11.9 / 10.9 / 39.7 / 27.2 (s2 / s2 / s1 /
    // s2) against t64's best 20.3 / 21.3 / 57.4 / 50.0 and sm90_mixed_gemm's 16.9 / 11.8 /
    // 50.1 / 26.4; a 128-channel, 8-warp form (t16n128 with 32 tokens) spilled at 128
    // registers and ran 16.8-51.0 on the same layers at m = 17.
    {64, 32, 256, 2, 1, 2, 4, 2, 0.9f, 8, "t32", "m<=32: t16 with 32 tokens, scales after the mma"},
};

// How the split-K partial sums of one output tile are combined. Every mode sums the splits
// in split order, so results never depend on timing (deterministic).
enum class MixedGemmSplitMode : uint8_t {
  kNone,       // splits == 1
  kCluster,    // sm_90: the splits of a tile form a thread-block cluster and reduce through
               // distributed shared memory inside the kernel (no workspace, one launch)
  kWorkspace,  // sm_80/89: fp32 partials to the workspace, then a reduction kernel
};

// How `splits` partial sums are combined on a GPU of compute capability `cc` (after the
// build's code for it: 89 where no sm_90 code was built): clusters from sm_90.
MixedGemmSplitMode mixed_gemm_split_mode(int splits, int cc);

// Index of the configuration named `tag` in kMixedGemmConfigs, or -1.
int mixed_gemm_config_index(const char* tag);

// Output tiles of configuration `config` for an m x n output (CTAs per split).
int64_t mixed_gemm_tiles(int config, int64_t m, int64_t n);

struct MixedGemmPlan {
  int config = 0;  // row of kMixedGemmConfigs
  int splits = 1;  // split-K factor, 1..8
  MixedGemmSplitMode split_mode = MixedGemmSplitMode::kNone;
  std::string describe() const;  // "t8 s1"
};

struct MixedGemmProblem {
  int64_t m = 0, n = 0, k = 0;
  int bits = 4;
  int sm_count = 0;
  int cc = 0;                   // compute capability major*10+minor
  int ctas_per_sm[kMixedGemmConfigCount] = {};  // occupancy of each config (0 = unknown)
  // sm_90 cluster split-K: clusters of 2 / 4 / 8 CTAs (index 1 / 2 / 3, log2 of the splits) of
  // each config resident at once (cudaOccupancyMaxActiveClusters; 0 = unknown, no limit).
  int resident_clusters[kMixedGemmConfigCount][4] = {};
};

// The configuration for m, and the split-K factor (see the .cpp).
MixedGemmPlan choose_mixed_gemm_plan(const MixedGemmProblem& p);

// Whether a launch of `ctas` CTAs goes as a programmatic dependent launch (sm_90; the kernel
// streams its first stages' weights before griddepcontrol.wait). Only where the grid has more
// CTAs than the GPU has SMs: with one partial wave the next call's CTAs, launched early, took
// SMs beside this call's and the calls ran slower. Measured on H200 (lowbit bench, Suite 1
// at m = 16, us, PDL off / on, same run twice): more CTAs than SMs, qkv (192 CTAs) W4 g128
// f16 12.34 / 13.20, bf16 12.74 / 11.21, W8 per-channel 14.31 / 12.00; gate_up (224) 30.19 /
// 27.58, 31.92 / 29.23, 39.29 / 37.92; down W4 (256) 23.53 / 21.77, 25.04 / 23.25; at most
// one CTA per SM (128), o W4 f16 9.97 / 13.12, bf16 9.63 / 13.98, W8 11.46 / 11.81, down W8
// 27.55 / 32.02. LOWBIT_MIXED_GEMM_PDL=0 / 1 turns it off / on everywhere (the family).
constexpr bool mixed_gemm_pdl_pays(int64_t ctas, int sm_count) { return ctas > sm_count; }

// The act-order gather (sm80_mixed_gemm_aux.cu; sm80_mixed_gemm and sm90_mixed_gemm run it just
// before their GEMM): ap (m, k') = a (m, k) with the columns in the packed order.
struct ActGatherPlan {
  // Rows staged in shared memory (16-byte loads), each block writing `chunk8` x 8 packed columns
  // of its rows as 16-byte stores (grid: column chunks x rows); 0: one element per thread (the
  // fallback for k that the staging cannot take, and the measurement knob's small-m form).
  int chunk8 = 0;
  int threads = 128;
  // Programmatic dependent launch of the gather (and of sm90_mixed_gemm's maps kernel before
  // it): each starts while the previous kernel of the stream runs and waits with
  // griddepcontrol.wait before touching anything; sm_90 with sm_90 code in the build only.
  bool pdl = false;
};

// The gather's plan for m rows of k columns (k' <= max_k packed columns) on `sm_count` SMs;
// `pdl_possible`: sm_90 and sm_90 code in this build. Measurement knobs (session 70):
// LOWBIT_MIXED_ACT_GATHER=0 (session 66's forms: one element per thread below m = 256, one block
// of 256 threads per row from there) or 1 (column chunks at every m), LOWBIT_MIXED_ACT_PDL=0 / 1
// (PDL off / on at every m; default: below m = 256).
ActGatherPlan choose_act_gather_plan(int64_t m, int64_t k, int64_t max_k, int sm_count, bool pdl_possible);

// k per split for a given k and split count: a multiple of block_k (the kernel uses the
// same formula, so host and device agree).
inline int64_t mixed_gemm_k_per_split(int64_t k, int block_k, int splits) {
  const int64_t iters = (k + block_k - 1) / block_k;
  return (iters + splits - 1) / splits * block_k;
}

}  // namespace lowbit::cuda
