// lowbit bench: the hash-based fill kernel (random operands without a host round trip).
#include "bench/cuda/fill.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

namespace lowbit::bench::cuda {

namespace {

// splitmix64's finaliser, as bench/operands.cpp's hash64(): hash(seed, i) = mix(seed ^ mix(i)).
__device__ __forceinline__ uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in [lo, hi) from the hash's top 24 bits (exact in fp32).
__device__ __forceinline__ float uniform(uint64_t seed, uint64_t i, float lo, float hi) {
  const uint64_t h = mix64(seed ^ mix64(i));
  return lo + (hi - lo) * (static_cast<float>(h >> 40) * (1.0f / 16777216.0f));
}

// One element of dtype T from fp32, by the rounding rules of lowbit/numeric.hpp.
template <typename T>
__device__ __forceinline__ T convert(float x);
template <>
__device__ __forceinline__ float convert<float>(float x) { return x; }
template <>
__device__ __forceinline__ __half convert<__half>(float x) { return __float2half_rn(x); }
template <>
__device__ __forceinline__ __nv_bfloat16 convert<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}
// __nv_fp8_e4m3 / _e5m2 from float: round to nearest even with __NV_SATFINITE (cuda_fp8.h).
template <>
__device__ __forceinline__ __nv_fp8_e4m3 convert<__nv_fp8_e4m3>(float x) {
  return __nv_fp8_e4m3(x);
}
template <>
__device__ __forceinline__ __nv_fp8_e5m2 convert<__nv_fp8_e5m2>(float x) {
  return __nv_fp8_e5m2(x);
}
template <>
__device__ __forceinline__ int8_t convert<int8_t>(float x) {
  return static_cast<int8_t>(fminf(fmaxf(rintf(x), -127.0f), 127.0f));
}

// out: (count) elements of T, written once each; grid-stride loop.
template <typename T>
__global__ void fill_kernel(T* __restrict__ out, int64_t count, uint64_t seed, float lo, float hi) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride)
    out[i] = convert<T>(uniform(seed, static_cast<uint64_t>(i), lo, hi));
}

template <typename T>
cudaError_t launch(void* out, int64_t count, uint64_t seed, float lo, float hi,
                   cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  constexpr int kThreads = 256;
  constexpr int64_t kMaxBlocks = 8192;  // enough to fill any GPU; the loop covers the rest
  const int64_t blocks = (count + kThreads - 1) / kThreads;
  const unsigned grid = static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
  fill_kernel<T><<<grid, kThreads, 0, stream>>>(static_cast<T*>(out), count, seed, lo, hi);
  return cudaGetLastError();
}

}  // namespace

cudaError_t fill_random(void* out, DType t, int64_t count, uint64_t seed, float lo, float hi,
                        cudaStream_t stream) {
  switch (t) {
    case DType::kF32: return launch<float>(out, count, seed, lo, hi, stream);
    case DType::kF16: return launch<__half>(out, count, seed, lo, hi, stream);
    case DType::kBF16: return launch<__nv_bfloat16>(out, count, seed, lo, hi, stream);
    case DType::kE4M3: return launch<__nv_fp8_e4m3>(out, count, seed, lo, hi, stream);
    case DType::kE5M2: return launch<__nv_fp8_e5m2>(out, count, seed, lo, hi, stream);
    case DType::kI8: return launch<int8_t>(out, count, seed, lo, hi, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace lowbit::bench::cuda
