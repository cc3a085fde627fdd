// Internal: the table of CUDA kernel families and what each provides to the selector.
//
// A family is one kernel design (its own folder under src/cuda/, e.g. mixed_gemm/) with a
// host side that says whether it can run a problem and builds a detail::GemmImpl for it.
// The selector (heuristics/select.cpp) walks the table in its order, asks each family that
// runs on the device, and applies the rules written there (which family for which m, n, k);
// kernels never choose themselves.
#pragma once

#include <memory>
#include <vector>

#include "api/gemm_impl.hpp"
#include "cuda/heuristics/gpu_spec.hpp"

namespace lowbit::cuda {

struct FamilyEntry {
  const char* name;         // "cublas_dense", "sm80_mixed_gemm", ...
  const char* description;  // one line for `lowbit info`
  // Ok when the family has machine code for this GPU in this build, else the reason.
  Status (*runs_on)(const GpuSpec& gpu);
  // Ok when the family computes this problem (shapes, formats), else the reason.
  Status (*can_implement)(const GemmDesc& desc, const GpuSpec& gpu);
  // Builds the implementation; only called after both checks above passed.
  std::unique_ptr<detail::GemmImpl> (*make)(const GemmDesc& desc, const GpuSpec& gpu);
};

// Every family of this build, in the order the selector tries them (select.cpp).
const std::vector<FamilyEntry>& kernel_family_table();

}  // namespace lowbit::cuda
