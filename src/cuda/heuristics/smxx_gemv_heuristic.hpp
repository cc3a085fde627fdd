// Internal: the GEMV family's instantiated kernels and its launch-configuration choice,
// kept apart from the kernels (CONVENTIONS.md). Host code; no CUDA headers.
//
// What is compile-time and why (everything else is a run-time argument of one kernel):
//   * weight width: the bit layout and the decode (a different instruction sequence);
//   * activation kind (f16 / bf16 / int8): the mma instruction and the magic numbers;
//   * scale slots per 256-column chunk (group 32, 64, 128, per-channel): the length of the
//     mma chain between two scale applications and which lane holds which scale entry.
// Run time: m (1..8, the mma's n), zero-point mode (symmetric / integer / float), scale
// dtype (f16 / bf16), output dtype, bias, n, k, warps, ring depth, fill mode, grid.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cuda/gemv/smxx_gemv_params.hpp"
#include "cuda/heuristics/gpu_spec.hpp"

namespace lowbit::gemv {

struct GemvKernelRow {
  int bits;
  int act;    // GemvAct
  int slots;  // 8: group 32, 4: group 64, 2: group 128, 1: per-channel
  const char* reason;
};

// The instantiated kernels, one row each. Each width x {f16, bf16} x 4 group classes is
// claimed by the issue (every width, group and dtype must run); int8 activations only for
// 4- and 8-bit weights (the scope, and the only widths whose codes are whole
// nibbles / bytes of the int8 mma operand). 64 kernels; smxx_gemv_w<bits>.cu instantiate
// exactly these rows.
inline constexpr GemvKernelRow kGemvKernels[] = {
    // 1-bit: binary weights (extreme-compression research models).
    {1, kActF16, 8, "w1 g32 f16"},   {1, kActF16, 4, "w1 g64 f16"},
    {1, kActF16, 2, "w1 g128 f16 (Suite 1)"}, {1, kActF16, 1, "w1 per-channel f16"},
    {1, kActBf16, 8, "w1 g32 bf16"}, {1, kActBf16, 4, "w1 g64 bf16"},
    {1, kActBf16, 2, "w1 g128 bf16"}, {1, kActBf16, 1, "w1 per-channel bf16"},
    // 2-bit: HQQ / GemLite 2-bit models.
    {2, kActF16, 8, "w2 g32 f16"},   {2, kActF16, 4, "w2 g64 f16 (HQQ default)"},
    {2, kActF16, 2, "w2 g128 f16 (Suite 1)"}, {2, kActF16, 1, "w2 per-channel f16"},
    {2, kActBf16, 8, "w2 g32 bf16"}, {2, kActBf16, 4, "w2 g64 bf16"},
    {2, kActBf16, 2, "w2 g128 bf16"}, {2, kActBf16, 1, "w2 per-channel bf16"},
    // 3-bit: the odd width GemLite cannot pack.
    {3, kActF16, 8, "w3 g32 f16"},   {3, kActF16, 4, "w3 g64 f16"},
    {3, kActF16, 2, "w3 g128 f16 (Suite 1)"}, {3, kActF16, 1, "w3 per-channel f16"},
    {3, kActBf16, 8, "w3 g32 bf16"}, {3, kActBf16, 4, "w3 g64 bf16"},
    {3, kActBf16, 2, "w3 g128 bf16"}, {3, kActBf16, 1, "w3 per-channel bf16"},
    // 4-bit: GPTQ / AWQ / HQQ; float zero points and whatever the tiled layout is slower for.
    {4, kActF16, 8, "w4 g32 f16"},   {4, kActF16, 4, "w4 g64 f16 (HQQ)"},
    {4, kActF16, 2, "w4 g128 f16 (Suite 1, GPTQ/AWQ default)"}, {4, kActF16, 1, "w4 per-channel f16"},
    {4, kActBf16, 8, "w4 g32 bf16"}, {4, kActBf16, 4, "w4 g64 bf16"},
    {4, kActBf16, 2, "w4 g128 bf16"}, {4, kActBf16, 1, "w4 per-channel bf16"},
    // 5-bit, 6-bit: odd widths between 4 and 8 (HQQ, mixed-precision recipes).
    {5, kActF16, 8, "w5 g32 f16"},   {5, kActF16, 4, "w5 g64 f16"},
    {5, kActF16, 2, "w5 g128 f16 (Suite 1)"}, {5, kActF16, 1, "w5 per-channel f16"},
    {5, kActBf16, 8, "w5 g32 bf16"}, {5, kActBf16, 4, "w5 g64 bf16"},
    {5, kActBf16, 2, "w5 g128 bf16"}, {5, kActBf16, 1, "w5 per-channel bf16"},
    {6, kActF16, 8, "w6 g32 f16"},   {6, kActF16, 4, "w6 g64 f16"},
    {6, kActF16, 2, "w6 g128 f16 (Suite 1)"}, {6, kActF16, 1, "w6 per-channel f16"},
    {6, kActBf16, 8, "w6 g32 bf16"}, {6, kActBf16, 4, "w6 g64 bf16"},
    {6, kActBf16, 2, "w6 g128 bf16"}, {6, kActBf16, 1, "w6 per-channel bf16"},
    // 8-bit: int8 weight-only models; float zero points.
    {8, kActF16, 8, "w8 g32 f16"},   {8, kActF16, 4, "w8 g64 f16"},
    {8, kActF16, 2, "w8 g128 f16 (Suite 1)"}, {8, kActF16, 1, "w8 per-channel f16 (W8A16)"},
    {8, kActBf16, 8, "w8 g32 bf16"}, {8, kActBf16, 4, "w8 g64 bf16"},
    {8, kActBf16, 2, "w8 g128 bf16"}, {8, kActBf16, 1, "w8 per-channel bf16"},
    // int8 activations (per-token scale) with 4- and 8-bit weights.
    {4, kActI8, 8, "w4a8 g32"}, {4, kActI8, 4, "w4a8 g64"},
    {4, kActI8, 2, "w4a8 g128 (Suite 1 int8 row)"}, {4, kActI8, 1, "w4a8 per-channel"},
    {8, kActI8, 8, "w8a8 g32"}, {8, kActI8, 4, "w8a8 g64"},
    {8, kActI8, 2, "w8a8 g128"}, {8, kActI8, 1, "w8a8 per-channel (W8A8 weight-only layout)"},
};
inline constexpr int kGemvKernelCount = static_cast<int>(sizeof(kGemvKernels) / sizeof(kGemvKernels[0]));

// Index of the row for (bits, act, slots), or -1.
constexpr int find_gemv_kernel(int bits, int act, int slots) {
  for (int i = 0; i < kGemvKernelCount; ++i)
    if (kGemvKernels[i].bits == bits && kGemvKernels[i].act == act && kGemvKernels[i].slots == slots)
      return i;
  return -1;
}

// The problem as the launch choice sees it.
struct GemvShape {
  int bits = 4;
  int act = kActF16;
  int slots = 2;       // scale slots per chunk (256 / group, 1 per-channel)
  bool zeros = false;  // zero points stored
  int m = 1;
  int64_t n = 0;
  int64_t k = 0;
};

// A launch: everything of GemvParams that is not an operand, plus the grid.
struct GemvLaunch {
  int warps = kMaxWarps;       // block = 32 * warps threads; item l of a block -> warp l % warps
  int ring = 2;                // ring slots per warp
  int slot_bytes = 0;          // ring_slot_bytes()
  int ctas_per_sm = 1;         // blocks the shared memory is sized for (1: one block per SM)
  int grid = 0;                // filled by finish_gemv_launch()
  bool bulk = false;           // cp.async.bulk ring fills (sm_90), else cp.async
  bool x_in_smem = true;
  int x_smem_stride = 0;       // bytes
  int corr_offset = 0;         // bytes: correction table
  int cx_offset = 0;           // bytes: activation-sum table
  int part_offset = 0;         // bytes: partial sums
  int bar_offset = 0;          // bytes: mbarriers
  int ring_offset = 0;         // bytes: the warps' item rings
  int l2_prefetch = 0;         // bytes per block asked of L2 before the PDL wait
  std::size_t smem_bytes = 0;  // dynamic shared memory of the launch
};

// Bytes of weights the rings of one SM keep in flight (Little's law: ~4.3 TB/s x ~1 us of
// DRAM latency / 132 SMs = ~32 KB per SM; twice that for the latency under load).
inline constexpr int kGemvInFlightPerSm = 64 * 1024;
// Bytes of a block's weights past its rings asked of L2 before the PDL wait: they stream
// while the previous kernel finishes and the activations arrive.
inline constexpr int kGemvL2Prefetch = 64 * 1024;

// Warps, ring depth and shared memory for a shape on a GPU (grid not yet known: it needs
// the kernel's occupancy, which the family's host side asks the runtime for). The
// activations are staged when they fit beside rings of at least two slots, else read from
// L2 (int8: always staged; can_implement rejects what does not fit).
// Tuning overrides (tests, the device script): LOWBIT_GEMV_LAUNCH=
// "warps,ring[,x_in_smem[,ctas_per_sm[,bulk[,l2_prefetch_kb]]]]" (-1 keeps the choice).
GemvLaunch choose_gemv_launch(const GemvShape& s, const cuda::GpuSpec& gpu);

// The grid: min(tiles, SMs x resident blocks per SM) blocks, each a balanced range of
// tiles. LOWBIT_GEMV_GRID=<blocks> overrides it.
void finish_gemv_launch(GemvLaunch& l, int64_t tiles, int blocks_per_sm, const cuda::GpuSpec& gpu);

}  // namespace lowbit::gemv
