// Internal: the one configuration header of the device code (CONVENTIONS.md: "#if
// __CUDA_ARCH__ guards only in one config header and at kernel entry").
//
// LOWBIT_HD marks functions that run on the device and on the host. A few PTX wrappers
// (lop3, prmt) and the tiled-layout decode are host-callable so that CPU-only tests check
// the weight layout against the mma fragment definitions bit for bit; on the host they
// compute the same function in plain C++ (LOWBIT_DEVICE_CODE is 0 there).
//
// This header needs no CUDA headers: host .cpp files compiled by g++ include it too.
#pragma once

#if defined(__CUDACC__)
#define LOWBIT_HD __host__ __device__ __forceinline__
#define LOWBIT_DEVICE __device__ __forceinline__
#else
#define LOWBIT_HD inline
#endif

#if defined(__CUDA_ARCH__)
#define LOWBIT_DEVICE_CODE 1
#define LOWBIT_ARCH __CUDA_ARCH__
#else
#define LOWBIT_DEVICE_CODE 0
#define LOWBIT_ARCH 0
#endif

// mma.sync m16n8k16 with bf16, cp.async and ldmatrix need sm_80; thread-block clusters and
// distributed shared memory need sm_90.
#define LOWBIT_HAS_SM80 (LOWBIT_ARCH >= 800)
#define LOWBIT_HAS_SM90 (LOWBIT_ARCH >= 900)
// wgmma and setmaxnreg exist only in the architecture-specific target sm_90a (nvcc defines
// __CUDA_ARCH_FEAT_SM90_ALL when compiling for it), not in sm_90 or later targets.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define LOWBIT_HAS_SM90A 1
#else
#define LOWBIT_HAS_SM90A 0
#endif

// An unsupported device path traps with a message (CUTLASS' CUTE_INVALID_CONTROL_PATH).
#define LOWBIT_DEVICE_TRAP(msg) \
  do {                          \
    printf("lowbit device error: %s\n", msg); \
    __trap();                   \
  } while (0)
