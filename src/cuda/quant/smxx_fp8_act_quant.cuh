// The activation quantizer kernels, fp8, and int8 per token and static (geometry and host side:
// smxx_fp8_act_quant.hpp; the rules: include/lowbit/act_quant.hpp; the design:
// docs/kernels/act_quant.md).
//
// smxx_: any architecture this library builds for (sm_80+). Nothing here depends on the
// architecture except the e4m3 conversion inside f32_to_e4m3() (common/smxx_convert.cuh):
// on sm_89+ it is the cvt.rn.satfinite.e4m3x2.f32 instruction (PTX ISA "cvt": round to
// nearest even, .satfinite clamps |x| > 448 and +-inf to +-448), on sm_80 cuda_fp8.hpp's
// exact integer emulation of the same rounding; tests/gpu/test_device_codecs.cu checks both
// against the host codec code for code.
//
// Bit-exactness with the host (src/api/act_quant.cpp, quantize_fp8()): every fp32 operation
// is the host's, one IEEE operation each in round-to-nearest-even, no contraction:
//   decode       f16/bf16 -> fp32 is exact (smxx_convert.cuh);
//   amax         fmaxf(fabsf) is exact, and max is order-independent (a warp, a block or an
//                atomicMax on the bits give the same value as the host's sequential loop);
//                fmaxf ignores a NaN operand, as the host's std::max(amax, NaN) does;
//   s, 1/s       __fdiv_rn: the IEEE quotient (not the approximate reciprocal that a plain
//                `/` becomes under -use_fast_math);
//   x * inv      __fmul_rn: the IEEE product, never fused with anything;
//   code         NaN -> 0x7F, else f32_to_e4m3 (host codec rules).
// The library builds without -ftz and -use_fast_math, so subnormal inputs and products are
// kept as on the host.
//
// The int8 kernel (smxx_int8_act_quant_kernel, quantize_int8()'s rule, src/api/act_quant.cpp's
// CPU path; also the static per-tensor int8 mode) keeps the same discipline, step for step
// with the host's fp32 operations:
//   range        fmaxf over |x| (symmetric), or over x and -x (zero point: hi and -lo;
//                lo = -(-lo) is exact), from 0: as exact and order-independent as the amax,
//                NaN ignored as on the host;
//   s            __fsub_rn(hi, lo), fmaxf(., 1e-8f), __fdiv_rn(., 127 or 255): the host's
//                hi - lo, std::max, and IEEE division;
//   z            __fdiv_rn(lo, s), __fsub_rn(-128, .), rintf, fminf / fmaxf clamp;
//   code         __fdiv_rn(x, s) per element (the host divides too: x * (1/s) would differ),
//                rintf (cvt.rni.f32.f32: round to nearest, ties to even, as std::nearbyint in
//                the default rounding mode), __fadd_rn(., z), clamp, then the exact
//                conversion of an integral float to int.
// A NaN quotient counts as 0 on both sides (the non-finite rules of act_quant.hpp). The static
// mode (kInt8StaticPerTensor) skips the range and s: the caller's s and z (int32 -> fp32 by
// __int2float_rn, the host's conversion), then the same code step.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/common/smxx_convert.cuh"
#include "cuda/ptx/cluster.cuh"
#include "cuda/ptx/griddepcontrol.cuh"
#include "cuda/ptx/ld_global_nc.cuh"
#include "cuda/quant/smxx_fp8_act_quant.hpp"
#include "lowbit/numeric.hpp"
#include "lowbit/quantize.hpp"

namespace lowbit::cuda {

struct Fp8ActQuantParams {
  const uint4* x;              // (m, k) f16/bf16 as 16-byte vectors; row r at x + r * x_row_vecs
  int64_t x_row_vecs;          // row stride of X in 16-byte vectors (row_stride / 8)
  uint4* q;                    // (m, k) e4m3 codes as 16-byte vectors; row r at q + r * items
  float* scales;               // kPerRow: (m); kGroup128: (ceil(k/128), scale_ld) K-block-major;
                               // tensor ops: (1)
  const float* static_scale;   // kTensorStatic: (1) the caller's s; may equal `scales`
  unsigned int* amax_bits;     // kTensorAmax / kTensorDynamic: (1) fp32 bits of amax (>= 0)
  int64_t m;                   // rows of X
  int64_t items;               // items (16 elements) per row: k / 16
  int64_t scale_ld;            // kGroup128: round_up(m, 4), the scale grid's padded row count
};

static_assert(kActQuantItemElems == 16, "an item is two 16-byte loads of 8 f16/bf16 values");
static_assert(kActQuantGroupItems == 8, "a 1x128 group is 8 items: lanes 8j..8j+7 of a warp");
static_assert(kActQuantItemsPerThread >= 1, "a thread moves at least one item per chunk");

// 16 elements of one row: element e is the low (e even) or high half of word e / 2.
struct Fp8ActItem {
  uint32_t w[8];
};

// Two 16-byte loads through the read-only path (X is not written while the kernel runs).
__device__ __forceinline__ Fp8ActItem load_item(const uint4* x_row, int64_t item) {
  const uint4 a = ptx::ld_nc_v4(x_row + 2 * item);
  const uint4 b = ptx::ld_nc_v4(x_row + 2 * item + 1);
  return Fp8ActItem{{a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w}};
}

// This thread's items of chunk c of a row into t (slot j: item item_at(c, j)); ok[j]: the item
// exists (inside the row; every slot false for a row past m, `row_ok` false).
template <int kSlots, typename ItemAt>
__device__ __forceinline__ void load_chunk(const uint4* x_row, int64_t items, bool row_ok, int64_t c, ItemAt item_at,
                                           Fp8ActItem (&t)[kSlots], bool (&ok)[kSlots]) {
#pragma unroll
  for (int j = 0; j < kSlots; ++j) {
    ok[j] = row_ok && item_at(c, j) < items;
    if (ok[j]) t[j] = load_item(x_row, item_at(c, j));
  }
}

template <bool kBf16>
__device__ __forceinline__ float item_elem(const Fp8ActItem& it, int e) {
  const uint32_t word = it.w[e / 2];
  const uint16_t h = static_cast<uint16_t>((e % 2) != 0 ? (word >> 16) : (word & 0xFFFFu));
  return kBf16 ? bf16_to_f32(h) : f16_to_f32(h);
}

template <bool kBf16>
__device__ __forceinline__ float item_amax(const Fp8ActItem& it) {
  float a = 0.0f;
#pragma unroll
  for (int e = 0; e < kActQuantItemElems; ++e) a = fmaxf(a, fabsf(item_elem<kBf16>(it, e)));
  return a;
}

// code = NaN ? 0x7F : sat_rne(x * inv), element e in byte e of the 16 bytes.
template <bool kBf16>
__device__ __forceinline__ uint4 item_codes(const Fp8ActItem& it, float inv) {
  uint32_t out[4] = {0u, 0u, 0u, 0u};
#pragma unroll
  for (int e = 0; e < kActQuantItemElems; ++e) {
    const float v = __fmul_rn(item_elem<kBf16>(it, e), inv);
    const bool is_nan = (__float_as_uint(v) & 0x7FFFFFFFu) > 0x7F800000u;
    const uint32_t code = is_nan ? 0x7Fu : static_cast<uint32_t>(f32_to_e4m3(v));
    out[e / 4] |= code << (8 * (e % 4));
  }
  return make_uint4(out[0], out[1], out[2], out[3]);
}

// The dynamic rule: amax' = max(amax, 1e-4), s = amax' / 448, inv = 448 / amax'.
__device__ __forceinline__ void scale_of_amax(float amax, float* s, float* inv) {
  const float a = fmaxf(amax, kFp8AmaxFloor);
  *s = __fdiv_rn(a, kE4M3Max);
  *inv = __fdiv_rn(kE4M3Max, a);
}

// Max over the blockDim.x threads of one row. Rows of <= 32 threads are aligned lane groups
// of a warp (blockDim.x divides 32), so xor-shuffles below blockDim.x stay in the row; rows of
// more threads own the whole block (blockDim.y == 1) and meet in shared memory.
// Every thread of the block must call it (full-mask shuffles, __syncthreads).
__device__ __forceinline__ float row_max(float v) {
  const int tpr = static_cast<int>(blockDim.x);
  const int width = tpr < 32 ? tpr : 32;
  for (int o = width / 2; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xFFFFFFFFu, v, o));
  if (tpr > 32) {
    __shared__ float row_warp_max[kActQuantMaxThreadsPerRow / 32];
    if (threadIdx.x % 32 == 0) row_warp_max[threadIdx.x / 32] = v;
    __syncthreads();
    v = 0.0f;
    for (int w = 0; w < tpr / 32; ++w) v = fmaxf(v, row_warp_max[w]);
  }
  return v;
}

// Max over the whole block (any rows). Every thread of the block must call it.
__device__ __forceinline__ float block_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xFFFFFFFFu, v, o));
  __shared__ float block_warp_max[kActQuantMaxThreadsPerRow / 32];
  const int tid = static_cast<int>(threadIdx.y * blockDim.x + threadIdx.x);
  const int warps = static_cast<int>(blockDim.x * blockDim.y) / 32;
  if (tid % 32 == 0) block_warp_max[tid / 32] = v;
  __syncthreads();
  v = 0.0f;
  for (int w = 0; w < warps; ++w) v = fmaxf(v, block_warp_max[w]);
  return v;
}

// blockDim = (threads_per_row, rows_per_block), gridDim.x = blocks of fp8_act_quant_shape();
// blockDim.x * blockDim.y is a multiple of 32 (full warps: the shuffles use the full mask).
// Thread x of a row handles items c * chunk + j * blockDim.x + x (chunk c, slot j).
template <bool kBf16, Fp8ActQuantOp kOp>
__global__ void __launch_bounds__(kActQuantMaxThreadsPerRow)
    smxx_fp8_act_quant_kernel(const Fp8ActQuantParams p) {
  // PDL (sm_90; the host launches so there, ptx/griddepcontrol.cuh): this kernel waits for
  // the previous one (which may write X, or read the codes and scales this one writes) before
  // it touches any of them; nothing is read or written before the wait. The next kernel of the
  // stream (the fp8 GEMM that reads the codes) may begin launching once every block has read
  // its first chunk of X (`release` below): its weight prefetch, which precedes its own
  // griddepcontrol.wait, then overlaps the rest of this kernel without delaying X's loads.
  // Measured (H100, ActQuant -> GEMM pairs on Suite 1, docs/kernels/act_quant.md): a trigger
  // at the kernel's start made down (k = 14336) and gate_up at m = 128 slower, the GEMM's
  // prefetch queueing ahead of X's loads.
  ptx::griddep_wait();
  auto release = [] { ptx::griddep_launch_dependents(); };
  constexpr int kSlots = kActQuantItemsPerThread;
  const int tpr = static_cast<int>(blockDim.x);
  const int tx = static_cast<int>(threadIdx.x);
  const int64_t chunk_items = static_cast<int64_t>(tpr) * kSlots;
  const int64_t chunks = (p.items + chunk_items - 1) / chunk_items;
  // Item of chunk c, slot j of this thread.
  auto item_at = [&](int64_t c, int j) { return c * chunk_items + j * tpr + tx; };

  if constexpr (kOp == Fp8ActQuantOp::kTensorAmax) {
    // amax of all of X: rows grid-stride (at most kActQuantMaxAmaxBlocks blocks), then one
    // atomicMax per block on the fp32 bits. amax >= 0 and never NaN, and non-negative IEEE
    // floats order like their bit patterns as unsigned integers, so the integer max is the
    // float max whatever order the blocks arrive in: deterministic.
    float amax = 0.0f;
    for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.y + threadIdx.y; row < p.m;
         row += static_cast<int64_t>(gridDim.x) * blockDim.y) {
      const uint4* x_row = p.x + row * p.x_row_vecs;
      for (int64_t c = 0; c < chunks; ++c) {
        Fp8ActItem t[kSlots] = {};
        bool ok[kSlots];
        load_chunk(x_row, p.items, true, c, item_at, t, ok);
#pragma unroll
        for (int j = 0; j < kSlots; ++j)
          if (ok[j]) amax = fmaxf(amax, item_amax<kBf16>(t[j]));
      }
    }
    release();
    amax = block_max(amax);
    if (threadIdx.x == 0 && threadIdx.y == 0) atomicMax(p.amax_bits, __float_as_uint(amax));
    return;
  } else {
    const int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.y + threadIdx.y;
    const bool row_ok = row < p.m;
    // Rows past m form no pointer into X or q (they only write 1x128 padding scales).
    const uint4* x_row = p.x + (row_ok ? row : 0) * p.x_row_vecs;
    uint4* q_row = p.q + (row_ok ? row : 0) * p.items;

    if constexpr (kOp == Fp8ActQuantOp::kPerRow) {
      // One read of X when the row fits one chunk (the shape makes it so up to k = 32768):
      // chunk 0 stays in registers while the amax is reduced; later chunks are read twice.
      Fp8ActItem cache[kSlots] = {};
      bool ok[kSlots];
      float amax = 0.0f;
      load_chunk(x_row, p.items, row_ok, 0, item_at, cache, ok);
#pragma unroll
      for (int j = 0; j < kSlots; ++j)
        if (ok[j]) amax = fmaxf(amax, item_amax<kBf16>(cache[j]));
      for (int64_t c = 1; c < chunks; ++c) {
#pragma unroll
        for (int j = 0; j < kSlots; ++j)
          if (row_ok && item_at(c, j) < p.items)
            amax = fmaxf(amax, item_amax<kBf16>(load_item(x_row, item_at(c, j))));
      }
      amax = row_max(amax);  // every thread of the block takes part
      release();
      float s, inv;
      scale_of_amax(amax, &s, &inv);
      if (!row_ok) return;
      if (tx == 0) p.scales[row] = s;
#pragma unroll
      for (int j = 0; j < kSlots; ++j)
        if (ok[j]) q_row[item_at(0, j)] = item_codes<kBf16>(cache[j], inv);
      for (int64_t c = 1; c < chunks; ++c) {
#pragma unroll
        for (int j = 0; j < kSlots; ++j)
          if (item_at(c, j) < p.items)
            q_row[item_at(c, j)] = item_codes<kBf16>(load_item(x_row, item_at(c, j)), inv);
      }
    } else if constexpr (kOp == Fp8ActQuantOp::kGroup128) {
      // A group is items 8g..8g+7 of a row: in every slot, the 8 aligned lanes 8j'..8j'+7 of
      // the row's threads (threads_per_row is a multiple of 8). Its amax is 3 xor-shuffles;
      // the lane holding the group's first item writes the scale. Rows m..scale_ld-1 (the
      // 16-byte padding of each K block's scale row) write 0; all threads run every shuffle.
      const bool row_pad = row < p.scale_ld;
      for (int64_t c = 0; c < chunks; ++c) {
        Fp8ActItem t[kSlots] = {};
        bool ok[kSlots];
        load_chunk(x_row, p.items, row_ok, c, item_at, t, ok);
#pragma unroll
        for (int j = 0; j < kSlots; ++j) {
          float amax = ok[j] ? item_amax<kBf16>(t[j]) : 0.0f;
#pragma unroll
          for (int o = kActQuantGroupItems / 2; o > 0; o /= 2)
            amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, o));
          float s, inv;
          scale_of_amax(amax, &s, &inv);
          const int64_t i = item_at(c, j);
          if (ok[j]) q_row[i] = item_codes<kBf16>(t[j], inv);
          if (row_pad && i < p.items && i % kActQuantGroupItems == 0)
            p.scales[(i / kActQuantGroupItems) * p.scale_ld + row] = row_ok ? s : 0.0f;
        }
        if (c == 0) release();
      }
    } else {
      static_assert(kOp == Fp8ActQuantOp::kTensorDynamic || kOp == Fp8ActQuantOp::kTensorStatic,
                    "every op has a branch");
      float s, inv;
      if constexpr (kOp == Fp8ActQuantOp::kTensorStatic) {
        s = *p.static_scale;
        inv = __fdiv_rn(1.0f, s);  // the multiplier 1 / s, rounded to fp32 first (host rule)
      } else {
        scale_of_amax(__uint_as_float(*p.amax_bits), &s, &inv);
      }
      // One thread writes the scale; in static mode not when `scales` is the caller's scale
      // (the value is the same, and skipping keeps the read above free of a race).
      if (blockIdx.x == 0 && threadIdx.x == 0 && threadIdx.y == 0 && p.scales != p.static_scale)
        p.scales[0] = s;
      if (!row_ok) return;
      for (int64_t c = 0; c < chunks; ++c) {
        Fp8ActItem t[kSlots] = {};
        bool ok[kSlots];
        load_chunk(x_row, p.items, true, c, item_at, t, ok);
#pragma unroll
        for (int j = 0; j < kSlots; ++j)
          if (ok[j]) q_row[item_at(c, j)] = item_codes<kBf16>(t[j], inv);
        if (c == 0) release();
      }
    }
  }
}

// Dynamic per-tensor in one launch (fp8_act_quant_fused_ctas): gridDim.x = C CTAs of
// kActQuantFusedThreads threads, one cluster of C on sm_90 (C = 1 elsewhere). X is a flat run
// of m * items items (row i / items, item i % items: any row stride); global thread g of the
// cluster holds items g + r * C * T, r < kActQuantFusedItems, in registers. The amax: per
// thread, per block (block_max), then across the cluster: each CTA's amax in its shared memory,
// a cluster barrier (release / acquire), every CTA reads all C values (mapa +
// ld.shared::cluster: the same max, in the same order, in every CTA), a second barrier so that
// no CTA leaves while another may still read its shared memory. Then the codes, as
// kTensorDynamic writes them (scale_of_amax, item_codes): bit for bit the general path's.
template <bool kBf16>
__global__ void __launch_bounds__(kActQuantFusedThreads)
    smxx_fp8_act_quant_tensor_fused_kernel(const Fp8ActQuantParams p) {
  ptx::griddep_wait();  // PDL: as smxx_fp8_act_quant_kernel
  constexpr int R = kActQuantFusedItems;
  const int64_t total = p.m * p.items;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t g = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  Fp8ActItem t[R];
  bool ok[R];
  float amax = 0.0f;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int64_t i = g + r * stride;
    ok[r] = i < total;
    if (ok[r]) {
      const int64_t row = i / p.items;
      t[r] = load_item(p.x + row * p.x_row_vecs, i - row * p.items);
    }
  }
#pragma unroll
  for (int r = 0; r < R; ++r)
    if (ok[r]) amax = fmaxf(amax, item_amax<kBf16>(t[r]));
  ptx::griddep_launch_dependents();  // X read: the next kernel may begin launching
  amax = block_max(amax);
  if (gridDim.x > 1) {
    __shared__ float cta_amax;
    if (threadIdx.x == 0) cta_amax = amax;
    ptx::cluster_sync();
    const uint32_t own = static_cast<uint32_t>(__cvta_generic_to_shared(&cta_amax));
    for (uint32_t c = 0; c < gridDim.x; ++c) amax = fmaxf(amax, ptx::ld_shared_cluster_f32(ptx::mapa_shared(own, c)));
    ptx::cluster_sync();
  }
  float s, inv;
  scale_of_amax(amax, &s, &inv);
  if (blockIdx.x == 0 && threadIdx.x == 0) p.scales[0] = s;
#pragma unroll
  for (int r = 0; r < R; ++r)
    if (ok[r]) p.q[g + r * stride] = item_codes<kBf16>(t[r], inv);
}

// ---------------------------------------------------------------------------------------
// int8 per token (kInt8PerToken, kInt8PerTokenZeroPoint) and static per tensor
// (kInt8StaticPerTensor)
// ---------------------------------------------------------------------------------------
struct Int8ActQuantParams {
  const uint4* x;      // (m, k) f16/bf16 as 16-byte vectors; row r at x + r * x_row_vecs
  int64_t x_row_vecs;  // row stride of X in 16-byte vectors (row_stride / 8)
  uint4* q;            // (m, k) int8 codes as 16-byte vectors; row r at q + r * items
  float* scales;       // (m) fp32 per-token scales
  int32_t* zeros;      // kZeroPoint: (m) int32 zero points in [-128, 127]; else unused
  const float* static_scale;         // kStatic: (1) the caller's s; not inside `scales`
  const int32_t* static_zero_point;  // kStatic && kZeroPoint: (1) the caller's z; not inside `zeros`
  int64_t m;           // rows of X
  int64_t items;       // items (16 elements) per row: k / 16
};

// The symmetric range of an item: max |x| (as item_amax) into `amax`; the zero-point range:
// max(x) into `hi` and max(-x) = -min(x) into `neg_lo`. fmaxf ignores NaN operands.
template <bool kBf16>
__device__ __forceinline__ void item_range(const Fp8ActItem& it, float* hi, float* neg_lo) {
#pragma unroll
  for (int e = 0; e < kActQuantItemElems; ++e) {
    const float v = item_elem<kBf16>(it, e);
    *hi = fmaxf(*hi, v);
    *neg_lo = fmaxf(*neg_lo, -v);
  }
}

// row_max() for two values at once (the zero-point range). Every thread of the block must call
// it. Its own shared memory, so it never races with a row_max() of the same kernel.
__device__ __forceinline__ void row_max2(float* a, float* b) {
  const int tpr = static_cast<int>(blockDim.x);
  const int width = tpr < 32 ? tpr : 32;
  for (int o = width / 2; o > 0; o /= 2) {
    *a = fmaxf(*a, __shfl_xor_sync(0xFFFFFFFFu, *a, o));
    *b = fmaxf(*b, __shfl_xor_sync(0xFFFFFFFFu, *b, o));
  }
  if (tpr > 32) {
    __shared__ float row_warp_max2[2][kActQuantMaxThreadsPerRow / 32];
    if (threadIdx.x % 32 == 0) {
      row_warp_max2[0][threadIdx.x / 32] = *a;
      row_warp_max2[1][threadIdx.x / 32] = *b;
    }
    __syncthreads();
    *a = 0.0f;
    *b = 0.0f;
    for (int w = 0; w < tpr / 32; ++w) {
      *a = fmaxf(*a, row_warp_max2[0][w]);
      *b = fmaxf(*b, row_warp_max2[1][w]);
    }
  }
}

// rne of a quotient (x / s or lo / s), a NaN quotient counting as 0 (act_quant.hpp). rintf is
// cvt.rni.f32.f32 (PTX ISA "cvt": round to nearest integer, ties to even).
__device__ __forceinline__ float rne_quotient(float q) { return isnan(q) ? 0.0f : rintf(q); }

// One item's 16 int8 codes, element e in byte e: symmetric clamp(rne(x / s), -127, 127);
// zero point clamp(rne(x / s) + z, -128, 127), `z` the (integral) zero point as fp32.
template <bool kBf16, bool kZeroPoint>
__device__ __forceinline__ uint4 item_int8_codes(const Fp8ActItem& it, float s, float z) {
  uint32_t out[4] = {0u, 0u, 0u, 0u};
#pragma unroll
  for (int e = 0; e < kActQuantItemElems; ++e) {
    const float r = rne_quotient(__fdiv_rn(item_elem<kBf16>(it, e), s));
    const float c = kZeroPoint ? fminf(fmaxf(__fadd_rn(r, z), -128.0f), 127.0f)
                               : fminf(fmaxf(r, -127.0f), 127.0f);
    out[e / 4] |= (static_cast<uint32_t>(static_cast<int>(c)) & 0xFFu) << (8 * (e % 4));
  }
  return make_uint4(out[0], out[1], out[2], out[3]);
}

// kPerRow's design and geometry (fp8_act_quant_shape(k, m, kPerRow)), int8 codes:
// blockDim = (threads_per_row, rows_per_block); thread x of a row handles items
// c * chunk + j * blockDim.x + x. Dynamic (kStatic false): chunk 0 stays in registers while
// the row's range is reduced; later chunks (k > 32768) are read twice. Static (kStatic,
// kInt8StaticPerTensor): no reduction; s (and z) are read from the caller's pointers after
// the wait (the previous kernel may write them), every row writes them as its scale (zero
// point), and each chunk is loaded, converted and stored, as kTensorStatic does for fp8. PDL
// as smxx_fp8_act_quant_kernel: wait before anything is read or written, release once every
// thread has read its first chunk.
template <bool kBf16, bool kZeroPoint, bool kStatic>
__global__ void __launch_bounds__(kActQuantMaxThreadsPerRow)
    smxx_int8_act_quant_kernel(const Int8ActQuantParams p) {
  ptx::griddep_wait();
  constexpr int kSlots = kActQuantItemsPerThread;
  const int tpr = static_cast<int>(blockDim.x);
  const int tx = static_cast<int>(threadIdx.x);
  const int64_t chunk_items = static_cast<int64_t>(tpr) * kSlots;
  const int64_t chunks = (p.items + chunk_items - 1) / chunk_items;
  auto item_at = [&](int64_t c, int j) { return c * chunk_items + j * tpr + tx; };

  const int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.y + threadIdx.y;
  const bool row_ok = row < p.m;
  // Rows past m (the last block's) form no pointer into X or q.
  const uint4* x_row = p.x + (row_ok ? row : 0) * p.x_row_vecs;
  uint4* q_row = p.q + (row_ok ? row : 0) * p.items;

  if constexpr (kStatic) {
    // Not validated (act_quant.hpp): any s and z give what the formulas give, as on the host.
    const float s = *p.static_scale;
    const int32_t zi = kZeroPoint ? *p.static_zero_point : 0;
    // __int2float_rn: cvt.rn.f32.s32, the host's static_cast<float>(int) (round to nearest,
    // exact for |z| <= 2^24).
    const float z = __int2float_rn(zi);
    if (!row_ok) return;
    if (tx == 0) {
      p.scales[row] = s;
      if constexpr (kZeroPoint) p.zeros[row] = zi;  // as given, not through fp32
    }
    for (int64_t c = 0; c < chunks; ++c) {
      Fp8ActItem t[kSlots] = {};
      bool ok[kSlots];
      load_chunk(x_row, p.items, true, c, item_at, t, ok);
#pragma unroll
      for (int j = 0; j < kSlots; ++j)
        if (ok[j]) q_row[item_at(c, j)] = item_int8_codes<kBf16, kZeroPoint>(t[j], s, z);
      if (c == 0) ptx::griddep_launch_dependents();
    }
  } else {
    // Symmetric: hi = max |x| (the amax), neg_lo unused; zero point: hi = max(max x, 0),
    // neg_lo = max(-min x, 0) = -lo.
    Fp8ActItem cache[kSlots] = {};
    bool ok[kSlots];
    float hi = 0.0f, neg_lo = 0.0f;
    auto reduce_item = [&](const Fp8ActItem& it) {
      if constexpr (kZeroPoint)
        item_range<kBf16>(it, &hi, &neg_lo);
      else
        hi = fmaxf(hi, item_amax<kBf16>(it));
    };
    load_chunk(x_row, p.items, row_ok, 0, item_at, cache, ok);
#pragma unroll
    for (int j = 0; j < kSlots; ++j)
      if (ok[j]) reduce_item(cache[j]);
    for (int64_t c = 1; c < chunks; ++c) {
#pragma unroll
      for (int j = 0; j < kSlots; ++j)
        if (row_ok && item_at(c, j) < p.items) reduce_item(load_item(x_row, item_at(c, j)));
    }
    // Every thread of the block takes part in the reduction.
    if constexpr (kZeroPoint)
      row_max2(&hi, &neg_lo);
    else
      hi = row_max(hi);
    ptx::griddep_launch_dependents();

    float s, z = 0.0f;
    if constexpr (kZeroPoint) {
      const float lo = -neg_lo;
      s = __fdiv_rn(fmaxf(__fsub_rn(hi, lo), 1e-8f), 255.0f);
      float lo_s = __fdiv_rn(lo, s);
      if (isnan(lo_s)) lo_s = 0.0f;  // lo = -inf, s = +inf
      z = fminf(fmaxf(rintf(__fsub_rn(-128.0f, lo_s)), -128.0f), 127.0f);
    } else {
      s = __fdiv_rn(fmaxf(hi, 1e-8f), 127.0f);
    }
    if (!row_ok) return;
    if (tx == 0) {
      p.scales[row] = s;
      if constexpr (kZeroPoint) p.zeros[row] = static_cast<int32_t>(z);
    }
#pragma unroll
    for (int j = 0; j < kSlots; ++j)
      if (ok[j]) q_row[item_at(0, j)] = item_int8_codes<kBf16, kZeroPoint>(cache[j], s, z);
    for (int64_t c = 1; c < chunks; ++c) {
#pragma unroll
      for (int j = 0; j < kSlots; ++j)
        if (item_at(c, j) < p.items)
          q_row[item_at(c, j)] = item_int8_codes<kBf16, kZeroPoint>(load_item(x_row, item_at(c, j)), s, z);
    }
  }
}

}  // namespace lowbit::cuda
