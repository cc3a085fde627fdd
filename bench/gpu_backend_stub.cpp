// The GPU backend of a CPU-only build (LOWBIT_CUDA=OFF): there is none. With CUDA on,
// bench/cuda/gpu_backend.cpp defines open_gpu_backend() instead; this is the one place the
// harness tests LOWBIT_WITH_CUDA.
#include "bench/gpu_backend.hpp"

#ifndef LOWBIT_WITH_CUDA
namespace lowbit::bench {

std::unique_ptr<GpuBackend> open_gpu_backend(int /*device*/, std::string* why_not) {
  *why_not = "built without CUDA (LOWBIT_CUDA=OFF)";
  return nullptr;
}

}  // namespace lowbit::bench
#endif
