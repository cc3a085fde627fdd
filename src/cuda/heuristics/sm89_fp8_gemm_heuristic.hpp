// Internal: tile configurations of the sm89 fp8 GEMM (e4m3 x e4m3, mma.sync.m16n8k32) and the
// heuristic that picks one, with a split-K factor, from (m, n, k) and the GPU.
//
// Host-only and nvcc-free: the kernel translation units include this header to instantiate
// exactly the rows of kSm89Fp8Configs, and the family's host side includes it to choose.
// Kernels never choose themselves.
//
// Orientation (docs/kernels/fp8_gemm.md, "sm89_fp8_gemm"): the kernel computes out^T, with the
// weights as the mma A operand (16 output channels per m16 row block) and the activations as
// the B operand (8 tokens per n8 column block), so decode (m = 1) wastes 7/8 of the mma, not
// 15/16. BLOCK_N counts output channels (lowbit's n), BLOCK_M tokens (lowbit's m).
#pragma once

#include <cstdint>
#include <string>

namespace lowbit::cuda {

struct Sm89Fp8TileConfig {
  int block_n;   // output channels per CTA (multiple of 16; divides 128: a tile never straddles
                 // two 128-row weight-scale blocks)
  int block_m;   // tokens per CTA (multiple of 8)
  int block_k;   // k (bytes of one operand row) per pipeline stage, multiple of 128
  int warps_n;   // warps along n; each owns block_n / warps_n channels
  int warps_m;   // warps along m; each owns block_m / warps_m tokens
  int warps_k;   // warps along k inside a stage (whole 128-blocks each; summed in shared
                 // memory, in warp order, at the end)
  int stages;    // cp.async pipeline depth
  int min_ctas;  // __launch_bounds__ minimum CTAs per SM (caps registers at 64K / (threads x this))
  // Split-K rule (heuristic .cpp): double the splits while the grid still fits the CTAs the
  // GPU holds at once and every split keeps at least min_split_iters stages.
  int min_split_iters;
  const char* tag;     // short name used in kernel names: "t8"
  const char* reason;  // why the row exists
  constexpr int threads() const { return 32 * warps_n * warps_m * warps_k; }
};

// THE table of instantiated configurations. Every row costs two kernels per architecture
// (tensor/row scaling and block scaling; the output dtype is a run-time argument of the
// epilogue), so a row is added only with a measurement or a reason that needs it.
inline constexpr int kSm89Fp8ConfigCount = 4;
inline constexpr Sm89Fp8TileConfig kSm89Fp8Configs[kSm89Fp8ConfigCount] = {
    // m <= 8 (decode): weight streaming. One 16-channel strip per CTA gives n/16 CTAs (256 for
    // n = 4096); the four warps split each 1024-column stage along k (two 128-blocks each,
    // independent mma chains); 16 KB of weights per stage, 4 stages: 48 KB in flight per CTA,
    // 3 CTAs per SM on H100/H200 (~144 KB in flight per SM; Little's law needs ~32 KB at
    // 4.3 TB/s x 1 us / 132 SMs). Activation rows are re-read per CTA from L2: m/16 of the
    // weight bytes.
    {16, 8, 1024, 1, 1, 4, 4, 3, 1, "t8", "m<=8: weight streaming, n/16 CTAs, 16 KB stages"},
    // m <= 16: 64 channels per CTA so that activation re-reads stay at m/64 of the weight
    // bytes (25% at m = 16); warps 2 (n) x 2 (k), warp tile 32 x 16; 16 KB of weights per
    // stage, 4 stages, 2 CTAs per SM.
    {64, 16, 256, 2, 1, 2, 4, 2, 2, "t16", "m<=16: block_n 64 keeps activation re-reads at m/64"},
    // m <= 64: 4 warps of 32 channels x 64 tokens (each A fragment feeds 8 mma, each B
    // fragment 2); 24 KB per stage, 4 stages, 2 CTAs per SM.
    {128, 64, 128, 4, 1, 1, 4, 2, 4, "t64", "m<=64: 32x64 warp tiles, 2 CTAs per SM"},
    // m > 64: 8 warps (4 n x 2 m) of 32 x 64; 32 KB per stage, 3 stages (98 KB: fits the
    // 99 KB per block of Ada); one CTA per SM (the 32 x 64 warp tile with its fp32 block
    // promotion needs > 128 registers). On Hopper large m belongs to sm90_fp8_gemm (wgmma);
    // this row is the Ada path and the fallback.
    {128, 128, 128, 4, 2, 1, 3, 1, 4, "t128", "m>64: 128x128 tiles, 32x64 warp tiles"},
};

// How the split-K partial sums of one output tile are combined. Every mode sums the splits
// in split order, so results never depend on timing (deterministic).
enum class Sm89Fp8SplitMode : uint8_t {
  kNone,       // splits == 1
  kCluster,    // sm_90: the splits of a tile form a thread-block cluster (1, 1, splits) and
               // reduce through distributed shared memory inside the kernel (one launch, no
               // workspace)
  kWorkspace,  // any: fp32 partials to the workspace, then a reduction kernel
};

inline constexpr int kSm89Fp8MaxSplits = 8;  // the portable cluster size limit
// t8 plans (up to four splits) over at least this many stages of k are held to two CTAs per
// SM where their grid fits (choose_sm89_fp8_plan, measured).
inline constexpr int64_t kSm89Fp8T8CapMinIters = 6;

// Index of the configuration named `tag` in kSm89Fp8Configs, or -1.
int sm89_fp8_config_index(const char* tag);

struct Sm89Fp8Plan {
  int config = 0;  // row of kSm89Fp8Configs
  int splits = 1;  // split-K factor, 1..kSm89Fp8MaxSplits
  Sm89Fp8SplitMode split_mode = Sm89Fp8SplitMode::kNone;
  // At most this many CTAs per SM (0: as many as fit): the launch pads its dynamic shared
  // memory until no more fit (the heuristic sets 2 on t8 for long k; see the .cpp).
  int ctas_per_sm_cap = 0;
  std::string describe() const;  // "t8 s2 cluster", "t8 s1 c2"
};

struct Sm89Fp8Problem {
  int64_t m = 0, n = 0, k = 0;
  int sm_count = 0;
  bool cluster_ok = false;  // the GPU and the build run the cluster split (sm_90)
  // CTAs of each configuration one SM holds for this m (cudaOccupancy...; 0 = unknown: the
  // row's min_ctas is assumed).
  int ctas_per_sm[kSm89Fp8ConfigCount] = {};
  // cluster_ok: clusters of 2 / 4 / 8 CTAs (index 1 / 2 / 3, log2 of the splits) of each
  // configuration resident at once (cudaOccupancyMaxActiveClusters; 0 = unknown, no limit).
  int resident_clusters[kSm89Fp8ConfigCount][4] = {};
  // Whether t64 replaces t8 where t8's grid is several resident waves (choose_sm89_fp8_plan):
  // fp8 only. The int8 kernels of the same tiles (sm80_int8_gemm) ran gate_up at m = 1 / 2
  // 41.5 / 41.6 us on t64 against 32.2 / 33.9 on t8 (H200, session 58), so int8 keeps t8.
  bool wide_tile_for_waves = true;
};

// The configuration for m, then the split-K factor and mode (see the .cpp).
Sm89Fp8Plan choose_sm89_fp8_plan(const Sm89Fp8Problem& p);

// Pipeline stages (k-iterations of block_k) per split; the kernel uses the same formula.
inline int64_t sm89_fp8_iters_per_split(int64_t k, int block_k, int splits) {
  const int64_t iters = (k + block_k - 1) / block_k;
  return (iters + splits - 1) / splits;
}

}  // namespace lowbit::cuda
