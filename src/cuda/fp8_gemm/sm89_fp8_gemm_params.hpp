// Internal: the sm89 fp8 GEMM's kernel parameters and launch entry points, visible to the
// family's host code (g++) and to the kernel translation units (nvcc). The int8 W8A8 family
// sm80_int8_gemm runs the same kernel template over int8 operands (its Sm89Fp8Element
// parameter, sm89_fp8_gemm.cuh) and shares these parameters and entry points.
#pragma once

#include <cstdint>

#include "lowbit/gemm.hpp"
#include "lowbit/status.hpp"

namespace lowbit::cuda {

// The element type of A and W, a compile-time parameter of the kernel template.
enum class Sm89Fp8Element : uint8_t {
  kE4M3,  // sm89_fp8_gemm: e4m3 x e4m3, fp32 accumulation per 128-wide k block
  kInt8,  // sm80_int8_gemm: int8 x int8, exact int32 accumulation over the split's k
};

struct Sm89Fp8GemmParams {
  const uint8_t* a;   // activations (m, k) e4m3 (int8) row-major; 16-byte aligned (k % 16 == 0)
  const uint8_t* w;   // weights (n, k) e4m3 (int8) row-major, layout "fp8_nk" ("int8_nk");
                      // 16-byte aligned
  // Scales, fp32:
  //   scaled mode: sa (1) tensor or (m) per token; sw (1) tensor or (n) per channel;
  //   block mode:  sa (k_blocks, m4) K-block-major (gemm_a_scales()), 16-byte aligned;
  //                sw (n_blocks, k_blocks) row-major, 16-byte aligned;
  //   int8:        sa (m) per token (sa_row = 1); sw (n) per channel (sw_row = 1).
  const float* sa;
  const float* sw;
  const void* bias;   // (n) in the out dtype, or null
  void* out;          // (m, n) f16 / bf16 row-major; 16-byte aligned
  float* partials;    // (splits, m, n) fp32, Sm89Fp8SplitMode::kWorkspace only
  int m, n, k;
  int m4;             // round_up(m, 4): the row length of the block-mode sa
  int k_blocks;       // ceil(k / 128)
  int n_blocks;       // ceil(n / 128)
  int sa_row;         // scaled mode: 1 per token, 0 one tensor scale
  int sw_row;         // scaled mode: 1 per channel, 0 one tensor scale
  int m_tiles;        // ceil(m / BLOCK_M)
  int n_tiles;        // ceil(n / BLOCK_N)
  int split_mode;     // Sm89Fp8SplitMode
  int out_bf16;       // 1: bf16 output, 0: f16
  // int8 only (kept last: the fp8 kernels' parameter offsets do not move):
  const int32_t* za;    // activation zero points (m) int32, or null (symmetric activations)
  const int32_t* wsum;  // weight row sums (n) int32 (the packed "int8_nk" `zeros`); read
                        // only when za is not null
};

// The kernels of one scaling mode, every row of kSm89Fp8Configs (one translation unit per
// mode: sm89_fp8_gemm_scaled.cu, sm89_fp8_gemm_block.cu).
struct Sm89Fp8GemmKernels {
  // Enqueues the kernel of config `cfg` with grid (m_tiles * n_tiles, 1, splits); with
  // kCluster the splits of a tile form one cluster (1, 1, splits). pdl: launch with
  // programmatic stream serialization (sm_90: the weights' first stages are requested before
  // the previous kernel of the stream has finished).
  // smem_floor: the launch's dynamic shared memory is at least this many bytes (a ceiling on
  // the CTAs an SM holds; 0: the kernel's own need).
  Status (*launch)(const Sm89Fp8GemmParams& p, int cfg, int splits, bool pdl, int smem_floor, Stream stream);
  // Raises the kernel's dynamic shared-memory limit on the current device and returns how
  // many CTAs of it fit on one SM for m tokens.
  Status (*prepare)(int cfg, int m, int* ctas_per_sm);
  // Dynamic shared memory of a launch of config `cfg` for m tokens.
  int (*smem_bytes)(int cfg, int m);
  // How many clusters of `splits` CTAs of config `cfg` stay resident at once for m tokens
  // (cudaOccupancyMaxActiveClusters; sm_90, after prepare()).
  Status (*clusters)(int cfg, int m, int splits, int* clusters);
};

const Sm89Fp8GemmKernels& sm89_fp8_gemm_kernels_scaled();
const Sm89Fp8GemmKernels& sm89_fp8_gemm_kernels_block();
// The int8 W8A8 kernels (scaled mode only), every row of kSm89Fp8Configs; built for sm_80+
// (src/cuda/int8_gemm/sm80_int8_gemm_kernels.cu).
const Sm89Fp8GemmKernels& sm80_int8_gemm_kernels();

// out = epilogue(sum over splits of partials, in split order) (sm89_fp8_gemm_reduce.cu):
// with partials_scaled false (fp8 scaled mode) it applies (acc * sa[m]) * sw[n]; with true
// (fp8 block mode, int8: each split's partial was scaled in its kernel) it only adds the bias.
Status sm89_fp8_gemm_reduce_splits(const Sm89Fp8GemmParams& p, bool partials_scaled, int splits, Stream stream);

}  // namespace lowbit::cuda
