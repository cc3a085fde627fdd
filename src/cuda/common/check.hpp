// Internal: checking every CUDA runtime and cuBLAS(Lt) call, with the file, line and call.
//
//   LOWBIT_CUDA_CHECK(cudaMemcpy(...));      throws lowbit::Error on failure
//   LOWBIT_CUDA_TRY(cudaMemsetAsync(...));   returns a failed lowbit::Status (for run() paths)
//   LOWBIT_CUBLAS_CHECK(cublasLtCreate(&h)); the same for cublasStatus_t
//   LOWBIT_CUBLAS_TRY(cublasLtMatmul(...));
//   kernel<<<grid, block, smem, stream>>>(...);
//   LOWBIT_CUDA_CHECK_LAUNCH();              cudaGetLastError() after a launch (throws)
//   LOWBIT_CUDA_TRY_LAUNCH();                the same, returning a failed Status
//
// Messages: "lowbit: CUDA error cudaErrorInvalidValue (invalid argument) at
// src/cuda/baseline/cublas_gemm.cpp:123 in `cudaMemcpyAsync(...)`".
//
// A failed runtime call leaves its (non-sticky) error as the thread's "last error"; the
// macros clear it with cudaGetLastError() so that the next LOWBIT_CUDA_CHECK_LAUNCH() does
// not report a stale error as its own. Sticky errors (a kernel fault) stay: the context is
// unusable anyway and every later call reports it.
//
// Host-only: includes cuda_runtime_api.h and cublasLt.h (for the status names); usable from
// .cpp and .cu files. Nothing here is device code.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstring>
#include <string>

#include "lowbit/status.hpp"

namespace lowbit::cuda::check_impl {

// "src/cuda/x.cpp" rather than the absolute path of the build machine.
inline const char* short_file(const char* path) {
  const char* best = path;
  for (const char* marker : {"/src/", "/tests/", "/tools/", "/include/"}) {
    const char* hit = std::strstr(path, marker);
    if (hit != nullptr) {
      best = hit + 1;
      break;
    }
  }
  return best;
}

inline std::string where(const char* file, int line, const char* call) {
  return std::string(" at ") + short_file(file) + ":" + std::to_string(line) + " in `" + call + "`";
}

inline std::string cuda_error_text(cudaError_t e, const char* file, int line, const char* call) {
  return std::string("lowbit: CUDA error ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) +
         ")" + where(file, line, call);
}

inline std::string cublas_error_text(cublasStatus_t s, const char* file, int line,
                                     const char* call) {
  return std::string("lowbit: cuBLAS error ") + cublasLtGetStatusName(s) + " (" +
         cublasLtGetStatusString(s) + ")" + where(file, line, call);
}

[[noreturn]] inline void throw_cuda(cudaError_t e, const char* file, int line, const char* call) {
  (void)cudaGetLastError();  // clear the non-sticky error this call left behind
  throw Error(cuda_error_text(e, file, line, call));
}

inline Status cuda_status(cudaError_t e, const char* file, int line, const char* call) {
  (void)cudaGetLastError();
  return Status::Fail(cuda_error_text(e, file, line, call));
}

[[noreturn]] inline void throw_cublas(cublasStatus_t s, const char* file, int line,
                                      const char* call) {
  (void)cudaGetLastError();  // a cuBLAS failure may come from a runtime call inside it
  throw Error(cublas_error_text(s, file, line, call));
}

inline Status cublas_status(cublasStatus_t s, const char* file, int line, const char* call) {
  (void)cudaGetLastError();
  return Status::Fail(cublas_error_text(s, file, line, call));
}

}  // namespace lowbit::cuda::check_impl

#define LOWBIT_CUDA_CHECK(call)                                                            \
  do {                                                                                     \
    const cudaError_t lowbit_cuda_err_ = (call);                                           \
    if (lowbit_cuda_err_ != cudaSuccess)                                                   \
      ::lowbit::cuda::check_impl::throw_cuda(lowbit_cuda_err_, __FILE__, __LINE__, #call); \
  } while (0)

#define LOWBIT_CUDA_TRY(call)                                                                      \
  do {                                                                                             \
    const cudaError_t lowbit_cuda_err_ = (call);                                                   \
    if (lowbit_cuda_err_ != cudaSuccess)                                                           \
      return ::lowbit::cuda::check_impl::cuda_status(lowbit_cuda_err_, __FILE__, __LINE__, #call); \
  } while (0)

#define LOWBIT_CUBLAS_CHECK(call)                                                             \
  do {                                                                                        \
    const cublasStatus_t lowbit_cublas_st_ = (call);                                          \
    if (lowbit_cublas_st_ != CUBLAS_STATUS_SUCCESS)                                           \
      ::lowbit::cuda::check_impl::throw_cublas(lowbit_cublas_st_, __FILE__, __LINE__, #call); \
  } while (0)

#define LOWBIT_CUBLAS_TRY(call)                                                               \
  do {                                                                                        \
    const cublasStatus_t lowbit_cublas_st_ = (call);                                          \
    if (lowbit_cublas_st_ != CUBLAS_STATUS_SUCCESS)                                           \
      return ::lowbit::cuda::check_impl::cublas_status(lowbit_cublas_st_, __FILE__, __LINE__, \
                                                       #call);                                \
  } while (0)

// After a kernel launch: launch-configuration errors (too much shared memory, a bad grid)
// are reported here; errors during execution surface at the next synchronizing call.
#define LOWBIT_CUDA_CHECK_LAUNCH() LOWBIT_CUDA_CHECK(cudaGetLastError())
#define LOWBIT_CUDA_TRY_LAUNCH() LOWBIT_CUDA_TRY(cudaGetLastError())
