// Internal: the sm80 mixed GEMM's kernel parameters and launch entry points, visible to the
// family's host code (g++) and to the kernel translation units (nvcc).
#pragma once

#include <cstdint>

#include "cuda/heuristics/sm80_mixed_gemm_heuristic.hpp"
#include "lowbit/dtype.hpp"
#include "lowbit/gemm.hpp"
#include "lowbit/status.hpp"

namespace lowbit::cuda {

struct MixedGemmParams {
  const void* a;             // activations (m, lda) row-major, T; rows 16-byte aligned
  const void* w;             // weights, tiled layout: (n / 16) strips of 16 * k * bits / 8 bytes
  const void* scales;        // (groups, n) T in the layout's packed channel order
  const uint8_t* zeros;      // (groups, n) u8, packed order; null: symmetric, z = 2^(bits-1)
  const void* bias;          // (n) T, or null
  void* out;                 // (m, n) T row-major
  float* partials;           // (splits, m, n) fp32, MixedGemmSplitMode::kWorkspace only
  const int32_t* act_index;  // act-order index buffer (k' at [0], groups at [1]) or null
  int m, n, k;               // k: packed columns (replaced by act_index[0] when set)
  int lda;                   // row stride of a in elements (replaced by k' with act_index)
  int group_size;            // 32, 64, 128; 0 = per-channel (scale applied in the epilogue)
  int groups;                // rows of scales / zeros (replaced by act_index[1])
  int m_tiles;               // ceil(m / BLOCK_M)
  int n_tiles;               // ceil(n / BLOCK_N)
  int split_mode;            // MixedGemmSplitMode
};

// The kernels of one (activation dtype, bits) pair, all rows of kMixedGemmConfigs
// (one translation unit per pair: sm80_mixed_gemm_{f16,bf16}_w{4,8}.cu).
// One kernel of a table row: the table variant, or (small = true) the variant whose stages
// fit kMixedGemmSmallSmemBytes (99 KB) for GPUs with less shared memory per block (sm_86 /
// sm_89); rows that fit already have one variant, returned for both.
struct MixedGemmVariant {
  int stages = 0;          // cp.async pipeline stages
  int max_smem_bytes = 0;  // dynamic shared memory at BLOCK_M tokens (the most any m needs)
};

struct MixedGemmKernels {
  // Enqueues the kernel of config `cfg` with grid (m_tiles * n_tiles, 1, splits); with
  // kCluster the splits of a tile form one cluster (1, 1, splits); with `pdl` as a
  // programmatic dependent launch (sm_90: the first stages' weights stream before
  // griddepcontrol.wait, sm80_multistage.cuh).
  Status (*launch)(const MixedGemmParams& p, int cfg, bool small, int splits, bool pdl, Stream stream);
  // Raises the kernel's dynamic shared-memory limit on the current device and returns how
  // many CTAs of it fit on one SM for m tokens (the activation stages hold min(m, BLOCK_M)
  // rows).
  Status (*prepare)(int cfg, bool small, int m, int* ctas_per_sm);
  // How many clusters of `splits` CTAs of config `cfg` stay resident at once for m tokens
  // (cudaOccupancyMaxActiveClusters; sm_90, after prepare()).
  Status (*clusters)(int cfg, bool small, int m, int splits, int* clusters);
  MixedGemmVariant (*variant)(int cfg, bool small);
};

const MixedGemmKernels& sm80_mixed_gemm_kernels_f16_w4();
const MixedGemmKernels& sm80_mixed_gemm_kernels_f16_w8();
const MixedGemmKernels& sm80_mixed_gemm_kernels_bf16_w4();
const MixedGemmKernels& sm80_mixed_gemm_kernels_bf16_w8();

// Helper kernels (sm80_mixed_gemm_aux.cu). `t` is the activation dtype (f16 / bf16).
// out = sum over splits of partials (in split order) * channel scale + bias.
Status sm80_mixed_gemm_reduce_splits(DType t, const float* partials, int splits, int m, int n,
                                     const void* channel_scales, const void* bias, void* out,
                                     Stream stream);
// ap (m, k') = a (m, k) with columns gathered by the act-order index (-1: zero); k' from the
// index; ap must hold m * tiled_act_order_max_k(k) values. `plan`: choose_act_gather_plan().
Status sm80_mixed_gemm_permute_activations(DType t, const void* a, int m, int k, const int32_t* act_index,
                                           void* ap, const ActGatherPlan& plan, Stream stream);

}  // namespace lowbit::cuda
