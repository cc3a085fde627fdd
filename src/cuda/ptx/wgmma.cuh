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

// `accumulate` false: D = A * B (the scale-d predicate of the instruction is 0).
// D(64 x 192, fp32) (+)= A(64 x 32, e4m3, smem) * B(192 x 32, e4m3, smem)^T.
LOWBIT_DEVICE void wgmma_m64n192k32_f32_e4m3(float (&d)[96], uint64_t desc_a, uint64_t desc_b, bool accumulate) {
#if LOWBIT_HAS_SM90A
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "setp.ne.b32 p, %98, 0;\n\t"
      "wgmma.mma_async.sync.aligned.m64n192k32.f32.e4m3.e4m3 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95}, "
      "%96, %97, p, 1, 1;\n\t}"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
        "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
        "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
      : "l"(desc_a), "l"(desc_b), "r"(int(accumulate)));
#else
  LOWBIT_DEVICE_TRAP("wgmma needs sm_90a");
#endif
}

// D(64 x 128, fp32) (+)= A(64 x 32, e4m3, smem) * B(128 x 32, e4m3, smem)^T.
LOWBIT_DEVICE void wgmma_m64n128k32_f32_e4m3(float (&d)[64], uint64_t desc_a, uint64_t desc_b, bool accumulate) {
#if LOWBIT_HAS_SM90A
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "setp.ne.b32 p, %66, 0;\n\t"
      "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
      "%64, %65, p, 1, 1;\n\t}"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(int(accumulate)));
#else
  LOWBIT_DEVICE_TRAP("wgmma needs sm_90a");
#endif
}

// D(64 x 64, fp32) (+)= A(64 x 32, e4m3, smem) * B(64 x 32, e4m3, smem)^T.
LOWBIT_DEVICE void wgmma_m64n64k32_f32_e4m3(float (&d)[32], uint64_t desc_a, uint64_t desc_b, bool accumulate) {
#if LOWBIT_HAS_SM90A
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "setp.ne.b32 p, %34, 0;\n\t"
      "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
      "%32, %33, p, 1, 1;\n\t}"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(desc_a), "l"(desc_b), "r"(int(accumulate)));
#else
  LOWBIT_DEVICE_TRAP("wgmma needs sm_90a");
#endif
}

}  // namespace lowbit::ptx
