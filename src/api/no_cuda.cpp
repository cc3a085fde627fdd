// The CPU-only build's side of lowbit/device.hpp and of the CUDA selector: no GPU is ever
// reported, and asking for a CUDA Gemm says how to get one. Compiled instead of src/cuda/
// when CMake finds no nvcc or LOWBIT_CUDA=OFF (src/CMakeLists.txt).
#include "api/gemm_impl.hpp"
#include "lowbit/device.hpp"

namespace lowbit {

std::string GpuInfo::arch() const { return "sm_" + std::to_string(cc()); }

bool built_with_cuda() { return false; }
std::vector<std::string> built_cuda_archs() { return {}; }
std::string cuda_runtime_version() { return ""; }
std::string cuda_driver_version() { return ""; }
std::vector<GpuInfo> list_gpus() { return {}; }
std::string cuda_status() { return "built without CUDA"; }
std::vector<KernelFamily> kernel_families(const GpuInfo&) { return {}; }

namespace detail {

Selection select_cuda(const GemmDesc&, int, const std::string&) {
  Selection s;
  s.why_not = Status::Fail(
      "lowbit: this build has no CUDA backend (configured without nvcc or with "
      "LOWBIT_CUDA=OFF); use Device::cpu()");
  return s;
}

}  // namespace detail
}  // namespace lowbit
