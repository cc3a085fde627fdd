// wgmma (PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate", sm_90a only):
// the four warps of a warpgroup (128 threads, the first warp's index a multiple of 4)
// issue one matrix multiply whose operands A and B are read by the tensor core directly from
// shared memory through 64-bit matrix descriptors, and whose accumulator D lives in the
// registers of the 128 threads. Asynchronous: wgmma.fence before the first wgmma that touches
// registers written by ordinary instructions, wgmma.commit_group to close a group of issued
// wgmmas, wgmma.wait_group N to wait until at most N groups are pending; only then may the
// threads read D (or the CTA overwrite the shared-memory operands).
//
// fp8 (e4m3) operands: both A and B must be K-major in shared memory (no transpose for 8-bit
// types); k = 32 per instruction (32 bytes of each row).
//
// Accumulator fragment of m64nN (fp32), thread T = 32 w + l of the warpgroup:
//   d[4 j + 0] = D[16 w + l / 4    ][8 j + 2 (l % 4)    ]
//   d[4 j + 1] = D[16 w + l / 4    ][8 j + 2 (l % 4) + 1]
//   d[4 j + 2] = D[16 w + l / 4 + 8][8 j + 2 (l % 4)    ]
//   d[4 j + 3] = D[16 w + l / 4 + 8][8 j + 2 (l % 4) + 1]      j = 0 .. N / 8 - 1
// (the mma.sync m16n8 C fragment, repeated over N and stacked over the four warps).
//
// Shared-memory matrix descriptor for a K-major tile with the 128-byte swizzle (the layout a
// TMA load with CU_TENSOR_MAP_SWIZZLE_128B and a 128-byte inner box writes): rows of 128
// bytes, 16-byte chunks of row r XOR-permuted by (r % 8), 8-row groups 1024 bytes apart.
//   bits  0..13  start address >> 4
//   bits 16..29  leading-dimension byte offset >> 4: unused for swizzled K-major layouts whose
//                K extent per instruction (32 bytes) lies inside one 128-byte row; set to 1
//   bits 32..45  stride-dimension byte offset >> 4: 1024 bytes between 8-row groups -> 64
//   bits 49..51  base offset: 0, the tile is 1024-byte aligned
//   bits 62..63  layout: 1 = 128-byte swizzle
// Stepping along K by 32 bytes inside the swizzle atom adds 32 >> 4 = 2 to the start address:
// the hardware applies the XOR swizzle to the computed addresses, so the un-swizzled offset
// is what the descriptor takes (as CUTLASS' descriptor iterator and DeepGEMM do).
#pragma once

#include <cstdint>
#include <cstdio>

#include "cuda/ptx/smxx_config.hpp"

namespace lowbit::ptx {

LOWBIT_DEVICE uint64_t wgmma_desc_k_major_sw128(uint32_t smem_addr) {
  uint64_t desc = 0;
  desc |= uint64_t((smem_addr & 0x3FFFF) >> 4);
  desc |= uint64_t(1) << 16;
  desc |= uint64_t(1024 >> 4) << 32;
  desc |= uint64_t(1) << 62;
  return desc;
}

// wgmma.fence.sync.aligned: orders the warpgroup's register writes to the accumulators (and
// shared-memory writes by this thread) before the wgmmas that follow.
LOWBIT_DEVICE void wgmma_fence() {
#if LOWBIT_HAS_SM90A
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#endif
}

LOWBIT_DEVICE void wgmma_commit_group() {
#if LOWBIT_HAS_SM90A
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
#endif
}

template <int N>
LOWBIT_DEVICE void wgmma_wait_group() {
#if LOWBIT_HAS_SM90A
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
#endif
}

// The accumulator registers are "+f" operands of the asm, so the compiler cannot move
// their reads above a wait_group; this keeps it from doing so across the fence too (the
// idiom of CUTLASS' warpgroup_fence_operand).
template <int R>
LOWBIT_DEVICE void wgmma_fence_operand(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// setmaxnreg (sm_90a): the warpgroup gives back (dec) or takes (inc) registers so that the
// producer warpgroup runs with few and the consumer warpgroups with many. Count: multiple
// of 8 in 24..256; every warp of the warpgroup executes it.
template <int kRegs>
LOWBIT_DEVICE void setmaxnreg_inc() {
#if LOWBIT_HAS_SM90A
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kRegs));
#endif
}
template <int kRegs>
LOWBIT_DEVICE void setmaxnreg_dec() {
#if LOWBIT_HAS_SM90A
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kRegs));
#endif
}

// The e4m3 x e4m3 wgmma wrappers themselves (m64nNk32, fp32 accumulators, one per tile width
// sm90_fp8_gemm instantiates) are generated: wgmma_e4m3.cuh (tools/dev/gen_wgmma_ss.py).

}  // namespace lowbit::ptx
