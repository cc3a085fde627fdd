// ld.global.nc (PTX ISA, "Data Movement: ld.global.nc"): loads through the non-coherent
// (read-only) path. Only for buffers no kernel writes while this one runs: packed weights,
// their scales, activations.
//
// The .L1::no_allocate form streams data that is read once per call (packed weights):
// it does not take L1 lines away from the data that is re-read (activations, scales).
// The .v4.u32 form is one 16-byte load per thread (LDG.E.128 in SASS): a warp issuing it
// on 512 contiguous bytes makes four fully used 128-byte requests.
#pragma once

#include <cstdint>

#include "cuda/ptx/smxx_config.hpp"

namespace lowbit::ptx {

// 16 bytes, read-only path, no L1 allocation. `p` must be 16-byte aligned.
LOWBIT_DEVICE uint4 ld_nc_na_v4(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

// 16 bytes, read-only path (L1 allocating: for data other warps of the SM re-read).
LOWBIT_DEVICE uint4 ld_nc_v4(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

// 8 bytes, read-only path.
LOWBIT_DEVICE uint2 ld_nc_v2(const uint2* p) {
  uint2 v;
  asm volatile("ld.global.nc.v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(p));
  return v;
}

// 4 bytes, read-only path.
LOWBIT_DEVICE uint32_t ld_nc_u32(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.global.nc.u32 %0, [%1];" : "=r"(v) : "l"(p));
  return v;
}

// Fetches the line holding p into L2 (no register result, nothing to wait for).
LOWBIT_DEVICE void prefetch_l2(const void* p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }

}  // namespace lowbit::ptx
