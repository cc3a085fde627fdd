// Internal: the activation quantizer's CUDA side (lowbit::ActQuant on Device::cuda,
// include/lowbit/act_quant.hpp; design in docs/kernels/act_quant.md): the fp8 kernels and the
// int8 kernel (per token, and static per tensor), which shares their per-row machinery.
//
// Host-only C++17 (no CUDA headers): src/api/act_quant.cpp includes it, and so does the CPU
// test that checks the launch geometry below.
//
// One fp8 kernel template (smxx_fp8_act_quant.cuh), one "row" design for every mode: a row of X is
// read by `threads_per_row` consecutive threads, each moving ITEMS of 16 elements (two 16-byte
// loads of f16/bf16, one 16-byte store of e4m3 codes; k % 16 == 0 makes every row a whole
// number of items). Item i of a row sits with thread i % threads_per_row, so a warp's loads
// cover 1 KiB of contiguous input and its stores 512 contiguous bytes of codes. The int8
// kernel (smxx_int8_act_quant_kernel, same file) is kPerRow's design with int8 codes (also one
// byte each, 16 per 16-byte store) and, for the zero-point mode, a (max, -min) pair reduced per
// row instead of the amax; its static instance (kInt8StaticPerTensor) reduces nothing and
// reads the caller's scale and zero point: it launches with kPerRow's geometry.
#pragma once

#include <algorithm>
#include <cstdint>

#include "cuda/heuristics/gpu_spec.hpp"
#include "lowbit/act_quant.hpp"
#include "lowbit/status.hpp"

namespace lowbit::cuda {

inline constexpr int kActQuantItemElems = 16;   // elements per item (16 bytes of e4m3 codes)
inline constexpr int kActQuantItemsPerThread = 2;  // items a thread holds per chunk (64 B in flight)
inline constexpr int kActQuantGroupItems = 128 / kActQuantItemElems;  // 1x128: 8 items, 8 lanes
inline constexpr int kActQuantBlockThreads = 128;  // block size when several rows share a block
inline constexpr int kActQuantMaxThreadsPerRow = 1024;
// The per-tensor amax kernel loops over rows (grid-stride) so that at most this many blocks,
// hence this many atomics on the one amax word, run: 1024 blocks of 128..1024 threads fill
// every SM of a 132-SM H100/H200 several times over.
inline constexpr int64_t kActQuantMaxAmaxBlocks = 1024;

// What each kernel instance computes (the template parameter of the kernel).
enum class Fp8ActQuantOp : int {
  kPerRow,         // amax of the row -> scale -> codes; one read of X (rows up to a chunk)
  kGroup128,       // amax of each 128-column group -> scale -> codes; scales for padding rows
  kTensorAmax,     // amax of all of X -> atomicMax on the workspace word (no codes)
  kTensorDynamic,  // codes with the scale of the workspace amax
  kTensorStatic,   // codes with the caller's scale
};

// The launch geometry of one kernel call (a host rule, kept apart from the kernel).
struct Fp8ActQuantShape {
  int threads_per_row = 0;  // blockDim.x: 8, 16, 32 or a multiple of 32 up to 1024
  int rows_per_block = 0;   // blockDim.y
  int64_t blocks = 0;       // gridDim.x
  int64_t chunks = 0;       // passes of threads_per_row * kActQuantItemsPerThread items per row
};

// threads_per_row: enough threads that one chunk covers the row (one read of X for per-token)
// up to 1024 threads = 32768 elements; longer rows take several chunks (per-token then reads
// the chunks after the first twice, the second time from L2). Rows of up to 32 threads share a
// 128-thread block (full warps; rows sit in aligned lane groups, so shuffles stay inside a
// row). At least 8 threads per row: a 1x128 group is 8 consecutive items, hence 8 lanes of one
// aligned group (threads_per_row a multiple of 8 keeps groups from straddling two rows).
// Rows of more than 32 threads have a block each.
// `rows`: rows the kernel covers (m, or round_up(m, 4) for kGroup128 to write the padding).
inline Fp8ActQuantShape fp8_act_quant_shape(int64_t k, int64_t rows, Fp8ActQuantOp op) {
  Fp8ActQuantShape s;
  const int64_t items = k / kActQuantItemElems;
  const int64_t want = (items + kActQuantItemsPerThread - 1) / kActQuantItemsPerThread;
  int64_t tpr = 8;
  if (want > 32)
    tpr = std::min<int64_t>(kActQuantMaxThreadsPerRow, (want + 31) / 32 * 32);
  else
    while (tpr < want) tpr *= 2;
  s.threads_per_row = static_cast<int>(tpr);
  // Several rows per block only while a row is at most one warp (row_max() reduces rows of
  // more than 32 threads in shared memory, one row per block).
  s.rows_per_block = tpr > 32 ? 1 : static_cast<int>(kActQuantBlockThreads / tpr);
  s.blocks = (rows + s.rows_per_block - 1) / s.rows_per_block;
  if (op == Fp8ActQuantOp::kTensorAmax) s.blocks = std::min(s.blocks, kActQuantMaxAmaxBlocks);
  const int64_t chunk = tpr * kActQuantItemsPerThread;
  s.chunks = (items + chunk - 1) / chunk;
  return s;
}

// Dynamic per-tensor in one launch (kTensorFused) when all of X fits the registers of at most
// kActQuantFusedMaxCtas CTAs: each thread holds up to kActQuantFusedItems items, the CTAs form
// one cluster (sm_90) and take the max of their amaxes through distributed shared memory,
// then write the codes from registers. No memset, no atomics, one read of X: the small-m case,
// where the memset and two launches of the general path cost more than the bytes.
inline constexpr int kActQuantFusedThreads = 512;
inline constexpr int kActQuantFusedItems = 4;
inline constexpr int kActQuantFusedMaxCtas = 8;  // the portable cluster size
inline constexpr int64_t kActQuantFusedCtaItems = int64_t{kActQuantFusedThreads} * kActQuantFusedItems;

// CTAs (1, 2, 4 or 8) of the one-launch per-tensor path for m x k, or 0 where X does not fit
// (the general path then runs): the fewest that give each thread one item, else the most, with
// up to kActQuantFusedItems items per thread. `clusters`: whether the GPU and the build run
// clusters (sm_90); without them one CTA. Measured (H100, docs/kernels/act_quant.md): with the
// fewest CTAs that hold X (four items per thread) m = 16, k = 4096 took 7.3 us on 2 CTAs, the
// items' conversions running one after the other in each thread.
inline int fp8_act_quant_fused_ctas(int64_t m, int64_t k, bool clusters) {
  const int64_t items = m * (k / kActQuantItemElems);
  const int max_ctas = clusters ? kActQuantFusedMaxCtas : 1;
  for (int c = 1; c <= max_ctas; c *= 2)
    if (items <= int64_t{c} * kActQuantFusedThreads) return c;
  return items <= max_ctas * kActQuantFusedCtaItems ? max_ctas : 0;
}

// Ok when `device` exists, is sm_80 or newer, and this build has machine code for it (every
// mode, fp8 and int8).
Status act_quant_runs_on(int device);

// Enqueues the kernels of one ActQuant::run on `stream`, with `device` made current for the
// launches (the caller's current device is restored). `desc` and `args` were validated by
// ActQuant (shape, dtype, pointers, alignment). `workspace`: 4 bytes (one uint32, the amax
// bits) for kDynamicPerTensor, else unused.
Status fp8_act_quant_launch(const ActQuantDesc& desc, const ActQuantArgs& args, void* workspace,
                            Stream stream, int device);

// Whether a launch of `blocks` blocks on `gpu` is a programmatic dependent launch: sm_90
// code on an sm_90 GPU and a grid of at most half the SMs. A larger grid launched early lands
// on the SMs the previous kernel frees first and runs crowded there. Measured (H100, ActQuant ->
// GEMM pairs on Suite 1's layers, per-token and 1x128, docs/kernels/act_quant.md): with PDL the
// sums at m = 1 / 16 / 32 / 64 (as many blocks) fell by 2.1-2.7 us, at m = 128 they rose by
// 1.4-1.6 us, all of it on gate_up, whose previous GEMM (224 tiles on 132 persistent CTAs)
// frees 40 SMs half-way. LOWBIT_ACT_QUANT_PDL=0 / 1 (read at every run()) forces off / on. No
// contract beyond stream order: the kernels wait for the previous kernel before touching X,
// the codes, the scales or the workspace.
bool fp8_act_quant_uses_pdl(const GpuSpec& gpu, int64_t blocks);

// The int8 modes (kInt8PerToken, kInt8PerTokenZeroPoint, kInt8StaticPerTensor): one launch of
// smxx_int8_act_quant_kernel with the geometry fp8_act_quant_shape(k, m, kPerRow), a
// programmatic dependent launch by fp8_act_quant_uses_pdl()'s rule; `device` made current as
// for fp8_act_quant_launch. `desc` and `args` were validated by ActQuant (`zeros` present and
// 4-byte aligned for the zero-point modes; for int8-static `static_scale` and, with
// int8_zero_point, `static_zero_point` present, 4-byte aligned, not inside `scales` / `zeros`).
// No workspace.
Status int8_act_quant_launch(const ActQuantDesc& desc, const ActQuantArgs& args, Stream stream, int device);

}  // namespace lowbit::cuda
