// Internal: what the heuristics know of a GPU, read from the device (never from its name).
#pragma once

#include "lowbit/status.hpp"

#include <cstdint>
#include <string>

namespace lowbit::cuda {

struct GpuSpec {
  int device = 0;
  std::string name;
  int cc = 0;                 // compute capability major*10 + minor (90 for Hopper)
  int sm_count = 0;
  int smem_per_block_optin = 0;  // bytes
  int smem_per_sm = 0;           // bytes
  int64_t l2_bytes = 0;
  int regs_per_sm = 0;
  double dram_gbps = 0;       // theoretical: 2 * memory clock * bus width (a lead, not a reading)
};

// Reads cudaGetDeviceProperties once per device (thread-safe) and caches it. Throws
// lowbit::Error if the device does not exist.
const GpuSpec& gpu_spec(int device);

// Whether this build carries machine code that runs on a GPU of compute capability `cc`
// for the arch list it was built with (LOWBIT_CUDA_ARCHS): sm_XY runs on X.Y..X.9 of the same
// major; sm_90a only on 9.0.
bool build_has_code_for(int cc, int min_arch);

// Whether this build carries arch-specific code for exactly compute capability `cc` ("90a"
// for 9.0): what kernels using wgmma or setmaxnreg need (a plain "90" build traps there).
bool build_has_arch_specific_code_for(int cc);

// Ok when `gpu` is a Hopper GPU (9.0) and this build has sm_90a code (wgmma, setmaxnreg, TMA
// kernels need the arch-specific target), else the reason, prefixed with `who`.
Status hopper_sm90a_runs_on(const GpuSpec& gpu, const char* who);

// Split-K by thread-block clusters (sm_90: one cluster of `splits` CTAs per tile): whether all
// `tiles` clusters stay resident at once. `resident[e]`: clusters of 2^e CTAs the GPU keeps
// resident (e = 1, 2, 3; common/launch_attrs.hpp, resident_clusters), 0 when not known (no
// limit then). A cluster must fit one GPC, so SMs x CTAs per SM / splits can promise more than
// the GPU holds, and the clusters past it run as a second wave (docs/kernels/mixed_gemm.md v10).
inline bool split_clusters_fit(const int (&resident)[4], int64_t tiles, int splits) {
  const int e = splits <= 2 ? 1 : splits <= 4 ? 2 : 3;
  return resident[e] == 0 || tiles <= resident[e];
}

}  // namespace lowbit::cuda
