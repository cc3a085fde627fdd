// lowbit: GPUs present, what this build can run on them.
//
// Everything here is safe to call in a CPU-only build or on a machine without a GPU: the
// lists come back empty and cuda_status() says why.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lowbit {

struct GpuInfo {
  int index = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  uint64_t memory_bytes = 0;
  uint64_t l2_bytes = 0;
  int smem_per_block_optin = 0;  // bytes of shared memory a block may opt in to
  int smem_per_sm = 0;
  int memory_bus_bits = 0;
  int memory_clock_khz = 0;
  std::string arch() const;  // "sm_90"
  int cc() const { return cc_major * 10 + cc_minor; }
  // The theoretical DRAM rate, GB/s: 2 (DDR) x memory clock x bus width. A lead for the
  // heuristics, never a measurement.
  double dram_gbps() const { return 2.0 * memory_clock_khz * 1e3 * memory_bus_bits / 8.0 / 1e9; }
};

bool built_with_cuda();
// The SM architectures this build carries machine code for, e.g. {"80", "89", "90a"}.
std::vector<std::string> built_cuda_archs();
// CUDA runtime and driver versions as "13.0"; "" when built without CUDA or no driver.
std::string cuda_runtime_version();
std::string cuda_driver_version();

// The GPUs present. Empty when built without CUDA or when no device is usable.
std::vector<GpuInfo> list_gpus();
// One line: "2 CUDA devices", "no CUDA device: <reason>", "built without CUDA".
std::string cuda_status();

struct KernelFamily {
  std::string name;         // "cublas_dense", "sm80_mixed_gemm", ...
  std::string description;  // what it computes
  bool available = false;   // runs on this GPU in this build
  std::string reason;       // why not, when !available
};
// Every kernel family the library knows, and whether it runs on `gpu`.
std::vector<KernelFamily> kernel_families(const GpuInfo& gpu);

}  // namespace lowbit
