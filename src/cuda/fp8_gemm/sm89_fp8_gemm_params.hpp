// Internal: the sm89 fp8 GEMM's kernel parameters and launch entry points, visible to the
// family's host code (g++) and to the kernel translation units (nvcc).
#pragma once

#include <cstdint>

#include "lowbit/gemm.hpp"
#include "lowbit/status.hpp"

namespace lowbit::cuda {

struct Sm89Fp8GemmParams {
  const uint8_t* a;   // activations (m, k) e4m3 row-major; 16-byte aligned (k % 16 == 0)
  const uint8_t* w;   // weights (n, k) e4m3 row-major, layout "fp8_nk"; 16-byte aligned
  // Scales, fp32:
  //   scaled mode: sa (1) tensor or (m) per token; sw (1) tensor or (n) per channel;
  //   block mode:  sa (k_blocks, m4) K-block-major (gemm_a_scales()), 16-byte aligned;
  //                sw (n_blocks, k_blocks) row-major, 16-byte aligned.
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
};

// The kernels of one scaling mode, every row of kSm89Fp8Configs (one translation unit per
// mode: sm89_fp8_gemm_scaled.cu, sm89_fp8_gemm_block.cu).
struct Sm89Fp8GemmKernels {
  // Enqueues the kernel of config `cfg` with grid (m_tiles * n_tiles, 1, splits); with
  // kCluster the splits of a tile form one cluster (1, 1, splits). pdl: launch with
  // programmatic stream serialization (sm_90: the weights' first stages are requested before
  // the previous kernel of the stream has finished).
  Status (*launch)(const Sm89Fp8GemmParams& p, int cfg, int splits, bool pdl, Stream stream);
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

// out = epilogue(sum over splits of partials, in split order) (sm89_fp8_gemm_reduce.cu):
// scaled mode applies (acc * sa[m]) * sw[n], block mode only adds the bias (its partials are
// already scaled).
Status sm89_fp8_gemm_reduce_splits(const Sm89Fp8GemmParams& p, bool block_mode, int splits, Stream stream);

}  // namespace lowbit::cuda
